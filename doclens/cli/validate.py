"""``doclens validate``: check submissions or scores files against their JSON Schemas, and say of an
input file (a table of instances, which has no schema file) that it is one, reading it as
``doclens score`` would."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from doclens.cli.common import command_parser
from doclens.core.errors import EXIT_OK, EXIT_USAGE, InputError
from doclens.reports.submissions import SCHEMA_FILES


def run(args: argparse.Namespace) -> int:
    from doclens.reports.submissions import read_expected_ids, validate_file

    expected = read_expected_ids(args.references) if args.references else None
    failed = False
    for path in args.files:
        if args.kind is None and is_input_file(path):
            failed |= not _validate_input(path)
            continue
        try:
            kind, problems = validate_file(path, expected, kind=args.kind)
        except InputError as exc:
            print(f"doclens: error: {exc}", file=sys.stderr)
            failed = True
            continue
        if problems:
            failed = True
            print(f"{path}: INVALID {kind or 'file'} — {len(problems)} problem(s)")
            for problem in problems:
                print(f"  {problem}")
        else:
            against = f" (ids checked against {args.references})" if expected is not None else ""
            print(f"{path}: valid {kind}{against}")
    return EXIT_USAGE if failed else EXIT_OK


def is_input_file(path: str) -> bool:
    """Whether ``path`` is an input of ``doclens score`` (a table of instances) rather than a
    submission or a scores file: a CSV, TSV or Parquet file, or JSON Lines whose first line is an
    object with no ``format`` field (submissions and scores files name theirs, and span lines)."""
    if Path(path).suffix.lower() in (".csv", ".tsv", ".parquet", ".pq"):
        return True
    try:
        with open(path, "rb") as handle:
            first = next((line for line in handle if line.strip()), b"")
        value = json.loads(first)
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(value, dict) and "format" not in value


def _validate_input(path: str) -> bool:
    """Read an input file as ``doclens score`` reads it; print whether every row is an instance."""
    from doclens.inputs.tables import read_table

    try:
        count = sum(1 for _ in read_table(path))
    except InputError as exc:
        print(f"{path}: INVALID input file (instances for doclens score) — 1 problem: the first met")
        print(f"  {exc}")
        return False
    print(f"{path}: valid input file ({count} instance(s) for doclens score; not a submission or a scores file)")
    return True


def add_parser(sub) -> None:
    validate = command_parser(sub, "validate",
                              examples="""
        doclens validate submission.json --references benchmark.jsonl
        doclens validate scores/*.json
        doclens validate mine.json --kind submission
        """)
    validate.add_argument("files", nargs="+", help="submission (doclens-submission/1) or scores (doclens-report/1) "
                                                  "JSON files; the kind is read from their 'format' field. An input "
                                                  "file (JSON Lines, CSV, TSV, Parquet of instances) is said to be "
                                                  "one and read as 'doclens score' reads it")
    validate.add_argument("--references", metavar="JSONL",
                          help="the benchmark's instances (JSONL with an 'id' per line): unknown and missing ids "
                               "are named")
    validate.add_argument("--kind", choices=tuple(SCHEMA_FILES), help="validate as this kind whatever 'format' says")
    validate.set_defaults(func=run)
