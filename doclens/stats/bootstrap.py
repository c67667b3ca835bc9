"""Bootstrap confidence intervals over instances, and the paired bootstrap for comparing systems.

An instance contributes ``(hits, items)`` per metric (:meth:`doclens.core.types.InstanceResult.counts`).
One bootstrap resample draws ``n`` instances with replacement (``n`` = number of instances) and
recomputes, exactly as :func:`doclens.core.metrics.aggregate` does on the resampled list:

- pooled ``Σ hits / Σ items`` — instances with no items add nothing; undefined when the resample
  has no items at all;
- macro: the mean of per-instance ``hits / items`` over resampled instances that have items;
  undefined when none has.

The interval is the percentile interval of the resampled statistic (``confidence`` = 0.95 →
2.5th and 97.5th percentiles, linear interpolation), over the resamples where it is defined.
Intervals are never NaN: a metric with no point estimate has no interval (``None``).

Draws come from ``numpy.random.default_rng(seed)``: the same seed, the same instance order and
the same ``n_resamples`` give the same intervals. Resamples are drawn in chunks, so memory stays
``O(chunk × n)`` whatever ``n_resamples`` is.

:func:`paired_bootstrap` resamples the *same* instance ids for two systems and gives the interval
of the difference ``B − A``: when it contains 0 the two systems are not distinguishable at that
confidence.

**Other metric families.** ``metrics=`` names the metrics to resample (default the four DocLens
metrics); the source-support rates (:data:`doclens.core.support.SUPPORT_METRICS`) are counted by
the same :meth:`~doclens.core.types.InstanceResult.counts` and resampled the same way.

**A minimum n.** Below :data:`MIN_INSTANCES` (10) instances that contribute to a statistic (have
items for its metric), no interval, p-value or verdict is computed: the statistic keeps its point
estimate and its interval says "not informative (n=2 < 10)". With n instances a bootstrap can
only draw ``C(2n−1, n)`` distinct resamples (3 for n = 2, 10 for n = 3, 126 for n = 5), so its
percentiles come from a handful of values, and the percentile interval is known to under-cover
badly for small samples; two instances produced "A better, p=0.000". Ten is the conventional
floor for a percentile bootstrap (Efron & Tibshirani's treatment assumes samples well above it);
a caller who knows better can pass ``min_instances``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from doclens.core.metrics import F1_OF, aggregate, f1, ratio
from doclens.families import DOCLENS_METRICS

DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 12345
DEFAULT_CONFIDENCE = 0.95
_CHUNK = 128
#: numbers in one chunk's weight matrix (resamples × instances): 4M doubles, 32 MB, and as many
#: integer draws; a million instances are resampled 4 at a time instead of 128 (2 GB)
_CELLS = 4_000_000
#: fewest contributing instances for a bootstrap interval, a paired test or a verdict (docstring above)
MIN_INSTANCES = 10


def not_informative(n: int, minimum: int = MIN_INSTANCES) -> str:
    """``"not informative (n=2 < 10)"``: said instead of an interval or a verdict."""
    return f"not informative (n={n} < {minimum})"

#: every statistic an interval is computed for: each metric pooled, then each ``<metric>_macro``,
#: then claim F1 pooled and macro (:func:`doclens.core.metrics.f1`)
STATISTICS = DOCLENS_METRICS + tuple(f"{m}_macro" for m in DOCLENS_METRICS) + tuple(
    name + suffix for name in F1_OF for suffix in ("", "_macro"))


def statistic_metrics(statistic: str) -> tuple[str, ...]:
    """The metrics a statistic is computed from: ``claim_f1`` (and ``claim_f1_macro``) from claim
    recall and precision (:data:`doclens.core.metrics.F1_OF`), any other from its own metric.
    What a paired bootstrap of one statistic has to resample.

    >>> statistic_metrics("claim_f1_macro"), statistic_metrics("citation_recall")
    (('claim_recall', 'claim_precision'), ('citation_recall',))
    """
    base = statistic.removesuffix("_macro")
    return tuple(F1_OF.get(base, (base,)))


class _Informative:
    """A statistic over ``instances`` contributing instances: below ``min_instances`` it has no
    interval (nor, for a difference, a p-value or verdict)."""

    instances: int
    min_instances: int

    @property
    def informative(self) -> bool:
        return self.instances >= self.min_instances


@dataclass(frozen=True)
class Interval(_Informative):
    """A point estimate with its bootstrap percentile interval (all ``None`` when undefined).
    ``instances``: the instances that contribute to the statistic; below ``min_instances`` the
    interval is not computed (``low``/``high`` ``None``) and :attr:`informative` is false."""

    point: float | None
    low: float | None
    high: float | None
    resamples: int  # resamples where the statistic was defined
    instances: int = 0
    min_instances: int = MIN_INSTANCES

    @property
    def note(self) -> str:
        """``""``, or "not informative (n=… < …)" when a point estimate has no interval for lack of n."""
        return "" if self.point is None or self.informative else not_informative(self.instances, self.min_instances)

    def to_dict(self) -> dict:
        return {**asdict(self), "informative": self.informative, "note": self.note}


@dataclass(frozen=True)
class Difference(_Informative):
    """``b − a`` for one statistic under the paired bootstrap. ``instances``: paired instances
    that contribute (either side has items); below ``min_instances`` there is no interval,
    p-value or verdict."""

    a: float | None
    b: float | None
    delta: float | None
    low: float | None
    high: float | None
    p_value: float | None  # two-sided: 2 × share of resamples whose difference has the other sign
    resamples: int
    instances: int = 0
    min_instances: int = MIN_INSTANCES

    @property
    def distinguishable(self) -> bool:
        """True when there are enough instances and the interval of the difference excludes 0."""
        return (self.informative and self.low is not None and self.high is not None
                and (self.low > 0 or self.high < 0))

    @property
    def verdict(self) -> str:
        """``"B better"``, ``"A better"``, ``"not distinguishable"``, ``"not informative (n=2 < 10)"``
        or ``"n/a"`` (undefined on a side)."""
        if self.delta is None:
            return "n/a"
        if not self.informative:
            return not_informative(self.instances, self.min_instances)
        if not self.distinguishable:
            return "not distinguishable"
        return "B better" if self.delta > 0 else "A better"

    def to_dict(self) -> dict:
        return {**asdict(self), "distinguishable": self.distinguishable, "informative": self.informative,
                "verdict": self.verdict}


def report_instance_counts(report) -> tuple[list[str], list[dict]]:
    """``(ids, per-instance {metric: (hits, items)})`` of a :class:`doclens.Report`, counted with
    the report's own ``on_unparsed`` setting, in the report's instance order. A streamed report
    (:meth:`doclens.DocLens.score_to`) holds no instances but their counts, which are read."""
    if not report.instances and getattr(report, "instance_counts", None) is not None:
        from doclens.reports.results_files import counts_from_document

        return counts_from_document(report.instance_counts)
    from doclens.families import CountingRule, result_counts

    rule = CountingRule.from_config(report.config)
    counts = [result_counts(r, rule) for r in report.instances]
    return [r.id for r in report.instances], counts


class CountTable:
    """Per-instance counts as arrays, the form the vectorised resampling works on.

    ``columns`` has, per metric, four columns: pooled hits, pooled items, the instance's score
    (0 when it has no items or the metric does not apply) and whether it has one (1/0); then, per
    F1 statistic whose recall and precision are both among ``metrics``, two: the instance's F1
    (0 when it has none) and whether it has one. A resample's pooled F1 is the F1 of its pooled
    recall and precision; its macro F1 the mean of its instances' F1.
    """

    def __init__(self, per_instance: Sequence[dict], metrics: Sequence[str] = DOCLENS_METRICS):
        self.size = len(per_instance)
        self.per_instance = per_instance
        self.metrics = tuple(metrics)
        self.f1s = [(name, pair) for name, pair in F1_OF.items() if pair[0] in self.metrics and pair[1] in self.metrics]
        self.statistic_names = self.metrics + tuple(f"{m}_macro" for m in self.metrics) + tuple(
            name + suffix for name, _ in self.f1s for suffix in ("", "_macro"))
        columns = np.zeros((self.size, 4 * len(self.metrics) + 2 * len(self.f1s)), dtype=np.float64)
        for row, counts in enumerate(per_instance):
            for m, metric in enumerate(self.metrics):
                if metric in counts:
                    hits, items = counts[metric]
                    columns[row, 4 * m: 4 * m + 4] = (hits, items, hits / items if items else 0.0,
                                                      1.0 if items else 0.0)
            for k, (_, pair) in enumerate(self.f1s):
                value = f1(*(ratio(*counts[m]) if m in counts else None for m in pair))
                if value is not None:
                    columns[row, 4 * len(self.metrics) + 2 * k: 4 * len(self.metrics) + 2 * k + 2] = (value, 1.0)
        self.columns = columns

    def contributing(self, other: CountTable | None = None) -> dict[str, int]:
        """``{statistic: instances with items for its metric}`` (in this table or, when given, in
        either of two aligned tables)."""
        result = {}
        for m, metric in enumerate(self.metrics):
            has = self.columns[:, 4 * m + 1] > 0
            if other is not None:
                has = has | (other.columns[:, 4 * m + 1] > 0)
            result[metric] = result[f"{metric}_macro"] = int(has.sum())
        for k, (name, _) in enumerate(self.f1s):
            has = self.columns[:, 4 * len(self.metrics) + 2 * k + 1] > 0
            if other is not None:
                has = has | (other.columns[:, 4 * len(self.metrics) + 2 * k + 1] > 0)
            result[name] = result[f"{name}_macro"] = int(has.sum())
        return result

    def point_estimates(self) -> dict[str, float | None]:
        """The statistics on the instances as given: :func:`doclens.core.metrics.aggregate`'s scores."""
        if self.metrics == DOCLENS_METRICS:
            scores = aggregate(self.per_instance, DOCLENS_METRICS)[0]
            return {k: scores[k] for k in self.statistic_names}
        values = self.statistics(np.ones((1, self.size)))[0] if self.size else [np.nan] * len(self.statistic_names)
        return {k: None if np.isnan(v) else float(v) for k, v in zip(self.statistic_names, values)}

    def statistics(self, weights: np.ndarray) -> np.ndarray:
        """``(resamples, len(STATISTICS))`` array; NaN marks an undefined statistic (internal only:
        NaN never leaves this module). ``weights[r, i]`` = times instance ``i`` is in resample ``r``."""
        sums = weights @ self.columns
        out = np.full((weights.shape[0], len(self.statistic_names)), np.nan)
        with np.errstate(invalid="ignore", divide="ignore"):
            for m in range(len(self.metrics)):
                hits, items, score_sum, scored = (sums[:, 4 * m + k] for k in range(4))
                out[:, m] = np.where(items > 0, hits / np.where(items > 0, items, 1), np.nan)
                macro = score_sum / np.where(scored > 0, scored, 1)
                out[:, len(self.metrics) + m] = np.where(scored > 0, macro, np.nan)
            for k, (_, (recall, precision)) in enumerate(self.f1s):
                r = out[:, self.metrics.index(recall)]
                p = out[:, self.metrics.index(precision)]
                both_missing = np.isnan(r) & np.isnan(p)
                r, p = np.nan_to_num(r), np.nan_to_num(p)
                pooled = np.where(r + p > 0, 2 * r * p / np.where(r + p > 0, r + p, 1), 0.0)
                column = 2 * len(self.metrics) + 2 * k
                out[:, column] = np.where(both_missing, np.nan, pooled)
                f1_sum, f1_scored = sums[:, 4 * len(self.metrics) + 2 * k], sums[:, 4 * len(self.metrics) + 2 * k + 1]
                out[:, column + 1] = np.where(f1_scored > 0, f1_sum / np.where(f1_scored > 0, f1_scored, 1), np.nan)
        return out


def resample_weights(rng: np.random.Generator, size: int, count: int) -> np.ndarray:
    """``(count, size)`` multiplicities of ``count`` resamples of ``size`` instances drawn with
    replacement (each row sums to ``size``)."""
    draws = rng.integers(0, size, size=(count, size))
    return np.stack([np.bincount(row, minlength=size) for row in draws]).astype(np.float64)


def _resampled(tables: Sequence[CountTable], n_resamples: int, seed: int | None) -> list[np.ndarray]:
    """Statistics of ``n_resamples`` resamples for each table, all tables resampled with the same
    instance draws (tables are aligned: row ``i`` is the same instance in each)."""
    size = tables[0].size
    rng = np.random.default_rng(seed)
    parts: list[list[np.ndarray]] = [[] for _ in tables]
    done = 0
    # resamples per chunk: at most _CHUNK, fewer for big inputs so that the chunk's draws and
    # weights (count × size each) stay near _CELLS numbers whatever the size; the draws come from
    # one generator in order, so the chunking never changes an interval
    per_chunk = max(1, min(_CHUNK, _CELLS // max(size, 1)))
    while done < n_resamples:
        count = min(per_chunk, n_resamples - done)
        weights = resample_weights(rng, size, count)
        for part, table in zip(parts, tables):
            part.append(table.statistics(weights))
        done += count
    return [np.concatenate(part) for part in parts]


def _percentiles(values: np.ndarray, confidence: float) -> tuple[float | None, float | None, int]:
    defined = values[~np.isnan(values)]
    if defined.size == 0:
        return None, None, 0
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(defined, [alpha, 1.0 - alpha])
    return float(low), float(high), int(defined.size)


def _check(n_resamples: int, confidence: float) -> None:
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence}")


def bootstrap_intervals(per_instance: Sequence[dict], n_resamples: int = DEFAULT_RESAMPLES,
                        seed: int | None = DEFAULT_SEED, confidence: float = DEFAULT_CONFIDENCE,
                        min_instances: int = MIN_INSTANCES, metrics: Sequence[str] = DOCLENS_METRICS) -> dict[str, Interval]:
    """``{statistic: Interval}`` for every metric of ``metrics``, pooled and ``_macro`` (see the
    module docstring).

    ``per_instance``: one ``{metric: (hits, items)}`` dict per instance, as
    :meth:`doclens.core.types.InstanceResult.counts` returns. With no instances every interval is
    ``Interval(None, None, None, 0)``; a statistic with fewer than ``min_instances`` contributing
    instances keeps its point estimate but gets no interval (see the module docstring).

    >>> counts = [{"claim_recall": (1, 2)}, {"claim_recall": (2, 2)}, {"claim_recall": (0, 1)}]
    >>> intervals = bootstrap_intervals(counts, metrics=["claim_recall"])
    >>> intervals["claim_recall"].point, intervals["claim_recall_macro"].point  # 3/5 pooled, mean of 1/2, 1, 0
    (0.6, 0.5)
    >>> intervals["claim_recall"].low is None  # too few instances for an interval
    True
    """
    _check(n_resamples, confidence)
    table = CountTable(per_instance, metrics)
    points = table.point_estimates()
    if table.size == 0:
        return {k: Interval(None, None, None, 0, 0, min_instances) for k in table.statistic_names}
    contributing = table.contributing()
    stats = _resampled([table], n_resamples, seed)[0] if max(contributing.values()) >= min_instances else None
    result = {}
    for j, key in enumerate(table.statistic_names):
        n = contributing[key]
        if points[key] is None:
            result[key] = Interval(None, None, None, 0, n, min_instances)
        elif n < min_instances:
            result[key] = Interval(points[key], None, None, 0, n, min_instances)
        else:
            assert stats is not None  # enough instances contribute, so the resamples were drawn
            low, high, defined = _percentiles(stats[:, j], confidence)
            result[key] = Interval(points[key], low, high, defined, n, min_instances)
    return result


def align_by_id(ids_a: Sequence[str], counts_a: Sequence[dict], ids_b: Sequence[str],
                counts_b: Sequence[dict]) -> tuple[list[dict], list[dict]]:
    """Both systems' per-instance counts in the same (A's) instance order. Raises
    :class:`doclens.core.errors.InputError` naming ids that only one side has.

    >>> align_by_id(["a", "b"], [{"x": 1}, {"x": 2}], ["b", "a"], [{"x": 3}, {"x": 4}])
    ([{'x': 1}, {'x': 2}], [{'x': 4}, {'x': 3}])
    """
    from doclens.core.errors import InputError

    set_a, set_b = set(ids_a), set(ids_b)
    if set_a != set_b or len(ids_a) != len(set_a) or len(ids_b) != len(set_b):
        only_a = sorted(set_a - set_b)
        only_b = sorted(set_b - set_a)

        def show(ids):
            return ", ".join(repr(i) for i in ids[:10]) + (f" … and {len(ids) - 10} more" if len(ids) > 10 else "")
        parts = []
        if only_a:
            parts.append(f"{len(only_a)} id(s) only in A: {show(only_a)}")
        if only_b:
            parts.append(f"{len(only_b)} id(s) only in B: {show(only_b)}")
        if len(ids_a) != len(set_a) or len(ids_b) != len(set_b):
            parts.append("an instance id is repeated within one report")
        raise InputError("a paired comparison needs the same instances on both sides; " + "; ".join(parts),
                         field="id")
    position_b = {ident: i for i, ident in enumerate(ids_b)}
    return list(counts_a), [counts_b[position_b[ident]] for ident in ids_a]


def paired_bootstrap(counts_a: Sequence[dict], counts_b: Sequence[dict], n_resamples: int = DEFAULT_RESAMPLES,
                     seed: int | None = DEFAULT_SEED, confidence: float = DEFAULT_CONFIDENCE,
                     min_instances: int = MIN_INSTANCES, metrics: Sequence[str] = DOCLENS_METRICS) -> dict[str, Difference]:
    """``{statistic: Difference}``: ``B − A`` and its paired-bootstrap percentile interval.

    ``counts_a[i]`` and ``counts_b[i]`` must describe the same instance (see :func:`align_by_id`).
    Each resample draws the same instance indices for both systems. ``p_value`` is two-sided:
    ``min(1, 2 × share of resamples whose difference is ≤ 0)`` when the observed difference is
    positive (≥ 0 when negative); 1 when the observed difference is 0. Resamples where either
    side is undefined are left out; a statistic undefined on either side has ``delta`` ``None``.
    With fewer than ``min_instances`` contributing instances there is no interval, p-value or
    verdict (``Difference.verdict`` says "not informative").

    >>> a = [{"claim_recall": (1, 2)}] * 12
    >>> b = [{"claim_recall": (2, 2)}] * 6 + [{"claim_recall": (1, 2)}] * 6
    >>> difference = paired_bootstrap(a, b, metrics=["claim_recall"])["claim_recall"]
    >>> difference.delta, difference.low > 0
    (0.25, True)
    """
    _check(n_resamples, confidence)
    if len(counts_a) != len(counts_b):
        raise ValueError(f"paired bootstrap needs aligned instances, got {len(counts_a)} and {len(counts_b)}")
    table_a, table_b = CountTable(counts_a, metrics), CountTable(counts_b, metrics)
    points_a, points_b = table_a.point_estimates(), table_b.point_estimates()
    if table_a.size == 0:
        return {k: Difference(None, None, None, None, None, None, 0, 0, min_instances) for k in table_a.statistic_names}
    contributing = table_a.contributing(table_b)
    stats_a = stats_b = None
    if max(contributing.values()) >= min_instances:
        stats_a, stats_b = _resampled([table_a, table_b], n_resamples, seed)
    result = {}
    for j, key in enumerate(table_a.statistic_names):
        a, b, n = points_a[key], points_b[key], contributing[key]
        if a is None or b is None:
            result[key] = Difference(a, b, None, None, None, None, 0, n, min_instances)
            continue
        if n < min_instances:
            result[key] = Difference(a, b, b - a, None, None, None, 0, n, min_instances)
            continue
        assert stats_a is not None and stats_b is not None  # enough instances: the resamples were drawn
        deltas = stats_b[:, j] - stats_a[:, j]
        low, high, defined = _percentiles(deltas, confidence)
        deltas = deltas[~np.isnan(deltas)]
        delta = b - a
        if delta == 0 or defined == 0:
            p_value = 1.0
        else:
            other_side = np.mean(deltas <= 0) if delta > 0 else np.mean(deltas >= 0)
            p_value = float(min(1.0, 2.0 * other_side))
        result[key] = Difference(a, b, delta, low, high, p_value, defined, n, min_instances)
    return result


def bootstrap_description(n_resamples: int, seed: int | None, confidence: float) -> str:
    """``bootstrap:n=1000,seed=12345,ci=95%``: printed with every interval so it can be reproduced."""
    return f"bootstrap:n={n_resamples},seed={seed},ci={100 * confidence:g}%"
