"""``doclens judge-fit``: clinical-rules' decision model refitted on a team's own labelled items
(:mod:`doclens.evaluators.rules.fit`), written as a file the judge loads with ``--decision-model``."""

from __future__ import annotations

import argparse
import json
import os
import sys

from doclens.cli.common import POSITIVE_FLOAT, check_output_path, command_parser, number, refuse_overwriting_inputs
from doclens.core.errors import EXIT_OK, InputError


def _command(args: argparse.Namespace) -> str:
    """The command that made the model, for its provenance (file names only, not local folders)."""
    parts = ["doclens judge-fit"]
    parts.append(os.path.basename(args.items) if args.items else f"--set {args.set or 'real-outputs'} "
                 f"--half {args.half or args.default_half}")
    if args.group_column:
        parts.append(f"--group-column {args.group_column}")
    if args.guard:
        parts.append(f"--guard {os.path.basename(args.guard)}")
    if args.guard_group_column:
        parts.append(f"--guard-group-column {args.guard_group_column}")
    parts.append(f"--l2 {args.l2:g} --guard-weight {args.guard_weight:g} --kind-floor {args.kind_floor:g} "
                 f"--folds {args.folds}")
    if args.alignment:
        parts.append("--alignment")
    return " ".join(parts)


def fit_text(result, output: str, show_wrong: int) -> str:
    """What ``judge-fit`` prints: the cross-validated figures, the model's name and how to use it."""
    from doclens.views.visible import visible

    cv = result.cross_validated
    figures = cv["items"]
    fitted = result.model.provenance["fitted_on"]
    undecided = result.model.provenance.get("sources", {}).get("undecided_left_out", 0)
    lines = [f"decision model lr-{result.model.fingerprint}: fitted on {fitted['items']} items"
             + (f" and {fitted['guard_items']} guard items" if fitted["guard_items"] else "")
             + f" ({undecided} undecided left out)"
             + f" ({fitted['left_to_decisive_findings']} more rejected by a contradiction, not fitted on)",
             f"grouped cross-validation, threshold {cv['threshold']:g} (chosen by cross-validation): "
             f"balanced accuracy {figures['balanced_accuracy']}, supported accuracy {figures['supported_accuracy']}, "
             f"unsupported accuracy {figures['unsupported_accuracy']} on {figures['items']} items"]
    per_group = figures["per_group_labelled_vs_judged_supported_rate"]
    if per_group:
        lines.append("  per group, labelled / judged supported rate: " + ", ".join(
            f"{visible(g)} {lab} / {jud}" for g, (lab, jud) in per_group.items()))
    if cv["guard_kinds"]:
        lines.append("  guard kinds' accuracy: " + ", ".join(f"{visible(k)} {v}" for k, v in cv["guard_kinds"].items()))
    lines.append(f"  judged wrongly in cross-validation: {len(result.errors)}")
    for error in result.errors[:show_wrong]:
        lines.append(f"    labelled {'supported' if error['label'] else 'unsupported'} (score {error['score']}): "
                     f"{visible(error['claim'])[:110]}")
    lines.append(f"model written to {output}; use it with: doclens score … --evaluator-arg decision_model={output} "
                 f"(or doclens judge-check --decision-model {output}); the judge's signature then ends "
                 f"+lr-{result.model.fingerprint}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from doclens.cli.judge_check import item_inputs, labelled_items
    from doclens.cli.score import _judge_stores
    from doclens.datasets.labelled import read_labelled
    from doclens.evaluators.rules.clinical_rules import ClinicalRulesJudge
    from doclens.evaluators.rules.fit import FitSettings, assess_rows, check_items, fit_decision_model
    from doclens.reports.files import write_atomically

    check_output_path(args.output)
    refuse_overwriting_inputs([("--output", args.output)], item_inputs(args))
    if args.set == "near-miss-probe":
        raise InputError("near-miss-probe is held out from every fit: measure with it (doclens judge-check --set "
                         "near-miss-probe), never fit on it", field="--set")
    if args.half == "sealed":
        raise InputError("the sealed half is measured once, never fitted on (its DATASHEET, 'Round 5'): fit on dev",
                         field="--half")
    if args.half == "calibration":
        raise InputError("the calibration half fits the verdicts' confidence only (its DATASHEET, 'Round 6'; "
                         "python -m benchmarks.fit_calibration), never a decision model: fit on dev", field="--half")
    labelled = labelled_items(args)
    check_items(labelled.items)  # before the rules load
    guard = None
    if args.guard:
        guard = read_labelled(args.guard, group_column=args.guard_group_column or args.group_column,
                              aci_bench_dir=args.aci_bench_dir)
        unkinded = [item.id for item in guard.items if item.kind is None]
        if unkinded:
            raise InputError(f"{args.guard}: guard items need a 'kind' (the floor applies per kind); "
                             f"{unkinded[0]} has none", field="kind")
    settings = FitSettings(l2=args.l2, guard_weight=args.guard_weight, kind_floor=args.kind_floor, folds=args.folds,
                           alignment=args.alignment)
    # the features; its decision is what is being fitted. Its caches as doclens score's: --cache-dir
    # moves them all, --no-cache reads and writes none (score.py, _judge_stores)
    judge = ClinicalRulesJudge(decision="rules", **_judge_stores(args, {"resources"}))
    judge.token_alignment = args.alignment  # measured only when the model is to weigh it (slower)
    try:
        rows = assess_rows(judge, labelled.items) + (assess_rows(judge, guard.items, guard=True) if guard else [])
    finally:
        judge.close()  # the readings and stems not written yet
    sources = {"items": labelled.name, "undecided_left_out": labelled.undecided,
               **({"guard": guard.name} if guard else {})}
    result = fit_decision_model(rows, settings, sources=sources, command=_command(args))
    text = json.dumps(result.model.to_json(), indent=2) + "\n"
    write_atomically(args.output, lambda handle: handle.write(text))
    if args.json:
        print(json.dumps({"fingerprint": result.model.fingerprint, **result.model.provenance,
                          "weights": result.model.weights, "bias": result.model.bias, "errors": result.errors},
                         indent=2))
        print(f"model written to {args.output}", file=sys.stderr)
    else:
        print(fit_text(result, args.output, args.show_wrong))
    return EXIT_OK


def add_parser(sub) -> None:
    from doclens.cli.judge_check import add_item_options
    from doclens.evaluators.rules.fit import FitSettings

    defaults = FitSettings()
    fit = command_parser(
        sub, "judge-fit", examples="""
        doclens judge-fit ours.csv --group-column encounter -o our_model.json
        doclens judge-check ours_held_out.csv --decision-model our_model.json
        doclens score notes.jsonl --evaluator-arg decision_model=our_model.json
        doclens judge-fit --set real-outputs --half dev --guard guard.jsonl --guard-group-column group -o model.json
        """,
        description="Reads each item with clinical-rules' rules, fits the logistic decision over their findings "
                    "(grouped cross-validation by the group column, threshold chosen by cross-validation), prints "
                    "the cross-validated figures and writes the model. Items a contradiction already rejects are "
                    "not fitted on. Refuses too few items (under 30), one class, or fewer than 3 groups. Fit on "
                    "one part of your items and measure on another (doclens judge-check --decision-model).")
    add_item_options(fit, "dev")
    fit.add_argument("-o", "--output", required=True, help="the model file to write (JSON)")
    fit.add_argument("--guard", metavar="FILE",
                     help="more labelled items (CSV/JSONL with a 'kind' column) fitted on with --guard-weight, not "
                          "counted in the balanced accuracy; every kind must keep --kind-floor accuracy")
    fit.add_argument("--guard-group-column", metavar="COLUMN",
                     help="the group column of --guard (default: --group-column)")
    fit.add_argument("--guard-weight", type=POSITIVE_FLOAT, default=defaults.guard_weight,
                     help=f"weight of a guard item (an item: 1; default {defaults.guard_weight})")
    fit.add_argument("--kind-floor", type=number(float, 0, 1, what="a number between 0 and 1"),
                     default=defaults.kind_floor,
                     help=f"accuracy every guard kind keeps at the chosen threshold (default {defaults.kind_floor})")
    fit.add_argument("--l2", type=number(float, 0, what="a number of at least 0"), default=defaults.l2,
                     help=f"L2 penalty on the standardised weights (default {defaults.l2:g})")
    fit.add_argument("--folds", type=number(int, 2, what="an integer of at least 2"), default=defaults.folds,
                     help=f"cross-validation folds (default {defaults.folds}; fewer when there are fewer groups)")
    fit.add_argument("--alignment", action="store_true",
                     help="also weigh MiniLM's token alignment of the claim with its closest note sentences "
                          "(more MiniLM passes a claim; no better on the shipped set: cards/clinical-rules.md)")
    fit.add_argument("--json", action="store_true", help="print the model's provenance, weights and CV errors as JSON")
    fit.add_argument("--show-wrong", type=number(int, 0, what="an integer of at least 0"), default=10, metavar="N",
                     help="items judged wrongly in cross-validation to print (default 10)")
    fit.add_argument("--cache-dir", help="cache folder (default $DOCLENS_CACHE or ~/.cache/doclens): clinical-rules' "
                                         "readings and vectors, the derived stems and drug names, MiniLM's ONNX "
                                         "export (as doclens score)")
    fit.add_argument("--no-cache", action="store_true",
                     help="read and write no cache of any kind (as doclens score: MiniLM's ONNX export, a model "
                          "file, is read where a run kept one and never written)")
    fit.set_defaults(func=run)
