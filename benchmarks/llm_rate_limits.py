"""How closely the HTTP judge's ``rpm`` / ``tpm`` pacing meets its limits, and what it costs when
it does not bind.

Job: the ``mistral-cot`` judge over the first ``--instances`` ACI-BENCH test-1 notes (default 12:
60 calls; the fixed derived claims of ``benchmarks/llm_throughput.py``), concurrency 8, against
the local test server (``tests/llm_server.py``) answering each call after ``--latency`` s. The
server records when each request arrives.

Runs:
- ``unlimited``: no limits (the reference wall time);
- ``limits_not_binding``: ``rpm=1e6``, ``tpm=1e9`` — the limiter's own cost;
- ``rpm``: ``--rpm`` (default 1200: one request per 50 ms): arrival gaps (min, median) and the
  rate achieved, against the ideal wall (calls − 1) × 60 / rpm;
- ``tpm``: ``tpm`` set to the job's estimated prompt tokens ÷ 1.1, so the bucket (full at the
  start) runs dry and the last tenth waits for refills: wall against the ideal, 0.1 × 60 s = 6 s.

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from benchmarks.llm_throughput import build_instances  # noqa: E402
from doclens import DocLens, load_evaluator  # noqa: E402
from doclens.evaluators.usage import estimate_tokens  # noqa: E402
from tests.llm_server import FakeChatServer  # noqa: E402


def run(server, instances, arrivals: list, **limits) -> dict:
    arrivals.clear()
    evaluator = load_evaluator("mistral-cot", base_url=server.base_url, model="bench-model", concurrency=8,
                               no_cache=True, **limits)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = DocLens(evaluator).score(instances, progress=False)
    wall = time.perf_counter() - start
    evaluator.close()
    times = sorted(arrivals)
    gaps = [b - a for a, b in zip(times, times[1:])]
    return {"wall_s": round(wall, 3), "calls": len(times), "retries": evaluator.usage.retries,
            "min_gap_s": round(min(gaps), 4), "median_gap_s": round(statistics.median(gaps), 4),
            "scores": {k: report.scores[k] for k in ("claim_recall", "claim_precision")}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--instances", type=int, default=12)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--rpm", type=float, default=1200)
    args = parser.parse_args()
    instances = build_instances(args.instances)
    arrivals: list[float] = []
    tokens: list[int] = []

    def record(number, body):
        arrivals.append(time.monotonic())
        tokens.append(estimate_tokens(body["messages"]))
        return None  # the server's normal answer

    result = {"machine": platform.platform(), "python": platform.python_version(), "instances": len(instances),
              "latency_s": args.latency}
    with FakeChatServer(script=record, latency=args.latency) as server:
        result["unlimited"] = run(server, instances, arrivals)
        total_tokens = sum(tokens)
        result["limits_not_binding"] = run(server, instances, arrivals, rpm=1e6, tpm=1e9)
        rpm = run(server, instances, arrivals, rpm=args.rpm)
        span = sorted(arrivals)[-1] - sorted(arrivals)[0]
        rpm.update(rpm_limit=args.rpm, ideal_span_s=round((rpm["calls"] - 1) * 60 / args.rpm, 3),
                   span_s=round(span, 3), achieved_rpm=round((rpm["calls"] - 1) / span * 60, 1))
        result["rpm"] = rpm
        tpm_limit = total_tokens / 1.1
        tpm = run(server, instances, arrivals, tpm=tpm_limit)
        tpm.update(tpm_limit=round(tpm_limit), estimated_prompt_tokens=total_tokens,
                   ideal_wall_s=round((total_tokens - tpm_limit) * 60 / tpm_limit, 3))
        result["tpm"] = tpm
    result["scores_equal"] = len({json.dumps(result[k]["scores"]) for k in
                                  ("unlimited", "limits_not_binding", "rpm", "tpm")}) == 1
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
