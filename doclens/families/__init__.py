"""The registered metric families (:mod:`doclens.families.base` says what a family is).

:data:`FAMILIES` lists them in table order; :func:`selected` picks those a run turned on
(``metrics="doclens"`` → claims and citations; ``"doclens,source_support"`` adds source support);
:func:`result_counts` is the one counting rule the scorer, the reduction, the bootstrap and the
file readers use.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from doclens.families.base import APPLIES, NOT_APPLICABLE, SKIPPED, UNCITED_OUTPUTS, CountingRule, MetricFamily
from doclens.families.citations import CITATIONS, cites_nothing
from doclens.families.claims import CLAIMS
from doclens.families.source_support import SOURCE_SUPPORT

__all__ = ["APPLIES", "NOT_APPLICABLE", "SKIPPED", "UNCITED_OUTPUTS", "CountingRule", "MetricFamily", "FAMILIES",
           "CLAIMS", "CITATIONS", "SOURCE_SUPPORT", "cites_nothing", "selected", "family_metrics", "result_counts",
           "instance_scores", "metric_family"]

#: every registered family, in the order tables list them
FAMILIES: tuple[MetricFamily, ...] = (CLAIMS, CITATIONS, SOURCE_SUPPORT)


def selected(selectors: Iterable[str] = ("doclens",)) -> tuple[MetricFamily, ...]:
    """The families turned on by ``selectors`` (the checked ``metrics=`` names), in table order."""
    names = set(selectors)
    return tuple(family for family in FAMILIES if family.selector in names)


def family_metrics(families: Sequence[MetricFamily] = FAMILIES) -> tuple[str, ...]:
    """The metric names of ``families``, in table order."""
    return tuple(metric for family in families for metric in family.metrics)


def metric_family(metric: str) -> MetricFamily:
    """The family that defines ``metric`` (``KeyError`` for an unknown name)."""
    for family in FAMILIES:
        if metric in family.metrics:
            return family
    raise KeyError(metric)


def result_counts(result, rule: None | str | CountingRule = None, section: str | None = None,
                  families: Sequence[MetricFamily] = FAMILIES) -> dict:
    """``{metric: (hits, items)}`` of one :class:`doclens.core.types.InstanceResult` (or one note
    ``section`` of it) over ``families``: a metric is absent where its family does not apply.
    ``rule``: a :class:`CountingRule`, or an ``on_unparsed`` string with the other defaults."""
    rule = CountingRule.of(rule)
    counts: dict = {}
    for family in families:
        counts.update(family.counts(result, rule, section))
    return counts


def instance_scores(result, rule: None | str | CountingRule = None,
                    families: Sequence[MetricFamily] = FAMILIES) -> dict:
    """The per-instance scores of ``result`` over ``families`` (what ``InstanceResult.scores`` holds)."""
    rule = CountingRule.of(rule)
    scores: dict = {}
    for family in families:
        scores.update(family.instance_scores(family.counts(result, rule)))
    return scores
