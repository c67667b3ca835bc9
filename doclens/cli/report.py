"""``doclens report``: a static HTML page of one scores file, instance by instance."""

from __future__ import annotations

import argparse
from array import array
from pathlib import Path

from doclens.cli.common import (
    NON_NEGATIVE_FLOAT,
    NON_NEGATIVE_INT,
    bootstrap_options,
    check_output_path,
    command_parser,
    refuse_overwriting_inputs,
    scores_inputs,
)
from doclens.core.errors import InputError
from doclens.inputs.tables import INPUT_FORMATS

#: instances a report page shows by default (~2-20 KB each: a page of a few MB)
MAX_INSTANCES_SHOWN = 500
#: a report page's size budget by default, in millions of characters: past it, no more instances
MAX_PAGE_MB = 50.0


def run(args: argparse.Namespace) -> int:
    from doclens.reports.scores_files import scan_report
    from doclens.stats.bootstrap import bootstrap_description
    from doclens.views.html import instance_failures, write_page, write_report_html

    # Two bounded-memory passes over the scores file: counts (for the intervals shown first) and
    # each instance's failures, then the page, with the instances that matter (failures first)
    output = args.output or str(Path(args.scores).with_suffix(".html"))
    check_output_path(output)
    refuse_overwriting_inputs([("--output", output)], [*scores_inputs([args.scores]), args.input])
    failures = array("q")
    header, ids, counts = scan_report(args.scores, each=lambda result: failures.append(instance_failures(result)))
    intervals = _intervals(args, header, counts) if args.resamples else None
    plots = "" if args.no_plots else _plots(header, ids, counts)
    del counts
    sources = _sources(args, header) if args.input else None
    if sources is not None:
        _check_sources(args, sources, ids)
    shown = _shown_positions(failures, args.max_instances)
    note = None if shown is None else (
        f"Showing {len(shown):,} of {len(ids):,} instances: those with the most failures first (then in file "
        f"order); the full evidence of every instance stays in {Path(args.scores).name} (--max-instances 0 shows "
        "them all).")
    instances, positions = _instances_shown(args.scores, shown)
    written = []
    try:
        write_page(output, lambda handle: written.append(write_report_html(
            header, instances, handle, intervals=intervals, sources=sources,
            bootstrap=bootstrap_description(args.resamples, args.seed, args.confidence) if intervals else "",
            count=len(ids), positions=positions, note=note, plots=plots,
            max_chars=int(args.max_page_mb * 1e6) if args.max_page_mb else None)))
    finally:
        if sources is not None:
            sources.close()
    expected = len(shown) if shown is not None else len(ids)
    print(f"report of {len(ids)} instances written to {output}"
          + (f" (showing {len(shown)}, most failures first)" if shown is not None else "")
          + (f"; {expected - written[-1]} instances left out: the page reached its size budget (--max-page-mb "
             f"{args.max_page_mb:g})" if written and written[-1] < expected else ""))
    return 0


def _intervals(args: argparse.Namespace, header: dict, counts) -> dict:
    """The bootstrap intervals of the DocLens metrics and of every other family the report has,
    resampled alike."""
    from doclens.families import DEFAULT_SELECTOR, FAMILIES
    from doclens.stats.bootstrap import bootstrap_intervals

    intervals = bootstrap_intervals(counts, args.resamples, args.seed, args.confidence)
    for family in FAMILIES:
        if family.selector != DEFAULT_SELECTOR and all(m in header.get("scores", {}) for m in family.metrics):
            intervals.update(bootstrap_intervals(counts, args.resamples, args.seed, args.confidence,
                                                 metrics=family.metrics))
    return intervals


def _check_sources(args: argparse.Namespace, sources, ids: list[str]) -> None:
    """:class:`InputError` (``sources`` closed) when ``--input`` lacks a scored instance."""
    missing = [i for i in ids if i not in sources.offsets]
    if missing:
        sources.close()
        unreadable = (f" ({len(sources.unreadable)} line(s) of it could not be read: "
                      f"{'; '.join(sources.unreadable[:5])})" if sources.unreadable else "")
        raise InputError(f"{args.input}: {len(missing)} scored instance(s) not found, e.g. "
                         f"{', '.join(repr(i) for i in missing[:5])}{unreadable}", field="id")


def _sources(args: argparse.Namespace, header: dict):
    """The scored input (``--input``) by id, read as ``doclens score`` reads it (any format, the same
    column options), its sources numbered as the scores file's signature says they were (``units:``)."""
    from doclens.core.signature import Signature
    from doclens.inputs.sources import open_sources

    units = Signature.read(header.get("signature")).get("units") or "given"
    return open_sources(args.input, units, input_format=args.input_format, split=args.split, columns=args.columns,
                        references=args.references, reference_columns=args.reference_columns)


def _shown_positions(failures, limit: int):
    """The positions of the instances the page shows, in the order shown: ``None`` (all, in file
    order) when there are at most ``limit`` (0: no limit); else the ``limit`` with the most
    failures, ties in file order."""
    if not limit or len(failures) <= limit:
        return None
    import numpy as np

    order = np.argsort(-np.frombuffer(failures, dtype=np.int64), kind="stable")
    return [int(p) for p in order[:limit]]


def _instances_shown(path: str, shown):
    """``(instances, positions)`` for :func:`write_report_html`: every instance streamed in file
    order, or the ``shown`` ones (read in one pass, held — at most ``--max-instances`` — and
    given in the order of ``shown``)."""
    from doclens.reports.scores_files import iter_instance_results

    if shown is None:
        return iter_instance_results(path), None
    wanted = set(shown)
    kept = {position: result for position, result in enumerate(iter_instance_results(path)) if position in wanted}
    return [kept[p] for p in shown], shown


def add_parser(sub) -> None:
    report = command_parser(sub, "report",
                            examples="""
        doclens report scores.json -o report.html
        doclens report scores.json --input notes.jsonl -o report.html --resamples 0
        doclens report gpt4.json --input test2GPT-4_.csv --columns id=encounter_id,prediction=note \
            --references clinicalnlp_taskC_test2.csv --reference-columns id=encounter_id,reference=note,source=dialogue
        """)
    report.add_argument("scores", help="scores file (doclens-report/1)")
    report.add_argument("-o", "--output", help="HTML file (default: SCORES with .html)")
    report.add_argument("--input", metavar="INPUT",
                        help="the scored input, in any format doclens score reads (JSONL, JSON, CSV/TSV, Parquet, a "
                             "saved dataset; with --references, the outputs joined with them): adds source units "
                             "(citations jump to them) and raw predictions")
    report.add_argument("--input-format", choices=INPUT_FORMATS, help="read --input (or REFS) as this format "
                                                                      "(default: from the extension)")
    report.add_argument("--split", help="--input: split of a saved DatasetDict or Hub dataset")
    report.add_argument("--columns", metavar="FIELD=COLUMN,…",
                        help="--input: map DocLens fields to its columns, as doclens score's --columns")
    report.add_argument("--references", metavar="REFS",
                        help="--input is a table of outputs (id, prediction): join it with these references (id, "
                             "reference, source), as doclens score --references does")
    report.add_argument("--reference-columns", metavar="FIELD=COLUMN,…",
                        help="with --references: map the references table's fields, as doclens score's")
    report.add_argument("--no-plots", action="store_true",
                        help="leave out the plots (section bars, score distribution, verdicts; they need "
                             "the plots extra)")
    report.add_argument("--max-instances", type=NON_NEGATIVE_INT, default=MAX_INSTANCES_SHOWN, metavar="N",
                        help=f"show at most N instances, those with the most failures first (default "
                             f"{MAX_INSTANCES_SHOWN}: a page a browser opens; 0: all, in file order); the scores file "
                             "keeps every instance's evidence")
    report.add_argument("--max-page-mb", type=NON_NEGATIVE_FLOAT, default=MAX_PAGE_MB, metavar="MB",
                        help=f"the page's size budget, in millions of characters (default {MAX_PAGE_MB:g}; 0: none): "
                             "past it no further instance is written and the page says how many were left out; "
                             "every long text is cut on the page anyway (the scores file keeps it whole)")
    bootstrap_options(report, allow_none=True)
    report.set_defaults(func=run)


def _plots(header: dict, ids: list, counts) -> str:
    """The page's plots: every reported family's metrics among the per-instance scores."""
    from doclens.families import family_metrics, reported
    from doclens.views.plots import instance_scores, report_plots_html

    return report_plots_html(header, ids, instance_scores(counts, family_metrics(reported(header.get("scores") or {}))))
