"""The progress bar of ``doclens score``, as a user on a terminal sees it: a subprocess whose
stderr is a pseudo-terminal, judging through the local OpenAI-compatible test server with a
small latency, one request at a time, so that each instance's step is its own redraw."""

import fcntl
import json
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from doclens.engines.progress import InstanceSteps, usage_postfix
from tests.llm_server import FakeChatServer

ROOT = Path(__file__).resolve().parents[2]
N = 5


def _instances(n):
    return [{"id": f"v{i}", "prediction": f"Fever day {i} [0]. Cough [1].", "reference": f"Fever day {i}. Cough.",
             "source": [f"[patient] fever day {i}", "[patient] cough"],
             "reference_claims": [f"fever day {i}", "cough"], "prediction_claims": [f"fever day {i}"]}
            for i in range(n)]


def _run_on_pty(argv, cwd, env, timeout=120):
    """Run ``argv`` with stderr on a pseudo-terminal (stdout a pipe); ``(code, stdout, stderr)``."""
    main, secondary = pty.openpty()
    # a terminal 160 columns wide (a fresh pseudo-terminal has 0 columns: tqdm would draw nothing)
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 160, 0, 0))
    process = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=secondary,
                               stdin=subprocess.DEVNULL)
    os.close(secondary)
    captured = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([main], [], [], 0.2)
        if ready:
            try:
                data = os.read(main, 65536)
            except OSError:  # the terminal closed: the process is gone
                break
            if not data:
                break
            captured += data
        elif process.poll() is not None:
            break
    os.close(main)
    out = process.communicate(timeout=30)[0]
    return process.returncode, out.decode(), captured.decode(errors="replace")


def _env():
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MY_LLM_KEY": "sk-test", "COLUMNS": "160"}
    env.pop("NO_COLOR", None)
    return env


def test_bar_has_a_total_and_steps_per_instance_on_a_terminal(tmp_path):
    data = tmp_path / "in.jsonl"
    data.write_text("".join(json.dumps(i) + "\n" for i in _instances(N)))
    with FakeChatServer(latency=0.15) as server:
        code, out, err = _run_on_pty(
            [sys.executable, "-m", "doclens", "score", str(data), "--evaluator", "gpt4-json-cot",
             "--base-url", server.base_url, "--model", "test-model", "--api-key-env", "MY_LLM_KEY",
             "--concurrency", "1", "--no-cache", "-o", str(tmp_path / "out.json")], tmp_path, _env())
        requests = server.count
    assert code == 0, err
    steps = [int(k) for k in re.findall(rf"\b(\d+)/{N}\b", err)]
    assert steps, f"no bar with a total of {N} on the terminal: {err!r}"
    # one redraw per judged instance (the chunk holds all five: a per-chunk bar would jump 0 -> 5)
    assert set(range(1, N)) <= set(steps), steps
    assert steps == sorted(steps)
    # the postfix counts the calls made so far
    calls = [int(c) for c in re.findall(r"calls=(\d+)", err)]
    assert calls and calls == sorted(calls) and 0 < max(calls) <= requests
    assert json.loads((tmp_path / "out.json").read_text())["usage"]["calls"] == requests
    # a warning during the run is a line of its own above the bar, not glued into a redraw
    assert any(line.startswith("doclens: warning: no price known") for line in re.split(r"[\r\n]", err)), err


def test_no_bar_when_stderr_is_not_a_terminal_or_with_q(tmp_path):
    data = tmp_path / "in.jsonl"
    data.write_text("".join(json.dumps(i) + "\n" for i in _instances(2)))
    argv = [sys.executable, "-m", "doclens", "score", str(data), "--evaluator", "overlap",
            "-o", str(tmp_path / "o.json")]
    piped = subprocess.run(argv, cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120)
    assert piped.returncode == 0, piped.stderr
    assert "/2" not in piped.stderr and "instance/s" not in piped.stderr
    code, _, err = _run_on_pty(argv + ["-q"], tmp_path, _env())
    assert code == 0 and "/2" not in err and "instance" not in err


def test_steps_wait_for_every_request_of_an_instance():
    stepped = []
    # instance 0: two claim requests and one citation request; instance 1: nothing to judge
    steps = InstanceSteps(3, [(0, "recall", None), (0, "precision", None), (2, "recall", None)], [(0, 1)],
                          stepped.append)
    steps.claim_done(0)
    steps.claim_done(1)
    assert stepped == []  # instance 0 still waits for its citation
    steps.claim_done(2)
    assert stepped == [1]  # instance 2 is done
    steps.citation_done(0)
    assert stepped == [1, 1]
    steps.finish()  # instance 1 had no request: it steps at the end, once
    steps.finish()
    assert stepped == [1, 1, 1]


def test_postfix_counts_shared_counters_once():
    from doclens.evaluators.usage import Usage

    class Part:
        usage = Usage(calls=3, cached_calls=2)

        def price_per_million(self):
            return (1.0, 2.0, 0.5)

    judge = Part()
    extractor = Part()
    extractor.usage = judge.usage  # a chat judge's extractor shares its counters
    assert usage_postfix(judge, extractor) == "calls=3 cached=2 cost=$0.0000"


@pytest.mark.parametrize("style", ["json_cot", "cot"])
def test_chat_judge_reports_each_request_as_its_reply_is_read(style):
    from doclens.evaluators.base import ClaimRequest
    from doclens.evaluators.llm.openai_chat import OpenAIChatJudge

    done = []
    with FakeChatServer(latency=0.01) as server:
        judge = OpenAIChatJudge(model="test-model", base_url=server.base_url, style=style, no_cache=True,
                                concurrency=2)
        try:
            requests = [ClaimRequest("fever and cough", ["fever", "cough"]), ClaimRequest("rash", []),
                        ClaimRequest("rash", ["rash"])]
            answers = judge.judge_claims_many(requests, on_done=done.append)
        finally:
            judge.close()
    assert sorted(done) == [0, 1, 2]  # each request once, the empty one included
    assert [[a.entailed for a in row] for row in answers] == [[True, True], [], [True]]


def test_pairwise_judge_steps_in_groups_with_the_same_verdicts_and_counts():
    from doclens.evaluators.base import CitationRequest, ClaimRequest, Evaluator

    class Contains(Evaluator):
        batch_size = 1  # groups of at least 4 pairs

        def __init__(self):
            super().__init__()
            self.calls = []

        def entail_batch(self, pairs):
            self.calls.append(len(pairs))
            return [h in p for p, h in pairs]

    claims = [ClaimRequest(f"fever {i} cough", [f"fever {i}", "cough", "rash"]) for i in range(5)]
    claims.append(ClaimRequest("fever 0 cough", ["cough"]))  # a pair asked before: never again
    citations = [CitationRequest(f"fever {i}", {0: f"fever {i}", 1: "cough", 2: f"fever {i} cough"}) for i in range(4)]
    citations.append(CitationRequest("rash", {}))
    plain, stepped = Contains(), Contains()
    done = []
    assert plain.judge_claims_many(claims) == stepped.judge_claims_many(claims, on_done=done.append)
    assert done == list(range(6)) and len(stepped.calls) > 1 and plain.calls == [sum(stepped.calls)]
    done.clear()
    assert plain.judge_citations_many(citations) == stepped.judge_citations_many(citations, on_done=done.append)
    assert done == list(range(5)) and plain.usage.pairs == stepped.usage.pairs
