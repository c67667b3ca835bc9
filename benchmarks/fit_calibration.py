"""Fit clinical-rules' calibration (doclens/evaluators/rules/calibration.py); print JSON.

The decision model is fitted on the real-output set's ``dev`` half (``benchmarks/fit_decision.py``).
The calibration is fitted on both **read** halves, ``dev`` and ``held-out`` (1,099 items, labelled by
reading): each item is judged by the shipped judge. On ``dev`` the decision model's scores are
in-sample (it was fitted there); held out, they are not: the two read alike, so both are pooled.
A verdict a finding decided has no score: by default (``--decided one-share``) every decided claim
gets one share; ``--decided by-kind`` gives each the share of the kinds of its deciding findings
(``decisive_kinds``), shrunk towards the common one by ``--shrinkage`` pseudo-items. By-kind orders
the verdicts better and estimates better out of fold on the read halves, but measured on the unread
halves its probabilities for decided claims were too low (docs/changelog.md, v11 "Confidence"):
the read halves are the ones the rules were tuned on, so they understate how often a decisive
finding is a false alarm, and sharpening those shares sharpens that optimism.

What it prints, beside the fitted calibration:

* ``out_of_fold``: the honest estimate on the read halves. Each encounter's probabilities come from
  a calibration fitted without it (``--folds`` folds of encounters); expected calibration error and
  the accuracy of the most confident 80 % per half and over both, for both ways of calibrating
  decided claims (``by_kind``, ``one_share``);
* ``across_halves``: fitted on one read half, measured on the other;
* ``in_sample``: the shipped calibration on the items it was fitted on (optimistic).

``--write`` ships the result as ``doclens/evaluators/rules/calibration.json``, the out-of-fold figures
of the chosen way in its provenance. The unread halves (``fresh``, ``fresh-2``, ``sealed``) are never
read here: ``doclens judge-check --half …`` measures the calibration there.

    python -m benchmarks.fit_calibration            # fit and print, write nothing
    python -m benchmarks.fit_calibration --write    # and ship it
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from doclens.datasets.labelled import shipped_set  # noqa: E402
from doclens.evaluators.rules.calibration import (  # noqa: E402
    CALIBRATION_FILE,
    SHRINKAGE,
    accuracy_at_coverage,
    decisive_kinds,
    expected_calibration_error,
    fit_calibration,
    out_of_fold,
)
from doclens.evaluators.rules.clinical_rules import ClinicalRulesJudge  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
HALVES = ("dev", "held-out")
COMMAND = "python -m benchmarks.fit_calibration --write"


def judged_rows(aci_bench_dir: str | None) -> list[dict]:
    """Every item of the read halves as the calibration reads it: half, encounter, label, verdict,
    decision score (``None`` when a finding decided) and deciding kinds."""
    judge = ClinicalRulesJudge(calibration=None)
    rows = []
    for half in HALVES:
        items = shipped_set("real-outputs", half, aci_bench_dir).items
        judged = judge._explain_all([(i.premise, i.claim) for i in items])
        for item in items:
            verdict = judged[(item.premise, item.claim)]
            rows.append({"half": half, "group": item.fold_key, "label": bool(item.label), "supported": verdict.entailed,
                         "score": verdict.score, "kinds": decisive_kinds(verdict.findings) if verdict.score is None else ()})
    return rows


def figures(rows: list[dict], probabilities: list[float]) -> dict:
    """Expected calibration error and accuracy at 80 % coverage, per half and over both."""
    found = {}
    for half in (*HALVES, "both"):
        chosen = [n for n, r in enumerate(rows) if half in ("both", r["half"])]
        p = [probabilities[n] for n in chosen]
        labels = [rows[n]["label"] for n in chosen]
        supported = [rows[n]["supported"] for n in chosen]
        confidences = [q if s else 1.0 - q for q, s in zip(p, supported)]
        at80 = accuracy_at_coverage(confidences, [s == y for s, y in zip(supported, labels)], (0.8,))["0.8"]
        found[half] = {"items": len(chosen), "ece": expected_calibration_error(p, labels)["ece"],
                       "accuracy_at_80": at80["accuracy"]}
    return found


def estimates(rows: list[dict], folds: int, shrinkage: float) -> dict:
    """The out-of-fold and across-halves figures, for the shipped method and v10's."""
    scores, labels = [r["score"] for r in rows], [r["label"] for r in rows]
    groups = [r["group"] for r in rows]
    found: dict = {"out_of_fold": {}, "across_halves": {}}
    for method, kinds in (("by_kind", [r["kinds"] for r in rows]), ("one_share", [()] * len(rows))):
        found["out_of_fold"][method] = figures(rows, out_of_fold(scores, labels, kinds, groups, folds, shrinkage))
        across = [0.0] * len(rows)
        for fitted, measured in (HALVES, HALVES[::-1]):
            train = [n for n, r in enumerate(rows) if r["half"] == fitted]
            calibration = fit_calibration([scores[n] for n in train], [labels[n] for n in train], "",
                                          kinds=[kinds[n] for n in train], shrinkage=shrinkage)
            for n, r in enumerate(rows):
                if r["half"] == measured:
                    across[n] = calibration.probability(scores[n], kinds[n])
        found["across_halves"][method] = {h: v for h, v in figures(rows, across).items() if h != "both"}
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help=f"write doclens/evaluators/rules/{CALIBRATION_FILE}")
    parser.add_argument("--folds", type=int, default=5, help="folds of encounters for the out-of-fold estimate")
    parser.add_argument("--shrinkage", type=float, default=SHRINKAGE,
                        help="pseudo-items drawing a decisive kind's share towards all decided claims'")
    parser.add_argument("--decided", choices=("one-share", "by-kind"), default="one-share",
                        help="a decided verdict's probability: one share for every decided claim (default) or the "
                             "shares of its deciding kinds")
    parser.add_argument("--aci-bench-dir", default=None, help="ACI-BENCH system outputs (default ../shared/data/…)")
    args = parser.parse_args(argv)
    rows = judged_rows(args.aci_bench_dir)
    honest = estimates(rows, args.folds, args.shrinkage)
    if args.decided == "one-share":
        rows = [{**r, "kinds": ()} for r in rows]
    model = ClinicalRulesJudge(calibration=None)._decision_model
    calibration = fit_calibration([r["score"] for r in rows], [r["label"] for r in rows], model.fingerprint,
                                  {"fitted_on": f"real-outputs {' + '.join(HALVES)}", "items": len(rows),
                                   "command": COMMAND + (" --decided by-kind" if args.decided == "by-kind" else ""),
                                   "decided": args.decided, "folds": args.folds,
                                   "out_of_fold": honest["out_of_fold"][args.decided.replace("-", "_")]},
                                  kinds=[r["kinds"] for r in rows] if args.decided == "by-kind" else None,
                                  shrinkage=args.shrinkage)
    probabilities = [calibration.probability(r["score"], r["kinds"]) for r in rows]
    report = {"calibration": calibration.to_json(), "fingerprint": calibration.fingerprint, **honest,
              "in_sample": figures(rows, probabilities)}
    print(json.dumps(report, indent=2))
    if args.write:
        target = REPO / "doclens" / "evaluators" / "rules" / CALIBRATION_FILE
        target.write_text(json.dumps(calibration.to_json(), indent=1) + "\n", encoding="utf-8")
        print(f"written {target.relative_to(REPO)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
