"""Fit clinical-rules' calibration (doclens/evaluators/rules/calibration.py); print JSON.

The decision model is fitted on the real-output set's ``dev`` half (``benchmarks/fit_decision.py``);
its scores there are in-sample. The calibration is fitted where the model was not: the read
``held-out`` half (557 decided items, labelled by reading; read for error analysis, never fitted
on). Each item is judged by the shipped judge; a verdict a finding decided has no score and is
calibrated as one class. ``--write`` ships the result as ``doclens/evaluators/rules/calibration.json``.
The unread halves (``fresh``, ``fresh-2``, ``sealed``) are never read here: ``doclens judge-check
--half …`` measures the calibration there (expected calibration error, reliability diagram,
accuracy by coverage).

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
from doclens.evaluators.rules.calibration import CALIBRATION_FILE, expected_calibration_error, fit_calibration  # noqa: E402
from doclens.evaluators.rules.clinical_rules import ClinicalRulesJudge  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
HALF = "held-out"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help=f"write doclens/evaluators/rules/{CALIBRATION_FILE}")
    parser.add_argument("--aci-bench-dir", default=None, help="ACI-BENCH system outputs (default ../shared/data/…)")
    args = parser.parse_args(argv)
    items = shipped_set("real-outputs", HALF, args.aci_bench_dir).items
    judge = ClinicalRulesJudge(calibration=None)
    judged = judge._explain_all([(i.premise, i.claim) for i in items])
    verdicts = [judged[(i.premise, i.claim)] for i in items]
    model = judge._decision_model
    calibration = fit_calibration([v.score for v in verdicts], [i.label for i in items], model.fingerprint,
                                  {"fitted_on": f"real-outputs {HALF}", "items": len(items),
                                   "command": "python -m benchmarks.fit_calibration --write"})
    probabilities = [calibration.probability(v.score) for v in verdicts]
    report = {"calibration": calibration.to_json(), "fingerprint": calibration.fingerprint,
              "in_sample": expected_calibration_error(probabilities, [i.label for i in items])}
    print(json.dumps(report, indent=2))
    if args.write:
        target = REPO / "doclens" / "evaluators" / "rules" / CALIBRATION_FILE
        target.write_text(json.dumps(calibration.to_json(), indent=1) + "\n", encoding="utf-8")
        print(f"written {target.relative_to(REPO)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
