"""Writing files so that a crash, or another process writing the same file, never leaves half of
one: the one atomic write of the package (reports, results files, the judges' caches and model
exports all go through :func:`write_atomically`)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable


def write_atomically(path: str | os.PathLike[str], write: Callable, errors: str = "strict", binary: bool = False) -> None:
    """Call ``write(handle)`` on a temporary file next to ``path``, then rename it into place: a
    crash mid-write never leaves a truncated file. ``errors`` is the UTF-8 encoder's error
    handler (``"backslashreplace"`` shows a lone surrogate as ``\\udc00`` on an HTML page);
    ``binary``: the handle takes bytes.

    The temporary file has a name of its own (:func:`tempfile.mkstemp` in the same folder, so
    ``os.replace`` stays one rename on one filesystem): two writers never share one, and it is
    synced to disk before the rename, so the file in place is always a whole one. The folder is
    synced after the rename (:func:`_sync_folder`), so that the rename itself survives a power cut."""
    folder, name = os.path.split(os.path.abspath(os.fspath(path)))
    descriptor, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it private (0600); a report is not
        handle = os.fdopen(descriptor, "wb") if binary else os.fdopen(descriptor, "w", encoding="utf-8",
                                                                      errors=errors)
        with handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    _sync_folder(folder)


def _sync_folder(folder: str) -> None:
    """fsync ``folder`` (its entry for the renamed file) where the platform can: POSIX opens a
    folder with ``O_DIRECTORY``; Windows cannot open one through :func:`os.open`, and some
    filesystems refuse to sync one (``EINVAL``). There the file in place is still a whole one;
    only a power cut right after the rename could bring the old one back."""
    directory_flag = getattr(os, "O_DIRECTORY", None)
    if directory_flag is None:
        return
    try:
        descriptor = os.open(folder, os.O_RDONLY | directory_flag)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


_UMASK: list = []


def _umask() -> int:
    """The process's umask (read once: reading it means setting it)."""
    if not _UMASK:
        current = os.umask(0o022)
        os.umask(current)
        _UMASK.append(current)
    return _UMASK[0]


