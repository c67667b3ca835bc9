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
from typing import Any, Optional


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


class Cache:
    """``get(key)`` / ``put(key, value)`` over a SQLite file.

    ``refresh=True`` ignores stored answers (every call is made again) but stores the new ones.
    """

    def __init__(self, directory: Optional[os.PathLike] = None, refresh: bool = False):
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
            conn = sqlite3.connect(self.path, timeout=60, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
        return conn

    def get(self, key: str) -> Optional[Any]:
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
        conn = self._connect()
        rows = [(k, json.dumps(v, ensure_ascii=False)) for k, v in items.items()]
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany("INSERT OR REPLACE INTO answers (key, value) VALUES (?, ?)", rows)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

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

    def __len__(self) -> int:
        return 0

    def close(self) -> None:
        pass


def open_cache(cache_dir: Optional[os.PathLike] = None, no_cache: bool = False, refresh: bool = False):
    """The cache a run should use, from the CLI / constructor options."""
    return NullCache() if no_cache else Cache(cache_dir, refresh=refresh)


class CachedAnswers:
    """For a judge with an answer cache: :attr:`cache` opens it on first use (from the options
    given to :meth:`use_cache`), :meth:`close` closes it; safe to call twice."""

    _cache = None
    _cache_options: tuple = (None, False, False)

    def use_cache(self, cache_dir: Optional[os.PathLike] = None, no_cache: bool = False, refresh: bool = False) -> None:
        self._cache_options = (cache_dir, no_cache, refresh)
        self._cache = None

    @property
    def cache(self):
        if self._cache is None:
            self._cache = open_cache(*self._cache_options)
        return self._cache

    def close(self) -> None:
        if self._cache is not None:
            self._cache.close()
            self._cache = None
