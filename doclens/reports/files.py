"""Saving a report somewhere even when its chosen path fails, the output's lock and the names of
the files a run writes. The atomic write itself (:func:`write_atomically`, whole or not at all)
is :mod:`doclens.core.files`'s, so that the caches of the judges' layer use the same one."""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
import time
from pathlib import Path

from doclens.core.errors import ConfigurationError, InputError
from doclens.core.files import write_atomically as write_atomically  # re-exported: the report writers' name


class OutputLocked(ConfigurationError):
    """Another run holds the lock on this output."""


def lock_path(output: str) -> str:
    """``scores.json`` → ``scores.json.lock``: the lock a run holds on a file it writes (the
    output, its journal, its results file) while it runs; removed when the run ends."""
    return f"{output}.lock"


def run_files(output: str, output_format: str = "json") -> list[str]:
    """Every file a run writing ``output`` in ``output_format`` writes: the output, its journal
    and, for ``jsonl`` / ``parquet``, its results file (:mod:`doclens.reports.results_files`)."""
    from doclens.reports.results_files import instances_path, journal_path

    files = [output, journal_path(output)]
    if output_format in ("jsonl", "parquet"):
        files.append(instances_path(output, output_format))
    return files


def written_files(output: str, output_format: str = "json") -> list[str]:
    """Every file a run writing ``output`` may create or replace: :func:`run_files`, their locks
    and the partial report's other name (:func:`partial_path`); what must never be an input
    (none for ``-``, standard output)."""
    if output == "-":
        return []
    files = run_files(output, output_format)
    return [*files, *(lock_path(f) for f in files), partial_path(output)]


@contextlib.contextmanager
def output_lock(output: str, output_format: str = "json"):
    """Hold the lock on every file a run writing ``output`` writes (:func:`run_files`) for the
    block; :class:`OutputLocked` at once (no waiting), naming the file, when another run holds
    one of them. One file, one writer: two runs sharing a file (``-o r.json --output-format
    jsonl`` and ``-o r.instances.jsonl``) would overwrite each other's results. An OS lock
    (``filelock``, ``flock`` on POSIX): it ends with its process, so a killed run never leaves a
    stale lock. A folder where a file or its lock goes is an :class:`InputError`. The lock files
    are removed when the block ends, while still held; a run that locked a file removed so under
    it (it opened the file just before) sees that the path is no longer its file and locks the new
    one, so two runs never both hold a file."""
    if output == "-":
        yield
        return
    held: list = []
    try:
        for path in run_files(output, output_format):
            for target in (path, lock_path(path)):
                if os.path.isdir(target):
                    what = path if target == path else f"the lock of {path}"
                    raise InputError(f"{target} is a folder, where this run writes a file ({what}); remove it or "
                                     "choose another --output", field="--output")
            held.append((_lock_one(path), lock_path(path)))
        yield
    finally:
        for lock, path in reversed(held):
            with contextlib.suppress(OSError):
                os.unlink(path)
            lock.release()


def _lock_one(path: str):
    """The acquired lock of ``path`` (:func:`output_lock`)."""
    from filelock import FileLock, Timeout

    where = lock_path(path)
    for _ in range(5):
        lock = FileLock(where, timeout=0)
        try:
            lock.acquire()
        except Timeout:
            raise OutputLocked(f"another doclens run is writing {path} (it holds {where}); wait for it "
                               "to end or choose another --output") from None
        except OSError as exc:
            raise InputError(f"cannot lock {path}: {where}: {exc.strerror or exc}", field="--output") from None
        if _holds(lock, where):
            break
        lock.release()  # the file was removed by the run before: lock the one at the path now
    return lock


def _holds(lock, path: str) -> bool:
    """Whether the file ``lock`` holds is still the one at ``path`` (not removed by a run that
    ended); ``True`` where the lock's descriptor cannot be read (another platform or version)."""
    descriptor = getattr(getattr(lock, "_context", None), "lock_file_fd", None)
    if not isinstance(descriptor, int):
        return True
    try:
        held, current = os.fstat(descriptor), os.stat(path)
    except OSError:
        return False
    return (held.st_dev, held.st_ino) == (current.st_dev, current.st_ino)


def is_complete_report(path: str) -> bool:
    """Whether ``path`` holds something a partial report must not replace: any existing file
    except a DocLens report marked ``"partial": true`` (:meth:`Report.save` writes that field
    near the top, so the first 64 KiB are read)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(1 << 16)
    except OSError:
        return False
    return not re.search(rb'"partial"\s*:\s*true', head)


def partial_path(output: str) -> str:
    """``scores.json`` → ``scores.partial.json``: where a partial report goes when ``output``
    already holds a complete one."""
    path = Path(output)
    return str(path.with_name(path.stem + ".partial" + (path.suffix or ".json")))


def fallback_path(output: str) -> str:
    """Where a report goes when ``output`` cannot be written: a timestamped file in the current
    folder, else in the temporary folder."""
    name = f"doclens-report-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.json"
    for folder in (Path.cwd(), Path(tempfile.gettempdir())):
        if os.access(folder, os.W_OK | os.X_OK):
            return str(folder / name)
    return str(Path(tempfile.gettempdir()) / name)


def save_report(report, output: str) -> tuple[str | None, str | None]:
    """Save ``report`` to ``output`` (``-``: stdout). A partial report never replaces an existing
    complete one: it goes to :func:`partial_path` instead. Returns ``(path written, error)``:
    when writing to the chosen path fails the report goes to a fallback file (the current folder,
    else the temporary folder), and ``error`` says why."""
    if output == "-":
        report.write(sys.stdout)
        sys.stdout.write("\n")
        sys.stdout.flush()
        return "-", None
    target = partial_path(output) if report.partial and Path(output).exists() and is_complete_report(output) \
        else output
    try:
        report.save(target)
        return target, None
    except (OSError, ValueError) as exc:
        problem = f"cannot write {target} ({exc.strerror if isinstance(exc, OSError) else exc})"
    fallback = fallback_path(output)
    try:
        report.save(fallback)
    except (OSError, ValueError) as exc:
        return None, f"{problem}; the fallback {fallback} failed too ({exc}): the report is lost"
    return fallback, f"{problem}; the report was written to {fallback} instead"
