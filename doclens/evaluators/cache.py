"""One persistent cache for every model call (``docs/design.md`` §3), and what every DocLens
cache file shares: where it lives, how its values are sealed, and how a damaged one is set aside.

SQLite in WAL mode, safe with several writer threads and processes. Keys are SHA-256 hashes
of everything that can change an answer (model, endpoint kind, full prompt or input pair,
decoding parameters, prompt version); values are JSON (the raw reply and its token usage).
Rerunning an evaluation, or resuming one that crashed, pays for nothing twice.

**A cache never stops a run.** A cache file that cannot be opened, read or written (not a
database, a folder that is read-only or on a read-only file system, a path that is a folder) is
set aside for the rest of the process with one warning that names the file, how to clear it and
``--no-cache`` (:func:`set_aside`); one that can be read but not written is read and nothing new
is kept in it. The run goes on and its results are those of a run without a cache. An entry that
is not what this version writes (another format, a value of the wrong shape) is a miss. Cache
files hold data only (JSON, float arrays, text): no entry is ever run as code.

**A crafted entry never changes a verdict.** Every entry is sealed with an HMAC-SHA256 under this
user's key, kept outside the cache folder (:mod:`doclens.core.sealing`; ``docs/caches.md``): an
entry whose seal does not check — crafted by whoever can write the folder, another user's, or
written before caches were sealed — is a miss, computed again and overwritten, with one warning
per file and process (:func:`not_sealed`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from doclens.core import sealing
from doclens.core.files import write_atomically

logger = logging.getLogger(__name__)

#: what a cache file's failure can raise: SQLite's errors (not a database, unable to open,
#: read-only, disk I/O) and the file system's (mkdir on a read-only file system, a folder in the
#: place of a file)
CACHE_ERRORS = (sqlite3.Error, OSError)
#: cache files set aside, or found unwritable, in this process: each is warned about once
_WARNED: set[str] = set()


def set_aside(path, exc: BaseException | str, *, writing: bool = False) -> None:
    """Warn, once per cache file and process, that ``path`` cannot be used: set aside for this run
    (``writing``: it is read, but nothing new is kept in it), with the reason, how to clear it and
    ``--no-cache``. The run goes on; its results are those of a run without the cache."""
    key = str(path)
    if key in _WARNED:
        return
    _WARNED.add(key)
    reason = f"{type(exc).__name__}: {exc}" if isinstance(exc, BaseException) else exc
    effect = ("what it holds is used and nothing new is kept" if writing else
              "this run goes on without it, with the same results (computed again)")
    logger.warning("cache %s cannot be %s (%s): %s; to clear it, delete %s (or make its folder writable); "
                   "--no-cache runs with no cache at all, --cache-dir DIR keeps the caches in another folder",
                   path, "written" if writing else "used", reason, effect, path)


def not_sealed(path) -> None:
    """Warn, once per cache file and process, that ``path`` holds entries not sealed with this
    user's key (module docstring): they are ignored (computed again, and overwritten)."""
    key = str(path)
    if key in _WARNED:
        return
    _WARNED.add(key)
    logger.warning("cache %s holds entries not sealed with this user's key %s (crafted, another user's, or written "
                   "before DocLens sealed its caches): they are ignored and computed again; to clear them, delete %s; "
                   "--no-cache runs with no cache at all, --cache-dir DIR keeps the caches in another folder",
                   path, sealing.key_file(), path)


def forget_set_aside() -> None:
    """Warn again about every cache file (for a long-lived process that has cleared them)."""
    _WARNED.clear()


def default_cache_dir() -> Path:
    """``$DOCLENS_CACHE``, else ``$XDG_CACHE_HOME/doclens``, else ``~/.cache/doclens``."""
    if os.environ.get("DOCLENS_CACHE"):
        return Path(os.environ["DOCLENS_CACHE"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "doclens"


#: ``lexicon_dir`` / ``folder`` left to its default: ``lexicons/`` in :func:`default_cache_dir`
#: (``None`` is no file at all: ``--no-cache``)
DEFAULT_LEXICONS: Any = type("DefaultLexicons", (), {"__repr__": lambda self: "DEFAULT_LEXICONS"})()


def lexicon_folder(folder) -> Path | None:
    """The folder of the derived lexicons (Porter stems, drug names) that ``folder`` names:
    :data:`DEFAULT_LEXICONS` is ``lexicons/`` in the default cache folder; ``None`` or ``False``
    none (``False`` is how a command line's ``--no-cache`` reaches a judge: option loaders drop
    ``None``)."""
    if folder is DEFAULT_LEXICONS:
        return default_cache_dir() / "lexicons"
    return None if folder is None or folder is False else Path(folder)


def models_folder(folder) -> Path | None:
    """Where derived model files (MiniLM's ONNX export) are kept beside the lexicons that ``folder``
    names (:func:`lexicon_folder`): ``models/`` next to ``lexicons/``, so ``--cache-dir`` moves both
    and ``--no-cache`` (``None`` or ``False``) keeps the export in memory for the process."""
    found = lexicon_folder(folder)
    return None if found is None else found.parent / "models"


def _digest(data) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":")).encode("utf-8",
                                                                                       "surrogatepass")).hexdigest()


class Refusals:
    """What a cache reader found but did not use — a file or entries there, damaged, of another
    layout or not sealed with this user's key — reported to the owner of the data
    (:func:`read_sealed_json`'s ``refusals``, :meth:`doclens.evaluators.rules.analysis_cache.
    AnalysisCache.word_table`), which writes them again sealed (or drops them) at its next save,
    whether or not it computed anything new: else what was refused, and its warning, would stay
    until the same entry happened to be computed again. ``found`` lists what was refused (a
    path, or an entry's key), :meth:`clear` once written; true while it holds any."""

    def __init__(self) -> None:
        self.found: list[Any] = []

    def note(self, what: Any) -> None:
        self.found.append(what)

    def clear(self) -> None:
        self.found.clear()

    def __bool__(self) -> bool:
        return bool(self.found)


def read_sealed_json(path: Path, kind: str, version: str, refusals: Refusals | None = None):
    """The data :func:`write_sealed_json` wrote at ``path`` for ``kind`` and ``version``; ``None``
    when there is none: no file, a file of another version or of an older layout (a miss, said
    nowhere: it is written again), a damaged one (not JSON, unreadable: set aside with one
    warning, :func:`set_aside`), or one not sealed with this user's key (crafted, another user's,
    written before issue 47's seal: one warning, :func:`not_sealed`). A file there but not used
    is noted in ``refusals`` (:class:`Refusals`), for its owner to write it again."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        set_aside(path, exc)
        return _refused(path, refusals)
    try:
        found = json.loads(text)
    except (ValueError, RecursionError) as exc:
        set_aside(path, f"not JSON: {exc}")
        return _refused(path, refusals)
    if not isinstance(found, dict) or found.get("format") != kind or found.get("version") != version:
        return _refused(path, refusals)  # an older layout (before issue 47), another file or version: derived again
    if not sealing.sealed(str(found.get("hmac", "")), "json", kind, version, _digest(found.get("data"))):
        not_sealed(path)
        return _refused(path, refusals)
    return found.get("data")


def _refused(path: Path, refusals: Refusals | None) -> None:
    if refusals is not None:
        refusals.note(path)
    return None


def write_sealed_json(path: Path, kind: str, version: str, data) -> bool:
    """Write ``data`` with its format, version and seal (:func:`read_sealed_json`), whole or
    not at all (:func:`doclens.core.files.write_atomically`: a temporary file of its own, renamed
    into place); ``False``, with one warning, when the folder
    cannot be written (the data is derived again at the next start, nothing else)."""
    sealed = {"format": kind, "version": version, "data": data,
              "hmac": sealing.seal("json", kind, version, _digest(data)).hex()}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, lambda handle: json.dump(sealed, handle, separators=(",", ":")))
    except OSError as exc:
        set_aside(path, exc, writing=True)
        return False
    return True


#: the first bytes of a file :func:`write_sealed_file` wrote (then its seal, then its bytes)
SEALED_FILE_MAGIC = b"DLS1"


def read_sealed_file(path: Path, kind: str) -> bytes | None:
    """The bytes :func:`write_sealed_file` kept at ``path`` for ``kind``, read once and checked
    (load from what this returns, never from ``path`` again: a file swapped after the check is
    never used); ``None`` when there is none (no file), when it cannot be read (one warning,
    :func:`set_aside`), or when it is not sealed with this user's key for this ``kind`` and file
    name — crafted, another user's, or kept before issue 47's seal (one warning, :func:`not_sealed`)."""
    start = len(SEALED_FILE_MAGIC) + sealing.SEAL_BYTES
    try:
        with open(path, "rb") as handle:
            head = handle.read(start)
            data = handle.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        set_aside(path, exc)
        return None
    if head[:len(SEALED_FILE_MAGIC)] != SEALED_FILE_MAGIC or not sealing.sealed(
            head[len(SEALED_FILE_MAGIC):], "file", kind, Path(path).name, data):
        not_sealed(path)
        return None
    return data


def write_sealed_file(path: Path, kind: str, data: bytes) -> None:
    """Keep ``data`` at ``path``, sealed for ``kind`` and the file's name (:func:`read_sealed_file`),
    whole or not at all (:func:`doclens.core.files.write_atomically`); :class:`OSError` when the
    folder cannot be written."""
    tag = sealing.seal("file", kind, Path(path).name, data)

    def write(handle) -> None:
        handle.write(SEALED_FILE_MAGIC + tag)
        handle.write(data)

    Path(path).parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, write, binary=True)


def cache_key(parts: dict[str, Any]) -> str:
    """A stable hash of ``parts`` (JSON with sorted keys)."""
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def open_sqlite(path: os.PathLike) -> sqlite3.Connection:
    """A connection to the SQLite file ``path`` as every DocLens cache opens it: WAL mode (several
    writer threads and processes), autocommit, any thread."""
    conn = sqlite3.connect(path, timeout=60, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn


def write_rows(conn: sqlite3.Connection, statement: str, rows: list[tuple],
               more: Sequence[tuple[str, list[tuple]]] = ()) -> None:
    """``statement`` for each row (and ``more``: other statements, each with its rows), in one
    transaction (all rows or none)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        if rows:
            conn.executemany(statement, rows)
        for other, its_rows in more:
            if its_rows:
                conn.executemany(other, its_rows)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


class _CacheFile:
    """A cache file that can be set aside (:attr:`off`: neither read nor written) or found
    unwritable (:attr:`read_only`), each said once (:func:`set_aside`)."""

    path: Path
    off = False
    read_only = False

    def set_aside(self, exc: BaseException, writing: bool = False) -> None:
        """Stop using the file (``writing``: stop writing it only), with one warning."""
        if writing:
            self.read_only = True
        else:
            self.off = True
        set_aside(self.path, exc, writing=writing)


class BlobStore(_CacheFile):
    """Blobs kept on disk by a binary key (a content hash), across runs and processes: one SQLite
    file, :attr:`FILE`, in a cache folder (default :func:`default_cache_dir`), opened on first use
    (a run that stores nothing leaves no file); WAL mode, so several processes may share it.
    Subclasses name the file, the table and its value column, and turn their values into bytes.

    Every value is sealed (:meth:`seal`): :attr:`MAGIC` (the subclass's format and its version),
    then the HMAC-SHA256 under this user's key (:mod:`doclens.core.sealing`) of the magic, the key
    and the payload, then the payload; a value that does not open (:meth:`unseal`: another format
    or version, a changed byte, a value moved to another key, crafted, another user's, sealed with a
    bare checksum before issue 47's key) is a miss, counted in :attr:`rejected` and warned about
    once (:func:`not_sealed`). A file that cannot be opened or read is set aside; one that cannot be
    written is read only (:func:`set_aside`, one warning)."""

    FILE = "blobs.sqlite"
    TABLE = "blobs"
    VALUE = "value"
    #: the values' format and version, the first bytes of every sealed value
    MAGIC = b"DLB1"
    #: variables per SQL statement (SQLite's smallest build allows 999)
    _BATCH = 500

    def __init__(self, directory: os.PathLike | str | None = None):
        self.directory = Path(directory) if directory else default_cache_dir()
        self.path = self.directory / self.FILE
        self._local = threading.local()
        #: entries answered from the file, written to it, and found there but refused (unsealed)
        self.hits = 0
        self.stored = 0
        self.rejected = 0
        #: set aside (neither read nor written), or read only (writing failed)
        self.off = False
        self.read_only = False

    def _connect(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            self.directory.mkdir(parents=True, exist_ok=True)
            conn = open_sqlite(self.path)
            try:
                conn.execute(f"CREATE TABLE IF NOT EXISTS {self.TABLE} (key BLOB PRIMARY KEY, "
                             f"{self.VALUE} BLOB NOT NULL)")
                self._create(conn)
            except BaseException:
                conn.close()
                raise
            self._local.conn = conn
        return conn

    def _create(self, conn: sqlite3.Connection) -> None:
        """More tables of a subclass's file (made when it is opened)."""

    def seal(self, key: bytes, payload: bytes) -> bytes:
        """``payload`` as stored under ``key`` (class docstring)."""
        return self.MAGIC + sealing.seal(self.MAGIC, key, payload) + payload

    def unseal(self, key: bytes, blob) -> bytes | None:
        """The payload of a value :meth:`seal` made for ``key``; ``None`` for anything else."""
        start = len(self.MAGIC) + sealing.SEAL_BYTES
        if not isinstance(blob, bytes) or len(blob) < start or blob[:len(self.MAGIC)] != self.MAGIC:
            return None
        payload = blob[start:]
        return payload if sealing.sealed(blob[len(self.MAGIC):start], self.MAGIC, key, payload) else None

    def get_blobs(self, keys: list[bytes]) -> dict[bytes, bytes]:
        """The payloads stored under those of ``keys`` that have a sound one."""
        if self.off or not keys:
            return {}
        found: dict[bytes, bytes] = {}
        try:
            for start in range(0, len(keys), self._BATCH):
                part = keys[start:start + self._BATCH]
                for key, blob in self._connect().execute(
                        f"SELECT key, {self.VALUE} FROM {self.TABLE} WHERE key IN ({','.join('?' * len(part))})",
                        part):
                    payload = self.unseal(key, blob)
                    if payload is None:
                        self.rejected += 1
                        not_sealed(self.path)
                    else:
                        found[key] = payload
        except CACHE_ERRORS as exc:
            self.set_aside(exc)
            return {}
        return found

    def put_blobs(self, rows: list[tuple[bytes, bytes]], more: Sequence[tuple[str, list[tuple]]] = ()) -> bool:
        """Store ``(key, payload)`` rows (and ``more``: other statements, each with its rows, in the
        same transaction); ``False`` when the file is not written (set aside, or read only)."""
        if not rows and not any(its_rows for _, its_rows in more) or self.off or self.read_only:
            return False
        try:
            conn = self._connect()
            sealed = [(key, self.seal(key, payload)) for key, payload in rows]
            write_rows(conn, f"INSERT OR REPLACE INTO {self.TABLE} (key, {self.VALUE}) VALUES (?, ?)", sealed,
                       more)
        except CACHE_ERRORS as exc:
            self.set_aside(exc, writing=True)
            return False
        return True

    def __len__(self) -> int:
        if self.off:
            return 0
        try:
            return int(self._connect().execute(f"SELECT COUNT(*) FROM {self.TABLE}").fetchone()[0])
        except CACHE_ERRORS as exc:
            self.set_aside(exc)
            return 0

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


@runtime_checkable
class AnswerCache(Protocol):
    """What a judge reads and writes its answers through: the contract :class:`Cache` (SQLite),
    :class:`NullCache` (``--no-cache``) and :class:`ShardCache` (a Ray worker's) all keep, and
    what :meth:`CachedAnswers.set_cache` accepts."""

    def get(self, key: str) -> Any | None: ...

    def get_many(self, keys: list[str]) -> dict[str, Any]: ...

    def put(self, key: str, value: Any) -> None: ...

    def put_many(self, items: dict[str, Any]) -> None: ...

    def close(self) -> None: ...


class Cache(_CacheFile):
    """``get(key)`` / ``put(key, value)`` over a SQLite file, ``cache.sqlite`` in the cache folder.

    ``refresh=True`` ignores stored answers (every call is made again) but stores the new ones.
    A file that cannot be opened or read is set aside, one that cannot be written is read only
    (module docstring). Each value is stored as its seal (:func:`_sealed_answer`: 64 hex digits of
    the HMAC under this user's key of the key and the text) and its JSON text; a value whose seal
    does not check is a miss, warned about once (:func:`not_sealed`), and one that is not JSON a
    miss.
    """

    def __init__(self, directory: os.PathLike | None = None, refresh: bool = False):
        self.directory = Path(directory) if directory else default_cache_dir()
        self.path = self.directory / "cache.sqlite"
        self.refresh = refresh
        self._local = threading.local()
        #: set aside (neither read nor written), or read only (writing failed)
        self.off = False
        self.read_only = False
        try:
            self._connect()  # opened now: a damaged file is said before the run starts
        except CACHE_ERRORS as exc:
            self.set_aside(exc)

    def _connect(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            self.directory.mkdir(parents=True, exist_ok=True)
            conn = open_sqlite(self.path)
            try:
                conn.execute("CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, value TEXT NOT NULL, "
                             "created REAL DEFAULT (julianday('now')))")
            except BaseException:
                conn.close()
                raise
            self._local.conn = conn
        return conn

    def get(self, key: str) -> Any | None:
        return self.get_many([key]).get(key)

    def get_many(self, keys: list[str]) -> dict[str, Any]:
        if self.refresh or self.off or not keys:
            return {}
        found: dict[str, Any] = {}
        try:
            conn = self._connect()
            for start in range(0, len(keys), 500):
                chunk = keys[start:start + 500]
                marks = ",".join("?" * len(chunk))
                for key, value in conn.execute(f"SELECT key, value FROM answers WHERE key IN ({marks})", chunk):
                    decoded = _decoded(self._opened(key, value))
                    if decoded is not None:
                        found[key] = decoded
        except CACHE_ERRORS as exc:
            self.set_aside(exc)
            return {}
        return found

    def _opened(self, key, value) -> str | None:
        """The JSON text of a stored value whose seal checks (:func:`_sealed_answer`); ``None``,
        warned about once, for any other."""
        if isinstance(key, str) and isinstance(value, str) and len(value) >= 2 * sealing.SEAL_BYTES:
            text = value[2 * sealing.SEAL_BYTES:]
            if sealing.sealed(value[:2 * sealing.SEAL_BYTES], "answers", key, text):
                return text
        not_sealed(self.path)
        return None

    def put(self, key: str, value: Any) -> None:
        self.put_many({key: value})

    def put_many(self, items: dict[str, Any]) -> None:
        if items:
            self.put_raw_many({k: json.dumps(v, ensure_ascii=False) for k, v in items.items()})

    def put_raw_many(self, items: dict[str, str]) -> None:
        """Store answers already encoded as JSON text (a worker's shard merged back in: sealed
        here, with this process's key); a key already present is replaced, as :meth:`put_many`
        does, so a key is never stored twice."""
        if not items or self.off or self.read_only:
            return
        try:
            write_rows(self._connect(), "INSERT OR REPLACE INTO answers (key, value) VALUES (?, ?)",
                       [(key, _sealed_answer(key, text)) for key, text in items.items()])
        except CACHE_ERRORS as exc:
            self.set_aside(exc, writing=True)

    def forget(self, keys) -> None:
        """Remove the answers stored under ``keys`` (replies that left items unparsed: a rerun
        asks those calls again instead of reading the same unreadable reply)."""
        keys = list(keys)
        if not keys or self.off or self.read_only:
            return
        try:
            self._connect().executemany("DELETE FROM answers WHERE key = ?", [(k,) for k in keys])
        except CACHE_ERRORS as exc:
            self.set_aside(exc, writing=True)

    def raw_items(self) -> dict[str, str]:
        """Every stored answer whose seal checks, as ``{key: JSON text}`` (meant for a worker's
        shard, which is small)."""
        if self.off:
            return {}
        try:
            rows = self._connect().execute("SELECT key, value FROM answers").fetchall()
        except CACHE_ERRORS as exc:
            self.set_aside(exc)
            return {}
        return {key: text for key, value in rows if (text := self._opened(key, value)) is not None}

    def snapshot(self) -> bytes | None:
        """A copy of the answers whose seal checks, read in one consistent pass, as the bytes of a
        SQLite file that holds them as plain JSON text: what :class:`ShardCache` workers read
        instead of this file (a worker on another machine has not this user's key file; what it
        reads was checked here, and reaches it through Ray's object store, not the cache
        folder); ``None`` when the file is set aside."""
        import tempfile

        items = self.raw_items()
        if self.off:
            return None
        with tempfile.TemporaryDirectory(prefix="doclens-snapshot-") as folder:
            copy = sqlite3.connect(os.path.join(folder, "cache.sqlite"))
            try:
                copy.execute("CREATE TABLE answers (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
                copy.executemany("INSERT INTO answers (key, value) VALUES (?, ?)", list(items.items()))
                copy.commit()
            finally:
                copy.close()
            return Path(folder, "cache.sqlite").read_bytes()

    def __len__(self) -> int:
        if self.off:
            return 0
        try:
            return self._connect().execute("SELECT COUNT(*) FROM answers").fetchone()[0]
        except CACHE_ERRORS as exc:
            self.set_aside(exc)
            return 0

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


def _sealed_answer(key: str, text: str) -> str:
    """An answer's JSON ``text`` as :class:`Cache` stores it under ``key``: its seal (hex) first."""
    return sealing.seal("answers", key, text).hex() + text


def _decoded(value) -> Any | None:
    """A stored answer's JSON, or ``None`` (a miss) for a value that is not JSON text."""
    try:
        return json.loads(value) if isinstance(value, str) else None
    except (ValueError, RecursionError):
        return None


class NullCache:
    """``--no-cache``: stores nothing, finds nothing."""

    refresh = False
    path = None

    def get(self, key: str) -> None:
        return None

    def get_many(self, keys: list[str]) -> dict:
        return {}

    def put(self, key: str, value: Any) -> None:
        pass

    def put_many(self, items: dict) -> None:
        pass

    def forget(self, keys) -> None:
        pass

    def __len__(self) -> int:
        return 0

    def close(self) -> None:
        pass


class ShardCache:
    """A worker's cache when several processes or machines answer for one run: reads a private,
    read-only copy of the user's cache (``base``, a file or ``None``: :meth:`Cache.snapshot`, the
    driver's answers whose seal checked there, as plain JSON) and then the worker's own
    ``shard`` (a :class:`Cache` on the worker's local disk); writes only the shard, and remembers
    what it wrote so that :meth:`drain` can hand it back to be merged into the user's cache. SQLite
    is never shared across machines (it is not safe on a network filesystem): one process writes
    each file.

    A shard that already holds answers when it is opened (the worker was restarted after a crash)
    hands them all back on the first :meth:`drain`: answers got before the crash are not lost.
    """

    def __init__(self, base: os.PathLike | None, shard: Cache, refresh: bool = False):
        self.refresh = refresh
        self.shard = shard
        self.path = shard.path
        self._base = None
        if base is not None and not refresh:
            # immutable: nobody writes the copy, so SQLite needs no lock and no journal beside it
            self._base = sqlite3.connect(f"{Path(base).resolve().as_uri()}?immutable=1", uri=True,
                                         check_same_thread=False)
        self._lock = threading.Lock()
        self._new: dict[str, str] = shard.raw_items()

    def get(self, key: str) -> Any | None:
        return self.get_many([key]).get(key)

    def get_many(self, keys: list[str]) -> dict[str, Any]:
        if self.refresh or not keys:
            return {}
        found: dict[str, Any] = {}
        if self._base is not None:
            with self._lock:
                for start in range(0, len(keys), 500):
                    chunk = keys[start:start + 500]
                    marks = ",".join("?" * len(chunk))
                    for key, value in self._base.execute(f"SELECT key, value FROM answers WHERE key IN ({marks})",
                                                         chunk):
                        decoded = _decoded(value)
                        if decoded is not None:
                            found[key] = decoded
        found.update(self.shard.get_many(keys))
        return found

    def put(self, key: str, value: Any) -> None:
        self.put_many({key: value})

    def put_many(self, items: dict[str, Any]) -> None:
        if not items:
            return
        self.shard.put_many(items)
        with self._lock:
            self._new.update({k: json.dumps(v, ensure_ascii=False) for k, v in items.items()})

    def forget(self, keys) -> None:
        """Forget answers this worker stored (the user's cache, read-only here, keeps its own)."""
        keys = list(keys)
        self.shard.forget(keys)
        with self._lock:
            for key in keys:
                self._new.pop(key, None)

    def drain(self) -> dict[str, str]:
        """The answers stored since the last call, ``{key: JSON text}``; forgets them."""
        with self._lock:
            new, self._new = self._new, {}
        return new

    def __len__(self) -> int:
        return len(self.shard)

    def close(self) -> None:
        self.shard.close()
        if self._base is not None:
            self._base.close()
            self._base = None


def open_cache(cache_dir: os.PathLike | None = None, no_cache: bool = False, refresh: bool = False):
    """The cache a run should use, from the CLI / constructor options."""
    return NullCache() if no_cache else Cache(cache_dir, refresh=refresh)


class CachedAnswers:
    """For a judge with an answer cache: :attr:`cache` opens it on first use (from the options
    given to :meth:`use_cache`), :meth:`close` closes it; safe to call twice."""

    _cache = None
    _cache_options: tuple = (None, False, False)

    def use_cache(self, cache_dir: os.PathLike | None = None, no_cache: bool = False, refresh: bool = False) -> None:
        self._cache_options = (cache_dir, no_cache, refresh)
        self._cache = None

    @property
    def cache_settings(self) -> tuple:
        """``(cache_dir, no_cache, refresh)`` as given to :meth:`use_cache`."""
        return self._cache_options

    def set_cache(self, cache: AnswerCache) -> None:
        """Use ``cache``, opened elsewhere (a worker's :class:`ShardCache`), instead of opening one."""
        if not isinstance(cache, AnswerCache):
            raise TypeError(f"a cache must have get, get_many, put, put_many and close; got {type(cache).__name__}")
        self._cache = cache

    @property
    def cache(self) -> AnswerCache:
        if self._cache is None:
            self._cache = open_cache(*self._cache_options)
        return self._cache

    def close(self) -> None:
        if self._cache is not None:
            self._cache.close()
            self._cache = None
