"""The state of one scoring run, kept off the :class:`doclens.DocLens` object so that one scorer
can run twice at once (two threads, or a dry run beside a real one)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from doclens.core.types import Instance, InstanceResult, Statement


@dataclass
class Run:
    """What one call of :meth:`doclens.DocLens.score` accumulates."""

    results: list[InstanceResult] = field(default_factory=list)
    #: ids read so far: an id seen twice is an input error
    seen: set[str] = field(default_factory=set)
    #: id → (prediction without citations, reference), kept only when baselines are computed
    texts: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: tasks met (the signature names them)
    tasks: set[str] = field(default_factory=set)
    #: statements whose citations max_citations cut
    capped_statements: int = 0
    #: whether any claims came from the extractor / were given in the input (the signature says which)
    used_extractor: bool = False
    used_given: bool = False
    #: source support: ids of instances whose source is a long text without numbered units (no citations)
    uncitable: list[str] = field(default_factory=list)


@dataclass
class Work:
    """What one instance needs judged; filled in stages (prepare, extract, judge)."""

    instance: Instance
    task: str
    #: section (``None``: the whole text) → claims; reference claims are judged for recall,
    #: prediction claims for precision
    ref_claims: dict[Optional[str], list[str]] = field(default_factory=dict)
    pred_claims: dict[Optional[str], list[str]] = field(default_factory=dict)
    #: ``None`` when the instance has no source (no citation metrics)
    statements: Optional[list[Statement]] = None
    #: source unit number → premise text
    units: dict[int, str] = field(default_factory=dict)
    n_units: int = 0
    #: (field, section) → why the extraction of those claims failed
    failed_extractions: dict[tuple[str, Optional[str]], str] = field(default_factory=dict)
