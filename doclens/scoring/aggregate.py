"""Incremental aggregation of a scoring run: chunks of :class:`doclens.core.types.InstanceResult`
in, everything the report needs out, in memory bounded by the chunk, not by the input.

This is the one place a run's results are reduced; :mod:`doclens.scoring.build` turns the
reduction into a :class:`doclens.Report`, and :mod:`doclens.engines.sink` writes the results
themselves. Any engine that produces the same chunks (the in-process scorer, or a distributed
one running chunks on workers) feeds :meth:`Aggregator.add` with each chunk's results **in input
order** and gets the same report, bit for bit.

What is kept per instance is what the bootstrap needs and nothing else (``docs/design.md``,
pipeline section): the id and ``(hits, items)`` per metric of every family the run has on
(:mod:`doclens.families`), packed into typed ``int64`` arrays (:mod:`array`, 8 bytes a number,
2 numbers per metric and instance, ``-1`` for a metric that does not apply; stdlib, so that
importing doclens needs no numpy); everything else is a running sum per family
(:class:`doclens.core.metrics.RunningCounts`, per note section too). No family keeps a verdict,
a text or an explanation past its chunk.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence

from doclens.core.metrics import RunningCounts
from doclens.core.tasks import SECTION_NAMES, Task
from doclens.core.types import STATUS_FAILED, STATUS_UNPARSED, InstanceResult
from doclens.families import APPLIES, CITATIONS, CLAIMS, NOT_APPLICABLE, CountingRule, MetricFamily, family_metrics


class _FamilySums:
    """One family's running reduction: the whole run and each note section."""

    def __init__(self, family: MetricFamily):
        self.family = family
        self.total = RunningCounts(family.metrics, not_applicable=family.can_be_not_applicable)
        self.sections = {section: RunningCounts(family.metrics) for section in SECTION_NAMES}

    def add(self, result: InstanceResult, rule: CountingRule, note: bool) -> dict:
        applicability = self.family.applicability(result, rule)
        counts = self.family.count(result, rule, None) if applicability == APPLIES else {}
        self.total.add(counts, not_applicable=applicability == NOT_APPLICABLE)
        if note:
            for section, running in self.sections.items():
                running.add(self.family.count(result, rule, section) if applicability == APPLIES else {})
        return counts


class Aggregator:
    """The running reduction of one run's results (see the module docstring).

    ``keep_results``: also keep every :class:`InstanceResult` (what :meth:`doclens.DocLens.score`
    returns in its :class:`doclens.Report`); the streamed path leaves it off. ``families`` and
    ``rule``: the families the run has on and how they count (:meth:`use` sets them from a scorer).
    """

    def __init__(self, on_unparsed: str = "zero", keep_results: bool = False,
                 families: Sequence[MetricFamily] = (CLAIMS, CITATIONS), rule: CountingRule | None = None):
        self.keep_results = keep_results
        self.results: list[InstanceResult] = []
        self.ids: list[str] = []
        self.use(families, rule or CountingRule.of(on_unparsed))
        self.notes = 0  # note_generation instances (sections are scored over them)
        #: items whose verdict came from the judge (or was due from it): the denominator of the
        #: "most replies unreadable" check of :func:`doclens.scoring.scorer.incomplete_reasons`
        self.judged = 0
        self.tasks: set[str] = set()

    def use(self, families: Sequence[MetricFamily], rule: CountingRule) -> None:
        """Reduce over ``families`` counted by ``rule`` (before the first :meth:`add`)."""
        self.families = tuple(families)
        self.rule = rule
        self.on_unparsed = rule.on_unparsed
        self.sums = [_FamilySums(family) for family in self.families]
        self.metrics = family_metrics(self.families)
        #: per metric, hits and items of every instance in input order (-1: does not apply)
        self.columns = {metric: (array("q"), array("q")) for metric in self.metrics}
        #: the result fields whose items the families count, each with its unparsed / failed items
        self.item_fields = tuple(dict.fromkeys(f for family in self.families for f in family.item_fields.values()))
        self.unparsed = dict.fromkeys(self.item_fields, 0)
        self.failed = dict.fromkeys(self.item_fields, 0)
        #: family name → the running sums of its :meth:`~doclens.families.MetricFamily.tally`
        self.tallies: dict[str, dict[str, int]] = {family.name: {} for family in self.families}

    def use_scorer(self, scorer) -> None:
        """:meth:`use` the families and counting rule of ``scorer`` (a :class:`doclens.DocLens`)."""
        self.use(scorer.families, scorer.counting_rule)

    def __len__(self) -> int:
        return len(self.ids)

    def add(self, results: list[InstanceResult]) -> None:
        """Reduce one chunk of results (in input order)."""
        for result in results:
            note = result.task == Task.NOTE_GENERATION
            self.notes += note
            counts: dict = {}
            for sums in self.sums:
                counts.update(sums.add(result, self.rule, note))
                tally = self.tallies[sums.family.name]
                for key, value in sums.family.tally(result).items():
                    tally[key] = tally.get(key, 0) + value
            for metric, (hits, items) in self.columns.items():
                h, n = counts.get(metric, (-1, -1))
                hits.append(h)
                items.append(n)
            self._count_items(result)
            self.tasks.add(result.task)
            self.ids.append(result.id)
        if self.keep_results:
            self.results.extend(results)

    def _count_items(self, result: InstanceResult) -> None:
        for name in self.item_fields:
            for item in result.items_of(name) or ():
                if item.status == STATUS_UNPARSED:
                    self.unparsed[name] += 1
                elif item.status == STATUS_FAILED:
                    self.failed[name] += 1
                # a family's own items carry no reason: every one of them counts as judged
                self.judged += getattr(item, "judged", True)

    # ---- what the report and the bootstrap read --------------------------------------------
    def scores_and_counts(self) -> tuple[dict, dict]:
        """``(scores, counts)`` of every family, as :func:`doclens.core.metrics.aggregate` gives them."""
        scores: dict = {}
        counts: dict = {}
        for sums in self.sums:
            family_scores, family_counts = sums.total.result()
            scores.update(family_scores)
            counts.update(family_counts)
        return scores, counts

    def section_scores(self) -> dict:
        """Scores per note section over the ``note_generation`` instances (``{}`` without any),
        each metric with ``<metric>_items``, the items its pooled score rests on (a score of 8
        claims is shown as such, never as tall as one of 800)."""
        if not self.notes:
            return {}
        found: dict = {}
        for section in SECTION_NAMES:
            found[section] = {}
            for sums in self.sums:
                scores, counts = sums.sections[section].result()
                found[section].update(scores)
                found[section].update({f"{metric}_items": counted["items"] for metric, counted in counts.items()})
        return found

    def instance_counts(self) -> list[dict]:
        """Per-instance ``{metric: (hits, items)}`` in input order, as
        :func:`doclens.families.result_counts` gives them: what :mod:`doclens.stats.bootstrap` takes."""
        from doclens.reports.results_files import counts_from_document

        return counts_from_document(self.counts_document())[1]

    def counts_document(self) -> dict:
        """The compact, JSON-ready per-instance counts a summary file holds:
        ``{"ids": [...], "<metric>": {"hits": [...], "items": [...]}}`` (``null`` where the
        metric does not apply to the instance)."""
        document: dict = {"ids": list(self.ids)}
        for metric, (hits, items) in self.columns.items():
            document[metric] = {"hits": [None if n < 0 else h for h, n in zip(hits, items)],
                                "items": [None if n < 0 else n for n in items]}
        return document
