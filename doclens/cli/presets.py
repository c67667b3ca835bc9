"""``doclens presets``: the evaluator and extractor presets, and where each sends text."""

from __future__ import annotations

import argparse

from doclens.cli.common import command_parser


def run(args: argparse.Namespace) -> int:
    from doclens.evaluators import EVALUATOR_PRESETS, EXTRACTOR_PRESETS

    print("evaluators (--evaluator):")
    for name, (_, description, where) in EVALUATOR_PRESETS.items():
        print(f"  {name:<16} [{'data stays on this machine' if where == 'local' else 'sends text to ' + where}] "
              f"{description}")
    print("extractors (--extractor):")
    for name, (_, description) in EXTRACTOR_PRESETS.items():
        print(f"  {name:<16} {description}")
    from doclens.baselines import BASELINE_DESCRIPTIONS

    print("baselines (--baselines, doclens baselines; data stays on this machine):")
    for name, description in BASELINE_DESCRIPTIONS.items():
        print(f"  {name:<16} {description}")
    return 0


def add_parser(sub) -> None:
    presets = command_parser(sub, "presets", examples="""
        doclens presets
        """)
    presets.set_defaults(func=run)
