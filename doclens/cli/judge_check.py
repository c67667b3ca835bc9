"""``doclens judge-check``: how far to trust a judge, measured on labelled (claim, premise, label)
items — the shipped real-output set or a team's own CSV / JSONL."""

from __future__ import annotations

import argparse
import json
import sys
import time

from doclens.cli.common import (
    NON_NEGATIVE_INT,
    POSITIVE_INT,
    bootstrap_options,
    check_output_path,
    command_parser,
    refuse_overwriting_inputs,
    stderr_is_terminal,
)
from doclens.core.errors import EXIT_OK, ConfigurationError, InputError

DEFAULT_EVALUATOR = "clinical-rules"
#: ``--sample N`` draws the same N items every time
SAMPLE_SEED = 0


def labelled_items(args: argparse.Namespace):
    """The :class:`~doclens.datasets.labelled.LabelledSet` a command line names: ``ITEMS`` (a file)
    or ``--set`` / ``--half`` (a shipped set; the default when no file is given)."""
    from doclens.datasets.labelled import read_labelled, shipped_set

    if args.items and args.set:
        raise InputError("give a file of labelled items or --set, not both", field="--set")
    if args.items:
        if args.half is not None:
            raise InputError("--half selects a half of a shipped set (--set); a file is read whole", field="--half")
        return read_labelled(args.items, group_column=args.group_column, aci_bench_dir=args.aci_bench_dir)
    if args.group_column:
        raise InputError("--group-column names a column of a file of labelled items; a shipped set has its own "
                         "groups (real-outputs: system, near-miss-probe: kind)", field="--group-column")
    return shipped_set(args.set or "real-outputs", args.half or args.default_half, args.aci_bench_dir)


def item_inputs(args: argparse.Namespace) -> list[str]:
    """The files a ``judge-check`` / ``judge-fit`` command line reads: the items, the guard items,
    the decision models it names."""
    from doclens.cli.score import _parse_pairs

    models = [getattr(args, "decision_model", None)]
    for flag, dest in (("--evaluator-arg", "evaluator_arg"), ("--against-arg", "against_arg")):
        model = _parse_pairs(getattr(args, dest, None) or [], flag).get("decision_model")
        models.append(model if isinstance(model, str) else None)
    return [args.items, getattr(args, "guard", None), *models]


def one_class_warning(items) -> list[str]:
    """The warning for items of one class only: their balanced accuracy is n/a (``[]`` otherwise)."""
    classes = {item.label for item in items}
    if len(classes) != 1:
        return []
    name, other = ("supported", "unsupported") if classes.pop() else ("unsupported", "supported")
    return [f"all {len(items)} items are labelled {name}: balanced accuracy needs both classes and is n/a (so is "
            f"the accuracy on {other} items); the accuracy on {name} items is shown"]


def add_item_options(parser: argparse.ArgumentParser, default_half: str) -> None:
    """The options that choose labelled items (``judge-check`` and ``judge-fit`` share them)."""
    from doclens.datasets.labelled import HALVES, SHIPPED_SETS

    parser.add_argument("items", nargs="?",
                        help="CSV or JSONL of labelled items: claim, premise (or premise_ref, an ACI-BENCH note "
                             "split/encounter/note), label (true/false; empty: undecided, left out), optional id, "
                             "side and group column (default: --set real-outputs)")
    parser.add_argument("--set", choices=list(SHIPPED_SETS),
                        help="a shipped labelled set: real-outputs (doclens/datasets/real_outputs/DATASHEET.md) or "
                             "near-miss-probe (held out from fitting: no dev half)")
    parser.add_argument("--half", choices=HALVES,
                        help=f"the shipped set's half (default {default_half}; dev is for tuning, held-out for "
                             "figures you report; fresh: real-outputs' third round, drawn after held-out was read; "
                             "fresh-2: its fourth, drawn after v7 was measured on fresh; sealed: its fifth, measured "
                             "once a round; calibration: its sixth, what the confidence is fitted on)")
    parser.add_argument("--group-column", metavar="COLUMN",
                        help="ITEMS: the column that groups items (a system, a site …): figures per group, and "
                             "what cross-validation keeps together")
    parser.add_argument("--aci-bench-dir", metavar="DIR",
                        help="folder of ACI-BENCH system outputs (test2/, test3/: ACI-BENCH's published CSVs, or "
                             "converted references.jsonl and systems/NAME.jsonl) where premise references are read "
                             "(default: $DOCLENS_ACI_BENCH_DIR, else shared/data/aci_bench_systems beside a checkout "
                             "of DocLens or under the current folder or its parent; none found: the error says what "
                             "to pass)")
    parser.set_defaults(default_half=default_half)


def _load_judge(args: argparse.Namespace, name: str, pairs: list[str] | None, flag: str):
    from doclens.cli.score import _judge_stores, evaluator_options
    from doclens.evaluators import EVALUATOR_PRESETS, load_evaluator, named_options

    options = evaluator_options(args, name, pairs, flag)
    options.update(_judge_stores(args, named_options(name, EVALUATOR_PRESETS)))  # as doclens score passes them
    if args.decision_model and flag == "--evaluator-arg":
        options["decision_model"] = args.decision_model
    started = time.perf_counter()
    return load_evaluator(name, **options), time.perf_counter() - started


def _checked(args: argparse.Namespace, name: str, pairs, flag: str, items) -> dict:
    """Load judge ``name``, judge every item; the verdicts, the signature and the timings."""
    from doclens.stats.judge_check import judge_items

    judge, load_seconds = _load_judge(args, name, pairs, flag)
    try:
        verdicts, judge_seconds = judge_items(judge, items, progress=stderr_is_terminal())
    finally:
        judge.close()
    return {"name": name, "signature": judge.signature(), "verdicts": verdicts,
            "seconds": {"load": round(load_seconds, 2), "judge": round(judge_seconds, 2)},
            "in_sample": calibration_in_sample(args, getattr(getattr(judge, "calibration", None), "provenance", None))}


def calibration_in_sample(args: argparse.Namespace, provenance: dict | None) -> dict | None:
    """When the judge's calibration was fitted on the shipped half being checked (clinical-rules'
    is fitted on the calibration half: ``benchmarks/fit_calibration.py``), its
    calibration figures there are in-sample: what its fit estimated out of fold on that half instead
    (``out_of_fold``, ``None`` when it recorded none); ``None`` when it was not fitted on these items.

    >>> args = argparse.Namespace(items=None, set=None, half="dev", default_half="held-out")
    >>> calibration_in_sample(args, {"fitted_on": "real-outputs dev + held-out", "out_of_fold": {"dev": {"ece": 0.04}}})
    {'half': 'dev', 'out_of_fold': {'ece': 0.04}}
    >>> calibration_in_sample(argparse.Namespace(**{**vars(args), "half": "fresh"}), {"fitted_on": "real-outputs dev"})
    """
    fitted_on = str((provenance or {}).get("fitted_on", ""))
    if args.items or " " not in fitted_on:
        return None
    shipped, halves = fitted_on.split(" ", 1)
    half = args.half or args.default_half
    if shipped != (args.set or "real-outputs") or half not in halves.split(" + "):
        return None
    return {"half": half, "out_of_fold": (provenance or {}).get("out_of_fold", {}).get(half)}


def _with_in_sample(summary: dict, in_sample: dict | None) -> dict:
    """The judge's summary, its calibration block marked when the calibration was fitted on these items."""
    if summary.get("calibration") is not None and in_sample is not None:
        summary["calibration"]["fitted_on_these_items"] = in_sample
    return summary


def run(args: argparse.Namespace) -> int:
    from doclens.stats.bootstrap import bootstrap_description
    from doclens.stats.judge_check import compare, summarise
    from doclens.views.judge_check import check_text, write_check_html

    for path, flag in ((args.json, "--json"), (args.html, "--html")):
        if path:
            check_output_path(path, flag)
    refuse_overwriting_inputs([("--json", args.json), ("--html", args.html)], item_inputs(args))
    if args.decision_model and args.evaluator != "clinical-rules":
        raise ConfigurationError("--decision-model applies to --evaluator clinical-rules (for --against: "
                                 "--against-arg decision_model=PATH)")
    labelled = labelled_items(args)
    if not labelled.items:
        raise InputError(f"{labelled.name}: no labelled items to judge ({labelled.undecided} undecided)")
    items = labelled.items
    if args.sample is not None and args.sample < len(items):
        import random

        chosen = sorted(random.Random(SAMPLE_SEED).sample(range(len(items)), args.sample))
        items = [items[n] for n in chosen]
        labelled.name += f", a sample of {args.sample} (seed {SAMPLE_SEED})"
    bootstrap = dict(resamples=args.resamples, seed=args.bootstrap_seed, confidence=args.confidence)
    warnings = one_class_warning(items)
    judges = [_checked(args, args.evaluator, args.evaluator_arg, "--evaluator-arg", items)]
    if args.against:
        judges.append(_checked(args, args.against, args.against_arg, "--against-arg", items))
    result = {
        "set": labelled.name, "set_description": labelled.description, "group_column": labelled.group_name,
        "items": len(items), "undecided_left_out": labelled.undecided, "warnings": warnings,
        "bootstrap": bootstrap_description(args.resamples, args.bootstrap_seed, args.confidence),
        "judges": [{"name": j["name"], "signature": j["signature"], "seconds": j["seconds"],
                    **_with_in_sample(summarise(items, j["verdicts"], **bootstrap), j["in_sample"])} for j in judges],
    }
    if args.against:
        result["paired"] = compare(items, judges[0]["verdicts"], judges[1]["verdicts"], **bootstrap)
    if args.json:
        from doclens.reports.files import write_atomically

        text = json.dumps(result, indent=2, allow_nan=False) + "\n"
        write_atomically(args.json, lambda handle: handle.write(text))
    if args.html:
        write_check_html(args.html, result)
    print(check_text(result, args.show_wrong))
    for path, what in ((args.json, "JSON"), (args.html, "HTML page")):
        if path:
            print(f"{what} written to {path}", file=sys.stderr)
    return EXIT_OK


def add_parser(sub) -> None:
    from doclens.cli.score import add_judge_options

    check = command_parser(
        sub, "judge-check", examples="""
        doclens judge-check                                   # clinical-rules on the shipped held-out half
        doclens judge-check --evaluator overlap --against clinical-rules --html check.html
        doclens judge-check ours.csv --group-column site --evaluator gpt4-json-cot --base-url http://llm:8000/v1
        doclens judge-check ours.csv --decision-model ours_model.json --against clinical-rules   # refit vs shipped
        """,
        description="Judges every item and prints balanced accuracy with bootstrap intervals, per side and per "
                    "group, each group's supported-rate gap (judged minus labelled supported rate) and the items "
                    "it got wrong. Replies that stayed unparsed and calls that failed are counted and shown, and "
                    "count as wrong. With --against, a second judge on the same items and McNemar's exact test "
                    "on the items only one of them gets right.")
    add_item_options(check, "held-out")
    check.add_argument("--evaluator", default=DEFAULT_EVALUATOR,
                       help=f"the judge: a preset (doclens presets) or package.module:ClassName (default "
                            f"{DEFAULT_EVALUATOR})")
    check.add_argument("--evaluator-arg", action="append", metavar="KEY=VALUE",
                       help="extra constructor argument for the evaluator (repeatable; VALUE read as JSON if it parses)")
    check.add_argument("--against", metavar="EVALUATOR", help="a second judge, compared with the first on the same items")
    check.add_argument("--against-arg", action="append", metavar="KEY=VALUE",
                       help="extra constructor argument for the --against judge (repeatable)")
    check.add_argument("--decision-model", metavar="PATH",
                       help="--evaluator clinical-rules: a decision model written by doclens judge-fit, instead of the "
                            "shipped one (for --against: --against-arg decision_model=PATH)")
    check.add_argument("--sample", type=POSITIVE_INT, metavar="N",
                       help=f"judge a fixed sample of N items (seed {SAMPLE_SEED}: the same items every run), for a "
                            "quick look; figures you report use every item")
    check.add_argument("--json", metavar="OUT", help="write every figure, verdict count and wrong item as JSON")
    check.add_argument("--html", metavar="OUT",
                       help="write an HTML page: confusion matrix, per-group bars, the wrong items (pictures need "
                            "the plots extra)")
    check.add_argument("--show-wrong", type=NON_NEGATIVE_INT, default=20, metavar="N",
                       help="wrong items printed per judge (default 20; --json has them all)")
    bootstrap_options(check, allow_none=True, old_seed=False)
    model_dests, cache_dests = add_judge_options(check)
    check.set_defaults(func=run, model_options=model_dests, run_options=cache_dests)
