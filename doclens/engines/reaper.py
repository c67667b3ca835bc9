"""The watchdog that ends the Ray processes a driver started when the driver dies without
``ray.shutdown`` (``kill -9``, an out-of-memory kill): Ray's own fate sharing stops its raylet
and GCS with the driver, but the agents the raylet started (``ray::DashboardAgent``,
``ray::RuntimeEnvAgent``) are re-parented and keep running (measured with Ray 2.60).

:class:`doclens.engines.ray.RayScoring` starts it (``python -m doclens.engines.reaper PID``) right
before it starts a local Ray instance, holding the write end of its standard input. The watchdog
knows Ray's processes by process id, never by name (a command line that merely contains the
bytes ``ray`` — ``/home/ray``, ``array.npy`` — is nobody's evidence):

- it notes the driver's descendants when it starts (those are never Ray's) and writes one line;
  the driver waits for that line before it calls ``ray.init``;
- while ``ray.init`` runs, the driver's descendants that were not there when the watchdog started
  (nor below one that was) are Ray's: ``ray.init`` is what the driver is doing (its GCS, raylet,
  log monitor);
- when ``ray.init`` has returned the driver writes ``ready`` and waits for the answer: from then
  on only the processes noted so far and their descendants (the raylet's agents and workers) are
  noted, never another child of the driver.

It notes them twice a second (pid and start time, read from ``/proc``: Linux only). A clean end
writes ``done`` (after ``ray.shutdown``) and the watchdog exits; end of input without it means the
driver died: every noted process still running (same pid, same start time) gets SIGTERM, then
SIGKILL after a grace period.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time
from collections.abc import Mapping
from typing import BinaryIO

#: seconds between two looks at the driver's descendants, and the grace between SIGTERM and SIGKILL
INTERVAL = 0.5
GRACE = 3.0
DONE = b"done"
READY = b"ready"


def _stat(pid: int) -> tuple[int, bytes, bytes] | None:
    """``(parent pid, start time, state)`` of ``pid`` from ``/proc`` (``None``: gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    fields = data[data.rindex(b")") + 2:].split()  # the command name may hold spaces and brackets
    return int(fields[1]), fields[19], fields[0]


def _children() -> dict[int, list[tuple[int, bytes]]]:
    """Every live process's children: parent pid → [(pid, start time)]."""
    children: dict[int, list[tuple[int, bytes]]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            found = _stat(int(name))
            if found is not None:
                children.setdefault(found[0], []).append((int(name), found[1]))
    return children


def descendants(root: int, skip: Mapping[int, bytes] | None = None) -> dict[int, bytes]:
    """Every live descendant of ``root``: pid → start time; the processes in ``skip`` (pid → start
    time) and everything below them are left out."""
    skip = skip or {}
    children = _children()
    result: dict[int, bytes] = {}
    stack = [root]
    while stack:
        for pid, start in children.get(stack.pop(), []):
            if pid not in result and skip.get(pid) != start:
                result[pid] = start
                stack.append(pid)
    return result


def running(pid: int, start: bytes) -> bool:
    """Whether the process noted as (``pid``, ``start``) still runs (a zombie has ended)."""
    found = _stat(pid)
    return found is not None and found[1] == start and found[2] != b"Z"


def started_by(roots: Mapping[int, bytes]) -> dict[int, bytes]:
    """The processes in ``roots`` (pid → start time) still running, and all their descendants."""
    result: dict[int, bytes] = {}
    for pid, start in roots.items():
        if running(pid, start):
            result[pid] = start
            result.update(descendants(pid))
    return result


def _start_time(pid: int) -> bytes | None:
    found = _stat(pid)
    return None if found is None else found[1]


class _Watch:
    """What one watch has learnt: the driver's processes from before Ray (never Ray's), whether
    ``ray.init`` has returned (``ready``), the processes it started (``roots``) and every process
    noted."""

    def __init__(self, driver: int):
        self.driver = driver
        self.before = descendants(driver)
        self.before[os.getpid()] = _start_time(os.getpid()) or b""
        self.ready = False
        self.roots: dict[int, bytes] = {}
        self.noted: dict[int, bytes] = {}

    def ray_started(self) -> None:
        """``ray.init`` has returned: from now on, only what it started and their descendants."""
        if not self.ready:
            self.look()  # the last processes ray.init started
            self.roots = dict(self.noted)
            self.ready = True

    def look(self) -> None:
        if self.ready:
            self.noted.update(started_by(self.roots))
        else:  # ray.init is running: what appeared under the driver since the watch began
            self.noted.update(descendants(self.driver, skip=self.before))


def end(noted: Mapping[int, bytes]) -> bool:
    """SIGTERM, then after :data:`GRACE` SIGKILL, to each noted process still running; returns
    whether any was."""
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


def _say(answer: BinaryIO | None, word: bytes) -> None:
    if answer is not None:
        answer.write(word + b"\n")
        answer.flush()


def watch(driver: int, stream: BinaryIO, answer: BinaryIO | None = None) -> bool:
    """Note the driver's Ray processes until ``stream`` ends; end those still running unless the
    driver said ``done``. ``answer`` hears ``watching`` once the driver's processes from before
    Ray are noted and ``ready`` once the watch keeps to what ``ray.init`` started (the driver
    waits for each). Returns whether anything had to be ended."""
    state = _Watch(driver)
    _say(answer, b"watching")
    pending = b""
    while True:
        if select.select([stream], [], [], INTERVAL)[0]:
            data = os.read(stream.fileno(), 4096)  # unbuffered: select sees all that is unread
            if not data:
                break
            *lines, pending = (pending + data).split(b"\n")
            for line in lines:
                if line.strip() == DONE:
                    return False
                if line.strip() == READY:
                    state.ray_started()
                    _say(answer, READY)
        state.look()
    return end(state.noted)


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C meant for the driver: the driver cleans up
    watch(int(sys.argv[1]), sys.stdin.buffer, sys.stdout.buffer)
