"""NLTK's Porter stemmer with its answers kept on disk, and run without importing NLTK's package.

``import nltk.stem.porter`` runs ``nltk/__init__``, which imports most of NLTK and SciPy's
statistics: about 1.3 s of CPU at every start of ``doclens score`` (issue 39), a fifth of the main
job's loading, for a function of one word. The Porter stem of a word depends on the word and the
NLTK version only, so the stems are a lexicon like the drug names (:func:`doclens.evaluators.rules.
lexicons.drug_names`): kept in the lexicon folder (``lexicons/porter-stems-nltk-VERSION.json`` in
the DocLens cache folder, :func:`doclens.evaluators.cache.lexicon_folder`; ``--cache-dir`` moves it;
another NLTK version is another file). On the first word the file lacks, NLTK's own
``nltk/stem/porter.py`` is run alone, without the rest of NLTK (:func:`porter_from_file`: about
0.1 s, where importing NLTK costs 1.3-1.8 s, so ``--no-cache`` does not pay for it either).
``--no-cache`` neither reads nor writes it (issue 47: a wrong stems file changed verdicts). A judge
holds one :class:`PorterStems` in its :class:`~doclens.evaluators.rules.resources.JudgeResources`,
which writes the new stems when the judge closes (no process-wide copy, no exit hook: issue 50).

The file is JSON with its format, the NLTK version and a checksum
(:func:`~doclens.evaluators.cache.read_sealed_json`): one of another version or layout is not
read, a damaged one is set aside with one warning, an unwritable folder costs the stemming again at the
next start (one warning). Whoever can write the folder can change stems, never run code.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from types import MappingProxyType

from doclens.core.errors import ConfigurationError
from doclens.evaluators.cache import DEFAULT_LEXICONS, Refusals, lexicon_folder, read_sealed_json, write_sealed_json

logger = logging.getLogger(__name__)

#: New stems that make the file be written again before the judge closes (it is also written then:
#: :meth:`~doclens.evaluators.rules.resources.JudgeResources.close`).
SAVE_EVERY = 2_000
#: the file's format (:func:`~doclens.evaluators.cache.read_sealed_json`)
FORMAT = "doclens-porter-stems/1"


def _nltk_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("nltk")
    except PackageNotFoundError as exc:  # pragma: no cover - depends on the environment
        raise ConfigurationError(f"the clinical-rules judge needs the [clinical] extra (nltk): {exc}") from exc


def stems_path(folder=DEFAULT_LEXICONS) -> Path | None:
    """The stems file in the lexicon folder ``folder`` (``None``: no file)."""
    found = lexicon_folder(folder)
    return None if found is None else found / f"porter-stems-nltk-{_nltk_version()}.json"


def default_path() -> Path:
    path = stems_path()
    assert path is not None
    return path


class PorterStems:
    """``stems(word)``: NLTK's ``PorterStemmer().stem(word)``, from the stems file when it has the
    word, else from NLTK (imported then, once). ``computed`` counts the words NLTK stemmed in this
    process (a word the file holds is never stemmed again). ``path=None``: no file (every word is
    stemmed by NLTK, as before this cache)."""

    def __init__(self, path: Path | None):
        self.path = path
        self.computed = 0
        # a file that is there but was refused when read (not sealed with this user's key, another
        # layout, damaged: read_sealed_json notes it) is written again sealed at the next save, new
        # stems or not: else a run that stems nothing would leave it, and its warning, for every later run
        self._refused = Refusals()
        self._stems: dict[str, str] = self._read() if path is not None else {}
        self._unsaved = 0
        self._stemmer: Callable[[str], str] | None = None
        self._lock = threading.Lock()

    def _read(self) -> dict[str, str]:
        assert self.path is not None
        found = read_sealed_json(self.path, FORMAT, _nltk_version(), self._refused)
        if not isinstance(found, dict):
            if found is not None:  # sealed, but not a table of stems
                self._refused.note(self.path)
            return {}
        return {k: v for k, v in found.items() if type(k) is str and type(v) is str}

    def __call__(self, word: str) -> str:
        stem = self._stems.get(word)
        if stem is None:
            if self._stemmer is None:
                self._stemmer = porter_stemmer()
            stem = self._stems[word] = self._stemmer(word)
            self.computed += 1
            self._unsaved += 1
            if self._unsaved >= SAVE_EVERY:
                self.save()
        return stem

    def save(self) -> None:
        """Write the stems (those of the file and the new ones) if there are new ones, or if the file
        was refused when read (:attr:`_refused`, a :class:`~doclens.evaluators.cache.Refusals`); a cache
        folder that cannot be written costs stemming those words again at the next start, nothing else."""
        if self.path is None or not (self._unsaved or self._refused):
            return
        with self._lock:
            merged = {**self._read(), **self._stems}  # another process's new stems are kept too
            if write_sealed_json(self.path, FORMAT, _nltk_version(), merged):
                self._unsaved = 0
                self._refused.clear()
            else:
                self.path = None  # not written: not tried again in this process


#: the lines of NLTK's ``nltk/stem/porter.py`` that import the rest of NLTK, and what stands for
#: each when :func:`porter_stemmer` reads the file alone (``redos`` and ``safe_print`` serve its
#: ``demo()`` only; ``StemmerI`` is an abstract base with ``stem`` alone)
_PORTER_IMPORTS = MappingProxyType({"from nltk import redos\n": ("redos", None),
                                    "from nltk.stem.api import StemmerI\n": ("StemmerI", object),
                                    "from nltk.termsec import safe_print\n": ("safe_print", None)})


def porter_stemmer() -> Callable[[str], str]:
    """``PorterStemmer().stem`` of the installed NLTK, without importing NLTK's package where it is
    not imported yet (:func:`porter_from_file`), else from NLTK's own import."""
    import sys

    found = None if "nltk" in sys.modules else porter_from_file()
    if found is not None:
        return found
    from nltk.stem.porter import PorterStemmer

    return PorterStemmer().stem


def porter_from_file() -> Callable[[str], str] | None:
    """``PorterStemmer().stem`` from the installed ``nltk/stem/porter.py`` run alone, its three
    imports of the rest of NLTK (:data:`_PORTER_IMPORTS`) left out: ``nltk/__init__`` imports most
    of NLTK and SciPy's statistics (1.3-1.8 s of CPU at every start that stems a new word). The
    same code, so the same stems (tests/evaluators/rules/test_near_misses.py compares them with NLTK's over
    lemminflect's words). ``None`` where NLTK is not installed or its file does not have exactly
    those imports (another NLTK): then NLTK is imported."""
    import importlib.util
    import types

    spec = importlib.util.find_spec("nltk")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "stem" / "porter.py"
    try:
        source = path.read_text(encoding="utf-8")
    except OSError:
        return None
    if not all(source.count(line) == 1 for line in _PORTER_IMPORTS) or source.count("\nfrom nltk") != len(_PORTER_IMPORTS):
        return None
    module = types.ModuleType("doclens.evaluators.rules._nltk_porter")
    for line, (name, value) in _PORTER_IMPORTS.items():
        source = source.replace(line, "")
        setattr(module, name, value)
    exec(compile(source, str(path), "exec"), module.__dict__)  # noqa: S102 - the installed NLTK's own file
    return module.PorterStemmer().stem

