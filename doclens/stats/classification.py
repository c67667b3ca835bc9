"""How well a judge's verdicts agree with labels: balanced accuracy with bootstrap intervals, the
supported-rate gap, and McNemar's exact test for two judges on the same items.

The figures of one set of items (balanced accuracy, the supported-rate gap, how a missing verdict
counts) are :func:`doclens.core.verdict_rates.rates`; this module adds their uncertainty.

**Intervals** are percentile bootstrap intervals over items (:mod:`doclens.stats.bootstrap`'s
resampling: ``numpy.random.default_rng(seed)``, ``n`` items drawn with replacement), computed when
at least :data:`~doclens.stats.bootstrap.MIN_INSTANCES` items contribute; items are resampled one by
one, so items that share a note are treated as independent (the interval is then somewhat narrow).

**McNemar's exact test** compares two judges on the same items by the items exactly one of them
gets right: ``b`` (A right, B wrong) and ``c`` (A wrong, B right); under the null hypothesis that
neither is better each such item is a fair coin, so the two-sided p-value is
``min(1, 2 · P(Binomial(b + c, 1/2) ≤ min(b, c)))`` (exact, with no continuity correction).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from doclens.core.verdict_rates import Pair, rates
from doclens.stats.bootstrap import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    MIN_INSTANCES,
    Interval,
    not_informative,
    resample_weights,
)


def _balanced(weights: np.ndarray, labels: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Balanced accuracy of each resample (rows of ``weights``: item multiplicities)."""
    pos, neg = labels, ~labels
    out = []
    for mask in (pos, neg):
        total = weights[:, mask].sum(axis=1)
        hits = (weights[:, mask] * right[mask]).sum(axis=1)
        out.append(np.where(total > 0, hits / np.where(total > 0, total, 1), np.nan))
    return np.nanmean(np.stack(out), axis=0) if pos.any() and neg.any() else out[0 if pos.any() else 1]


def _bootstrap(size: int, statistic, n_resamples: int, seed: int | None, confidence: float) -> tuple[float, float, int]:
    """``(low, high, resamples where defined)``: the percentile interval of ``statistic`` (a
    function of a ``(resamples, size)`` multiplicity matrix) over ``n_resamples`` resamples."""
    rng = np.random.default_rng(seed)
    drawn = np.concatenate([statistic(resample_weights(rng, size, min(128, n_resamples - start)))
                            for start in range(0, n_resamples, 128)])
    drawn = drawn[~np.isnan(drawn)]
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(drawn, [alpha, 1.0 - alpha])
    return round(float(low), 3), round(float(high), 3), int(drawn.size)


def balanced_accuracy_interval(pairs: Sequence[Pair], n_resamples: int = DEFAULT_RESAMPLES,
                               seed: int | None = DEFAULT_SEED, confidence: float = DEFAULT_CONFIDENCE,
                               min_items: int = MIN_INSTANCES) -> Interval:
    """Balanced accuracy with its percentile bootstrap interval (module docstring); below
    ``min_items`` items the point estimate alone."""
    point = rates(pairs)["balanced_accuracy"]
    if point is None or len(pairs) < min_items or n_resamples < 1:
        return Interval(point, None, None, 0, len(pairs), min_items)
    labels = np.array([label for label, _ in pairs], dtype=bool)
    right = np.array([label == verdict for label, verdict in pairs], dtype=float)
    low, high, defined = _bootstrap(len(pairs), lambda w: _balanced(w, labels, right), n_resamples, seed, confidence)
    return Interval(point, low, high, defined, len(pairs), min_items)


def paired_balanced_accuracy_difference(labels: Sequence[bool], verdicts_a: Sequence[bool | None],
                                        verdicts_b: Sequence[bool | None], n_resamples: int = DEFAULT_RESAMPLES,
                                        seed: int | None = DEFAULT_SEED,
                                        confidence: float = DEFAULT_CONFIDENCE) -> dict:
    """``B − A`` in balanced accuracy with its paired bootstrap interval (the same items drawn for
    both judges): ``{"delta", "low", "high", "note"}`` (no interval below :data:`MIN_INSTANCES` items)."""
    pairs_a, pairs_b = list(zip(labels, verdicts_a)), list(zip(labels, verdicts_b))
    a, b = rates(pairs_a)["balanced_accuracy"], rates(pairs_b)["balanced_accuracy"]
    delta = None if a is None or b is None else round(b - a, 3)
    if delta is None or len(labels) < MIN_INSTANCES or n_resamples < 1:
        return {"delta": delta, "low": None, "high": None,
                "note": not_informative(len(labels)) if delta is not None and len(labels) < MIN_INSTANCES else ""}
    truth = np.array(labels, dtype=bool)
    right_a = np.array([x == y for x, y in pairs_a], dtype=float)
    right_b = np.array([x == y for x, y in pairs_b], dtype=float)
    low, high, _ = _bootstrap(len(labels), lambda w: _balanced(w, truth, right_b) - _balanced(w, truth, right_a),
                              n_resamples, seed, confidence)
    return {"delta": delta, "low": low, "high": high, "note": ""}


def mcnemar_exact(right_a: Sequence[bool], right_b: Sequence[bool]) -> dict:
    """McNemar's exact test (module docstring) on whether each judge got each item right:
    ``{"a_only", "b_only", "p_value"}``; ``p_value`` is 1.0 when they never disagree.

    >>> mcnemar_exact([True] * 10, [False] * 10)["p_value"] < 0.01
    True
    """
    from scipy.stats import binom

    if len(right_a) != len(right_b):
        raise ValueError("McNemar's test needs the two judges' answers on the same items")
    a_only = sum(a and not b for a, b in zip(right_a, right_b))
    b_only = sum(b and not a for a, b in zip(right_a, right_b))
    discordant = a_only + b_only
    p_value = 1.0 if discordant == 0 else min(1.0, 2.0 * float(binom.cdf(min(a_only, b_only), discordant, 0.5)))
    return {"a_only": a_only, "b_only": b_only, "p_value": round(p_value, 6)}
