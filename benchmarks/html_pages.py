"""Time the report page's writer alone (:func:`doclens.views.html.write_report_html`): N
note-sized instances in memory (20 claims a side, 12 cited statements each, as
``report_scale.py``'s note shape, without the scores-file reading and bootstrap around it),
written to a file, and print JSON: median and best wall seconds over the repeats, the median CPU
seconds of this process (steadier than wall on a shared machine), the page's size.

    python -m benchmarks.html_pages [--instances 1000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def instances(count: int, seed: int = 0) -> list:
    from doclens.core.types import CitationVerdict, ClaimVerdict, InstanceResult

    rng = random.Random(seed)
    results = []
    for i in range(count):
        reference = [ClaimVerdict(f"Reference claim {k} of visit {i} <i>x</i>.", rng.random() < 0.6,
                                  "The prediction states this." if k % 2 else "", section="subjective")
                     for k in range(20)]
        prediction = [ClaimVerdict(f"Prediction claim {k} of visit {i}.", rng.random() < 0.6, "", section="objective")
                      for k in range(20)]
        statements = []
        for k in range(12):
            cited = sorted({rng.randrange(42), rng.randrange(40)})
            invalid = [c for c in cited if c >= 40]
            entailed = rng.random() < 0.6 and not invalid
            statements.append(CitationVerdict(k, f"Statement {k} of visit {i}: symptom {k} began last week.", cited,
                                              [c for c in cited if c < 40], invalid,
                                              [c for c in cited if entailed and rng.random() < 0.8], entailed,
                                              section="subjective"))
        result = InstanceResult(f"v{i:05d}", "note_generation", reference, prediction, statements, has_source=True)
        result.scores = {"claim_recall": 0.5, "claim_precision": 0.25}
        results.append(result)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--instances", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    from doclens.views.html import write_report_html

    results = instances(args.instances)
    header = {"scores": {"claim_recall": 0.5}, "signature": "doclens:bench|judge:synthetic", "warnings": ["w"]}
    times, cpu = [], []
    with tempfile.TemporaryDirectory() as folder:
        page = Path(folder) / "report.html"
        for _ in range(args.repeats):
            start, start_cpu = time.perf_counter(), time.process_time()
            with open(page, "w", encoding="utf-8") as handle:
                write_report_html(header, iter(results), handle)
            times.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
        size = page.stat().st_size
    print(json.dumps({"instances": args.instances, "repeats": args.repeats,
                      "median_s": round(statistics.median(times), 3), "best_s": round(min(times), 3),
                      "cpu_median_s": round(statistics.median(cpu), 3),
                      "cpu_ms_per_instance": round(1000 * statistics.median(cpu) / args.instances, 3),
                      "html_mb": round(size / 2**20, 1)}))


if __name__ == "__main__":
    main()
