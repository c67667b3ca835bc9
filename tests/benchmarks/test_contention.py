"""benchmarks/contention.py's case plan (issue 49): which runs it makes, without running doclens."""

from __future__ import annotations

import argparse

from benchmarks import contention


def _planned(tmp_path, monkeypatch, cases: list[str]) -> tuple[list[str], dict]:
    made: list[str] = []

    def fake_run(command, env, folder, name):
        made.append(name)
        return {"wall_s": 0.0, "cpu_s": 0.0}

    monkeypatch.setattr(contention, "_run", fake_run)
    args = argparse.Namespace(data=str(contention.DEFAULT_DATA), system="GPT-4", cases=cases, threads=None,
                              runtime=None, notes=None, source=True)
    return made, contention.run_level(args, 0, contention.REPO, tmp_path, "this")


def test_warm_alone_is_preceded_by_an_untimed_cold_run(tmp_path, monkeypatch):
    made, results = _planned(tmp_path, monkeypatch, ["warm"])
    assert made == ["cold-this-0", "warm-this-0"]  # the caches warm reads were filled first
    assert set(results) == {"warm"}  # and only warm is reported


def test_cold_and_warm_run_once_each(tmp_path, monkeypatch):
    made, results = _planned(tmp_path, monkeypatch, ["cold", "warm"])
    assert made == ["cold-this-0", "warm-this-0"] and set(results) == {"cold", "warm"}


def test_a_checkout_runs_as_installed_with_its_bytecode_compiled(tmp_path):
    """Round 17: each checkout's package is copied and compiled once, as pip installs it (no case
    pays for compiling the source); the copy's modules are the checkout's."""
    folder = contention.installed(contention.REPO, tmp_path, "this")
    copied = folder / "doclens" / "evaluators" / "rules" / "clinical_rules.py"
    assert copied.read_bytes() == (contention.REPO / "doclens" / "evaluators" / "rules" / "clinical_rules.py").read_bytes()
    assert list((copied.parent / "__pycache__").glob("clinical_rules.*.pyc"))
    assert contention.installed(contention.REPO, tmp_path, "this") == folder  # made once
