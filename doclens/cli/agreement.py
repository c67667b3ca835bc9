"""``doclens agreement``: how DocLens scores agree with human judgements."""

from __future__ import annotations

import argparse
import json
import sys

from doclens.cli.common import load_report
from doclens.core.errors import InputError
from doclens.core.metrics import METRICS


def _named_scores(spec: str) -> tuple[str, str]:
    name, sep, path = spec.partition("=")
    return (name, path) if sep and name else (None, spec)



def run(args: argparse.Namespace) -> int:
    import csv

    from doclens.stats.agreement import (instance_agreement, pairwise_agreement, read_csv_text, read_human_scores,
                                   read_preferences, report_metric_scores)
    from doclens.views.leaderboard import system_name

    try:
        header = next(csv.reader(read_csv_text(args.human).splitlines()[:1]), [])
    except csv.Error as exc:
        raise InputError(f"{args.human} line 1: not a readable CSV header ({exc})", line=1) from None
    metrics = args.metric or list(METRICS)
    results = []
    if "preferred" in header:
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
            print("doclens: error: the scores files have different signatures; their scores are not comparable "
                  "(--allow-different-signatures compares them anyway)", file=sys.stderr)
            return 2
        preferences = read_preferences(args.human)
        for metric in metrics:
            scores = {name: report_metric_scores(report, metric) for name, report in systems.items()}
            results.append(pairwise_agreement(scores, preferences, metric, source=args.human).to_dict())
        mode = "pairwise"
    else:
        if len(args.scores) != 1:
            raise InputError(f"{args.human} has no 'preferred' column, so it holds per-instance scores: give exactly "
                             f"one scores file (got {len(args.scores)})")
        if not args.human_column:
            candidates = [c for c in header if c != args.id_column]
            raise InputError(f"{args.human}: choose the human score column with --human-column (columns: "
                             f"{', '.join(candidates) or 'none'})")
        report = load_report(_named_scores(args.scores[0])[1])
        human, unrated = read_human_scores(args.human, args.human_column, args.id_column)
        for metric in metrics:
            results.append(instance_agreement(report_metric_scores(report, metric), human, metric, args.human_column,
                                              unrated, source=args.human).to_dict())
        mode = "instance"
    if args.json:
        print(json.dumps({"mode": mode, "human": args.human, "results": results}, indent=2, allow_nan=False))
        return 0

    def fmt(value):
        return "   n/a" if value is None else f"{value:6.3f}"

    if mode == "instance":
        print(f"per-instance agreement with {args.human} column {args.human_column!r}")
        print(f"{'metric':<20}{'n':>6}{'spearman':>10}{'kendall':>10}{'unrated':>9}{'no score':>10}")
        for r in results:
            print(f"{r['metric']:<20}{r['n']:>6}{fmt(r['spearman_rho']):>10}{fmt(r['kendall_tau_b']):>10}"
                  f"{r['human_unrated'] + r['unrated_instances']:>9}{r['metric_undefined']:>10}"
                  + (f"  {r['note']}" if r["note"] else ""))
        print("spearman = Spearman rho, kendall = Kendall tau-b; unrated: instances without a human score; "
              "no score: rated instances where the metric is undefined (left out)")
    else:
        print(f"pairwise agreement with {args.human}")
        print(f"{'metric':<20}{'pairs':>7}{'agree':>7}{'disagree':>9}{'m-ties':>8}{'h-ties':>8}{'undef':>7}"
              f"{'agreement':>11}")
        for r in results:
            print(f"{r['metric']:<20}{r['comparisons']:>7}{r['agree']:>7}{r['disagree']:>9}{r['metric_ties']:>8}"
                  f"{r['human_ties']:>8}{r['undefined']:>7}{fmt(r['agreement']):>11}"
                  + (f"  {r['note']}" if r["note"] else ""))
        print("agreement = agree / (agree + disagree + metric ties); human ties and undefined scores left out")
    return 0


def add_parser(sub) -> None:
    agreement = sub.add_parser(
        "agreement", help="agreement of DocLens scores with human judgements",
        description="Per-instance CSV (header: id,<score columns>; choose one with --human-column; empty cell = "
                    "not rated): Spearman rho and Kendall tau-b per metric, with one scores file. Pairwise CSV "
                    "(header: id,system_a,system_b,preferred; preferred = a system name or 'tie'): how often "
                    "each metric prefers the system humans preferred, with one scores file per system given as "
                    "NAME=PATH (or PATH, named by the report's config 'system' or its file name).")
    agreement.add_argument("scores", nargs="+", help="scores file(s), optionally NAME=PATH")
    agreement.add_argument("human", help="CSV of human judgements (per-instance or pairwise, see above)")
    agreement.add_argument("--human-column", help="per-instance CSV: the column holding the human score")
    agreement.add_argument("--id-column", default="id", help="per-instance CSV: the id column (default id)")
    agreement.add_argument("--metric", action="append", choices=METRICS,
                           help="metric(s) to compare (repeatable; default all four)")
    agreement.add_argument("--allow-different-signatures", action="store_true")
    agreement.add_argument("--json", action="store_true", help="print JSON")
    agreement.set_defaults(func=run)
