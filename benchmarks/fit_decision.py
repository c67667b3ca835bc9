"""Fit clinical-rules' decision model (doclens/evaluators/rules/decision.py) on development data; print JSON.

A thin wrapper over ``doclens judge-fit`` (:mod:`doclens.evaluators.rules.fit`): the shipped
``doclens/evaluators/rules/decision_model.json`` is exactly what that command writes from the
**development halves** of two labelled sets, never a held-out half:

* the real-output set (``doclens/datasets/real_outputs``: claims of real ACI-BENCH test-2/3 system
  notes and clinician notes, labelled by reading; ``--set real-outputs --half dev``);
* as guard items, the perturbed clinician notes of ``benchmarks/judge_quality.py`` (its ``dev``
  notes of ACI-BENCH test split 1: verbatim, shortened and templated paraphrases against other
  patients, swapped sides, flipped negations, changed numbers and drugs, dialogue-only facts),
  weighted by ``--jq-weight``; every kind keeps an accuracy of 0.9 at the chosen threshold.

This script writes the guard items to a JSONL file (``judge_quality_dev.jsonl``: ``{id, claim,
premise, label, group, kind}``, group = the note) and runs

    doclens judge-fit --set real-outputs --half dev --guard judge_quality_dev.jsonl \\
        --guard-group-column group --l2 10 --guard-weight 0.3 --kind-floor 0.9 --folds 10 --json -o MODEL

Printed: judge-fit's JSON (the grouped cross-validation at the threshold it chose, the weights,
the items judged wrongly in cross-validation). ``--write`` saves the model as
``doclens/evaluators/rules/decision_model.json``; ``--guard-out FILE`` keeps the guard items.

    python -m benchmarks.fit_decision                 # cross-validate, print, write nothing
    python -m benchmarks.fit_decision --write         # and ship the fitted model
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from benchmarks import judge_quality  # noqa: E402
from doclens.cli import main as doclens_main  # noqa: E402
from doclens.evaluators.rules.decision import MODEL_FILE  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
GUARD_FILE = "judge_quality_dev.jsonl"


def guard_items(jq_data: Path) -> list[dict]:
    """The development pairs of ``benchmarks/judge_quality.py`` as labelled items (``group``: the note)."""
    notes = [json.loads(line) for line in jq_data.read_text(encoding="utf-8").splitlines() if line.strip()]
    pairs = [p for p in judge_quality.build_pairs(notes) if p["split"] == "dev"]
    return [{"id": f"jq/{n}", "claim": p["claim"], "premise": p["premise"], "label": bool(p["label"]),
             "group": f"jq/{p['note_id']}", "kind": p["kind"]} for n, p in enumerate(pairs)]


def write_items(path: Path, items: list[dict]) -> None:
    path.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")


def judge_fit_arguments(guard: Path, output: Path, l2: float, jq_weight: float, alignment: bool = False) -> list[str]:
    """The ``doclens judge-fit`` command line of the shipped model (``alignment``: the measured,
    unshipped variant that also weighs MiniLM's token alignment)."""
    return ["judge-fit", "--set", "real-outputs", "--half", "dev", "--guard", str(guard), "--guard-group-column",
            "group", "--l2", f"{l2:g}", "--guard-weight", f"{jq_weight:g}", "--kind-floor", "0.9", "--folds", "10",
            "--json", "-o", str(output)] + ["--alignment"] * alignment


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--l2", type=float, default=10.0, help="L2 penalty on the standardised weights")
    parser.add_argument("--jq-weight", type=float, default=0.3, help="weight of a judge_quality row (a real one: 1)")
    parser.add_argument("--jq-data", default=str(judge_quality.DEFAULT_DATA))
    parser.add_argument("--errors", action="store_true",
                        help="kept for older command lines: judge-fit's JSON always lists the items judged wrongly")
    parser.add_argument("--guard-out", help="also keep the guard items (judge_quality's dev pairs) in this JSONL file")
    parser.add_argument("--alignment", action="store_true",
                        help="also weigh MiniLM's token alignment (the variant measured in docs/changelog.md, "
                             "not shipped)")
    parser.add_argument("-o", "--output", help="write the model to this file (with --alignment, say where)")
    parser.add_argument("--write", action="store_true", help=f"save the model as doclens/evaluators/rules/{MODEL_FILE}")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        guard = Path(folder) / GUARD_FILE
        items = guard_items(Path(args.jq_data))
        write_items(guard, items)
        if args.guard_out:
            write_items(Path(args.guard_out), items)
        output = (REPO / "doclens" / "evaluators" / "rules" / MODEL_FILE if args.write
                  else Path(args.output) if args.output else Path(folder) / MODEL_FILE)
        return doclens_main(judge_fit_arguments(guard, output, args.l2, args.jq_weight, args.alignment))


if __name__ == "__main__":
    sys.exit(main())
