"""Scale of the report and leaderboard builders: synthesise N-instance scores files (default
10,000, note-sized: ~20 claims each side and ~12 cited statements per instance, with a source of
40 units), then time ``doclens report`` (with ``--input``) and ``doclens leaderboard`` over three
systems, and print JSON: wall and CPU seconds, peak RSS (VmHWM) per step, the peak of traced Python
allocations (tracemalloc, in a second run), output sizes.

    python -m benchmarks.report_scale [--instances 10000] [--resamples 1000] [--shape note|small]
        [--max-instances N] [--systems 3] [--no-trace] [--keep DIR]

Each step runs in a fresh subprocess so the peak RSS of one does not hide another's.
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
import json, sys, time, tracemalloc
sys.argv = ["doclens"] + json.loads(sys.argv[1])
if sys.argv[-1] == "--trace":
    sys.argv.pop()
    tracemalloc.start()
from doclens.cli import main
start = time.perf_counter()
import contextlib, io
with contextlib.redirect_stdout(io.StringIO()):
    code = main(sys.argv[1:])
wall = time.perf_counter() - start
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM")]  # reset at exec, unlike ru_maxrss
import resource
usage = resource.getrusage(resource.RUSAGE_SELF)  # the whole step, imports included: steadier than wall when shared
result = {"exit": code, "wall_s": round(wall, 3), "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
          "rss_peak_mb": round(int(hwm[0].split()[1]) / 1024, 1) if hwm else None}
if tracemalloc.is_tracing():
    result = {"exit": code, "tracemalloc_peak_mb": round(tracemalloc.get_traced_memory()[1] / 2**20, 1)}
print(json.dumps(result))
"""


def synthesise(folder: Path, instances: int, systems: int, seed: int = 0, claims: int = 20, statements: int = 12,
               units: int = 40) -> tuple[list[Path], Path]:
    """``systems`` scores files and the matching input JSONL, without running any judge: per
    instance ``claims`` reference and prediction claims, ``statements`` cited statements and a
    source of ``units`` units."""
    from doclens.core.metrics import aggregate, ratio
    from doclens.core.types import CitationVerdict, ClaimVerdict, InstanceResult
    from doclens.families import DOCLENS_METRICS, result_counts
    from doclens.reports.report import Report

    rng = random.Random(seed)
    n_statements = statements  # the name is reused below for each instance's list
    inputs = folder / "input.jsonl"
    with open(inputs, "w", encoding="utf-8") as handle:
        for i in range(instances):
            source = [f"[{'doctor' if k % 2 else 'patient'}] turn {k} of visit {i}: the patient reports symptom "
                      f"{k} <b>& more</b>" for k in range(units)]
            handle.write(json.dumps({"id": f"v{i:05d}", "prediction": "…", "reference": "…", "source": source}) + "\n")
    paths = []
    for system in range(systems):
        skill = 0.5 + 0.1 * system
        results = []
        for i in range(instances):
            ref = [ClaimVerdict(f"Reference claim {k} of visit {i} <i>x</i>.", rng.random() < skill,
                                "The prediction states this." if k % 2 else "Not mentioned.", section="subjective")
                   for k in range(claims)]
            pred = [ClaimVerdict(f"Prediction claim {k} of visit {i}.", rng.random() < skill, "", section="subjective")
                    for k in range(claims)]
            statements = []
            for k in range(n_statements):
                cited = [rng.randrange(units + 2), rng.randrange(units)] if k % 3 else [rng.randrange(units)]
                cited = list(dict.fromkeys(cited))
                invalid = [c for c in cited if c >= units]
                entailed = rng.random() < skill and not invalid
                precise = [c for c in cited if entailed and rng.random() < 0.8]
                statements.append(CitationVerdict(k, f"Statement {k} of visit {i}: symptom {k} began last week.",
                                                  cited, [c for c in cited if c < units], invalid, precise, entailed,
                                                  section="subjective"))
            result = InstanceResult(f"v{i:05d}", "note_generation", ref, pred, statements, has_source=True)
            counts = result_counts(result)
            result.scores = {m: ratio(*c) for m, c in counts.items()}
            results.append(result)
        scores, counts = aggregate([result_counts(r) for r in results], DOCLENS_METRICS)
        path = folder / f"system{system}.json"
        Report(scores=scores, counts=counts, instances=results, signature="doclens:bench|judge:synthetic",
               config={"on_unparsed": "zero", "system": f"system-{system}"}, version="bench").save(path)
        paths.append(path)
        del results
    return paths, inputs


def run_step(argv: list[str], trace: bool) -> dict:
    """Time the step (no tracing) and, with ``trace``, run it again under tracemalloc for the peak
    of Python allocations (tracing slows it, so its time is not reported)."""
    result = _run(argv)
    if trace:
        result.update(_run([*argv, "--trace"]))
    return result


def _run(argv: list[str]) -> dict:
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-c", STEP, json.dumps(argv)], capture_output=True, text=True, env=env,
                          cwd=REPO)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--instances", type=int, default=10_000)
    parser.add_argument("--systems", type=int, default=3)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--no-trace", action="store_true", help="skip the tracemalloc runs")
    parser.add_argument("--keep", help="write the files here and keep them (default: a temporary folder)")
    parser.add_argument("--shape", choices=("note", "small"), default="note",
                        help="note: 20 claims a side, 12 statements, 40 source units per instance (default); small: "
                             "2, 1 and 4 (how a 1,000,000-instance file fits a test machine's disk and time)")
    parser.add_argument("--max-instances", type=int, help="doclens report --max-instances (default: the command's)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.keep or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        shape = {"note": (20, 12, 40), "small": (2, 1, 4)}[args.shape]
        paths, inputs = synthesise(folder, args.instances, args.systems, claims=shape[0], statements=shape[1],
                                   units=shape[2])
        synth_s = time.perf_counter() - start
        report_html, board_html = folder / "report.html", folder / "board.html"
        limit = [] if args.max_instances is None else ["--max-instances", str(args.max_instances)]
        report = run_step(["report", str(paths[0]), "--input", str(inputs), "-o", str(report_html),
                           "--resamples", str(args.resamples), *limit], not args.no_trace)
        board = run_step(["leaderboard", *map(str, paths), "-o", str(board_html), "--resamples", str(args.resamples)],
                         not args.no_trace)
        print(json.dumps({
            "instances": args.instances, "systems": args.systems, "resamples": args.resamples, "shape": args.shape,
            "max_instances": args.max_instances,
            "synthesis_s": round(synth_s, 1),
            "scores_file_mb": round(paths[0].stat().st_size / 2**20, 1),
            "input_jsonl_mb": round(inputs.stat().st_size / 2**20, 1),
            "report": {**report, "html_mb": round(report_html.stat().st_size / 2**20, 1)},
            "leaderboard": {**board, "html_kb": round(board_html.stat().st_size / 2**10, 1)},
            "python": sys.version.split()[0], "cpus": os.cpu_count(),
        }, indent=2))


if __name__ == "__main__":
    main()
