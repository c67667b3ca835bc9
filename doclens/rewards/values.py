"""One number per instance from its DocLens scores: the reward's components and how they combine.

A component is a per-instance score of :attr:`doclens.InstanceResult.scores` (``claim_recall``,
``claim_precision``, ``citation_recall``, ``citation_precision``, and with source support
``source_supported`` …) or one of the two F1 scores derived here:

* ``claim_f1`` = 2·R·P / (R + P) of claim recall R and claim precision P. When only one of them
  is defined the other counts as 0 (a completion with no claims recalls nothing of a reference
  that has some: F1 0, not "no value"); when both are 0, F1 is 0; when neither is defined
  (nothing to score on either side) it has no value.
* ``citation_f1``: the same over citation recall and precision.

:func:`combine` turns the components into the reward: one component by name, or a weighted mean
of several (``{"claim_f1": 0.7, "citation_recall": 0.3}``) over those that have a value (the
weights of the others left out and the rest renormalised); a completion for which none has a
value gets ``empty_value``. The result is always a float, never ``None`` or NaN; the reward
(:class:`doclens.rewards.DocLensReward`) gives ``None`` instead for a completion the judge could
not score (:func:`verdicts_of`). The components come from the registered metric families
(:meth:`doclens.families.MetricFamily.reward_components`): a registered family's metrics are
components too.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from doclens.core.metrics import f1 as f1  # re-exported: the one definition, which claim F1 uses
from doclens.families import DEFAULT_SELECTOR, FAMILIES


def component_names() -> tuple[str, ...]:
    """Every component a reward can be made of, over the registered families
    (:mod:`doclens.families`): the derived scores first (claim F1, citation F1), then every metric."""
    derived = [name for family in FAMILIES for name in family.reward_components({})]
    return (*derived, *(metric for family in FAMILIES for metric in family.metrics))


#: every component a reward can be made of with the built-in families (:func:`component_names`
#: adds a registered family's)
COMPONENTS = component_names()


def verdicts_of(name: str) -> tuple[str, ...]:
    """The verdict lists of :class:`doclens.InstanceResult` (or a family's own items) component
    ``name`` is computed from: an item of one without a verdict (unparsed, failed) leaves the
    component, and the reward, without a value. A derived score depends on all its family's."""
    for family in FAMILIES:
        if name in family.metrics:
            return (family.item_fields[name],)
        if name in family.reward_components({}):
            return tuple(dict.fromkeys(family.item_fields.values()))
    raise KeyError(name)


def selectors_for(weights: Mapping[str, float]) -> list[str]:
    """The ``metrics=`` a scorer needs for a reward of ``weights``: the DocLens metrics and every
    opt-in family a component belongs to (``[]``: the default will do)."""
    needed = {family.selector for family in FAMILIES for name in weights
              if name in family.metrics or name in family.reward_components({})}
    if needed <= {DEFAULT_SELECTOR}:
        return []
    return list(dict.fromkeys([DEFAULT_SELECTOR, *(family.selector for family in FAMILIES
                                                   if family.selector in needed)]))


def components(scores: Mapping[str, float | None]) -> dict[str, float | None]:
    """An instance's scores with the derived scores added (``None`` where a score has no value):
    every metric of the families every run computes, an opt-in family's where it was scored."""
    values = {metric: scores.get(metric) for family in FAMILIES for metric in family.metrics
              if family.selector == DEFAULT_SELECTOR or metric in scores}
    for family in FAMILIES:
        values.update(family.reward_components(values))
    return values


def check_weights(score: str | Mapping[str, float]) -> dict[str, float]:
    """``score`` as ``{component: weight}``: a name is a weight of 1 on it. Raises ``ValueError``
    naming an unknown component, or weights that cannot make a mean (negative, or all zero)."""
    weights = {score: 1.0} if isinstance(score, str) else dict(score)
    known = component_names()
    unknown = sorted(name for name in weights if name not in known)
    if unknown or not weights:
        raise ValueError(f"score must be one of {', '.join(known)} or a mapping of them to weights, "
                         f"got {score!r}" + (f" (unknown: {', '.join(unknown)})" if unknown else ""))
    for name, weight in weights.items():
        if not isinstance(weight, (int, float)) or isinstance(weight, bool) or not math.isfinite(weight) \
                or weight < 0:
            raise ValueError(f"the weight of {name!r} must be a finite number >= 0, got {weight!r}")
    if not any(weights.values()):
        raise ValueError(f"score weights {weights} are all zero")
    return {name: float(weight) for name, weight in weights.items()}


def combine(values: Mapping[str, float | None], weights: Mapping[str, float], empty_value: float) -> float:
    """The weighted mean of the components that have a value; ``empty_value`` when none has one
    (or the weights of those that have one are all 0)."""
    present = {name: weight for name, weight in weights.items() if values.get(name) is not None}
    total = sum(present.values())
    if not present or not total:
        return float(empty_value)
    return float(sum(float(values[name] or 0.0) * weight for name, weight in present.items()) / total)
