"""The Ray watchdog (doclens/engines/reaper.py) ends what ``ray.init`` started and its descendants,
known by process id, and never another child of the driver — whatever its command line holds."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from doclens.engines.reaper import running

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="the watchdog reads /proc (Linux only)")

REPO = Path(__file__).resolve().parents[2]

#: a harmless process whose command line holds the bytes "ray" ("/home/ray", "array")
SLEEPER = [sys.executable, "-c", "import time; time.sleep(600)", "/home/ray/array.npy"]

#: a fake driver: a child of its own before Ray, the watchdog (the engine's own start and "ready"),
#: a "raylet" started while "ray.init" runs (it starts a "worker" afterwards, like Ray's agents),
#: and another child of its own after Ray; it prints the pids and waits to be killed
DRIVER = f"""
import subprocess, sys, time
from doclens.engines.ray import _start_reaper, _tell_reaper
SLEEPER = {SLEEPER!r}
before = subprocess.Popen(SLEEPER)
reaper = _start_reaper()
raylet = subprocess.Popen([sys.executable, "-c", "import subprocess, sys, time; time.sleep(1); "
                           "w = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)']); "
                           "print(w.pid, flush=True); time.sleep(600)"], stdout=subprocess.PIPE)
time.sleep(1)  # ray.init takes a while: the watchdog looks meanwhile
_tell_reaper(reaper)
after = subprocess.Popen(SLEEPER)
worker = int(raylet.stdout.readline())
print(before.pid, after.pid, raylet.pid, worker, flush=True)
time.sleep(600)
"""


def _start(pid: int) -> bytes:
    return (Path("/proc") / str(pid) / "stat").read_bytes().rsplit(b")", 1)[1].split()[19]


def test_a_dead_driver_loses_what_ray_init_started_and_keeps_its_other_children():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)}
    driver = subprocess.Popen([sys.executable, "-c", DRIVER], stdout=subprocess.PIPE, env=env)
    pids: list[int] = []
    try:
        pids = [int(word) for word in driver.stdout.readline().split()]
        assert len(pids) == 4, "the fake driver did not start its processes"
        noted = {pid: _start(pid) for pid in pids}
        before, after, raylet, worker = pids
        time.sleep(1.5)  # the watchdog has looked at least twice since the worker started
        driver.send_signal(signal.SIGKILL)
        driver.wait()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (running(raylet, noted[raylet]) or running(worker, noted[worker])):
            time.sleep(0.2)
        assert not running(raylet, noted[raylet]), "a process ray.init started outlived the driver"
        assert not running(worker, noted[worker]), "a process Ray's own started outlived the driver"
        # the watchdog's grace is over (it ended both): the driver's own children, whose command
        # lines hold "/home/ray" and "array", still run
        assert running(before, noted[before]) and running(after, noted[after])
    finally:
        driver.kill()
        driver.wait()
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
