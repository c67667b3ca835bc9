"""Fit clinical-rules' calibration (doclens/evaluators/rules/calibration.py); print JSON.

The decision model is fitted on the real-output set's ``dev`` half (``benchmarks/fit_decision.py``).
The calibration is fitted, by default, on the ``calibration`` half (round 6: 281 items drawn and
labelled after clinical-rules v11, read by no one writing a rule; its DATASHEET, "Round 6"): each item
is judged by the shipped judge and the map from its decision score to ``P(supported)`` is fitted on
those verdicts. Until v11 it was fitted on the **read** halves, ``dev`` and ``held-out``; but the rules
were written from those, so the judge is right there more often than on notes no one tuned on, and a
map fitted there is optimistic elsewhere (on the calibration half, v11's shipped map had an expected
calibration error of 0.117, and 18 % of the claims a finding decided were labelled supported, against
5–7 % on the read halves). ``--fit-on dev,held-out`` fits the old way; ``read_halves_map`` always
prints how that way fares on the halves fitted on.

A verdict a finding decided has no score: by default (``--decided by-kind``, round 13) each gets the share
of supported claims among those the same kinds of finding decided (``decisive_kinds``), shrunk towards
the share over all decided claims by ``--shrinkage`` pseudo-items; ``--decided one-share`` (v8–v12)
gives every decided claim that one share. A scored verdict's probability is by default (``--scored
logistic``, round 13) a logistic function of the score's log-odds, its weight kept positive (monotone in
the score), and of the decision features or derived inputs (``DERIVED``: the score's log-odds on a
verdict that weighed a finding, on a claim of one or two content words …) named by ``--inputs``
(none by default: measured, they add nothing out of fold that holds on the unread halves; round 16
rechecked it with the derived inputs, cards/clinical-rules.md "Confidence"), their weights penalised;
``--scored isotonic`` (v8–v12) is monotone steps on the score.

What it prints, beside the fitted calibration:

* ``out_of_fold``: the honest estimate on the halves fitted on. Each encounter's probabilities come
  from a calibration fitted without it (``--folds`` folds of encounters); expected calibration error,
  Brier score and the accuracy of the most confident 80 % per half and over them all, for both ways
  of calibrating decided claims (``by_kind``, ``one_share``) with the chosen map of scored claims,
  and for v12's way (``v12``: one share, isotonic steps) when that is not the chosen one;
* ``read_halves_map``: a map fitted on ``dev`` and ``held-out`` measured on the halves fitted on
  (when those are not the read halves themselves);
* ``in_sample``: the shipped calibration on the items it is fitted on (optimistic), and on the read
  halves when it was not fitted there.

``--write`` ships the result as ``doclens/evaluators/rules/calibration.json``, the out-of-fold figures
of the chosen way in its provenance. The unread halves (``fresh``, ``fresh-2``, ``sealed``) are never
read here: ``doclens judge-check --half …`` measures the calibration there.

``--compare "A;B,C;"`` prints only the out-of-fold figures of each set of inputs (here ``A``, then ``B``
and ``C``, then the score alone) and writes nothing.

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
    DERIVED,
    SHRINKAGE,
    accuracy_at_coverage,
    decisive_kinds,
    expected_calibration_error,
    fit_calibration,
    out_of_fold,
)
from doclens.evaluators.rules.clinical_rules import ClinicalRulesJudge  # noqa: E402
from doclens.evaluators.rules.decision import FEATURES  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
#: the read halves: the rules were written from them
READ_HALVES = ("dev", "held-out")
#: what the shipped calibration is fitted on
FIT_ON = ("calibration",)
#: the halves the calibration may be fitted on (never fresh, fresh-2 or sealed: they measure it)
FITTABLE = ("dev", "held-out", "calibration")
COMMAND = "python -m benchmarks.fit_calibration --write"
#: the shipped ways of calibrating a decided claim and a scored one (round 13, issue 46)
DECIDED, SCORED = "by-kind", "logistic"


def judged_rows(aci_bench_dir: str | None, halves: tuple[str, ...], with_features: bool = False) -> list[dict]:
    """Every item of ``halves`` as the calibration reads it: half, encounter, label, verdict,
    decision score (``None`` when a finding decided), deciding kinds and, ``with_features``, a scored
    claim's decision features (those the judge reads for its probability)."""
    judge = ClinicalRulesJudge(calibration=None)
    rows = []
    for half in halves:
        items = shipped_set("real-outputs", half, aci_bench_dir).items
        judged = judge._explain_all([(i.premise, i.claim) for i in items])
        for item in items:
            verdict = judged[(item.premise, item.claim)]
            features = (judge.assess(item.premise, item.claim, only_weighed=True).features
                        if with_features and verdict.score is not None else {})
            rows.append({"half": half, "group": item.fold_key, "label": bool(item.label), "supported": verdict.entailed,
                         "score": verdict.score, "kinds": decisive_kinds(verdict.findings) if verdict.score is None else (),
                         "features": features})
    return rows


def figures(rows: list[dict], probabilities: list[float]) -> dict:
    """Expected calibration error and accuracy at 80 % coverage, per half and over them all (``all``)."""
    found = {}
    for half in (*dict.fromkeys(r["half"] for r in rows), "all"):
        chosen = [n for n, r in enumerate(rows) if half in ("all", r["half"])]
        p = [probabilities[n] for n in chosen]
        labels = [rows[n]["label"] for n in chosen]
        supported = [rows[n]["supported"] for n in chosen]
        confidences = [q if s else 1.0 - q for q, s in zip(p, supported)]
        at80 = accuracy_at_coverage(confidences, [s == y for s, y in zip(supported, labels)], (0.8,))["0.8"]
        found[half] = {"items": len(chosen), "ece": expected_calibration_error(p, labels)["ece"],
                       "brier": round(sum((q - y) ** 2 for q, y in zip(p, labels)) / len(p), 4),
                       "accuracy_at_80": at80["accuracy"]}
    return found


def estimates(rows: list[dict], folds: int, shrinkage: float, read: list[dict], scored: str = "logistic",
              inputs: tuple[str, ...] = ()) -> dict:
    """The out-of-fold figures on ``rows`` (the items fitted on), for both ways of calibrating decided
    claims with the ``scored`` map over ``inputs`` (and v12's way, ``v12``, when that is not it), and
    those of a map fitted on the read halves' ``read`` rows measured on ``rows``."""
    scores, labels = [r["score"] for r in rows], [r["label"] for r in rows]
    groups, features = [r["group"] for r in rows], [r["features"] for r in rows]
    found: dict = {"out_of_fold": {}, "read_halves_map": {}}
    ways = {"by_kind": (True, scored, inputs), "one_share": (False, scored, inputs)}
    if scored != "isotonic":
        ways["v12"] = (False, "isotonic", ())
    for method, (by_kind, how, names) in ways.items():
        kinds = [r["kinds"] if by_kind else () for r in rows]
        found["out_of_fold"][method] = figures(rows, out_of_fold(scores, labels, kinds, groups, folds, shrinkage, how,
                                                                 features, names))
        if read:
            old = fit_calibration([r["score"] for r in read], [r["label"] for r in read], "",
                                  kinds=[r["kinds"] if by_kind else () for r in read], shrinkage=shrinkage,
                                  scored=how, features=[r["features"] for r in read], inputs=names)
            found["read_halves_map"][method] = figures(rows, [old.probability(s, k, f)
                                                              for s, k, f in zip(scores, kinds, features)])
    return found


def command(decided: str, scored: str, inputs: tuple[str, ...], fit_on: tuple[str, ...]) -> str:
    """The command that fits a calibration so, as its provenance says it (the defaults left out)."""
    return (COMMAND + (f" --decided {decided}" if decided != DECIDED else "")
            + (f" --scored {scored}" if scored != SCORED else "")
            + (f" --inputs {','.join(inputs)}" if inputs else "")
            + (f" --fit-on {','.join(fit_on)}" if fit_on != FIT_ON else ""))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help=f"write doclens/evaluators/rules/{CALIBRATION_FILE}")
    parser.add_argument("--folds", type=int, default=5, help="folds of encounters for the out-of-fold estimate")
    parser.add_argument("--shrinkage", type=float, default=SHRINKAGE,
                        help="pseudo-items drawing a decisive kind's share towards all decided claims'")
    parser.add_argument("--decided", choices=("one-share", "by-kind"), default=DECIDED,
                        help="a decided verdict's probability: the shares of its deciding kinds (default) or one "
                             "share for every decided claim (v8-v12)")
    parser.add_argument("--scored", choices=("logistic", "isotonic"), default=SCORED,
                        help="a scored verdict's probability: logistic in the score's log-odds and --inputs "
                             "(default) or isotonic steps on the score (v8-v12)")
    parser.add_argument("--inputs", default="",
                        help="comma-separated decision features a logistic map weighs beside the score (default none)")
    parser.add_argument("--compare", default=None,
                        help="semicolon-separated sets of --inputs (an empty set: the score alone): print only each "
                             "set's out-of-fold figures (decided claims by kind) and write nothing")
    parser.add_argument("--fit-on", default=",".join(FIT_ON),
                        help=f"comma-separated halves to fit on, from {', '.join(FITTABLE)} (default "
                             f"{','.join(FIT_ON)}: notes no rule was written from)")
    parser.add_argument("--aci-bench-dir", default=None, help="ACI-BENCH system outputs (default ../shared/data/…)")
    args = parser.parse_args(argv)
    fit_on = tuple(dict.fromkeys(h.strip() for h in args.fit_on.split(",") if h.strip()))
    if not fit_on or set(fit_on) - set(FITTABLE):
        parser.error(f"--fit-on takes halves from {', '.join(FITTABLE)}, got {args.fit_on!r}")
    inputs = tuple(dict.fromkeys(f.strip() for f in args.inputs.split(",") if f.strip()))
    if set(inputs) - set(FEATURES) - set(DERIVED) or (inputs and args.scored != "logistic"):
        parser.error(f"--inputs takes decision features ({', '.join(FEATURES)}) or derived inputs "
                     f"({', '.join(DERIVED)}) and --scored logistic, got {args.inputs!r}")
    compared = ([tuple(f.strip() for f in part.split(",") if f.strip()) for part in args.compare.split(";")]
                if args.compare is not None else [])
    if any(set(c) - set(FEATURES) - set(DERIVED) for c in compared) or (compared and args.scored != "logistic"):
        parser.error(f"--compare takes sets of --inputs and --scored logistic, got {args.compare!r}")
    judged = judged_rows(args.aci_bench_dir, tuple(dict.fromkeys(fit_on + READ_HALVES)),
                         with_features=bool(inputs or compared))
    if compared:
        rows = [r for r in judged if r["half"] in fit_on]
        print(json.dumps({",".join(c) or "(score alone)": estimates(rows, args.folds, args.shrinkage, [], args.scored, c)
                          ["out_of_fold"]["by_kind"] for c in compared}, indent=2))
        return 0
    rows = [r for r in judged if r["half"] in fit_on]
    read = [r for r in judged if r["half"] in READ_HALVES]
    honest = estimates(rows, args.folds, args.shrinkage, [] if set(fit_on) == set(READ_HALVES) else read,
                       args.scored, inputs)
    if args.decided == "one-share":
        rows, read = ([{**r, "kinds": ()} for r in part] for part in (rows, read))
    model = ClinicalRulesJudge(calibration=None)._decision_model
    calibration = fit_calibration([r["score"] for r in rows], [r["label"] for r in rows], model.fingerprint,
                                  {"fitted_on": f"real-outputs {' + '.join(fit_on)}", "items": len(rows),
                                   "command": command(args.decided, args.scored, inputs, fit_on),
                                   "decided": args.decided, "scored": args.scored, "inputs": list(inputs),
                                   "folds": args.folds,
                                   "out_of_fold": honest["out_of_fold"][args.decided.replace("-", "_")]},
                                  kinds=[r["kinds"] for r in rows] if args.decided == "by-kind" else None,
                                  shrinkage=args.shrinkage, scored=args.scored,
                                  features=[r["features"] for r in rows], inputs=inputs)
    shown = rows + [r for r in read if r["half"] not in fit_on]
    probabilities = [calibration.probability(r["score"], r["kinds"], r["features"]) for r in shown]
    report = {"calibration": calibration.to_json(), "fingerprint": calibration.fingerprint, **honest,
              "in_sample": figures(shown, probabilities)}
    print(json.dumps(report, indent=2))
    if args.write:
        target = REPO / "doclens" / "evaluators" / "rules" / CALIBRATION_FILE
        target.write_text(json.dumps(calibration.to_json(), indent=1) + "\n", encoding="utf-8")
        print(f"written {target.relative_to(REPO)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
