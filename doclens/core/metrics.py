"""The four DocLens metrics as pure functions over verdicts (``docs/design.md`` §1).

==================  ===================================================================
claim recall        ``1/|L_y| Σ 𝟙[y′ ⇒ l]`` over reference claims ``l`` judged against the
                    prediction ``y′``
claim precision     ``1/|L′_y| Σ 𝟙[y ⇒ l]`` over prediction claims judged against the reference
citation recall     ``𝟙[C ⇒ s]`` averaged over statements ``s`` (an uncited statement or one
                    with an invalid id scores 0)
citation precision  over every citation ``c`` of every statement: precise iff ``C ⇒ s`` and
                    (``c ⇒ s`` or ``C∖{c} ⇏ s``); an invalid id is imprecise
==================  ===================================================================

Every function returns ``(hits, items)``; :func:`ratio` turns that into a score in [0, 1], or
``None`` when there is nothing to score (never NaN). Aggregation over a corpus is **pooled**
(Σ hits / Σ items, the DocLens paper's way); the **macro** mean of per-instance scores (ALCE's
way) skips instances with nothing to score and counts them as ``empty``.

``on_unparsed`` says how a verdict the judge never gave (status ``unparsed``, or ``failed`` when
the call itself failed) counts: ``"zero"`` (default) as not entailed, ``"exclude"`` as absent
from numerator and denominator.
"""

from __future__ import annotations

from typing import Iterable, Optional, Sequence

from doclens.core.types import NO_VERDICT, CitationVerdict, ClaimVerdict

METRICS = ("claim_recall", "claim_precision", "citation_recall", "citation_precision")
ON_UNPARSED = ("zero", "exclude", "raise")
#: metric → the items of an :class:`doclens.core.types.InstanceResult` it counts
ITEM_FIELDS = {"claim_recall": "reference_claims", "claim_precision": "prediction_claims",
               "citation_recall": "statements", "citation_precision": "statements"}


def ratio(hits: int, items: int) -> Optional[float]:
    """``hits / items``, or ``None`` when ``items`` is 0."""
    return hits / items if items else None


def claim_counts(verdicts: Iterable[ClaimVerdict], on_unparsed: str = "zero") -> tuple[int, int]:
    """``(entailed claims, judged claims)``; the claim recall or precision of one instance is
    their ratio (which of the two depends on which claims were judged against which text)."""
    hits = items = 0
    for verdict in verdicts:
        if verdict.status in NO_VERDICT and on_unparsed == "exclude":
            continue
        items += 1
        hits += bool(verdict.entailed)
    return hits, items


def _counted(statements: Iterable[CitationVerdict], on_unparsed: str) -> list[CitationVerdict]:
    return [s for s in statements if not (s.status in NO_VERDICT and on_unparsed == "exclude")]


def citation_recall_counts(statements: Iterable[CitationVerdict], on_unparsed: str = "zero") -> tuple[int, int]:
    """``(statements whose citations entail them, statements)``. Uncited statements and those
    citing an invalid id count as misses."""
    counted = _counted(statements, on_unparsed)
    return sum(s.recall_hit for s in counted), len(counted)


def citation_precision_counts(statements: Iterable[CitationVerdict], on_unparsed: str = "zero") -> tuple[int, int]:
    """``(precise citations, citations)`` over all statements; invalid ids are imprecise and
    uncited statements add nothing."""
    counted = _counted(statements, on_unparsed)
    return sum(len(s.precise) for s in counted), sum(len(s.cited) for s in counted)


def instance_counts(reference_claims: Sequence[ClaimVerdict], prediction_claims: Sequence[ClaimVerdict],
                    statements: Optional[Sequence[CitationVerdict]], on_unparsed: str = "zero") -> dict:
    """``{metric: (hits, items)}`` for one instance (or one section of it). Citation metrics are
    absent when the instance has no source to cite (``statements is None``)."""
    counts = {
        "claim_recall": claim_counts(reference_claims, on_unparsed),
        "claim_precision": claim_counts(prediction_claims, on_unparsed),
    }
    if statements is not None:
        counts["citation_recall"] = citation_recall_counts(statements, on_unparsed)
        counts["citation_precision"] = citation_precision_counts(statements, on_unparsed)
    return counts


def counting_rule(config: Optional[dict]) -> str:
    """The ``on_unparsed`` rule a report was scored with (its ``config``), as
    :func:`doclens.core.metrics.instance_counts` takes it: ``"zero"`` or ``"exclude"``. A finished run
    with ``"raise"`` has no unparsed verdicts, so ``"zero"`` counts it identically."""
    rule = (config or {}).get("on_unparsed") or "zero"
    return "zero" if rule == "raise" else rule


def aggregate(per_instance: Sequence[dict]) -> tuple[dict, dict]:
    """Pool and macro-average ``{metric: (hits, items)}`` dicts, one per instance.

    Returns ``(scores, counts)``: ``scores`` has each metric (pooled) and ``<metric>_macro``;
    ``counts`` has, per metric, ``instances`` (all), ``scored`` (with items), ``empty`` (no
    items), ``skipped`` (metric not applicable, e.g. no source for citations), ``items`` and
    ``hits``.
    """
    scores: dict = {}
    counts: dict = {}
    for metric in METRICS:
        present = [c[metric] for c in per_instance if metric in c]
        hits = sum(h for h, _ in present)
        items = sum(n for _, n in present)
        macro = [h / n for h, n in present if n]
        scores[metric] = ratio(hits, items)
        scores[f"{metric}_macro"] = sum(macro) / len(macro) if macro else None
        counts[metric] = {
            "instances": len(per_instance),
            "scored": len(macro),
            "empty": len(present) - len(macro),
            "skipped": len(per_instance) - len(present),
            "items": items,
            "hits": hits,
        }
    return scores, counts


class RunningCounts:
    """:func:`aggregate` one instance at a time, in bounded memory: the same sums in the same
    order (pooled hits and items, the macro sum of per-instance ratios, added left to right from
    0 as :func:`sum` does), so :meth:`result` is bit-identical to :func:`aggregate` over the same
    instances in the same order. Used by the streamed scorer (:mod:`doclens.scoring.aggregate`),
    which cannot keep every instance."""

    __slots__ = ("instances", "present", "hits", "items", "macro_sum", "scored")

    def __init__(self):
        self.instances = 0
        self.present = dict.fromkeys(METRICS, 0)
        self.hits = dict.fromkeys(METRICS, 0)
        self.items = dict.fromkeys(METRICS, 0)
        self.macro_sum = dict.fromkeys(METRICS, 0)
        self.scored = dict.fromkeys(METRICS, 0)

    def add(self, counts: dict) -> None:
        """Add one instance's ``{metric: (hits, items)}``."""
        self.instances += 1
        for metric in METRICS:
            if metric not in counts:
                continue
            hits, items = counts[metric]
            self.present[metric] += 1
            self.hits[metric] += hits
            self.items[metric] += items
            if items:
                self.macro_sum[metric] += hits / items
                self.scored[metric] += 1

    def result(self) -> tuple[dict, dict]:
        """``(scores, counts)`` exactly as :func:`aggregate` returns them."""
        scores: dict = {}
        counts: dict = {}
        for metric in METRICS:
            scored = self.scored[metric]
            scores[metric] = ratio(self.hits[metric], self.items[metric])
            scores[f"{metric}_macro"] = self.macro_sum[metric] / scored if scored else None
            counts[metric] = {
                "instances": self.instances,
                "scored": scored,
                "empty": self.present[metric] - scored,
                "skipped": self.instances - self.present[metric],
                "items": self.items[metric],
                "hits": self.hits[metric],
            }
        return scores, counts
