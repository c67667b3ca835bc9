"""Regenerate ``doclens/inputs/known_references.json``: the fingerprints of the reference notes of
the public sets DocLens ships readers for (``doclens/inputs/known_references.py``), from
``../shared/data``. Hashes only: no note's text goes into the file. Prints what it wrote as JSON.

    python benchmarks/known_references.py            # writes the shipped file
    python benchmarks/known_references.py --check    # exit 1 when the shipped file differs

ACI-BENCH test 2 and 3: the clinicians' notes of ``aci_bench_systems/testN/references.jsonl`` and
of the gold CSVs ACI-BENCH publishes (``published_csv/testN/``; the same notes); test 1:
``aci_bench_test1.jsonl`` (its system outputs are held out and never read); MeQSum:
``meqsum_test.jsonl``.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

from doclens.inputs.known_references import FILE, build_fingerprints

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
TARGET = ROOT / "doclens" / "inputs" / FILE
GOLD = {"test2": "clinicalnlp_taskC_test2.csv", "test3": "clef_taskC_test3.csv"}


def _jsonl_references(path: Path) -> list[str]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line)["reference"] for line in handle if line.strip()]


def _gold_notes(path: Path) -> list[str]:
    csv.field_size_limit(2 ** 31 - 1)
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return [row["note"] for row in csv.DictReader(handle)]


def reference_sets(data: Path = DATA) -> dict[str, tuple[str, list[str]]]:
    """``{key: (title, reference notes)}`` of every known set, read from ``data``."""
    systems = data / "aci_bench_systems"
    sets = {"aci-bench-test1": ("ACI-BENCH test 1 (the clinicians' notes)",
                                _jsonl_references(data / "aci_bench_test1.jsonl"))}
    for split, gold in GOLD.items():
        notes = _jsonl_references(systems / split / "references.jsonl") + _gold_notes(
            systems / "published_csv" / split / gold)
        sets[f"aci-bench-{split}"] = (f"ACI-BENCH {split.replace('test', 'test ')} (the clinicians' notes)", notes)
    sets["meqsum-test"] = ("MeQSum test (the experts' questions)", _jsonl_references(data / "meqsum_test.jsonl"))
    return sets


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the shared data folder (default ../shared/data)")
    parser.add_argument("--check", action="store_true", help="compare with the shipped file, write nothing")
    args = parser.parse_args()
    text = json.dumps(build_fingerprints(reference_sets(args.data)), indent=1) + "\n"
    if args.check:
        same = TARGET.read_text(encoding="utf-8") == text
        print(json.dumps({"file": str(TARGET.relative_to(ROOT)), "up_to_date": same}))
        return 0 if same else 1
    TARGET.write_text(text, encoding="utf-8")
    counts = {key: len(entry["fingerprints"]) for key, entry in json.loads(text)["sets"].items()}
    print(json.dumps({"file": str(TARGET.relative_to(ROOT)), "notes": counts}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
