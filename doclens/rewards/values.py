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
not score (:data:`VERDICTS_OF`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from doclens.core.metrics import f1  # the one definition (the reports' claim_f1 uses it too)

#: the derived scores: name → (recall metric, precision metric)
F1_SCORES = {"claim_f1": ("claim_recall", "claim_precision"),
             "citation_f1": ("citation_recall", "citation_precision")}
BASE_METRICS = ("claim_recall", "claim_precision", "citation_recall", "citation_precision")
SUPPORT_SCORES = ("source_supported", "source_not_supported", "source_not_addressed")
#: every component a reward can be made of
COMPONENTS = (*F1_SCORES, *BASE_METRICS, *SUPPORT_SCORES)
#: the verdict lists of :class:`doclens.InstanceResult` each component is computed from: an item of
#: one without a verdict (unparsed, failed) leaves the component, and the reward, without a value
VERDICTS_OF: dict[str, tuple[str, ...]] = {
    "claim_recall": ("reference_claims",), "claim_precision": ("prediction_claims",),
    "claim_f1": ("reference_claims", "prediction_claims"), "citation_recall": ("statements",),
    "citation_precision": ("statements",), "citation_f1": ("statements",),
    **{name: ("source_support",) for name in SUPPORT_SCORES}}




def components(scores: Mapping[str, float | None]) -> dict[str, float | None]:
    """An instance's scores with the two F1 scores added (``None`` where a score has no value)."""
    values = {name: scores.get(name) for name in (*BASE_METRICS, *SUPPORT_SCORES) if name in scores
              or name in BASE_METRICS}
    for name, (recall, precision) in F1_SCORES.items():
        values[name] = f1(values.get(recall), values.get(precision))
    return values


def check_weights(score: str | Mapping[str, float]) -> dict[str, float]:
    """``score`` as ``{component: weight}``: a name is a weight of 1 on it. Raises ``ValueError``
    naming an unknown component, or weights that cannot make a mean (negative, or all zero)."""
    weights = {score: 1.0} if isinstance(score, str) else dict(score)
    unknown = sorted(name for name in weights if name not in COMPONENTS)
    if unknown or not weights:
        raise ValueError(f"score must be one of {', '.join(COMPONENTS)} or a mapping of them to weights, "
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
    return float(sum(values[name] * weight for name, weight in present.items()) / total)
