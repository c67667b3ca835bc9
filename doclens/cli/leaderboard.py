"""``doclens leaderboard``: rank scores files with intervals, one table per signature."""

from __future__ import annotations

import argparse

from doclens.cli.common import (
    bootstrap_options,
    check_output_path,
    command_parser,
    refuse_overwriting_inputs,
    scores_inputs,
)
from doclens.core.errors import InputError
from doclens.stats.bootstrap import STATISTICS


def run(args: argparse.Namespace) -> int:
    from doclens.stats.bootstrap import bootstrap_description
    from doclens.views.html import write_leaderboard_html, write_page
    from doclens.views.leaderboard import group_by_signature, leaderboard_text, load_entry, rank_group

    if args.output:
        check_output_path(args.output)
    refuse_overwriting_inputs([("--output", args.output), ("--plot", args.plot)], scores_inputs(args.scores))
    entries = [load_entry(path, args.resamples, args.seed, args.confidence) for path in args.scores]
    groups = {signature: rank_group(group, args.metric, args.resamples, args.seed, args.confidence)
              for signature, group in group_by_signature(entries).items()}
    bootstrap = bootstrap_description(args.resamples, args.seed, args.confidence)
    print(leaderboard_text(groups, args.metric, bootstrap))
    if args.plot:
        from doclens.views.plots import leaderboard_figure, save_figure

        if len(groups) > 1:
            raise InputError(f"--plot draws one signature's results; these have {len(groups)} signatures "
                             "(never plotted together): give the files of one", field="signature")
        save_figure(leaderboard_figure(entries, args.plot_kind, args.metric, args.resamples, args.seed,
                                       args.confidence), args.plot)
        print(f"{args.plot_kind} plot written to {args.plot}")
    if args.output:
        plots = None
        if not args.no_plots:
            from doclens.views.plots import leaderboard_plots_html

            plots = {signature: leaderboard_plots_html(group, args.metric, number, args.resamples, args.seed,
                                                       args.confidence)
                     for number, (signature, group) in enumerate(groups.items(), start=1)}
        write_page(args.output, lambda handle: write_leaderboard_html(groups, handle, args.metric, bootstrap,
                                                                      plots=plots))
        print(f"leaderboard written to {args.output}")
    return 0


def add_parser(sub) -> None:
    board = command_parser(sub, "leaderboard", help="rank scores files with intervals, one table per signature",
                           examples="""
        doclens leaderboard scores/*.json
        doclens leaderboard scores/*.json --rank-by claim_f1 -o board.html
        doclens leaderboard scores/*.json --plot forest.svg
        """)
    board.add_argument("scores", nargs="+", help="scores files")
    board.add_argument("-o", "--output", help="also write a sortable HTML leaderboard here")
    board.add_argument("--rank-by", "--metric", dest="metric", default="claim_recall", choices=STATISTICS,
                       metavar="STATISTIC",
                       help="rank by this statistic (default claim_recall, pooled): any metric pooled or _macro, "
                            f"claim_f1 included ({', '.join(STATISTICS)}); --metric is the older spelling")
    board.add_argument("--plot", metavar="FILE",
                       help="also draw one plot of the results (one signature) into FILE (.svg, .png or .pdf; "
                            "needs the plots extra)")
    board.add_argument("--plot-kind", choices=("forest", "sections", "pairwise"), default="forest",
                       help="--plot's picture: forest (each system's metric with its interval; default), "
                            "sections (claim recall and precision per note section) or pairwise (paired differences)")
    board.add_argument("--no-plots", action="store_true",
                       help="HTML: leave out the plots (forest plot, section bars, pairwise matrix; they need "
                            "the plots extra)")
    bootstrap_options(board)
    board.set_defaults(func=run)
