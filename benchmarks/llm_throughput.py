"""Throughput of the LLM judges against a local OpenAI-compatible server with a fixed latency.

Job: the ``mistral-cot`` judge (one call per claim, chain of thought) over the 40 ACI-BENCH
test-1 notes (``../shared/data/aci_bench_test1.jsonl``, read in place, never copied). Claims
are fixed and derived deterministically: the reference claims are the first 3 sentences of the
clinician's note with at least 4 words; the prediction is that note's sentences 2–6 (so some
reference claims are covered and some are not) and its claims are its first 2 sentences. That
is 5 judge calls per instance, 200 in all; no citations and no extraction. The server
(``tests/llm_server.py``) answers every call after ``--latency`` seconds (default 0.2 s).

Runs: DocLens at concurrency 1, 8 and 32 (no cache); the procedure of the original DocLens
scripts (sequential, one synchronous call per claim, no cache) as the baseline; a first run
with the cache at concurrency 8 and a second, cached run of the same work.

Prints one JSON object. Targets: at concurrency 8, wall ≤ 1.3 × calls × latency / 8; the cached
rerun makes zero calls in < 2 % of the first run's time.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

import openai  # noqa: E402,F401  (imported up front: its import time is not part of any run)

from doclens import DocLens, load_evaluator  # noqa: E402
from doclens.evaluators.llm.chat import render_claims  # noqa: E402
from doclens.parsing.judge_replies import parse_cot  # noqa: E402
from doclens.parsing.statements import parse_statements  # noqa: E402
from tests.llm_server import FakeChatServer  # noqa: E402

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "aci_bench_test1.jsonl"


def sentences(text: str) -> list[str]:
    return [s.text for s in parse_statements(text) if len(s.text.split()) >= 4]


def build_instances(limit: int) -> list[dict]:
    instances = []
    for line in DATA.read_text(encoding="utf-8").splitlines()[:limit]:
        row = json.loads(line)
        found = sentences(row["reference"])
        prediction_sentences = found[1:6]
        instances.append({
            "id": row["id"], "task": "general",
            "reference": row["reference"],
            "prediction": " ".join(prediction_sentences),
            "reference_claims": found[:3],
            "prediction_claims": prediction_sentences[:2],
        })
    return instances


def run_doclens(server, instances, concurrency: int, cache_dir=None) -> dict:
    options = {"cache_dir": cache_dir} if cache_dir else {"no_cache": True}
    judge = load_evaluator("mistral-cot", base_url=server.base_url, model="mistral-7b-instruct",
                           concurrency=concurrency, **options)
    start_count = server.count
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = DocLens(judge).score(instances, progress=False)
    wall = time.perf_counter() - start
    judge.close()
    return {"wall_s": wall, "calls": server.count - start_count, "usage": judge.usage.to_dict(),
            "claim_recall": report.scores["claim_recall"], "claim_precision": report.scores["claim_precision"]}


def run_original_procedure(server, instances) -> dict:
    """What the original scripts did: a loop, one blocking call per claim, nothing concurrent."""
    from openai import OpenAI

    client = OpenAI(base_url=server.base_url, api_key="not-needed", max_retries=0)
    start_count = server.count
    start = time.perf_counter()
    hits = {"recall": [0, 0], "precision": [0, 0]}
    for instance in instances:
        for direction, premise, claims in (("recall", instance["prediction"], instance["reference_claims"]),
                                           ("precision", instance["reference"], instance["prediction_claims"])):
            for claim in claims:
                messages = render_claims("cot", "general", direction, premise, [claim])
                reply = client.chat.completions.create(model="mistral-7b-instruct", messages=messages, temperature=0)
                verdict = parse_cot(reply.choices[0].message.content or "")
                hits[direction][0] += bool(verdict and verdict.entailed)
                hits[direction][1] += 1
    wall = time.perf_counter() - start
    client.close()
    return {"wall_s": wall, "calls": server.count - start_count,
            "claim_recall": hits["recall"][0] / hits["recall"][1],
            "claim_precision": hits["precision"][0] / hits["precision"][1]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2, help="seconds the server takes per call")
    parser.add_argument("--instances", type=int, default=40)
    args = parser.parse_args()
    if not DATA.is_file():
        sys.exit(f"data not found: {DATA} (the project expects ../shared/data beside it)")
    instances = build_instances(args.instances)
    with FakeChatServer(latency=args.latency) as server, tempfile.TemporaryDirectory() as cache_dir:
        c1 = run_doclens(server, instances, 1)
        c8 = run_doclens(server, instances, 8)
        c32 = run_doclens(server, instances, 32)
        original = run_original_procedure(server, instances)
        first = run_doclens(server, instances, 8, cache_dir=cache_dir)
        cached = run_doclens(server, instances, 8, cache_dir=cache_dir)
    calls = c8["calls"]
    ideal_c8 = calls * args.latency / 8
    result = {
        "job": (f"mistral-cot (one call per claim) over {len(instances)} ACI-BENCH test-1 notes, task general: "
                "3 reference claims (first reference sentences) judged against a derived prediction "
                "(reference sentences 2-6) and 2 prediction claims judged against the reference; no citations, "
                "no extraction; local HTTP server with fixed latency per call"),
        "instances": len(instances),
        "calls": calls,
        "latency_s": args.latency,
        "prompt_tokens": c8["usage"]["prompt_tokens"],
        "completion_tokens": c8["usage"]["completion_tokens"],
        "wall_s_c1": round(c1["wall_s"], 3),
        "wall_s_c8": round(c8["wall_s"], 3),
        "wall_s_c32": round(c32["wall_s"], 3),
        "calls_c1": c1["calls"], "calls_c32": c32["calls"],
        "wall_s_original_procedure": round(original["wall_s"], 3),
        "calls_original_procedure": original["calls"],
        "ideal_wall_s_c8": round(ideal_c8, 3),
        "ratio_c8_to_ideal": round(c8["wall_s"] / ideal_c8, 3),
        "speedup_c8_vs_original": round(original["wall_s"] / c8["wall_s"], 2),
        "speedup_c32_vs_original": round(original["wall_s"] / c32["wall_s"], 2),
        "first_cached_run_wall_s": round(first["wall_s"], 3),
        "first_cached_run_calls": first["calls"],
        "cached_rerun_calls": cached["calls"],
        "cached_rerun_wall_s": round(cached["wall_s"], 4),
        "cached_rerun_wall_fraction": round(cached["wall_s"] / first["wall_s"], 5),
        "scores_agree": (c1["claim_recall"] == c8["claim_recall"] == c32["claim_recall"] == cached["claim_recall"]
                         == original["claim_recall"] and c8["claim_precision"] == original["claim_precision"]),
        "targets": {"c8_within_1.3x_ideal": c8["wall_s"] <= 1.3 * ideal_c8,
                    "cached_rerun_zero_calls": cached["calls"] == 0,
                    "cached_rerun_under_2_percent": cached["wall_s"] < 0.02 * first["wall_s"]},
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
