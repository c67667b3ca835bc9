"""One output, one writer (issue 31): a second run on the same ``-o`` is refused at once (exit 2,
writing nothing) while the first goes on and leaves a whole report of its own input; temporary
files have names of their own. Two real processes against the local HTTP test server."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from doclens.reports.files import OutputLocked, output_lock, write_atomically
from doclens.reports.results_files import journal_path
from tests.evaluators.llm.test_llm_endpoint import INSTANCE
from tests.llm_server import FakeChatServer

ROOT = Path(__file__).resolve().parents[2]


def _input(path: Path, prefix: str) -> Path:
    path.write_text("".join(json.dumps(dict(INSTANCE, id=f"{prefix}{i}")) + "\n" for i in range(6)))
    return path


def _command(server, source: Path, output: Path) -> list[str]:
    return [sys.executable, "-m", "doclens", "score", str(source), "--evaluator", "gpt4-json-cot", "--base-url",
            server.base_url, "--model", "m", "--no-cache", "-q", "--concurrency", "1", "-o", str(output)]


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def test_two_runs_on_one_output_the_second_is_refused_and_the_first_writes_a_whole_report(tmp_path):
    output = tmp_path / "same.json"
    with FakeChatServer(latency=0.1) as server:  # 24 calls one at a time: the first run lasts seconds
        first = subprocess.Popen(_command(server, _input(tmp_path / "a.jsonl", "a"), output), env=_env(),
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(600):  # until the first run has its journal (it holds the lock before that)
            if os.path.exists(journal_path(str(output))) or first.poll() is not None:
                break
            time.sleep(0.05)
        assert first.poll() is None, first.communicate()
        before = server.count
        second = subprocess.run(_command(server, _input(tmp_path / "b.jsonl", "b"), output), env=_env(),
                                capture_output=True, text=True, timeout=120)
        assert second.returncode == 2, second.stderr
        assert f"another doclens run is writing {output}" in second.stderr
        out, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    assert not any("b0" in json.dumps(body) for body in server.requests[before:])  # the second asked nothing
    report = json.loads(output.read_text())
    assert [i["id"] for i in report["instances"]] == [f"a{i}" for i in range(6)]
    assert not os.path.exists(journal_path(str(output)))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.jsonl", "b.jsonl", "same.json"]  # no lock left, of any file
    with FakeChatServer() as server:  # the lock ended with its run: the next one on that output goes ahead
        again = subprocess.run(_command(server, tmp_path / "b.jsonl", output), env=_env(), capture_output=True,
                               text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert [i["id"] for i in json.loads(output.read_text())["instances"]] == [f"b{i}" for i in range(6)]


def test_the_api_refuses_an_output_another_run_holds(tmp_path):
    from doclens import DocLens, load_evaluator

    output = str(tmp_path / "scores.json")
    with output_lock(output):
        with pytest.raises(OutputLocked, match="another doclens run is writing"):
            DocLens(load_evaluator("gpt4-json-cot", base_url="http://127.0.0.1:9/v1", model="m",
                                   no_cache=True)).score_to(output, [INSTANCE], progress=False)
    assert not os.path.exists(output) and not os.path.exists(journal_path(output))


@pytest.mark.parametrize("held, fmt", [("r.instances.jsonl", "jsonl"), ("r.journal.jsonl", "json"),
                                       ("r.instances.parquet", "parquet")])
def test_a_run_is_refused_when_another_holds_any_file_it_would_write(tmp_path, capsys, held, fmt):
    """``-o r.json --output-format jsonl`` writes r.json, r.instances.jsonl and r.journal.jsonl: a
    run writing any of them (``-o r.instances.jsonl``) holds a lock this one must meet."""
    from doclens.cli import main

    source = _input(tmp_path / "in.jsonl", "a")
    with output_lock(str(tmp_path / held)):
        code = main(["score", str(source), "--evaluator", "overlap", "-q",
                     "-o", str(tmp_path / "r.json"), "--output-format", fmt])
        err = capsys.readouterr().err
        assert code == 2 and f"another doclens run is writing {tmp_path / held}" in err, err
    assert not (tmp_path / "r.json").exists()
    # the other way round: this run's files are locked for the whole run
    with output_lock(str(tmp_path / "r.json"), fmt):
        with pytest.raises(OutputLocked, match=f"writing {tmp_path / held}"):
            with output_lock(str(tmp_path / held)):
                pass


def test_a_folder_where_a_run_writes_a_file_or_its_lock_is_a_usage_error(tmp_path, capsys):
    from doclens.cli import main

    source = _input(tmp_path / "in.jsonl", "a")
    for name, folder in (("a", "a.json.lock"), ("b", "b.instances.jsonl"), ("c", "c.journal.jsonl.lock")):
        (tmp_path / folder).mkdir()
        code = main(["score", str(source), "--evaluator", "overlap", "-q",
                     "-o", str(tmp_path / f"{name}.json"), "--output-format", "jsonl"])
        err = capsys.readouterr().err
        assert code == 2 and "internal error" not in err and f"{tmp_path / folder} is a folder" in err, err
        assert not (tmp_path / f"{name}.json").exists()


def test_temporary_files_have_names_of_their_own(tmp_path):
    target = tmp_path / "scores.json"
    (tmp_path / "scores.json.tmp").mkdir()  # what a fixed temporary name would collide with
    write_atomically(target, lambda handle: handle.write("{}"))
    assert target.read_text() == "{}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scores.json", "scores.json.tmp"]
    assert (target.stat().st_mode & 0o777) == 0o666 & ~_umask()


def test_atomic_write_syncs_the_file_then_its_folder(tmp_path, monkeypatch):
    """The temporary file is synced before the rename and the folder after it (so the rename
    itself is on disk); a folder that refuses fsync (EINVAL on some filesystems) still gets a
    whole file and no error."""
    import errno
    import stat

    synced = []
    real_fsync = os.fsync

    def recording_fsync(descriptor):
        folder = stat.S_ISDIR(os.fstat(descriptor).st_mode)
        synced.append(("folder" if folder else "file", (tmp_path / "scores.json").exists()))
        real_fsync(descriptor)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    write_atomically(tmp_path / "scores.json", lambda handle: handle.write("{}"))
    assert synced == [("file", False), ("folder", True)]

    def folder_refuses(descriptor):
        if stat.S_ISDIR(os.fstat(descriptor).st_mode):
            raise OSError(errno.EINVAL, "Invalid argument")
        real_fsync(descriptor)

    monkeypatch.setattr(os, "fsync", folder_refuses)
    write_atomically(tmp_path / "scores.json", lambda handle: handle.write("[]"))
    assert (tmp_path / "scores.json").read_text() == "[]"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scores.json"]


def _umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current
