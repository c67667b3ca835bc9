"""How far two readers agree on the real-output labelled set, and the judge against each. Prints JSON.

A stratified sample of the labelled set (``doclens/datasets/real_outputs/``) was labelled a second
time, blind, by readers who saw only the claim and the premise note
(``doclens/datasets/real_outputs/second_labels.jsonl``, lines ``{"item", "label", "reason"}``; how it
was drawn and labelled: that folder's README). This prints, per half and over both:

* ``readers``: items both readers labelled (``null``, "not a claim", on either side is left out and
  counted), their raw agreement and Cohen's κ;
* ``judge`` (unless ``--no-judge``): the judge's balanced accuracy against the first reader, against
  the second, and on the items where the two agree — the share of the judge's errors that lie where
  readers themselves differ.

    python -m benchmarks.label_agreement
    python -m benchmarks.label_agreement --no-judge
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from benchmarks.real_outputs import DEFAULT_LABELS, premises, read_labels  # noqa: E402
from doclens.core.verdict_rates import rates  # noqa: E402

SECOND = DEFAULT_LABELS / "second_labels.jsonl"


def cohen_kappa(pairs: list[tuple[bool, bool]]) -> float | None:
    """Cohen's κ of two readers' yes/no labels; ``None`` when chance agreement is 1 (one label only)."""
    n = len(pairs)
    if not n:
        return None
    observed = sum(a == b for a, b in pairs) / n
    first, second = sum(a for a, _ in pairs) / n, sum(b for _, b in pairs) / n
    chance = first * second + (1 - first) * (1 - second)
    return None if chance == 1 else (observed - chance) / (1 - chance)


def read_second(path: Path, known: dict[str, dict]) -> dict[str, bool | None]:
    second: dict[str, bool | None] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        item, label = row.get("item"), row.get("label")
        if item not in known:
            raise SystemExit(f"{path}:{number}: item {item!r} is not in the labelled set")
        if label not in (True, False, None):
            raise SystemExit(f"{path}:{number}: label must be true, false or null, not {label!r}")
        if item in second:
            raise SystemExit(f"{path}:{number}: item {item!r} is labelled twice")
        second[item] = label
    return second


def agreement(rows: list[tuple[dict, bool | None, bool | None]]) -> dict:
    both = [(bool(first), bool(second)) for _, first, second in rows if first is not None and second is not None]
    kappa = cohen_kappa(both)
    return {"items": len(rows), "null_left_out": len(rows) - len(both), "both_labelled": len(both),
            "raw_agreement": round(sum(a == b for a, b in both) / len(both), 3) if both else None,
            "cohen_kappa": None if kappa is None else round(kappa, 3),
            "supported_rate_first": round(sum(a for a, _ in both) / len(both), 3) if both else None,
            "supported_rate_second": round(sum(b for _, b in both) / len(both), 3) if both else None}


def judge_against(rows: list[tuple[dict, bool | None, bool | None]], verdicts: dict[str, bool]) -> dict:
    labelled = [(i, a, b) for i, a, b in rows if a is not None and b is not None]
    agreed = [(i, a) for i, a, b in labelled if a == b]
    return {"vs_first": rates([(bool(a), verdicts[i["item"]]) for i, a, _ in labelled]),
            "vs_second": rates([(bool(b), verdicts[i["item"]]) for i, _, b in labelled]),
            "where_readers_agree": rates([(bool(a), verdicts[i["item"]]) for i, a in agreed]) if agreed else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--second", default=str(SECOND))
    parser.add_argument("--judge", default="clinical-rules")
    parser.add_argument("--no-judge", action="store_true")
    args = parser.parse_args()
    items = {i["item"]: i for i in read_labels(DEFAULT_LABELS, "both")}
    second = read_second(Path(args.second), items)
    rows = [(items[key], items[key]["label"], label) for key, label in second.items()]
    out: dict = {"benchmark": "label_agreement", "second_labels": len(second)}
    halves = {"all": rows, **{half: [r for r in rows if r[0]["half"] == half] for half in ("dev", "held_out")}}
    out["readers"] = {name: agreement(part) for name, part in halves.items()}
    if not args.no_judge:
        from doclens.evaluators import load_evaluator

        judge = load_evaluator(args.judge)
        items = [i for i, _, _ in rows]
        verdicts = {i["item"]: bool(judge.explain(premise, i["claim"])[0]) for i, premise in zip(items, premises(items))}
        out["judge"] = {"signature": judge.signature(),
                        **{name: judge_against(part, verdicts) for name, part in halves.items()}}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
