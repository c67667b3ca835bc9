"""Fit clinical-rules' decision model (doclens/evaluators/rules/decision.py) on development data; print JSON.

The rows are the **development halves** of two labelled sets, never a held-out half:

* the real-output set (``benchmarks/data/real_outputs``: claims of real ACI-BENCH test-2/3 system
  notes and clinician notes, labelled by reading; ``--half dev`` of ``benchmarks/real_outputs.py``);
* the perturbed clinician notes of ``benchmarks/judge_quality.py`` (its ``dev`` notes of ACI-BENCH
  test split 1: verbatim, shortened and templated paraphrases against other patients, swapped sides,
  flipped negations, changed numbers and drugs, dialogue-only facts), weighted by ``--jq-weight``.

Each row is read by the judge's rules (:meth:`ClinicalRulesJudge.assess`); rows that a decisive
finding already rejects (:data:`doclens.evaluators.rules.decision.DECISIVE`) are not fitted on.
Printed: the grouped cross-validation (folds by encounter or note, so no note is in a fold's
training and test rows at once) of the final settings — balanced accuracy on the real-output rows,
the accuracy of every judge_quality kind — at the threshold it chooses (:func:`choose_threshold`),
and the fitted weights. ``--write`` saves the model as
``doclens/evaluators/rules/decision_model.json`` (its provenance names the rows, the settings and
the cross-validated figures).

    python benchmarks/fit_decision.py                 # cross-validate, print, write nothing
    python benchmarks/fit_decision.py --write         # and ship the fitted model
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import judge_quality  # noqa: E402
from real_outputs import DEFAULT_LABELS, _rates, premises, read_labels  # noqa: E402

from doclens.evaluators.rules.clinical_rules import ClinicalRulesJudge  # noqa: E402
from doclens.evaluators.rules.decision import DECISIVE, MODEL_FILE, fit  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
FOLDS = 10
#: The thresholds tried (:func:`choose_threshold`), and the accuracy every judge_quality kind keeps.
THRESHOLDS = tuple(round(0.2 + 0.05 * n, 2) for n in range(9))
KIND_FLOOR = 0.9


def development_rows(judge: ClinicalRulesJudge, jq_data: Path) -> list[dict]:
    """Every development row: ``{"source", "group", "kind", "label", "features", "decided"}``."""
    items = [i for i in read_labels(DEFAULT_LABELS, "dev") if i["label"] is not None]
    pairs = [(premise, i["claim"], "real", f"{i['split']}/{i['encounter']}", i["system"], bool(i["label"]))
             for i, premise in zip(items, premises(items))]
    notes = [json.loads(line) for line in jq_data.read_text(encoding="utf-8").splitlines() if line.strip()]
    pairs += [(p["premise"], p["claim"], "judge_quality", f"jq/{p['note_id']}", p["kind"], bool(p["label"]))
              for p in judge_quality.build_pairs(notes) if p["split"] == "dev"]
    rows = []
    for premise, claim, source, group, kind, label in pairs:
        assessment = judge.assess(premise, claim)
        rows.append({"source": source, "group": group, "kind": kind, "label": label, "claim": claim,
                     "findings": "; ".join(f.text for f in assessment.findings), "features": assessment.features,
                     "decided": any((f.kind, f.conflict) in DECISIVE for f in assessment.findings)})
    return rows


def _fit(rows: list[dict], l2: float, jq_weight: float):
    chosen = [r for r in rows if not r["decided"]]
    return fit([r["features"] for r in chosen], [r["label"] for r in chosen],
               [jq_weight if r["source"] == "judge_quality" else 1.0 for r in chosen], l2=l2)


def out_of_fold_scores(rows: list[dict], l2: float, jq_weight: float) -> list[float | None]:
    """Each row's score from a model fitted without its group (grouped folds: each encounter or note
    lands in one fold, in a fixed order); ``None`` for a row a decisive finding rejects."""
    groups = sorted({r["group"] for r in rows})
    fold_of = {g: n % FOLDS for n, g in enumerate(groups)}
    scores: list[float | None] = [None] * len(rows)
    for fold in range(FOLDS):
        model = _fit([r for r in rows if fold_of[r["group"]] != fold], l2, jq_weight)
        for n, r in enumerate(rows):
            if fold_of[r["group"]] == fold and not r["decided"]:
                scores[n] = model.score(r["features"])
    return scores


def summarise(rows: list[dict], scores: list[float | None], threshold: float) -> dict:
    """Balanced accuracy on the real-output rows (decided ones included), per system the labelled
    against the judged supported rate, and the accuracy of every judge_quality kind."""
    verdicts = [s is not None and s >= threshold for s in scores]
    real = [(r["label"], v) for r, v in zip(rows, verdicts) if r["source"] == "real"]
    by_system: dict = defaultdict(list)
    kinds: dict = defaultdict(list)
    for r, v in zip(rows, verdicts):
        (by_system if r["source"] == "real" else kinds)[r["kind"]].append((r["label"], v))
    rates = _rates(real)  # real_outputs.py's figures, read the same way
    return {
        "threshold": threshold,
        "real_outputs_dev": {"items": rates["n"], "balanced_accuracy": rates["balanced_accuracy"],
                             "supported_accuracy": rates["supported_accuracy"],
                             "unsupported_accuracy": rates["unsupported_accuracy"],
                             "per_system_labelled_vs_judged_supported_rate": {
                                 s: [r["labelled_supported_rate"], r["judge_supported_rate"]]
                                 for s, r in ((s, _rates(p)) for s, p in sorted(by_system.items()))}},
        "judge_quality_dev_kinds": {k: round(sum(lab == v for lab, v in p) / len(p), 3) for k, p in sorted(kinds.items())},
    }


def choose_threshold(rows: list[dict], scores: list[float | None]) -> float:
    """The threshold of :data:`THRESHOLDS` with the best cross-validated balanced accuracy on the
    real-output rows among those that keep every judge_quality kind at :data:`KIND_FLOOR` or more
    (the smallest on a tie). The model is fitted with balanced classes on the rows no decisive
    finding rejects; those findings reject supported claims too, so 0.5 on the rest is not the
    balanced point of the whole."""
    best = None
    for threshold in THRESHOLDS:
        summary = summarise(rows, scores, threshold)
        if min(summary["judge_quality_dev_kinds"].values()) < KIND_FLOOR:
            continue
        accuracy = summary["real_outputs_dev"]["balanced_accuracy"]
        if best is None or accuracy > best[0]:
            best = (accuracy, threshold)
    if best is None:
        raise SystemExit(f"no threshold keeps every judge_quality kind at {KIND_FLOOR} or more")
    return best[1]


def errors_of(rows: list[dict], scores: list[float | None], threshold: float) -> list[dict]:
    """The real-output rows the cross-validated verdict gets wrong."""
    return [{"label": r["label"], "system": r["kind"], "claim": r["claim"],
             "score": None if s is None else round(s, 2), "findings": r["findings"]}
            for r, s in zip(rows, scores)
            if r["source"] == "real" and (s is not None and s >= threshold) != r["label"]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--l2", type=float, default=10.0, help="L2 penalty on the standardised weights")
    parser.add_argument("--jq-weight", type=float, default=0.3, help="weight of a judge_quality row (a real one: 1)")
    parser.add_argument("--jq-data", default=str(judge_quality.DEFAULT_DATA))
    parser.add_argument("--errors", action="store_true", help="print the real-output dev rows judged wrongly in cross-validation")
    parser.add_argument("--write", action="store_true", help=f"save the model as doclens/evaluators/rules/{MODEL_FILE}")
    args = parser.parse_args()
    judge = ClinicalRulesJudge(decision="rules")
    rows = development_rows(judge, Path(args.jq_data))
    scores = out_of_fold_scores(rows, args.l2, args.jq_weight)
    threshold = choose_threshold(rows, scores)
    fitted = [r for r in rows if not r["decided"]]
    provenance = {
        "fitted_on": {"real_outputs_dev": sum(r["source"] == "real" for r in fitted),
                      "judge_quality_dev": sum(r["source"] == "judge_quality" for r in fitted),
                      "left_to_decisive_findings": len(rows) - len(fitted)},
        "script": "benchmarks/fit_decision.py", "l2": args.l2, "jq_weight": args.jq_weight,
        "cross_validated": summarise(rows, scores, threshold),
    }
    model = _fit(rows, args.l2, args.jq_weight)
    model = type(model)(model.weights, model.bias, threshold, provenance)
    errors = errors_of(rows, scores, threshold) if args.errors else None
    print(json.dumps({"benchmark": "fit_decision", "fingerprint": model.fingerprint, **provenance,
                      "weights": model.weights, "bias": model.bias, **({"errors": errors} if errors is not None else {})},
                     indent=2))
    if args.write:
        path = REPO / "doclens" / "evaluators" / "rules" / MODEL_FILE
        path.write_text(json.dumps(model.to_json(), indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
