"""Incremental aggregation of a scoring run: chunks of :class:`doclens.core.types.InstanceResult`
in, everything the report needs out, in memory bounded by the chunk, not by the input.

This is the one place a run's results are reduced; :mod:`doclens.scoring.build` turns the
reduction into a :class:`doclens.Report`, and :mod:`doclens.scoring.sink` writes the results
themselves. Any engine that produces the same chunks (the in-process scorer, or a distributed
one running chunks on workers) feeds :meth:`Aggregator.add` with each chunk's results **in input
order** and gets the same report, bit for bit.

What is kept per instance is what the bootstrap needs and nothing else (``docs/design.md``,
pipeline section): the id and ``(hits, items)`` per metric, packed into typed ``int64`` arrays
(:mod:`array`, 8 bytes a number, 8 numbers per instance, ``-1`` for a metric that does not
apply; stdlib, so that importing doclens needs no numpy); everything else is a running sum
(:class:`doclens.core.metrics.RunningCounts`, per note section too).
"""

from __future__ import annotations

import dataclasses
from array import array
from types import SimpleNamespace

from doclens.core.metrics import METRICS, RunningCounts
from doclens.core.support import SUPPORT_METRICS
from doclens.core.tasks import SECTION_NAMES
from doclens.core.types import NO_VERDICT, STATUS_FAILED, STATUS_UNPARSED, InstanceResult
from doclens.scoring.verdicts import EMPTY_PREMISE, INVALID_IDS, NO_CITATION

_FIELDS = ("reference_claims", "prediction_claims", "statements")


def _unjudged(explanation: str) -> bool:
    """Whether the scorer decided the item without asking the judge (nothing to judge against)."""
    return explanation in (EMPTY_PREMISE, NO_CITATION) or explanation.startswith(INVALID_IDS)


class Aggregator:
    """The running reduction of one run's results (see the module docstring).

    ``keep_results``: also keep every :class:`InstanceResult` (what :meth:`doclens.DocLens.score`
    returns in its :class:`doclens.Report`); the streamed path leaves it off.
    """

    def __init__(self, on_unparsed: str = "zero", keep_results: bool = False):
        self.on_unparsed = on_unparsed
        self.keep_results = keep_results
        self.results: list[InstanceResult] = []
        self.ids: list[str] = []
        #: per metric, hits and items of every instance in input order (-1: does not apply)
        self.columns = [(array("q"), array("q")) for _ in METRICS]
        self.total = RunningCounts()
        self.sections = {section: RunningCounts() for section in SECTION_NAMES}
        self.notes = 0  # note_generation instances (sections are scored over them)
        self.unparsed = dict.fromkeys(_FIELDS, 0)
        self.failed = dict.fromkeys(_FIELDS, 0)
        self.citations = {"statements": 0, "uncited_statements": 0, "inherited_statements": 0,
                          "statements_with_invalid_ids": 0, "invalid_ids": 0}
        #: items whose verdict came from the judge (or was due from it): the denominator of the
        #: "most replies unreadable" check of :func:`doclens.scoring.scorer.incomplete_reasons`
        self.judged = 0
        self.tasks: set[str] = set()
        #: source support (set by the sink when the scorer has the metric): each instance's task
        #: and its claims' verdicts without their evidence text, what
        #: :meth:`doclens.scoring.source_support.SourceSupport.report_parts` reduces at the end
        self.keep_support = False
        self.support_rows: list[SimpleNamespace] = []
        #: with source support: its per-instance hits and items, as ``columns`` (the bootstrap's input)
        self.support_columns = {metric: (array("q"), array("q")) for metric in SUPPORT_METRICS}

    def __len__(self) -> int:
        return len(self.ids)

    def add(self, results: list[InstanceResult]) -> None:
        """Reduce one chunk of results (in input order)."""
        for result in results:
            counts = result.counts(self.on_unparsed)
            self.total.add(counts)
            for metric, (hits, items) in zip(METRICS, self.columns):
                h, n = counts.get(metric, (-1, -1))
                hits.append(h)
                items.append(n)
            if self.keep_support:
                for metric, (hits, items) in self.support_columns.items():
                    h, n = counts.get(metric, (-1, -1))
                    hits.append(h)
                    items.append(n)
            if result.task == "note_generation":
                self.notes += 1
                for section, running in self.sections.items():
                    running.add(result.counts(self.on_unparsed, section))
            for name in _FIELDS:
                for item in getattr(result, name):
                    if item.status == STATUS_UNPARSED:
                        self.unparsed[name] += 1
                    elif item.status == STATUS_FAILED:
                        self.failed[name] += 1
                    if item.status in NO_VERDICT or not _unjudged(item.explanation):
                        self.judged += 1
            for item in result.source_support or ():  # source support's claims (when asked for)
                self.judged += 1
            if result.has_source:
                for statement in result.statements:
                    self.citations["statements"] += 1
                    self.citations["uncited_statements"] += not statement.cited
                    self.citations["inherited_statements"] += bool(statement.inherited)
                    self.citations["statements_with_invalid_ids"] += bool(statement.invalid)
                    self.citations["invalid_ids"] += len(statement.invalid)
            self.tasks.add(result.task)
            self.ids.append(result.id)
        if self.keep_results:
            self.results.extend(results)
        elif self.keep_support:
            for result in results:
                verdicts = result.source_support
                if verdicts is not None:  # the evidence's text stays in the results file only
                    verdicts = [dataclasses.replace(v, evidence=v.evidence[:1] and [{}], raw=None) for v in verdicts]
                self.support_rows.append(SimpleNamespace(task=result.task, source_support=verdicts))

    def support_results(self) -> list:
        """What source support's report reduces: every result when they are kept, else the
        light rows kept for it."""
        return self.results if self.keep_results else self.support_rows

    # ---- what the report and the bootstrap read --------------------------------------------
    def scores_and_counts(self) -> tuple[dict, dict]:
        """``(scores, counts)`` as :func:`doclens.core.metrics.aggregate` gives them."""
        return self.total.result()

    def section_scores(self) -> dict:
        """Scores per note section over the ``note_generation`` instances (``{}`` without any)."""
        if not self.notes:
            return {}
        return {section: running.result()[0] for section, running in self.sections.items()}

    def instance_counts(self) -> list[dict]:
        """Per-instance ``{metric: (hits, items)}`` in input order, as
        :meth:`InstanceResult.counts` gives them: what :mod:`doclens.stats.bootstrap` takes."""
        from doclens.io.results_files import counts_from_document

        return counts_from_document(self.counts_document())[1]

    def counts_document(self) -> dict:
        """The compact, JSON-ready per-instance counts a summary file holds:
        ``{"ids": [...], "<metric>": {"hits": [...], "items": [...]}}`` (``null`` where the
        metric does not apply to the instance)."""
        document: dict = {"ids": list(self.ids)}
        columns = list(zip(METRICS, self.columns))
        if self.keep_support:  # source support's rates get intervals from a summary too
            columns += list(self.support_columns.items())
        for metric, (hits, items) in columns:
            document[metric] = {"hits": [None if n < 0 else h for h, n in zip(hits, items)],
                                "items": [None if n < 0 else n for n in items]}
        return document
