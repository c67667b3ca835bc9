"""The per-user key that seals every DocLens cache entry, and the seal itself (issue 47;
``docs/caches.md``): the one place that holds the key and computes or checks a seal.

A cache's checksum proves that an entry is whole, not who wrote it: whoever can write the cache
folder could store a well-formed entry and change a verdict. So every entry that can decide or feed
a verdict carries an HMAC-SHA256 of what it says (its kind, its key and its value), keyed by a
secret kept **outside** the cache folder: ``$DOCLENS_CACHE_KEY_FILE``, else
``$XDG_CONFIG_HOME/doclens/cache.key``, else ``~/.config/doclens/cache.key``. The file is made on
first use (32 random bytes as hex, mode 0600, in a folder of mode 0700, linked into place whole, so
two processes starting together agree on one key). An entry whose seal does not check (crafted,
another user's, or of a format older than the seal) is a miss for the cache that reads it.

A key file that cannot be made or read, is not the user's own, or can be read or written by others
is not used: the process seals with a random key of its own, with one warning (its caches then help
within the run only; entries of earlier runs are misses).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import secrets
import stat
from pathlib import Path

logger = logging.getLogger(__name__)

#: the environment variable that names the key file
KEY_ENV = "DOCLENS_CACHE_KEY_FILE"
#: bytes of the key; its file holds them as hex (and a newline)
KEY_BYTES = 32
#: bytes of a seal (a full HMAC-SHA256)
SEAL_BYTES = 32

#: keys read or made in this process, by key file (a test or a long-lived process may switch files)
_KEYS: dict[str, bytes] = {}
#: the same keys by the environment that names their file (:func:`key_file`): every seal reads the
#: key, and working out the file's path each time was 60 % of a seal's cost (issue 49)
_BY_ENVIRONMENT: dict[tuple[str | None, ...], bytes] = {}
#: key → an HMAC-SHA256 under it of nothing yet, which :func:`seal` copies
_KEYED: dict[bytes, hmac.HMAC] = {}


def key_file() -> Path:
    """Where the key is kept (module docstring)."""
    if os.environ.get(KEY_ENV):
        return Path(os.environ[KEY_ENV]).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "doclens" / "cache.key"


def _read(path: Path) -> bytes:
    """The key in ``path``; :class:`OSError` or :class:`ValueError` for a file that is not a key
    of this user's alone."""
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    try:
        info = os.fstat(descriptor)
        if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
            raise ValueError("it belongs to another user")
        if stat.S_IMODE(info.st_mode) & 0o077:
            raise ValueError(f"others may read or write it (mode {stat.S_IMODE(info.st_mode):o}; chmod 600 it)")
        text = os.read(descriptor, 4 * KEY_BYTES).decode("ascii").strip()
    finally:
        os.close(descriptor)
    key = bytes.fromhex(text)
    if len(key) != KEY_BYTES:
        raise ValueError(f"it holds {len(key)} bytes, not a key of {KEY_BYTES}")
    return key


def _make(path: Path) -> bytes:
    """A new key written to ``path`` whole (a private temporary file linked into place); the key
    already there when another process made it first."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    key = secrets.token_bytes(KEY_BYTES)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="ascii") as handle:
            handle.write(key.hex() + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(temporary, path)  # never replaces a key another process made meanwhile
        except FileExistsError:
            return _read(path)
    finally:
        temporary.unlink(missing_ok=True)
    return key


def cache_key() -> bytes:
    """This user's key (module docstring), read or made once per process and key file."""
    where = (os.environ.get(KEY_ENV), os.environ.get("XDG_CONFIG_HOME"), os.environ.get("HOME"))
    found = _BY_ENVIRONMENT.get(where)
    if found is None:
        found = _BY_ENVIRONMENT[where] = _key_of(key_file())
    return found


def _key_of(path: Path) -> bytes:
    """The key in ``path``, read or made once per process."""
    found = _KEYS.get(str(path))
    if found is None:
        try:
            found = _read(path)
        except FileNotFoundError:
            try:
                found = _make(path)
            except (OSError, ValueError) as exc:
                found = _process_key(path, exc)
        except (OSError, ValueError) as exc:
            found = _process_key(path, exc)
        _KEYS[str(path)] = found
    return found


def _process_key(path: Path, exc: BaseException) -> bytes:
    logger.warning("cache key %s cannot be used (%s: %s): this run seals its caches with a key of its own, so "
                   "they help within the run only (entries of earlier runs are computed again); make the file's "
                   "folder writable, or set %s to a file of your own", path, type(exc).__name__, exc, KEY_ENV)
    return secrets.token_bytes(KEY_BYTES)


def forget_keys() -> None:
    """Read the key again at the next seal (tests; a process that changed ``$DOCLENS_CACHE_KEY_FILE``)."""
    _KEYS.clear()
    _BY_ENVIRONMENT.clear()
    _KEYED.clear()


def seal(*parts: bytes | str) -> bytes:
    """The HMAC-SHA256 of ``parts`` (each length-prefixed, so no two sequences of parts collide)
    under this user's key."""
    key = cache_key()
    keyed = _KEYED.get(key)
    if keyed is None:  # the key's inner and outer pads hashed once, copied for each seal (issue 49)
        keyed = _KEYED[key] = hmac.new(key, digestmod=hashlib.sha256)
    digest = keyed.copy()
    for part in parts:
        data = part.encode("utf-8", "surrogatepass") if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.digest()


def sealed(tag: bytes | str, *parts: bytes | str) -> bool:
    """Whether ``tag`` (bytes, or their hex) is :func:`seal` of ``parts``, in constant time."""
    if isinstance(tag, str):
        try:
            tag = bytes.fromhex(tag)
        except ValueError:
            return False
    return isinstance(tag, bytes) and hmac.compare_digest(tag, seal(*parts))
