"""Does a judge forgive a near miss? The near-miss probe judged against its premise notes. Prints JSON.

The probe (``doclens/datasets/near_miss_probe/items.jsonl``, its ``DATASHEET.md`` says how it was
built) holds claims a clinician's reference note of ACI-BENCH test split 2 or 3 clearly supports
(kinds ``correct``, and ``equivalent``: a brand name for the note's generic or the other way round)
and, for each, one-detail variants the note does not support: another anatomical ``site``,
``side``, ``direction`` of change (up / down, better / worse, controlled / uncontrolled), ``drug``,
``dose``, ``frequency`` or ``person`` (a relative for the patient, or the other way round). Each
claim is judged against its whole premise note, read in place from ``../shared/data`` (the notes
are never copied into the repository).

Printed: per kind the items and how many the judge accepted (the target for every variant kind is
0), the accepted rate of the supported claims, and the ids of the accepted variants (``--show``
adds their claims and the judge's explanation). The probe is never used to fit anything
(``benchmarks/fit_decision.py`` does not read it).

    python benchmarks/near_miss_probe.py                    # clinical-rules, the default
    python benchmarks/near_miss_probe.py --judge overlap --show
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from benchmarks.real_outputs_sample import DATA, read_jsonl
from doclens.evaluators import load_evaluator

PROBE = Path(__file__).resolve().parents[1] / "doclens" / "datasets" / "near_miss_probe" / "items.jsonl"
#: Kinds whose items the note supports; every other kind is a near miss it does not.
SUPPORTED_KINDS = ("correct", "equivalent")


def read_probe(path: Path = PROBE) -> list[dict]:
    """The probe's items; an item without a claim, premise reference or label is an error naming it."""
    items = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        item = json.loads(line)
        missing = [k for k in ("id", "split", "encounter", "premise", "claim", "label", "kind") if k not in item]
        if missing:
            raise SystemExit(f"{path}:{number}: item {item.get('id', '?')} lacks {', '.join(missing)}")
        if item["label"] != (item["kind"] in SUPPORTED_KINDS):
            raise SystemExit(f"{path}:{number}: item {item['id']}: kind {item['kind']} with label {item['label']}")
        items.append(item)
    return items


def premise_notes(items: list[dict], data: Path = DATA) -> list[str]:
    """Each item's premise note: the clinician's reference note (``premise: reference``) or a
    system's note (``premise: system``, the item's ``system``), each file read once."""
    files: dict[tuple[str, str], dict] = {}
    notes = []
    for item in items:
        if item["premise"] == "reference":
            key, path, field = (item["split"], ""), data / item["split"] / "references.jsonl", "reference"
        elif item["premise"] == "system":
            key = (item["split"], item["system"])
            path, field = data / item["split"] / "systems" / f"{item['system']}.jsonl", "prediction"
        else:
            raise SystemExit(f"item {item['id']}: premise must be 'reference' or 'system', got {item['premise']!r}")
        if key not in files:
            files[key] = read_jsonl(path)
        notes.append(files[key][item["encounter"]][field])
    return notes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--judge", default="clinical-rules")
    parser.add_argument("--probe", default=str(PROBE))
    parser.add_argument("--show", action="store_true", help="print the accepted variants' claims and explanations")
    args = parser.parse_args()

    items = read_probe(Path(args.probe))
    notes = premise_notes(items)
    judge = load_evaluator(args.judge)
    started = time.perf_counter()
    if hasattr(judge, "explain"):
        verdicts = [judge.explain(note, item["claim"]) for item, note in zip(items, notes)]
    else:
        verdicts = [(v, "") for v in judge.entail_batch([(note, item["claim"]) for item, note in zip(items, notes)])]
    seconds = time.perf_counter() - started

    per_kind: dict[str, Counter] = {}
    for item, (accepted, _) in zip(items, verdicts):
        per_kind.setdefault(item["kind"], Counter()).update(items=1, accepted=int(accepted))
    supported = [accepted for item, (accepted, _) in zip(items, verdicts) if item["label"]]
    accepted_variants = [(item, why) for item, (accepted, why) in zip(items, verdicts) if accepted and not item["label"]]
    rejected_supported = [(item, why) for item, (accepted, why) in zip(items, verdicts) if item["label"] and not accepted]
    out = {
        "judge": judge.signature(),
        "items": len(items),
        "seconds": round(seconds, 1),
        "per_kind": {kind: dict(counts) for kind, counts in sorted(per_kind.items())},
        "variants_accepted": len(accepted_variants),
        "variants": sum(not i["label"] for i in items),
        "supported_accepted_rate": round(sum(supported) / len(supported), 3),
        "accepted_variants": [i["id"] for i, _ in accepted_variants],
        "rejected_supported": [i["id"] for i, _ in rejected_supported],
    }
    if args.show:
        out["accepted_variants_shown"] = [{"id": i["id"], "kind": i["kind"], "claim": i["claim"], "judge": why}
                                          for i, why in accepted_variants]
        out["rejected_supported_shown"] = [{"id": i["id"], "claim": i["claim"], "judge": why}
                                           for i, why in rejected_supported]
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
