"""NLTK's Porter stemmer with its answers kept on disk, so a start usually imports no NLTK.

``import nltk.stem.porter`` runs ``nltk/__init__``, which imports most of NLTK and SciPy's
statistics: about 1.3 s of CPU at every start of ``doclens score`` (issue 39), a fifth of the main
job's loading, for a function of one word. The Porter stem of a word depends on the word and the
NLTK version only, so the stems are a lexicon like the drug names (:func:`doclens.evaluators.rules.
lexicons.drug_names`): kept in the lexicon folder (``lexicons/porter-stems-nltk-VERSION.json`` in
the DocLens cache folder, :func:`doclens.evaluators.cache.lexicon_folder`; ``--cache-dir`` moves it;
another NLTK version is another file), NLTK imported on the first word the file lacks.
``--no-cache`` neither reads nor writes it (issue 47: a wrong stems file changed verdicts).

The file is JSON with its format, the NLTK version and a checksum
(:func:`~doclens.evaluators.cache.read_sealed_json`): one of another version or layout is not
read, a damaged one is set aside with one warning, an unwritable folder costs NLTK's import at the
next start (one warning). Whoever can write the folder can change stems, never run code.
"""

from __future__ import annotations

import atexit
import logging
import threading
from collections.abc import Callable
from pathlib import Path

from doclens.core.errors import ConfigurationError
from doclens.evaluators.cache import DEFAULT_LEXICONS, lexicon_folder, read_sealed_json, write_sealed_json

logger = logging.getLogger(__name__)

#: New stems that make the file be written again before the process ends (it is also written at exit).
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
        self._stems: dict[str, str] = self._read() if path is not None else {}
        self._unsaved = 0
        self._stemmer: Callable[[str], str] | None = None
        self._lock = threading.Lock()

    def _read(self) -> dict[str, str]:
        assert self.path is not None
        found = read_sealed_json(self.path, FORMAT, _nltk_version())
        if not isinstance(found, dict):
            return {}
        return {k: v for k, v in found.items() if type(k) is str and type(v) is str}

    def __call__(self, word: str) -> str:
        stem = self._stems.get(word)
        if stem is None:
            if self._stemmer is None:
                from nltk.stem.porter import PorterStemmer

                self._stemmer = PorterStemmer().stem
            stem = self._stems[word] = self._stemmer(word)
            self.computed += 1
            self._unsaved += 1
            if self._unsaved >= SAVE_EVERY:
                self.save()
        return stem

    def save(self) -> None:
        """Write the stems (those of the file and the new ones) if there are new ones; a cache
        folder that cannot be written costs NLTK's import at the next start, nothing else."""
        if self.path is None or not self._unsaved:
            return
        with self._lock:
            merged = {**self._read(), **self._stems}  # another process's new stems are kept too
            if write_sealed_json(self.path, FORMAT, _nltk_version(), merged):
                self._unsaved = 0
            else:
                self.path = None  # not written: not tried again in this process


_SHARED: dict[Path | None, PorterStems] = {}


def porter_stems(folder=DEFAULT_LEXICONS) -> PorterStems:
    """The process's stems of the lexicon folder ``folder`` (one object a file, written at exit;
    ``None``: no file, ``--no-cache``)."""
    path = stems_path(folder)
    found = _SHARED.get(path)
    if found is None:
        found = _SHARED[path] = PorterStems(path)
        if path is not None:
            atexit.register(found.save)
    return found
