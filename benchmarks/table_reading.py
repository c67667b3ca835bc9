"""The system table's claims read by people: GPT-4 against another patient's note. Prints JSON.

``benchmarks/real_outputs.py``'s table scores every claim the ``clauses`` extractor cuts from a
note. Whether "another patient's note scores below half of GPT-4's claim F1" is even true by
reading depends on those claims, so a sample of them was labelled by reading
(``doclens/datasets/real_outputs/table_claims.jsonl``: 5 claims per encounter, side and system, for
GPT-4 and the retrieval baseline ``train_UMLS`` on 10 encounters of test 2/3 that the labelled set
does not use; how it was drawn and labelled: that folder's README). Each claim is judged against
the whole premise note (the system's note for a reference claim, ``recall``; the reference for a
system claim, ``precision``).

Printed per system and side: the supported rate by reading and by the judge, and the judge's
balanced accuracy; then each system's claim F1 (from the two rates) by reading and by the judge,
and train_UMLS's F1 as a share of GPT-4's.

    python -m benchmarks.table_reading
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

from benchmarks.real_outputs import DEFAULT_LABELS, _f1, premises  # noqa: E402
from doclens.core.verdict_rates import rates  # noqa: E402

SAMPLE = DEFAULT_LABELS / "table_claims.jsonl"
SIDES = ("recall", "precision")


def read_sample(path: Path) -> list[dict]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        missing = {"split", "encounter", "system", "side", "claim", "label"} - row.keys()
        if missing or row["side"] not in SIDES or row["label"] not in (True, False, None):
            raise SystemExit(f"{path}:{number}: needs split, encounter, system, side (recall or precision), "
                             f"claim and a label true, false or null")
        rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", default=str(SAMPLE))
    parser.add_argument("--judge", default="clinical-rules")
    args = parser.parse_args()
    from doclens.evaluators import load_evaluator

    rows = read_sample(Path(args.sample))
    judge = load_evaluator(args.judge)
    labelled = [r for r in rows if r["label"] is not None]
    pairs: dict = defaultdict(list)
    for row, premise in zip(labelled, premises(labelled)):
        entailed = bool(judge.explain(premise, row["claim"])[0])
        pairs[(row["system"], row["side"])].append((row["label"], entailed))
    out: dict = {"benchmark": "table_reading", "judge": judge.signature(), "claims": len(rows),
                 "null_left_out": sum(r["label"] is None for r in rows),
                 "encounters": len({(r["split"], r["encounter"]) for r in rows}), "systems": {}}
    for (system, side), judged in sorted(pairs.items()):
        out["systems"].setdefault(system, {})[side] = rates(judged)
    f1 = {}
    for system, sides in out["systems"].items():
        if set(sides) == set(SIDES):
            f1[system] = {who: _f1(sides["recall"][key], sides["precision"][key])
                          for who, key in (("reading", "labelled_supported_rate"), ("judge", "judge_supported_rate"))}
            sides["claim_f1"] = {who: None if value is None else round(value, 3) for who, value in f1[system].items()}
    if {"GPT-4", "train_UMLS"} <= f1.keys():
        out["train_UMLS_share_of_GPT-4_f1"] = {
            who: round(f1["train_UMLS"][who] / f1["GPT-4"][who], 3) if f1["GPT-4"][who] else None
            for who in ("reading", "judge")}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
