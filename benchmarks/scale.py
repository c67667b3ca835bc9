"""Streaming scale: peak RSS and wall time of ``doclens score`` over 10,000 and 100,000 synthetic
instances with the ``overlap`` judge (claims from the ``sentences`` extractor), results streamed
(``--output-format jsonl`` by default), and print JSON::

    python -m benchmarks.scale [--sizes 10000 100000] [--format jsonl] [--in-memory 10000] [--big-prediction]
                               [--keep DIR] [--metrics doclens,source_support]

Keys: ``rss_mb_<n>`` (peak RSS, VmHWM, of the scoring process), ``wall_s_<n>``,
``wall_s_per_1k_instances`` (``{"10k": …, "100k": …}``), ``per_1k_ratio`` (the largest size's
per-1k time over the smallest's: 1.0 is linear), ``input_mb_<n>``. ``--in-memory N`` also scores
N instances the pre-streaming way (``-o -``: every result kept, one JSON written at the end),
for comparison (``rss_mb_<n>_in_memory``). ``--big-prediction`` also scores one instance whose
prediction is 10 MB over 250,000 cited lines (``rss_mb_10mb_prediction``): one instance is the
smallest chunk there is, so this is what one huge instance costs. ``--metrics
doclens,source_support`` turns the source-support family on too (each 20-turn source fits the
judge's window, so it is given whole: no encoder is loaded); ``rss_ratio`` is the largest size's
peak over the smallest's (issue 28's bound: at most 1.3 from 2,000 to 20,000).

A synthetic instance: a general-task prediction of 8 cited sentences, a reference of 8
sentences and a source of 20 dialogue turns (about 2 KB of JSONL). Each size runs in a fresh
subprocess, so one peak does not hide another. Timings on a shared machine vary with its load.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

STEP = r"""
import contextlib, io, json, sys, time
from doclens.cli import main
start = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()):
    code = main(json.loads(sys.argv[1]))
wall = time.perf_counter() - start
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM")]  # reset at exec, unlike ru_maxrss
print(json.dumps({"exit": code, "wall_s": round(wall, 2), "rss_peak_mb": round(int(hwm[0].split()[1]) / 1024, 1)}))
"""

WORDS = ("fever cough pain chest abdominal nausea headache dizziness fatigue rash swelling knee back shoulder "
         "blood pressure").split()


def synthesise(path: Path, instances: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(instances):
            source = [f"[{'doctor' if k % 2 else 'patient'}] the patient reports {rng.choice(WORDS)} and "
                      f"{rng.choice(WORDS)} since day {k}" for k in range(20)]
            prediction = " ".join(f"The patient has {rng.choice(WORDS)} and {rng.choice(WORDS)} for {k} days "
                                  f"[{rng.randrange(20)}]." for k in range(8))
            reference = " ".join(f"Patient reports {rng.choice(WORDS)} with {rng.choice(WORDS)} on day {k}."
                                 for k in range(8))
            handle.write(json.dumps({"id": f"i{i}", "prediction": prediction, "reference": reference,
                                     "source": source}) + "\n")


def score(input_path: Path, output: str, extra: list[str]) -> dict:
    argv = ["score", str(input_path), "--evaluator", "overlap", "--extractor", "sentences", "-q", "-o", output, *extra]
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-c", STEP, json.dumps(argv)], capture_output=True, text=True, env=env,
                          cwd=str(input_path.parent))
    if done.returncode != 0:
        raise SystemExit(f"scoring failed: {done.stderr[-2000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if result["exit"] != 0:
        raise SystemExit(f"doclens score exited {result['exit']}: {done.stderr[-2000:]}")
    return result


def big_prediction(folder: Path, fmt: str) -> dict:
    path = folder / "big.jsonl"
    prediction = "\n".join(f"The patient has fever number {k} [{k % 5}]." for k in range(250_000))
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(json.dumps({"id": "big", "prediction": prediction, "reference": "The patient has fever.",
                                 "source": [f"unit {k} fever" for k in range(5)]}) + "\n")
    result = score(path, str(folder / "big.json"), ["--output-format", fmt])
    path.unlink()
    return {"prediction_mb": round(len(prediction) / 2**20, 1), "rss_mb_10mb_prediction": result["rss_peak_mb"],
            "wall_s_10mb_prediction": result["wall_s"]}


def streaming_figures(folder: Path, sizes: list[int], fmt: str, in_memory: list[int], metrics: str = "doclens") -> dict:
    figures: dict = {"format": fmt, "judge": "overlap", "extractor": "sentences", "metrics": metrics,
                     "wall_s_per_1k_instances": {}}
    rss = []
    for size in sizes:
        input_path = folder / f"in{size}.jsonl"
        synthesise(input_path, size)
        label = f"{size // 1000}k" if size % 1000 == 0 else str(size)
        figures[f"input_mb_{label}"] = round(input_path.stat().st_size / 2**20, 1)
        result = score(input_path, str(folder / f"out{size}.json"), ["--output-format", fmt, "--metrics", metrics])
        figures[f"rss_mb_{label}"] = result["rss_peak_mb"]
        rss.append(result["rss_peak_mb"])
        figures[f"wall_s_{label}"] = result["wall_s"]
        figures["wall_s_per_1k_instances"][label] = round(1000 * result["wall_s"] / size, 3)
        if size in in_memory:
            result = score(input_path, "-", [])
            figures[f"rss_mb_{label}_in_memory"] = result["rss_peak_mb"]
            figures[f"wall_s_{label}_in_memory"] = result["wall_s"]
        input_path.unlink()
    if len(rss) > 1:
        figures["rss_ratio"] = round(rss[-1] / rss[0], 3)
    per_1k = list(figures["wall_s_per_1k_instances"].values())
    if len(per_1k) > 1:
        figures["per_1k_ratio"] = round(per_1k[-1] / per_1k[0], 3)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--format", default="jsonl", choices=("json", "jsonl", "parquet"))
    parser.add_argument("--in-memory", type=int, nargs="*", default=[], metavar="N",
                        help="also score these sizes without streaming (-o -), for comparison")
    parser.add_argument("--big-prediction", action="store_true",
                        help="also score one instance with a 10 MB prediction of 250,000 lines")
    parser.add_argument("--keep", help="keep the outputs in this folder")
    parser.add_argument("--metrics", default="doclens", help="metric families (default doclens; e.g. doclens,source_support)")
    args = parser.parse_args()
    started = time.time()
    if args.keep:
        Path(args.keep).mkdir(parents=True, exist_ok=True)
        figures = streaming_figures(Path(args.keep), args.sizes, args.format, args.in_memory, args.metrics)
        if args.big_prediction:
            figures.update(big_prediction(Path(args.keep), args.format))
    else:
        with tempfile.TemporaryDirectory() as folder:
            figures = streaming_figures(Path(folder), args.sizes, args.format, args.in_memory, args.metrics)
            if args.big_prediction:
                figures.update(big_prediction(Path(folder), args.format))
    figures["load_average_1min"] = round(os.getloadavg()[0], 2)
    figures["cpu_count"] = os.cpu_count()
    figures["total_s"] = round(time.time() - started, 1)
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
