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

**Claim F1** (:func:`f1`) is the harmonic mean of claim recall and precision: pooled, of the
pooled scores; macro, the mean of each instance's F1 (where a side has nothing to score it counts
as 0; an instance with nothing on either side has no F1), as the training reward defines it.

``on_unparsed`` says how a verdict the judge never gave (status ``unparsed``, or ``failed`` when
the call itself failed) counts: ``"zero"`` (default) as not entailed, ``"exclude"`` as absent
from numerator and denominator.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from doclens.core.settings import ON_UNPARSED  # noqa: F401  (the vocabulary lives with the settings)
from doclens.core.types import NO_VERDICT, CitationVerdict, ClaimVerdict

#: the derived F1 statistic, from its recall and precision metrics
CLAIM_F1 = "claim_f1"
F1_OF = {CLAIM_F1: ("claim_recall", "claim_precision")}


def f1(recall: float | None, precision: float | None) -> float | None:
    """The harmonic mean of ``recall`` and ``precision``; a missing side counts as 0 and both
    missing is ``None`` (an output with no claims recalls nothing of a reference that has some: F1
    0, not "no value").

    >>> f1(0.5, 1.0), f1(0.5, None), f1(None, None), f1(0.0, 0.0)
    (0.6666666666666666, 0.0, None, 0.0)
    """
    if recall is None and precision is None:
        return None
    recall, precision = recall or 0.0, precision or 0.0
    return 2 * recall * precision / (recall + precision) if recall + precision else 0.0


def ratio(hits: int, items: int) -> float | None:
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


def counting_rule(config: dict | None) -> str:
    """The ``on_unparsed`` rule a report was scored with (its ``config``), as
    :func:`doclens.families.result_counts` takes it: ``"zero"`` or ``"exclude"``. A finished run
    with ``"raise"`` has no unparsed verdicts, so ``"zero"`` counts it identically."""
    rule = (config or {}).get("on_unparsed") or "zero"
    return "zero" if rule == "raise" else rule


def aggregate(per_instance: Sequence[dict], metrics: Sequence[str]) -> tuple[dict, dict]:
    """Pool and macro-average ``{metric: (hits, items)}`` dicts, one per instance, for ``metrics``
    (a family's own, :mod:`doclens.families`; the four DocLens metrics are
    ``doclens.families.DOCLENS_METRICS``: this room names no family).

    Returns ``(scores, counts)``: ``scores`` has each metric (pooled) and ``<metric>_macro``;
    ``counts`` has, per metric, ``instances`` (all), ``scored`` (with items), ``empty`` (no
    items), ``skipped`` (metric not applicable, e.g. no source for citations), ``items`` and
    ``hits``. The same sums as :class:`RunningCounts`, over a list.
    """
    running = RunningCounts(metrics)
    for counts in per_instance:
        running.add(counts)
    return running.result()


class RunningCounts:
    """:func:`aggregate` one instance at a time, in bounded memory: pooled hits and items, the
    macro sum of per-instance ratios (added left to right from 0, as :func:`sum` does), so the
    streamed and the in-memory reductions are bit-identical. ``metrics``: the metrics summed
    (a family's, :mod:`doclens.families`). ``not_applicable``: also count, under that key, the
    instances :meth:`add` is told a metric does not apply to (the citation family's uncited
    outputs); they leave ``skipped``."""

    __slots__ = ("metrics", "instances", "present", "hits", "items", "macro_sum", "scored", "not_applicable",
                 "f1_sum", "f1_scored")

    def __init__(self, metrics: Sequence[str], not_applicable: bool = False):
        self.metrics = tuple(metrics)
        self.instances = 0
        self.present = dict.fromkeys(self.metrics, 0)
        self.hits = dict.fromkeys(self.metrics, 0)
        self.items = dict.fromkeys(self.metrics, 0)
        self.macro_sum = dict.fromkeys(self.metrics, 0)
        self.scored = dict.fromkeys(self.metrics, 0)
        self.not_applicable = dict.fromkeys(self.metrics, 0) if not_applicable else None
        #: claim F1's macro sum and count, kept when both its metrics are summed here
        self.f1_sum, self.f1_scored = 0.0, 0

    def add(self, counts: dict, not_applicable: bool = False) -> None:
        """Add one instance's ``{metric: (hits, items)}``; ``not_applicable``: its absent metrics
        were found not to apply (counted as such when this reduction counts that)."""
        self.instances += 1
        for metric in self.metrics:
            if metric not in counts:
                if not_applicable and self.not_applicable is not None:
                    self.not_applicable[metric] += 1
                continue
            hits, items = counts[metric]
            self.present[metric] += 1
            self.hits[metric] += hits
            self.items[metric] += items
            if items:
                self.macro_sum[metric] += hits / items
                self.scored[metric] += 1
        for recall, precision in _f1_pairs(self.metrics):
            value = f1(*(ratio(*counts[m]) if m in counts else None for m in (recall, precision)))
            if value is not None:
                self.f1_sum += value
                self.f1_scored += 1

    def result(self) -> tuple[dict, dict]:
        """``(scores, counts)`` (see :func:`aggregate`)."""
        scores: dict = {}
        counts: dict = {}
        for metric in self.metrics:
            scored = self.scored[metric]
            scores[metric] = ratio(self.hits[metric], self.items[metric])
            scores[f"{metric}_macro"] = self.macro_sum[metric] / scored if scored else None
            absent = self.instances - self.present[metric]
            counts[metric] = {
                "instances": self.instances,
                "scored": scored,
                "empty": self.present[metric] - scored,
                "skipped": absent - (self.not_applicable[metric] if self.not_applicable is not None else 0),
                "items": self.items[metric],
                "hits": self.hits[metric],
            }
            if self.not_applicable is not None:
                counts[metric]["not_applicable"] = self.not_applicable[metric]
        for name, (recall, precision) in F1_OF.items():
            if recall in self.metrics and precision in self.metrics:
                scores[name] = f1(scores[recall], scores[precision])
                scores[f"{name}_macro"] = self.f1_sum / self.f1_scored if self.f1_scored else None
        return scores, counts


def _f1_pairs(metrics: tuple[str, ...]) -> list[tuple[str, str]]:
    return [pair for pair in F1_OF.values() if pair[0] in metrics and pair[1] in metrics]

#: a per-section score resting on fewer items than this is flagged ``*`` in the text summary and
#: drawn hatched in the figures (``--min-section-items``)
MIN_SECTION_ITEMS = 20
