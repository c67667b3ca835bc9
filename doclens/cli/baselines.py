"""``doclens baselines``: ROUGE, BERTScore and MEDCON alone, without a judge — on one table with
prediction and reference columns, or on a predictions table joined by id with a references
table. What a user comparing with a published table reaches for first: the defaults are those
of ``evaluate.load("rouge")`` and predictions are scored as given (``--remove-citations`` strips
DocLens's ``[n]`` markers first). Writes JSON (everything), or a JSON summary with the
per-instance values beside it as JSON Lines or Parquet (``--output-format``), as ``score`` does."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from doclens.cli.common import check_output_path, command_parser, refuse_overwriting_inputs
from doclens.core.errors import EXIT_INCOMPLETE, EXIT_OK, InputError

FORMAT = "doclens-baselines/1"


def _paired_texts(args: argparse.Namespace) -> tuple[list[str], list[str], list[str]]:
    """``(ids, predictions, references)`` in the input's order, read as ``doclens score`` reads them
    (:func:`doclens.inputs.references.read_instances`: one table mapped by ``--columns``, or
    outputs joined by id with ``--references``, ``--columns`` mapping the outputs and
    ``--reference-columns`` the references); every row checked (a bad row is an
    :class:`InputError` naming the file, row, instance and field)."""
    from doclens.inputs.references import read_instances

    rows = list(read_instances(args.input, input_format=args.input_format, columns=args.columns,
                               references=args.references, reference_columns=args.reference_columns))
    return [r.id for r in rows], [r.prediction for r in rows], [r.reference for r in rows]


def _summary(result: dict) -> str:
    """The scores ×100, one row per baseline metric, a column per part (total, sections)."""
    lines = []
    for name, value in result["baselines"].items():
        if value.get("failed"):
            lines.append(f"{name}: FAILED ({value['error']})")
            continue
        parts = {"total": value["scores"], **value.get("sections", {})}
        lines.append(f"{name} ({value['config'].get('signature') or value['config'].get('hashcode') or name}):")
        lines.append(f"  {'metric':<22}" + "".join(f"{part[:20]:>21}" for part in parts))
        for key in value["scores"]:
            lines.append(f"  {key:<22}" + "".join(f"{100 * scores.get(key, 0.0):>21.2f}" for scores in parts.values()))
    return "\n".join(lines)


def _write(result: dict, ids: list[str], output: str, output_format: str) -> str:
    """Write the result; per-instance values inside (json) or beside (jsonl, parquet) the summary."""
    from doclens.reports.files import write_atomically
    from doclens.reports.results_files import instances_path, require_pyarrow

    rows = [{"id": ident} for ident in ids]
    for value in result["baselines"].values():
        for row, values in zip(rows, value.pop("per_instance", [])):
            row.update(values)
    if output_format == "json":
        result["instances"] = rows
    else:
        beside = instances_path(output, output_format)
        result["instances_file"] = Path(beside).name
        if output_format == "parquet":
            pyarrow, parquet = require_pyarrow()
            parquet.write_table(pyarrow.Table.from_pylist(rows), beside)
        else:
            write_atomically(beside, lambda handle: handle.writelines(json.dumps(row) + "\n" for row in rows))
    text = json.dumps(result, indent=1, allow_nan=False)
    if output == "-":
        print(text)
    else:
        write_atomically(output, lambda handle: handle.write(text + "\n"))
    return output


def run(args: argparse.Namespace) -> int:
    from doclens.baselines import check_baseline_settings, compute_baselines
    from doclens.cli.score import _parse_pairs
    from doclens.version import __version__

    output = args.output or str(Path(args.input).with_name(Path(args.input).stem + ".baselines.json"))
    if output == "-" and args.output_format != "json":
        raise InputError("--output - (standard output) takes --output-format json", field="--output")
    check_output_path(output)
    if output != "-":
        from doclens.reports.results_files import instances_path

        files = [output] + ([instances_path(output, args.output_format)] if args.output_format != "json" else [])
        refuse_overwriting_inputs([("--output", path) for path in files], [args.input, args.references])
    options = _parse_pairs(args.baseline_option, "--baseline-option")
    names, _, _ = check_baseline_settings(args.baselines, options, task=args.task, divisions=args.divisions)
    ids, predictions, references = _paired_texts(args)
    baselines = compute_baselines(predictions, references, names, task=args.task, options=options,
                                  divisions=args.divisions, remove_citations=args.remove_citations,
                                  progress=not args.quiet and sys.stderr.isatty(), on_failure="record")
    result = {"format": FORMAT, "version": __version__, "input": args.input, "references": args.references,
              "n_instances": len(ids), "task": args.task, "divisions": args.divisions, "baselines": baselines}
    summary = _summary(result)
    written = _write(result, ids, output, args.output_format)
    if not args.quiet:  # quiet: no summary (as doclens score -q)
        print(summary, file=sys.stderr if written == "-" else sys.stdout)
        if written != "-":
            print(f"baselines written to {written}")
    failed = [name for name, value in baselines.items() if value.get("failed")]
    for name in failed:
        print(f"doclens: INCOMPLETE: baseline {name} failed: {baselines[name]['error']}", file=sys.stderr)
    return EXIT_INCOMPLETE if failed else EXIT_OK


def add_parser(sub) -> None:
    from doclens.baselines import BASELINE_NAMES, DIVISION_PROCEDURES
    from doclens.core.tasks import TASKS

    parser = command_parser(sub, "baselines",
                            description=__doc__.split("\n\n")[0].replace("``", ""), examples="""
        doclens baselines notes.jsonl --baselines rouge                # one table: id, prediction, reference
        doclens baselines predictions.csv --references refs.jsonl -o rouge.json
        doclens baselines test2GPT-4_.csv --columns id=encounter_id,prediction=note \
            --references clinicalnlp_taskC_test2.csv --reference-columns id=encounter_id,reference=note
        doclens baselines notes.jsonl --task note_generation --divisions aci-bench   # ACI-BENCH's tables
        doclens baselines notes.jsonl --baselines rouge,bertscore \\
            --baseline-option bertscore='{"model_type": "/models/deberta", "num_layers": 40}'
        """)
    parser.add_argument("input", help="a table with id, prediction and reference (JSONL, JSON, CSV/TSV, Parquet, a "
                                      "saved dataset); with --references, a table with id and prediction")
    parser.add_argument("--references", metavar="REFS",
                        help="a table with id and reference, joined by id (every id on both sides, as doclens score "
                             "joins them)")
    parser.add_argument("--input-format", help="read INPUT and REFS as this format (default: from the extension)")
    parser.add_argument("--columns", metavar="FIELD=COLUMN,…",
                        help="map DocLens fields to INPUT's columns, e.g. prediction=generated_note,reference=note; "
                             "with --references, INPUT is the outputs table (id, prediction), as for doclens score")
    parser.add_argument("--reference-columns", metavar="FIELD=COLUMN,…",
                        help="with --references: map the references table's fields (id, reference) to its columns, "
                             "e.g. id=encounter_id,reference=note, as for doclens score")
    parser.add_argument("--baselines", default="rouge", help=f"comma-separated: {','.join(BASELINE_NAMES)} "
                                                             "(default rouge)")
    parser.add_argument("--baseline-option", action="append", metavar="NAME=JSON",
                        help='per-baseline options, e.g. rouge=\'{"use_stemmer": true}\'')
    parser.add_argument("--task", default="general", choices=TASKS,
                        help="note_generation also scores each ACI-BENCH division (default general)")
    parser.add_argument("--divisions", default="doclens", choices=DIVISION_PROCEDURES,
                        help="how divisions are scored: doclens, or aci-bench (ACI-BENCH's published procedure)")
    parser.add_argument("--remove-citations", action="store_true",
                        help="remove DocLens citation markers ([3]) from predictions first (default: as given)")
    parser.add_argument("-o", "--output", help="where to write (default INPUT.baselines.json; '-' standard output)")
    parser.add_argument("--output-format", default="json", choices=("json", "jsonl", "parquet"),
                        help="json: one file; jsonl / parquet: a JSON summary with the per-instance values beside it")
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="quiet: no summary, no progress bar; errors only (on stderr)")
    parser.set_defaults(func=run)
