"""Checked number types for command-line options (``argparse`` ``type=``), here in the core so
that a metric family's settings can declare their own options (``docs/design.md`` §1, "Metric
families"); :mod:`doclens.cli.common` re-exports them."""

from __future__ import annotations

import argparse

__all__ = ["number", "POSITIVE_INT", "NON_NEGATIVE_INT", "POSITIVE_FLOAT", "NON_NEGATIVE_FLOAT"]


def number(kind, low=None, high=None, low_open=False, high_open=False, what="a number"):
    """An argparse ``type`` that accepts a finite ``kind`` within the given bounds, so that
    ``--resamples -5`` or ``--confidence 2`` is a usage error (exit 2), never a traceback."""
    import math

    def parse(text: str):
        try:
            value = kind(text)
        except (TypeError, ValueError):
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if isinstance(value, float) and not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
        if low is not None and (value <= low if low_open else value < low) or \
                high is not None and (value >= high if high_open else value > high):
            raise argparse.ArgumentTypeError(f"expected {what}, got {text}")
        return value

    return parse


POSITIVE_INT = number(int, 1, what="an integer of at least 1")

NON_NEGATIVE_INT = number(int, 0, what="an integer of at least 0")

POSITIVE_FLOAT = number(float, 0, low_open=True, what="a number above 0")

NON_NEGATIVE_FLOAT = number(float, 0, what="a number of at least 0")
