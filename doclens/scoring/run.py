"""The state of one scoring run, kept off the :class:`doclens.DocLens` object so that one scorer
can run twice at once (two threads, or a dry run beside a real one)."""

from __future__ import annotations

from dataclasses import dataclass, field

from doclens.core.types import Instance, Statement


@dataclass
class RunMeta:
    """What a run learns about its input besides the results, which the signature and the counts
    need: kept per chunk (a streamed output records it beside each chunk, so that ``--resume``
    and an engine scoring chunks elsewhere restore it) and merged into the run's."""

    #: tasks met (the signature names them)
    tasks: set[str] = field(default_factory=set)
    #: statements whose citations max_citations cut
    capped_statements: int = 0
    #: whether any claims came from the extractor / were given in the input (the signature says which)
    used_extractor: bool = False
    used_given: bool = False
    #: source support: ids of instances whose source is a long text without numbered units (no citations)
    uncitable: list[str] = field(default_factory=list)
    #: task="auto": how many instances it scored as each task
    auto_tasks: dict[str, int] = field(default_factory=dict)
    #: instances with no task anywhere whose reference has SOAP headers (scored as one general block)
    untasked_notes: int = 0
    #: claims judged against the whole premise note because it lacks their section, per direction
    #: (``recall`` / ``precision``; section_fallback="note", docs/design.md §4, Judging real notes)
    section_fallbacks: dict[str, int] = field(default_factory=dict)
    #: source strings without ``[0]`` numbered by the scorer (``source_units``), per way (lines, turns, sentences)
    numbered_sources: dict[str, int] = field(default_factory=dict)
    #: outputs whose bracketed numbers are no consistent citation style (not read as citations): id →
    #: bracketed groups (:func:`doclens.parsing.statements.citation_style`)
    unread_citations: dict[str, int] = field(default_factory=dict)
    #: review_below: claim verdicts marked for review, those with a probability, those without (``unrated``)
    review: dict[str, int] = field(default_factory=dict)

    def merge(self, other: RunMeta) -> None:
        self.tasks |= other.tasks
        self.capped_statements += other.capped_statements
        self.used_extractor = self.used_extractor or other.used_extractor
        self.used_given = self.used_given or other.used_given
        self.uncitable.extend(other.uncitable)
        for task, n in other.auto_tasks.items():
            self.auto_tasks[task] = self.auto_tasks.get(task, 0) + n
        self.untasked_notes += other.untasked_notes
        for direction, n in other.section_fallbacks.items():
            self.section_fallbacks[direction] = self.section_fallbacks.get(direction, 0) + n
        for how, n in other.numbered_sources.items():
            self.numbered_sources[how] = self.numbered_sources.get(how, 0) + n
        self.unread_citations.update(other.unread_citations)
        for what, n in other.review.items():
            self.review[what] = self.review.get(what, 0) + n

    def to_dict(self) -> dict:
        return {"tasks": sorted(self.tasks), "capped_statements": self.capped_statements,
                "used_extractor": self.used_extractor, "used_given": self.used_given,
                **({"uncitable": list(self.uncitable)} if self.uncitable else {}),
                **({"auto_tasks": dict(self.auto_tasks)} if self.auto_tasks else {}),
                **({"untasked_notes": self.untasked_notes} if self.untasked_notes else {}),
                **({"section_fallbacks": dict(self.section_fallbacks)} if self.section_fallbacks else {}),
                **({"numbered_sources": dict(self.numbered_sources)} if self.numbered_sources else {}),
                **({"unread_citations": dict(self.unread_citations)} if self.unread_citations else {}),
                **({"review": dict(self.review)} if self.review else {})}

    @classmethod
    def from_dict(cls, data: dict) -> RunMeta:
        return cls(tasks=set(data.get("tasks", [])), capped_statements=int(data.get("capped_statements", 0)),
                   used_extractor=bool(data.get("used_extractor")), used_given=bool(data.get("used_given")),
                   uncitable=[str(i) for i in data.get("uncitable", [])],
                   auto_tasks={str(k): int(v) for k, v in (data.get("auto_tasks") or {}).items()},
                   untasked_notes=int(data.get("untasked_notes", 0)),
                   section_fallbacks={str(k): int(v) for k, v in data.get("section_fallbacks", {}).items()},
                   numbered_sources={str(k): int(v) for k, v in data.get("numbered_sources", {}).items()},
                   unread_citations={str(k): int(v) for k, v in data.get("unread_citations", {}).items()},
                   review={str(k): int(v) for k, v in data.get("review", {}).items()})


@dataclass
class Run(RunMeta):
    """What one call of :meth:`doclens.DocLens.score` accumulates besides its results (those go
    to a :class:`doclens.scoring.aggregate.Aggregator`, chunk by chunk)."""

    #: ids read so far: an id seen twice is an input error
    seen: set[str] = field(default_factory=set)
    #: ids already scored by an earlier run (``--resume``): read, checked, not scored again
    done: set[str] = field(default_factory=set)
    #: id → (prediction without citations, reference), kept only when baselines are computed
    texts: dict[str, tuple[str, str]] = field(default_factory=dict)


@dataclass
class Work:
    """What one instance needs judged; filled in stages (prepare, extract, judge)."""

    instance: Instance
    task: str
    #: section (``None``: the whole text) → claims; reference claims are judged for recall,
    #: prediction claims for precision
    ref_claims: dict[str | None, list[str]] = field(default_factory=dict)
    pred_claims: dict[str | None, list[str]] = field(default_factory=dict)
    #: ``None`` when the instance has no source (no citation metrics)
    statements: list[Statement] | None = None
    #: source unit number → premise text
    units: dict[int, str] = field(default_factory=dict)
    n_units: int = 0
    #: (field, section) → why the extraction of those claims failed
    failed_extractions: dict[tuple[str, str | None], str] = field(default_factory=dict)
    #: (direction, section) judged against the whole premise note, which lacks that section
    section_fallbacks: set[tuple[str, str | None]] = field(default_factory=set)
