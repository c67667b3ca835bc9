"""NLTK's Porter stemmer with its answers kept on disk, so a start usually imports no NLTK.

``import nltk.stem.porter`` runs ``nltk/__init__``, which imports most of NLTK and SciPy's
statistics: about 1.3 s of CPU at every start of ``doclens score`` (issue 39), a fifth of the main
job's loading, for a function of one word. The Porter stem of a word depends on the word and the
NLTK version only, so the stems are a lexicon like the drug names (:func:`doclens.evaluators.rules.
lexicons.drug_names`): kept in the DocLens cache folder (``lexicons/porter-stems-nltk-VERSION.json``,
:func:`doclens.evaluators.cache.default_cache_dir`; another NLTK version is another file), NLTK
imported on the first word the file lacks. ``--no-cache`` does not turn it off, as it does not turn
off the drug lexicon: it holds no instance text, only words and their stems, and no judge answer.
"""

from __future__ import annotations

import atexit
import json
import logging
import threading
from collections.abc import Callable
from pathlib import Path

from doclens.core.errors import ConfigurationError

logger = logging.getLogger(__name__)

#: New stems that make the file be written again before the process ends (it is also written at exit).
SAVE_EVERY = 2_000


def _nltk_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("nltk")
    except PackageNotFoundError as exc:  # pragma: no cover - depends on the environment
        raise ConfigurationError(f"the clinical-rules judge needs the [clinical] extra (nltk): {exc}") from exc


def default_path() -> Path:
    from doclens.evaluators.cache import default_cache_dir

    return default_cache_dir() / "lexicons" / f"porter-stems-nltk-{_nltk_version()}.json"


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
        try:
            found = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:  # a damaged file: the stems are computed again
            logger.warning("porter stems cache %s unreadable (%s): stemming with NLTK", self.path, exc)
            return {}
        return found if isinstance(found, dict) and all(isinstance(v, str) for v in found.values()) else {}

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
            try:
                merged = {**self._read(), **self._stems}  # another process's new stems are kept too
                self.path.parent.mkdir(parents=True, exist_ok=True)
                temporary = self.path.with_suffix(f".{threading.get_ident()}.tmp")
                temporary.write_text(json.dumps(merged, separators=(",", ":")), encoding="utf-8")
                temporary.replace(self.path)
                self._unsaved = 0
            except OSError as exc:
                logger.debug("porter stems cache %s not written: %s", self.path, exc)


_SHARED: dict[Path, PorterStems] = {}


def porter_stems() -> PorterStems:
    """The process's stems of the default file (one object a file, written at exit)."""
    path = default_path()
    found = _SHARED.get(path)
    if found is None:
        found = _SHARED[path] = PorterStems(path)
        atexit.register(found.save)
    return found
