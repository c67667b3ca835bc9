"""Speed of the one scores-file reader (:func:`doclens.reports.scores_files.iter_report`: the
streaming decoder, the strict-number and duplicate-key checks, the schema check of every
instance) on a synthesised note-sized scores file (:func:`report_scale.synthesise`), and print
JSON: the median CPU and wall seconds of one read pass, and the schema check alone per 1,000
instances.

    python -m benchmarks.scores_reader [--instances 3000] [--repeat 5] [--keep DIR]

CPU seconds (``time.process_time``) are the figure to compare on a shared machine; the load
average is printed beside them. ``--keep DIR`` reuses ``DIR/system0.json`` when it is there.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def read_pass(path: str) -> tuple[float, float, int]:
    from doclens.reports.scores_files import iter_report

    cpu, wall = time.process_time(), time.perf_counter()
    count = sum(1 for _ in iter_report(path))
    return time.process_time() - cpu, time.perf_counter() - wall, count


def schema_check_ms_per_1000(path: str, limit: int = 1000) -> float:
    from doclens.reports.scores_files import _validators

    with open(path, encoding="utf-8") as handle:
        instances = json.load(handle)["instances"][:limit]
    checker = _validators()[0]
    cpu = time.process_time()
    assert all(checker.fast(instance) for instance in instances)
    return 1000 * (time.process_time() - cpu) * 1000 / len(instances)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--instances", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keep", help="write the file here and keep it (default: a temporary folder)")
    args = parser.parse_args()
    from benchmarks.report_scale import synthesise

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.keep or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "system0.json"
        if not path.exists():
            synthesise(folder, args.instances, 1)
        passes = [read_pass(str(path)) for _ in range(args.repeat)]
        checks = [schema_check_ms_per_1000(str(path)) for _ in range(args.repeat)]
        print(json.dumps({
            "instances": passes[0][2], "scores_file_mb": round(path.stat().st_size / 2**20, 1),
            "read_cpu_s": round(statistics.median(p[0] for p in passes), 3),
            "read_wall_s": round(statistics.median(p[1] for p in passes), 3),
            "schema_check_cpu_ms_per_1000": round(statistics.median(checks), 1),
            "load_average": [round(x, 1) for x in os.getloadavg()], "python": sys.version.split()[0],
        }))


if __name__ == "__main__":
    main()
