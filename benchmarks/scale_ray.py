"""Scaling out with ``--engine ray``: one Ray worker against two, against a latency-bound judge.

The Ray half of the scale benchmark (``benchmarks/scale.py`` measures streaming on one machine).
Job: ``--instances`` synthetic instances (default 512; distinct texts, so no answer is asked
twice), each with 3 reference claims, 2 prediction claims and 2 cited statements, judged by
``gpt4-json-cot`` over real HTTP against the local test server (``tests/llm_server.py``), which
answers every request after ``--latency`` seconds (default 0.2 s): 4 calls per instance. Every
judge, in every worker, has the same ``--concurrency`` (default 4) requests in flight; no cache.

Runs, in one process: the single-process engine (the reference); Ray started once on this machine
(``ray_init_s``); then the Ray engine with 1 worker and with 2 workers. Each Ray wall includes
building the dataset, starting the actors (each builds its judge) and the clean-up of the run,
but not ``ray.init``; ``ray_2_workers_speedup_with_init`` charges ``ray_init_s`` to both runs, as
two separate ``doclens score --engine ray`` commands would pay it.

Prints one JSON object. Target: ``ray_2_workers_speedup`` ≥ 1.7 with identical scores
(``identical_reports``: scores, per-instance results and signature equal across the three runs).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from doclens import DocLens, load_evaluator  # noqa: E402
from doclens.engines.ray import require_ray, score_on_ray  # noqa: E402
from tests.llm_server import FakeChatServer  # noqa: E402


def build_instances(count: int) -> list[dict]:
    words = ["fever", "cough", "rash", "nausea", "headache", "fatigue", "dizziness", "chills"]
    instances = []
    for i in range(count):
        a, b, c = words[i % 8], words[(i // 8) % 8], words[(i // 64) % 8]
        instances.append({
            "id": f"s{i}",
            "prediction": f"The patient reports {a} since day {i} [0]. No {b} on exam {i} [1][2].",
            "reference": f"Reports {a} since day {i}. No {b} on exam {i}. Plan {c} review {i}.",
            "source": [f"patient: {a} since day {i}", f"doctor: no {b} on exam {i}", f"doctor: plan {c} {i}"],
            "reference_claims": [f"Reports {a} since day {i}.", f"No {b} on exam {i}.", f"Plan {c} review {i}."],
            "prediction_claims": [f"Reports {a} since day {i}.", f"No {b} on exam {i}."],
        })
    return instances


def make_scorer(base_url: str, concurrency: int, chunk_size: int) -> DocLens:
    judge = load_evaluator("gpt4-json-cot", base_url=base_url, model="test-model", concurrency=concurrency,
                           no_cache=True)
    return DocLens(judge, chunk_size=chunk_size)


def comparable(report) -> dict:
    data = report.to_dict()
    return {"scores": data["scores"], "instances": data["instances"], "signature": data["signature"],
            "counts": data["counts"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=512)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=4, help="requests in flight per worker")
    parser.add_argument("--chunk-size", type=int, default=16)
    args = parser.parse_args()
    import functools

    ray = require_ray()
    instances = build_instances(args.instances)
    out: dict = {"instances": args.instances, "latency_s": args.latency, "concurrency_per_worker": args.concurrency,
                 "chunk_size": args.chunk_size, "judge": "gpt4-json-cot", "cpus": os.cpu_count(),
                 "python": platform.python_version(), "ray": ray.__version__}
    warnings.simplefilter("ignore")
    # prefix_cache=False: the server's reply time is the fixed latency, not a prefix search
    # over every earlier request that grows through the runs (and would slow the later ones)
    with FakeChatServer(latency=args.latency, prefix_cache=False) as server:
        make = functools.partial(make_scorer, server.base_url, args.concurrency, args.chunk_size)
        start = time.perf_counter()
        local = make().score(instances, progress=False)
        out["single_process_wall_s"] = round(time.perf_counter() - start, 2)
        calls = server.count
        out["calls"] = calls

        start = time.perf_counter()
        # the workers import doclens and tests.llm_server from this checkout
        ray.init(num_cpus=2, include_dashboard=False, runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}})
        out["ray_init_s"] = round(time.perf_counter() - start, 2)
        reports = {}
        for workers in (1, 2):
            before = server.count
            start = time.perf_counter()
            reports[workers] = score_on_ray(make, instances, workers=workers, progress=False)
            out[f"ray_{workers}_worker{'s' if workers > 1 else ''}_wall_s"] = round(time.perf_counter() - start, 2)
            out[f"ray_{workers}_worker{'s' if workers > 1 else ''}_calls"] = server.count - before
        out["max_requests_in_flight"] = server.max_in_flight
        ray.shutdown()
    one, two = out["ray_1_worker_wall_s"], out["ray_2_workers_wall_s"]
    out["ideal_wall_one_worker_s"] = round(calls * args.latency / args.concurrency, 2)
    out["ray_2_workers_speedup"] = round(one / two, 3)
    out["ray_2_workers_speedup_with_init"] = round((one + out["ray_init_s"]) / (two + out["ray_init_s"]), 3)
    out["ray_1_worker_vs_single_process"] = round(out["single_process_wall_s"] / one, 3)
    out["identical_reports"] = comparable(reports[1]) == comparable(reports[2]) == comparable(local)
    out["scores"] = {k: round(v, 6) for k, v in local.scores.items() if v is not None and not k.endswith("_macro")}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
