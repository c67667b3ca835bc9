"""Cache writers write whole files or none, whoever else writes the same file at the same time
(issue 50, "Writes are atomic"): two processes, two threads each, write one file over and over
while the test reads it; every read finds one writer's whole file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ROUNDS = 30

#: a writer process: two threads, each writing its own payload (different lengths, different
#: bytes) to one file ROUNDS times, through the writer named on the command line
WRITER = """
import sys, threading
from pathlib import Path
kind, path, tag = sys.argv[1], Path(sys.argv[2]), sys.argv[3]

def payload(thread):
    return (tag + str(thread)).encode() * (1_000_000 + 250_000 * thread)

if kind == "onnx":
    from doclens.evaluators.models import onnx_encoder
    onnx_encoder.export = lambda folder: payload(int(folder))  # the export itself is below the line tested
    onnx_encoder.onnx_path = lambda fingerprint, version, directory=None, graph=None: path

def write(thread):
    for _ in range({rounds}):
        if kind == "onnx":
            try:
                path.unlink()  # exported() writes only a file that is not there
            except FileNotFoundError:
                pass
            onnx_encoder.exported(str(thread), "f", path.parent)
        else:
            from doclens.evaluators.cache import write_sealed_json
            write_sealed_json(path, "test", "1", payload(thread).decode())

threads = [threading.Thread(target=write, args=(t,)) for t in (1, 2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
""".replace("{rounds}", str(ROUNDS))


def _whole(kind: str, data: bytes) -> bool:
    """Whether ``data`` is one writer's whole payload."""
    if kind == "onnx":  # the export as kept: sealed with the user's key (docs/caches.md)
        from doclens.core import sealing
        from doclens.evaluators.cache import SEALED_FILE_MAGIC

        start = len(SEALED_FILE_MAGIC) + sealing.SEAL_BYTES
        head, data = data[:start], data[start:]
        if head[:4] != SEALED_FILE_MAGIC or not sealing.sealed(head[4:], "file", "onnx export", "file.bin", data):
            return False
    if kind == "sealed":
        import json

        from doclens.core import sealing
        from doclens.evaluators.cache import _digest

        try:
            found = json.loads(data)
        except ValueError:
            return False
        data, sealed = found["data"].encode(), found
        if not sealing.sealed(sealed["hmac"], "json", sealed["format"], sealed["version"], _digest(sealed["data"])):
            return False
    for tag in ("A", "B"):
        for thread in (1, 2):
            if data == (tag + str(thread)).encode() * (1_000_000 + 250_000 * thread):
                return True
    return False


@pytest.mark.parametrize("kind", ["onnx", "sealed"])
def test_parallel_writers_never_leave_a_torn_file(tmp_path, kind):
    path = tmp_path / "cache" / "file.bin"
    path.parent.mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)}
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, kind, str(path), tag], env=env,
                                stderr=subprocess.PIPE) for tag in ("A", "B")]
    torn, reads = [], 0
    while any(w.poll() is None for w in writers):
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            continue
        reads += 1
        if not _whole(kind, data):
            torn.append(len(data))
    errors = [w.stderr.read().decode() for w in writers]
    assert [w.returncode for w in writers] == [0, 0], errors
    assert reads, "the test never saw the file: nothing was checked"
    assert torn == [], f"{len(torn)} of {reads} reads found a torn file"
    leftovers = [p.name for p in path.parent.iterdir() if p.name != path.name]
    assert leftovers == []  # no temporary file left behind


def test_an_export_never_writes_through_a_name_another_writer_may_hold(tmp_path, monkeypatch):
    """The ONNX export's temporary file was ``<name>.<pid>.tmp``: every thread of a process shared
    it. Here something else holds that name (a folder stands in for another thread's half-written
    file): the export is still written, whole, under a temporary name of its own."""
    from importlib.metadata import version

    pytest.importorskip("torch", reason="the export's file name carries torch's version")
    from doclens.evaluators.cache import read_sealed_file
    from doclens.evaluators.models import onnx_encoder

    payload = b"onnx" * 100_000
    monkeypatch.setattr(onnx_encoder, "export", lambda folder: payload)  # the export itself is below the line
    path = onnx_encoder.onnx_path("f", version("torch"), tmp_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.with_suffix(f".{os.getpid()}.tmp").mkdir()
    assert onnx_encoder.exported("folder", "f", tmp_path) == payload
    assert read_sealed_file(path, onnx_encoder.SEAL_KIND) == payload
