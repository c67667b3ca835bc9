"""``doclens compare``: the paired bootstrap difference between two scores files (B − A)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from doclens.cli.common import bootstrap_options, command_parser

if TYPE_CHECKING:
    from doclens.stats.bootstrap import Difference


def run(args: argparse.Namespace) -> int:
    from doclens.reports.scores_files import scan_report
    from doclens.stats.bootstrap import MIN_INSTANCES, STATISTICS, align_by_id, bootstrap_description, paired_bootstrap

    scanned = [scan_report(path) for path in (args.a, args.b)]
    (header_a, ids_a, counts_a), (header_b, ids_b, counts_b) = scanned
    signature_a, signature_b = header_a["signature"], header_b["signature"]  # Signatures: scan_report read them
    differences = signature_a.differences(signature_b)
    if differences and not args.allow_different_signatures:
        print("doclens: error: the two results have different signatures, so their scores are not comparable:\n  "
              + "\n  ".join(differences) + "\n(--allow-different-signatures compares them anyway)", file=sys.stderr)
        return 2
    aligned_a, aligned_b = align_by_id(ids_a, counts_a, ids_b, counts_b)
    result = paired_bootstrap(aligned_a, aligned_b, args.resamples, args.seed, args.confidence)
    bootstrap = bootstrap_description(args.resamples, args.seed, args.confidence)
    if args.json:
        print(json.dumps({"a": args.a, "b": args.b, "signature_a": signature_a,
                          "signature_b": signature_b, "signatures_differ": bool(differences),
                          "instances": len(aligned_a), "bootstrap": bootstrap, "min_instances": MIN_INSTANCES,
                          "differences": {k: v.to_dict() for k, v in result.items()}}, indent=2, allow_nan=False))
        return 0
    if differences:
        print("WARNING: signatures differ (compared anyway, --allow-different-signatures):\n  "
              + "\n  ".join(differences))
    print(f"A = {args.a}\nB = {args.b}\n{len(aligned_a)} paired instances, paired {bootstrap}; ×100")
    print(f"{'statistic':<28}{'A':>8}{'B':>8}{'B − A':>9}  {'interval':<20}{'p':>7}  verdict")
    for key in STATISTICS:
        print(_row(key, result[key]))
    print(f"signature: {signature_a}" if not differences else
          f"signature A: {signature_a}\nsignature B: {signature_b}")
    return 0


def _row(key: str, d: Difference) -> str:
    """One statistic's line of the table: A, B, B − A (×100), the interval, p and the verdict."""
    if d.delta is None or d.a is None or d.b is None:
        return f"{key:<28}{'n/a':>8}{'n/a':>8}{'n/a':>9}"
    values = f"{key:<28}{100 * d.a:>8.2f}{100 * d.b:>8.2f}{100 * d.delta:>+9.2f}  "
    if d.low is None or d.high is None or d.p_value is None:  # too few instances: no interval, no p-value, no verdict
        return values + f"{'—':<20}{'—':>7}  {d.verdict}"
    interval = f"[{100 * d.low:+.2f}, {100 * d.high:+.2f}]"
    return values + f"{interval:<20}{d.p_value:>7.3f}  {d.verdict}"


def add_parser(sub) -> None:
    compare = command_parser(sub, "compare",
                             examples="""
        doclens compare baseline.doclens.json new.doclens.json
        doclens compare a.json b.json --resamples 5000 --bootstrap-seed 7 --json
        """)
    compare.add_argument("a", help="scores file A")
    compare.add_argument("b", help="scores file B (same instances, same signature)")
    compare.add_argument("--allow-different-signatures", action="store_true",
                         help="compare results whose signatures differ (the output says so)")
    compare.add_argument("--json", action="store_true", help="print JSON")
    bootstrap_options(compare)
    compare.set_defaults(func=run)
