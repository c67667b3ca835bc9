"""The registered metric families (:mod:`doclens.families.base` says what a family is).

:data:`FAMILIES` lists them in table order; :func:`register` adds one (a family is one module
and one call: every reduction, file, view, ``Report.to_rows``, the ``evaluate`` module and the
reward iterate this registry); :func:`selected` picks those a run turned on
(``metrics="doclens"`` → claims and citations; ``"doclens,source_support"`` adds source support);
:func:`result_counts` is the one counting rule the scorer, the reduction, the bootstrap and the
file readers use.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

from doclens.core.settings import SELECTORS
from doclens.core.types import FAMILY_HOOKS, InstanceResult
from doclens.families.base import (
    APPLIES,
    NOT_APPLICABLE,
    SKIPPED,
    UNCITED_OUTPUTS,
    Applicability,
    CountingRule,
    FamilyContext,
    MetricFamily,
    UncitedOutputs,
)
from doclens.families.citations import CITATIONS, cites_nothing
from doclens.families.claims import CLAIMS
from doclens.families.source_support import SOURCE_SUPPORT

__all__ = ["APPLIES", "NOT_APPLICABLE", "SKIPPED", "UNCITED_OUTPUTS", "Applicability", "UncitedOutputs",
           "CountingRule", "FamilyContext", "MetricFamily", "FAMILIES", "higher_is_better", "statistics",
           "CLAIMS", "CITATIONS", "SOURCE_SUPPORT", "cites_nothing", "selected", "family_metrics", "result_counts",
           "instance_scores", "metric_family", "register", "unregister", "registered", "selectors",
           "DOCLENS_METRICS", "result_from_dict", "own_item_families", "reported", "DEFAULT_SELECTOR", "derived_scores"]


class FamilyRegistry(Sequence):
    """The registered families, in table order: a sequence that :func:`register` extends in
    place, so every module that imported :data:`FAMILIES` sees a family registered later."""

    def __init__(self, families: Iterable[MetricFamily]):
        self._families: list[MetricFamily] = list(families)

    def __getitem__(self, index):
        return self._families[index]

    def __len__(self) -> int:
        return len(self._families)

    def __repr__(self) -> str:
        return f"FamilyRegistry({[family.name for family in self._families]})"


#: every registered family, in the order tables list them
FAMILIES = FamilyRegistry((CLAIMS, CITATIONS, SOURCE_SUPPORT))
#: the metrics ``metrics="doclens"`` turns on (claim and citation recall and precision)
DOCLENS_METRICS: tuple[str, ...] = (*CLAIMS.metrics, *CITATIONS.metrics)


def register(family: MetricFamily) -> MetricFamily:
    """Add ``family`` to :data:`FAMILIES` (after those registered before it) and return it.
    Its name and metric names must be new, and its name no field of an instance's JSON
    (``InstanceResult.to_dict``: ``scores``, ``statements``…, beside which its items are kept);
    ``metrics=`` then accepts its ``selector``."""
    if not isinstance(family, MetricFamily):
        raise TypeError(f"a metric family must be a doclens.families.MetricFamily, got {type(family).__name__}")
    if not family.name or not family.selector or not family.metrics:
        raise ValueError("a metric family needs a name, a selector and at least one metric")
    fields = sorted(InstanceResult(id="", task="").to_dict())  # what a result's JSON writes beside the families
    if family.name in fields:
        raise ValueError(f"metric family {family.name!r}: the name is an instance field (a result's JSON keeps a "
                         f"family's items under its name beside {', '.join(fields)}): choose another name")
    taken = {metric for known in FAMILIES for metric in known.metrics}
    clash = sorted(set(family.metrics) & taken)
    if any(known.name == family.name for known in FAMILIES) or clash:
        raise ValueError(f"metric family {family.name!r}: the name or metric(s) {clash} are registered already")
    FAMILIES._families.append(family)
    return family


def unregister(family: MetricFamily) -> None:
    """Remove a family :func:`register` added (the three built in stay)."""
    if family in (CLAIMS, CITATIONS, SOURCE_SUPPORT):
        raise ValueError(f"the built-in metric family {family.name!r} cannot be unregistered")
    FAMILIES._families.remove(family)


@contextmanager
def registered(family: MetricFamily) -> Iterator[MetricFamily]:
    """``with registered(family):`` — :func:`register` for the block only (tests, notebooks)."""
    register(family)
    try:
        yield family
    finally:
        unregister(family)


#: the ``metrics=`` name of the families every run computes
DEFAULT_SELECTOR = "doclens"


def reported(scores) -> tuple[MetricFamily, ...]:
    """The families a report with ``scores`` shows, in table order: those every run computes,
    and an opt-in family where the report has its scores."""
    return tuple(family for family in FAMILIES
                 if family.selector == DEFAULT_SELECTOR or any(m in scores for m in family.metrics))


def derived_scores(scores: dict, families: Sequence[MetricFamily] = FAMILIES) -> dict:
    """The scores ``families`` derive from an instance's ``scores`` (claim F1), in table order."""
    derived: dict = {}
    for family in families:
        derived.update(family.derived_scores(scores))
    return derived


def selectors() -> tuple[str, ...]:
    """The ``metrics=`` names of the registered families, in table order (``doclens`` first)."""
    return tuple(dict.fromkeys(family.selector for family in FAMILIES))


SELECTORS.known = selectors  # ScoringSettings checks metrics= against this registry (core sits below it)


def _family_names() -> tuple[str, ...]:
    return tuple(family.name for family in FAMILIES)


def _item_readers() -> dict:
    return {family.name: family.item_from_dict for family in own_item_families()}


FAMILY_HOOKS.names = _family_names  # result.<family name> and InstanceResult.from_dict read the registry
FAMILY_HOOKS.item_readers = _item_readers


def own_item_families(families: Sequence[MetricFamily] = FAMILIES) -> tuple[MetricFamily, ...]:
    """The families of ``families`` that judge in a step of their own and keep their own items."""
    return tuple(family for family in families if family.judges_itself)


def result_from_dict(data: dict):
    """An :class:`~doclens.core.types.InstanceResult` from its ``to_dict``, each registered
    family's own items read by that family."""
    return InstanceResult.from_dict(data, _item_readers())


def selected(selectors: Iterable[str] = (DEFAULT_SELECTOR,)) -> tuple[MetricFamily, ...]:
    """The families turned on by ``selectors`` (the checked ``metrics=`` names), in table order."""
    names = set(selectors)
    return tuple(family for family in FAMILIES if family.selector in names)


def family_metrics(families: Sequence[MetricFamily] = FAMILIES) -> tuple[str, ...]:
    """The metric names of ``families``, in table order."""
    return tuple(metric for family in families for metric in family.metrics)


def statistics(families: Sequence[MetricFamily] = FAMILIES) -> tuple[str, ...]:
    """Every statistic a leaderboard can rank by, in table order: each family's metrics and derived
    scores, pooled then ``_macro`` (:meth:`MetricFamily.statistics`)."""
    pooled = [name for family in families for name in (*family.metrics, *family.derived_scores({}))]
    return (*pooled, *(f"{name}_macro" for name in pooled))


def higher_is_better(statistic: str) -> bool:
    """Whether a larger value of ``statistic`` (a metric or derived score, pooled or ``_macro``) is
    better, as its family declares (:attr:`MetricFamily.lower_is_better`); ``KeyError`` for an
    unknown statistic."""
    base = statistic.removesuffix("_macro")
    for family in FAMILIES:
        if base in family.metrics or base in family.derived_scores({}):
            return family.higher_is_better(statistic)
    raise KeyError(statistic)


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
