"""How LLM runs behave when the endpoint misbehaves: wall time, retries, failed calls.

Job: the ``mistral-cot`` judge over the 40 ACI-BENCH test-1 notes (``../shared/data``, read in
place) with the fixed derived claims of ``benchmarks/llm_throughput.py`` (200 calls), against
the local test server (``tests/llm_server.py``) answering each call after ``--latency`` s.

Runs:
- ``faults_30``: 30 % of requests misbehave (seeded; 500, 429 with good and garbage
  ``Retry-After``, ``retry-after-ms``, 503 + ``x-should-retry``, an HTML 200, truncated JSON, a
  connection cut mid-reply or reset — no hangs), default retries and backoff: wall time, retries,
  failed calls, and whether the verdicts equal a fault-free run's;
- ``faults_30_one_retry``: the same with ``max_retries=1``, so some calls fail for good; then a
  rerun against the healthy server: how many calls it makes (should equal the failed calls) and
  whether its verdicts then equal the fault-free run's;
- ``dead_endpoint``: a port nobody listens on, all defaults: time until the circuit breaker stops
  the run;
- ``hung_endpoint``: a server that never answers, ``--hang-timeout`` per request (default 2 s;
  the projection for the default 60 s adds 58 s per round of timeouts), everything else default:
  time until the breaker stops.

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import platform
import socket
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from benchmarks.llm_throughput import build_instances  # noqa: E402
from doclens import DocLens, load_evaluator  # noqa: E402
from doclens.core.errors import RunStoppedError  # noqa: E402
from tests.llm_server import FAULT_KINDS, FakeChatServer, Reply, faults  # noqa: E402

KINDS = tuple(k for k in FAULT_KINDS if k not in ("hang", "garbage"))


def verdicts(report) -> list:
    return [(r.id, c.text, c.status, c.entailed) for r in report.instances
            for c in r.reference_claims + r.prediction_claims]


def run(url: str, instances, **options):
    evaluator = load_evaluator("mistral-cot", base_url=url, model="bench-model", **options)
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            report = DocLens(evaluator).score(instances, progress=False)
        stopped = None
    except RunStoppedError as exc:
        report, stopped = exc.partial_report, exc.reason
    finally:
        evaluator.close()
    return report, evaluator.usage, round(time.perf_counter() - start, 3), stopped


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--instances", type=int, default=40)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--hang-timeout", type=float, default=2.0)
    args = parser.parse_args()
    instances = build_instances(args.instances)
    result = {"machine": platform.platform(), "python": platform.python_version(), "instances": len(instances),
              "latency_s": args.latency}

    with FakeChatServer(latency=args.latency) as server:
        clean, usage, wall, _ = run(server.base_url, instances, no_cache=True)
        result["fault_free"] = {"calls": usage.calls, "wall_s": wall}
        server.script = faults(0.3, KINDS, seed=1)
        report, usage, wall, stopped = run(server.base_url, instances, no_cache=True)
        result["faults_30"] = {"calls": usage.calls, "retries": usage.retries, "failed_calls": usage.failed_calls,
                               "failed_items": sum(report.failed.values()), "wall_s": wall, "stopped": stopped,
                               "verdicts_equal_fault_free": verdicts(report) == verdicts(clean),
                               "unaffected_items_equal_fault_free": all(
                                   got == want or got[2] == "failed"
                                   for got, want in zip(verdicts(report), verdicts(clean)))}
        with tempfile.TemporaryDirectory() as cache:
            server.script = faults(0.3, KINDS, seed=2)
            report, usage, wall, stopped = run(server.base_url, instances, cache_dir=cache, max_retries=1,
                                               max_consecutive_failures=0)
            failed_items = sum(report.failed.values())
            before = server.count
            server.script = None
            again, rerun_usage, rerun_wall, _ = run(server.base_url, instances, cache_dir=cache)
            result["faults_30_one_retry"] = {
                "calls": usage.calls, "retries": usage.retries, "failed_calls": usage.failed_calls,
                "failed_items": failed_items, "wall_s": wall, "stopped": stopped,
                "unaffected_items_equal_fault_free": all(
                    got == want or got[2] == "failed" for got, want in zip(verdicts(report), verdicts(clean))),
                "rerun_calls": server.count - before, "rerun_wall_s": rerun_wall,
                "rerun_equals_fault_free": verdicts(again) == verdicts(clean)}

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    report, usage, wall, stopped = run(f"http://127.0.0.1:{port}/v1", instances, no_cache=True)
    result["dead_endpoint"] = {"wall_s": wall, "stopped": stopped, "retries": usage.retries}

    with FakeChatServer(script=lambda n, body: Reply(hang=True)) as server:
        report, usage, wall, stopped = run(server.base_url, instances, no_cache=True, timeout=args.hang_timeout)
        rounds = server.count / 8  # requests in flight at once: the default concurrency
        result["hung_endpoint"] = {"timeout_s": args.hang_timeout, "wall_s": wall, "stopped": stopped,
                                   "requests": server.count, "rounds_of_timeouts": rounds,
                                   # each round of timeouts takes 60 s instead of --hang-timeout; backoffs stay
                                   "projected_wall_s_at_default_timeout_60": round(
                                       wall + rounds * (60 - args.hang_timeout))}
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
