"""One persistent cache for every model call (``docs/design.md`` §3).

SQLite in WAL mode, safe with several writer threads and processes. Keys are SHA-256 hashes
of everything that can change an answer (model, endpoint kind, full prompt or input pair,
decoding parameters, prompt version); values are JSON (the raw reply and its token usage).
Rerunning an evaluation, or resuming one that crashed, pays for nothing twice.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any, Protocol, runtime_checkable


def default_cache_dir() -> Path:
    """``$DOCLENS_CACHE``, else ``$XDG_CACHE_HOME/doclens``, else ``~/.cache/doclens``."""
    if os.environ.get("DOCLENS_CACHE"):
        return Path(os.environ["DOCLENS_CACHE"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "doclens"


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


def write_rows(conn: sqlite3.Connection, statement: str, rows: list[tuple]) -> None:
    """``statement`` for each row, in one transaction (all rows or none)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.executemany(statement, rows)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


class BlobStore:
    """Blobs kept on disk by a binary key (a content hash), across runs and processes: one SQLite
    file, :attr:`FILE`, in a cache folder (default :func:`default_cache_dir`), opened on first use
    (a run that stores nothing leaves no file); WAL mode, so several processes may share it.
    Subclasses name the file, the table and its value column, and turn their values into blobs."""

    FILE = "blobs.sqlite"
    TABLE = "blobs"
    VALUE = "value"
    #: variables per SQL statement (SQLite's smallest build allows 999)
    _BATCH = 500

    def __init__(self, directory: os.PathLike | str | None = None):
        self.directory = Path(directory) if directory else default_cache_dir()
        self.path = self.directory / self.FILE
        self._local = threading.local()
        #: entries answered from the file, and written to it
        self.hits = 0
        self.stored = 0

    def _connect(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            self.directory.mkdir(parents=True, exist_ok=True)
            conn = open_sqlite(self.path)
            conn.execute(f"CREATE TABLE IF NOT EXISTS {self.TABLE} (key BLOB PRIMARY KEY, {self.VALUE} BLOB NOT NULL)")
            self._local.conn = conn
        return conn

    def get_blobs(self, keys: list[bytes]) -> dict[bytes, bytes]:
        """The stored blobs of those of ``keys`` that have one."""
        found: dict[bytes, bytes] = {}
        for start in range(0, len(keys), self._BATCH):
            part = keys[start:start + self._BATCH]
            found.update(self._connect().execute(
                f"SELECT key, {self.VALUE} FROM {self.TABLE} WHERE key IN ({','.join('?' * len(part))})", part))
        return found

    def put_blobs(self, rows: list[tuple[bytes, bytes]]) -> None:
        if rows:
            write_rows(self._connect(), f"INSERT OR REPLACE INTO {self.TABLE} (key, {self.VALUE}) VALUES (?, ?)", rows)

    def __len__(self) -> int:
        return int(self._connect().execute(f"SELECT COUNT(*) FROM {self.TABLE}").fetchone()[0])

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


class Cache:
    """``get(key)`` / ``put(key, value)`` over a SQLite file.

    ``refresh=True`` ignores stored answers (every call is made again) but stores the new ones.
    """

    def __init__(self, directory: os.PathLike | None = None, refresh: bool = False):
        self.directory = Path(directory) if directory else default_cache_dir()
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path = self.directory / "cache.sqlite"
        self.refresh = refresh
        self._local = threading.local()
        with self._connect() as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, value TEXT NOT NULL, "
                         "created REAL DEFAULT (julianday('now')))")

    def _connect(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = open_sqlite(self.path)
        return conn

    def get(self, key: str) -> Any | None:
        if self.refresh:
            return None
        row = self._connect().execute("SELECT value FROM answers WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def get_many(self, keys: list[str]) -> dict[str, Any]:
        if self.refresh or not keys:
            return {}
        found: dict[str, Any] = {}
        conn = self._connect()
        for start in range(0, len(keys), 500):
            chunk = keys[start:start + 500]
            marks = ",".join("?" * len(chunk))
            for key, value in conn.execute(f"SELECT key, value FROM answers WHERE key IN ({marks})", chunk):
                found[key] = json.loads(value)
        return found

    def put(self, key: str, value: Any) -> None:
        self.put_many({key: value})

    def put_many(self, items: dict[str, Any]) -> None:
        if not items:
            return
        rows = [(k, json.dumps(v, ensure_ascii=False)) for k, v in items.items()]
        write_rows(self._connect(), "INSERT OR REPLACE INTO answers (key, value) VALUES (?, ?)", rows)

    def put_raw_many(self, items: dict[str, str]) -> None:
        """Store answers already encoded as JSON text (a worker's shard merged back in); a key
        already present is replaced, as :meth:`put_many` does, so a key is never stored twice."""
        if not items:
            return
        write_rows(self._connect(), "INSERT OR REPLACE INTO answers (key, value) VALUES (?, ?)", list(items.items()))

    def forget(self, keys) -> None:
        """Remove the answers stored under ``keys`` (replies that left items unparsed: a rerun
        asks those calls again instead of reading the same unreadable reply)."""
        keys = list(keys)
        if keys:
            self._connect().executemany("DELETE FROM answers WHERE key = ?", [(k,) for k in keys])

    def raw_items(self) -> dict[str, str]:
        """Every stored answer as ``{key: JSON text}`` (meant for a worker's shard, which is small)."""
        return dict(self._connect().execute("SELECT key, value FROM answers"))

    def snapshot(self) -> bytes:
        """A consistent copy of the whole cache file, as bytes (SQLite's online backup, so writers
        elsewhere are not disturbed): what :class:`ShardCache` workers read instead of this file."""
        import tempfile

        with tempfile.TemporaryDirectory(prefix="doclens-snapshot-") as folder:
            copy = sqlite3.connect(os.path.join(folder, "cache.sqlite"))
            try:
                self._connect().backup(copy)
            finally:
                copy.close()
            return Path(folder, "cache.sqlite").read_bytes()

    def __len__(self) -> int:
        return self._connect().execute("SELECT COUNT(*) FROM answers").fetchone()[0]

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


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
    read-only copy of the user's cache (``base``, a file or ``None``) and then the worker's own
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
                        found[key] = json.loads(value)
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
