"""``doclens report``: a static HTML page of one scores file, instance by instance."""

from __future__ import annotations

import argparse
from pathlib import Path

from doclens.cli.common import bootstrap_options, check_output_path, command_parser
from doclens.core.errors import InputError


def run(args: argparse.Namespace) -> int:
    from doclens.io.scores_files import iter_instance_results, scan_report
    from doclens.stats.bootstrap import bootstrap_description, bootstrap_intervals
    from doclens.views.html import SourceIndex, write_page, write_report_html

    # Two bounded-memory passes over the scores file: counts (for the intervals shown first), then the page.
    output = args.output or str(Path(args.scores).with_suffix(".html"))
    check_output_path(output)
    header, ids, counts = scan_report(args.scores)
    intervals = bootstrap_intervals(counts, args.resamples, args.seed, args.confidence) if args.resamples else None
    if intervals is not None and header.get("source_support"):  # the source-support rates, resampled alike
        from doclens.core.support import SUPPORT_METRICS

        intervals.update(bootstrap_intervals(counts, args.resamples, args.seed, args.confidence,
                                             metrics=tuple(SUPPORT_METRICS)))
    del counts
    sources = SourceIndex(args.input) if args.input else None
    if sources is not None:
        missing = [i for i in ids if i not in sources.offsets]
        if missing:
            sources.close()
            unreadable = (f" ({len(sources.unreadable)} line(s) of it could not be read: "
                          f"{'; '.join(sources.unreadable[:5])})" if sources.unreadable else "")
            raise InputError(f"{args.input}: {len(missing)} scored instance(s) not found, e.g. "
                             f"{', '.join(repr(i) for i in missing[:5])}{unreadable}", field="id")
    try:
        write_page(output, lambda handle: write_report_html(
            header, iter_instance_results(args.scores), handle, intervals=intervals, sources=sources,
            bootstrap=bootstrap_description(args.resamples, args.seed, args.confidence) if intervals else "",
            count=len(ids)))
    finally:
        if sources is not None:
            sources.close()
    print(f"report of {len(ids)} instances written to {output}")
    return 0


def add_parser(sub) -> None:
    report = command_parser(sub, "report", help="a static HTML page of one scores file, instance by instance",
                            examples="""
        doclens report scores.json -o report.html
        doclens report scores.json --input notes.jsonl -o report.html --resamples 0
        """)
    report.add_argument("scores", help="scores file (doclens-report/1)")
    report.add_argument("-o", "--output", help="HTML file (default: SCORES with .html)")
    report.add_argument("--input", metavar="JSONL",
                        help="the scored input file: adds source units (citations jump to them) and raw predictions")
    bootstrap_options(report, allow_none=True)
    report.set_defaults(func=run)
