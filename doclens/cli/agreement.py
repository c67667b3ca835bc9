"""``doclens agreement``: how DocLens scores agree with human judgements."""

from __future__ import annotations

import argparse
import json
import sys

from doclens.cli.common import command_parser, load_report, refuse_overwriting_inputs, scores_inputs
from doclens.core.errors import EXIT_ERROR, DocLensError, InputError
from doclens.families import DOCLENS_METRICS
from doclens.views.text import agreement_text


def _named_scores(spec: str) -> tuple[str | None, str]:
    """``NAME=PATH`` → ``(NAME, PATH)``; a bare path → ``(None, PATH)``."""
    name, sep, path = spec.partition("=")
    return (name, path) if sep and name else (None, spec)


def _human_header(args: argparse.Namespace) -> list[str]:
    """The header of the human judgements' CSV, once no output of the command is one of its inputs."""
    import csv

    from doclens.inputs.csv_rows import read_csv_text

    refuse_overwriting_inputs([("--plot", args.plot)],
                              [*scores_inputs(_named_scores(spec)[1] for spec in args.scores), args.human])
    try:
        return next(csv.reader(read_csv_text(args.human).splitlines()[:1]), [])
    except csv.Error as exc:
        raise InputError(f"{args.human} line 1: not a readable CSV header ({exc})", line=1) from None


def run(args: argparse.Namespace) -> int:
    header = _human_header(args)
    metrics = args.metric or list(DOCLENS_METRICS)
    points: dict[str, list[tuple[float, float]]] = {}
    if "preferred" in header:
        if args.plot:
            raise InputError(f"{args.human} holds pairwise preferences: --plot draws per-instance scores "
                             "(a CSV with a human score column)", field="preferred")
        pairwise = _pairwise_results(args, metrics)
        if pairwise is None:
            print("doclens: error: the scores files have different signatures; their scores are not comparable "
                  "(--allow-different-signatures compares them anyway)", file=sys.stderr)
            return 2
        mode, results = "pairwise", pairwise
    else:
        mode, (results, points) = "instance", _instance_results(args, header, metrics)
    if args.json:
        print(json.dumps({"mode": mode, "human": args.human, "results": results}, indent=2, allow_nan=False))
    else:
        print(agreement_text(mode, results, args.human, args.human_column))
    if mode == "instance" and args.plot:  # after the numbers: a plot that fails never takes them with it
        return _write_plot(args, points, results)
    return 0


def _pairwise_results(args: argparse.Namespace, metrics: list[str]) -> list[dict] | None:
    """Each metric's agreement with the pairwise preferences of ``args.human``, one scores file per
    system; ``None`` when the files' signatures differ and that was not allowed."""
    from doclens.stats.agreement import pairwise_agreement, read_preferences, report_metric_scores
    from doclens.views.leaderboard import system_name

    systems = {}
    for spec in args.scores:
        name, path = _named_scores(spec)
        report = load_report(path)
        name = name or system_name(report.config, path)
        if name in systems:
            raise InputError(f"two scores files name system {name!r}; name them with NAME=PATH", field="system")
        systems[name] = report
    signatures = {r.signature for r in systems.values()}
    if len(signatures) > 1 and not args.allow_different_signatures:
        return None
    preferences = read_preferences(args.human)
    return [pairwise_agreement({name: report_metric_scores(report, metric) for name, report in systems.items()},
                               preferences, metric, source=args.human).to_dict() for metric in metrics]


def _instance_results(args: argparse.Namespace, header: list[str], metrics: list[str]):
    """Each metric's agreement with the per-instance human scores of ``args.human``, and the
    ``(human, metric)`` points of each metric for the plot."""
    from doclens.stats.agreement import instance_agreement, read_human_scores, report_metric_scores

    if len(args.scores) != 1:
        raise InputError(f"{args.human} has no 'preferred' column, so it holds per-instance scores: give exactly "
                         f"one scores file (got {len(args.scores)})")
    if not args.human_column:
        candidates = [c for c in header if c != args.id_column]
        raise InputError(f"{args.human}: choose the human score column with --human-column (columns: "
                         f"{', '.join(candidates) or 'none'})")
    report = load_report(_named_scores(args.scores[0])[1])
    human, unrated = read_human_scores(args.human, args.human_column, args.id_column)
    results, points = [], {}
    for metric in metrics:
        scores = report_metric_scores(report, metric)
        results.append(instance_agreement(scores, human, metric, args.human_column,
                                          unrated, source=args.human).to_dict())
        points[metric] = [(human[i], score) for i in human if (score := scores.get(i)) is not None]
    return results, points


def _write_plot(args: argparse.Namespace, points: dict, results: list[dict]) -> int:
    """Draw ``--plot`` after the numbers were printed; a plot that fails is an error line, not a traceback."""
    from doclens.views.plots import write_agreement_plot

    sys.stdout.flush()
    try:
        write_agreement_plot(args.plot, points, results, args.human_column)
    except DocLensError:
        raise
    except Exception as exc:  # matplotlib's own errors: the numbers above stand
        print(f"doclens: error: the agreement plot could not be drawn ({type(exc).__name__}: "
              f"{str(exc)[:300]}); the numbers above are complete", file=sys.stderr)
        return EXIT_ERROR
    print(f"agreement plot written to {args.plot}", file=sys.stderr)
    return 0


def add_parser(sub) -> None:
    agreement = command_parser(
        sub, "agreement", examples="""
        doclens agreement scores.json human.csv --human-column completeness
        doclens agreement sysA=a.json sysB=b.json preferences.csv --metric claim_recall
        """,
        description="Per-instance CSV (header: id,<score columns>; choose one with --human-column; empty cell = "
                    "not rated): Spearman rho and Kendall tau-b per metric, with one scores file. Pairwise CSV "
                    "(header: id,system_a,system_b,preferred; preferred = a system name or 'tie'): how often "
                    "each metric prefers the system humans preferred, with one scores file per system given as "
                    "NAME=PATH (or PATH, named by the report's config 'system' or its file name).")
    agreement.add_argument("scores", nargs="+", help="scores file(s), optionally NAME=PATH")
    agreement.add_argument("human", help="CSV of human judgements (per-instance or pairwise, see above)")
    agreement.add_argument("--human-column", help="per-instance CSV: the column holding the human score")
    agreement.add_argument("--id-column", default="id", help="per-instance CSV: the id column (default id)")
    agreement.add_argument("--metric", action="append", choices=DOCLENS_METRICS,
                           help="metric(s) to compare (repeatable; default all four)")
    agreement.add_argument("--allow-different-signatures", action="store_true",
                           help="pairwise: compare scores files whose signatures differ (the output says so)")
    agreement.add_argument("--json", action="store_true", help="print JSON")
    agreement.add_argument("--plot", metavar="FILE",
                           help="per-instance CSV: also draw each metric's scores against the human score, with "
                                "rho, tau and n, into FILE (.svg, .png or .pdf; needs the plots extra)")
    agreement.set_defaults(func=run)
