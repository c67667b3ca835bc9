"""The watchdog that ends the Ray processes a driver started when the driver dies without
``ray.shutdown`` (``kill -9``, an out-of-memory kill): Ray's own fate sharing stops its raylet
and GCS with the driver, but the agents the raylet started (``ray::DashboardAgent``,
``ray::RuntimeEnvAgent``) are re-parented and keep running (measured with Ray 2.60).

:class:`doclens.engines.ray.RayScoring` starts it (``python -m doclens.engines.reaper PID``) right
after it starts a local Ray instance, holding the write end of its standard input. The watchdog
notes, twice a second, every descendant of the driver whose command line names Ray (pid and start
time, read from ``/proc``: Linux only). A clean end writes ``done`` (after ``ray.shutdown``) and
the watchdog exits; end of input without it means the driver died: every noted process still
running (same pid, same start time) gets SIGTERM, then SIGKILL after a grace period.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time

#: seconds between two looks at the driver's descendants, and the grace between SIGTERM and SIGKILL
INTERVAL = 0.5
GRACE = 3.0
DONE = b"done"


def _stat(pid: int) -> tuple[int, bytes, bytes] | None:
    """``(parent pid, start time, state)`` of ``pid`` from ``/proc`` (``None``: gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    fields = data[data.rindex(b")") + 2:].split()  # the command name may hold spaces and brackets
    return int(fields[1]), fields[19], fields[0]


def _command(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read()
    except OSError:
        return b""


def descendants(root: int) -> dict[int, bytes]:
    """Every live descendant of ``root``: pid → start time."""
    children: dict[int, list[tuple[int, bytes]]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            found = _stat(int(name))
            if found is not None:
                children.setdefault(found[0], []).append((int(name), found[1]))
    result: dict[int, bytes] = {}
    stack = [root]
    while stack:
        for pid, start in children.get(stack.pop(), []):
            if pid not in result:
                result[pid] = start
                stack.append(pid)
    return result


def running(pid: int, start: bytes) -> bool:
    """Whether the process noted as (``pid``, ``start``) still runs (a zombie has ended)."""
    found = _stat(pid)
    return found is not None and found[1] == start and found[2] != b"Z"


def ray_descendants(root: int) -> dict[int, bytes]:
    """The descendants of ``root`` whose command line names Ray."""
    return {pid: start for pid, start in descendants(root).items() if pid != os.getpid() and b"ray" in _command(pid)}


def watch(driver: int, stream) -> bool:
    """Note the driver's Ray processes until ``stream`` ends; end those still running unless the
    driver said ``done``. Returns whether anything had to be ended."""
    noted: dict[int, bytes] = {}
    while True:
        ready, _, _ = select.select([stream], [], [], INTERVAL)
        if ready:
            line = stream.readline()
            if line.strip() == DONE:
                return False
            if not line:
                break
        noted.update(ray_descendants(driver))
    left = {pid: start for pid, start in noted.items() if running(pid, start)}
    for how in (signal.SIGTERM, signal.SIGKILL):
        for pid, start in left.items():
            if running(pid, start):
                try:
                    os.kill(pid, how)
                except OSError:
                    pass
        deadline = time.monotonic() + GRACE
        while time.monotonic() < deadline and any(running(pid, start) for pid, start in left.items()):
            time.sleep(0.1)
    return bool(left)


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C meant for the driver: the driver cleans up
    watch(int(sys.argv[1]), sys.stdin.buffer)
