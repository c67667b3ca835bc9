"""``doclens validate``: check submissions or scores files against their JSON Schemas."""

from __future__ import annotations

import argparse
import sys

from doclens.cli.common import command_parser
from doclens.core.errors import EXIT_OK, EXIT_USAGE, InputError
from doclens.reports.submissions import SCHEMA_FILES


def run(args: argparse.Namespace) -> int:
    from doclens.reports.submissions import read_expected_ids, validate_file

    expected = read_expected_ids(args.references) if args.references else None
    failed = False
    for path in args.files:
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


def add_parser(sub) -> None:
    validate = command_parser(sub, "validate", help="check submissions or scores files against their JSON Schemas",
                              examples="""
        doclens validate submission.json --references benchmark.jsonl
        doclens validate scores/*.json
        doclens validate mine.json --kind submission
        """)
    validate.add_argument("files", nargs="+", help="submission (doclens-submission/1) or scores (doclens-report/1) "
                                                  "JSON files; the kind is read from their 'format' field")
    validate.add_argument("--references", metavar="JSONL",
                          help="the benchmark's instances (JSONL with an 'id' per line): unknown and missing ids "
                               "are named")
    validate.add_argument("--kind", choices=tuple(SCHEMA_FILES), help="validate as this kind whatever 'format' says")
    validate.set_defaults(func=run)
