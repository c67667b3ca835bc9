"""``doclens leaderboard``: rank scores files with intervals, one table per signature."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from doclens.cli.common import (
    bootstrap_options,
    check_output_path,
    command_parser,
    refuse_overwriting_inputs,
    scores_inputs,
)
from doclens.core.errors import InputError
from doclens.families import statistics
from doclens.stats.bootstrap import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED
from doclens.views.leaderboard import DEFAULT_RANK_BY


def ranked_groups(entries: Sequence, metric: str, resamples: int = DEFAULT_RESAMPLES, seed: int | None = DEFAULT_SEED,
                  confidence: float = DEFAULT_CONFIDENCE) -> dict:
    """``{signature: ranked entries}`` (:func:`doclens.views.leaderboard.rank_group` per signature)."""
    from doclens.views.leaderboard import group_by_signature, rank_group

    return {signature: rank_group(group, metric, resamples, seed, confidence)
            for signature, group in group_by_signature(entries).items()}


def write_board(groups: dict, metric: str, *, html: str | None = None, json_path: str | None = None,
                plots: bool = True, resamples: int = DEFAULT_RESAMPLES, seed: int | None = DEFAULT_SEED,
                confidence: float = DEFAULT_CONFIDENCE) -> list[str]:
    """Write the ranked ``groups`` as an HTML page (``html``, with its plots unless ``plots`` is
    false) and as JSON (``json_path``, :func:`doclens.views.leaderboard.leaderboard_document`);
    returns the lines that say where. ``doclens leaderboard`` and ``doclens score`` with several
    inputs (its combined table) write the same files."""
    from doclens.reports.files import write_atomically
    from doclens.stats.bootstrap import bootstrap_description
    from doclens.views.html import write_leaderboard_html, write_page
    from doclens.views.leaderboard import leaderboard_document

    bootstrap = bootstrap_description(resamples, seed, confidence)
    said = []
    if json_path:
        text = json.dumps(leaderboard_document(groups, metric, bootstrap), indent=1, ensure_ascii=False,
                          allow_nan=False)
        write_atomically(Path(json_path), lambda handle: handle.write(text + "\n"))
        said.append(f"leaderboard (JSON) written to {json_path}")
    if html:
        markup = None
        if plots:
            from doclens.views.plots import leaderboard_plots_html

            markup = {signature: leaderboard_plots_html(group, metric, number, resamples, seed, confidence)
                      for number, (signature, group) in enumerate(groups.items(), start=1)}
        write_page(html, lambda handle: write_leaderboard_html(groups, handle, metric, bootstrap, plots=markup))
        said.append(f"leaderboard written to {html}")
    return said


def run(args: argparse.Namespace) -> int:
    from doclens.stats.bootstrap import bootstrap_description
    from doclens.views.leaderboard import leaderboard_text, load_entry

    for path, flag in ((args.output, "--output"), (args.json, "--json")):
        if path:
            check_output_path(path, flag)
    refuse_overwriting_inputs([("--output", args.output), ("--json", args.json), ("--plot", args.plot)],
                              scores_inputs(args.scores))
    entries = [load_entry(path, args.resamples, args.seed, args.confidence) for path in args.scores]
    groups = ranked_groups(entries, args.metric, args.resamples, args.seed, args.confidence)
    print(leaderboard_text(groups, args.metric, bootstrap_description(args.resamples, args.seed, args.confidence)))
    if args.plot:
        from doclens.views.plots import leaderboard_figure, save_figure

        if len(groups) > 1:
            raise InputError(f"--plot draws one signature's results; these have {len(groups)} signatures "
                             "(never plotted together): give the files of one", field="signature")
        save_figure(leaderboard_figure(entries, args.plot_kind, args.metric, args.resamples, args.seed,
                                       args.confidence), args.plot)
        print(f"{args.plot_kind} plot written to {args.plot}")
    for line in write_board(groups, args.metric, html=args.output, json_path=args.json, plots=not args.no_plots,
                            resamples=args.resamples, seed=args.seed, confidence=args.confidence):
        print(line)
    return 0


def add_parser(sub) -> None:
    board = command_parser(sub, "leaderboard",
                           examples="""
        doclens leaderboard scores/*.json
        doclens leaderboard scores/*.json --rank-by claim_recall -o board.html --json board.json
        doclens leaderboard scores/*.json --plot forest.svg
        """)
    board.add_argument("scores", nargs="+", help="scores files")
    board.add_argument("-o", "--output", help="also write a sortable HTML leaderboard here")
    board.add_argument("--json", metavar="OUT", help="also write the tables as JSON (every statistic with its interval, "
                                                     "the paired difference to #1)")
    board.add_argument("--rank-by", "--metric", dest="metric", default=DEFAULT_RANK_BY, choices=statistics(),
                       metavar="STATISTIC",
                       help=f"rank by this statistic (default {DEFAULT_RANK_BY}, pooled: the harmonic mean of claim "
                            "recall and precision, which a copy of the source cannot win; cards/leaderboard.md): any "
                            f"family's metric pooled or _macro ({', '.join(statistics())}; a lower-is-better one "
                            "ranks lowest first); --metric is the older spelling")
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
