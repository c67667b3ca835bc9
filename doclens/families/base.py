"""What a metric family is (``docs/design.md`` §1, "Metric families").

A family is sacreBLEU's ``Metric`` for this package: it names its metrics, counts
``(hits, items)`` for each from one :class:`doclens.core.types.InstanceResult`, says when it does
not apply to an instance, and declares the signature fields its settings add. Everything else —
the running reduction (streamed or in memory), per-section scores, bootstrap intervals, the
scores and results files, the text and HTML tables, the ``evaluate`` module's flat scores —
iterates over the registered families (:data:`doclens.families.FAMILIES`) and reads only these
declarations. A new family is one module (see ``docs/design.md`` for a worked example).
"""

from __future__ import annotations

from dataclasses import dataclass

from doclens.core.metrics import ON_UNPARSED, counting_rule, ratio
from doclens.core.settings import UNCITED_OUTPUTS  # the vocabulary lives with the settings

#: :meth:`MetricFamily.applicability` answers
APPLIES = "applies"
SKIPPED = "skipped"  # the instance lacks what the family reads (no source): counted as skipped
NOT_APPLICABLE = "not_applicable"  # the family's own rule says it does not apply: counted as such


@dataclass(frozen=True)
class CountingRule:
    """The settings every family's counting reads: ``on_unparsed`` (``zero`` or ``exclude``: how an
    item without a verdict counts, :mod:`doclens.core.metrics`) and ``uncited_outputs``
    (``not-applicable``: citation metrics do not apply to an output that cites nothing;
    ``strict``: the paper's reading, each of its statements scores 0)."""

    on_unparsed: str = "zero"
    uncited_outputs: str = "not-applicable"

    def __post_init__(self):
        if self.on_unparsed not in ON_UNPARSED:
            raise ValueError(f"on_unparsed must be one of {ON_UNPARSED}, got {self.on_unparsed!r}")
        if self.uncited_outputs not in UNCITED_OUTPUTS:
            raise ValueError(f"uncited_outputs must be one of {UNCITED_OUTPUTS}, got {self.uncited_outputs!r}")
        if self.on_unparsed == "raise":  # a finished run with "raise" has no unparsed verdicts
            object.__setattr__(self, "on_unparsed", "zero")

    @classmethod
    def of(cls, rule: None | str | CountingRule) -> CountingRule:
        """A rule from a rule, an ``on_unparsed`` string, or ``None`` (the defaults)."""
        if isinstance(rule, CountingRule):
            return rule
        return cls(on_unparsed=rule or "zero")

    @classmethod
    def from_config(cls, config: dict | None) -> CountingRule:
        """The rule a report was scored with (its ``config``). A report written before
        ``uncited_outputs`` existed counted uncited outputs strictly, and is read that way."""
        config = config or {}
        return cls(on_unparsed=counting_rule(config), uncited_outputs=config.get("uncited_outputs") or "strict")


class MetricFamily:
    """The base of every metric family; a subclass sets the class attributes and :meth:`count`.

    ``name``: the family's name; ``selector``: the ``metrics=`` name that turns it on (the claim
    and citation families are both ``"doclens"``); ``metrics``: its metric names, in table order;
    ``item_fields``: metric → the :class:`~doclens.core.types.InstanceResult` field holding the
    items it counts (whose ``unparsed`` and ``failed`` statuses the report counts per metric);
    ``none_when_absent``: an instance's ``scores`` name every metric of the family, ``None`` where
    it does not apply (else only the metrics counted); ``can_be_not_applicable``: its
    reduction counts ``not_applicable`` instances, ``not_applicable_reason`` says why.
    """

    name: str = ""
    selector: str = ""
    metrics: tuple[str, ...] = ()
    item_fields: dict[str, str] = {}
    none_when_absent: bool = True
    can_be_not_applicable: bool = False
    #: why an instance is ``not_applicable`` (the summary's ``n/a:`` line)
    not_applicable_reason: str = ""

    def applicability(self, result, rule: CountingRule) -> str:
        """:data:`APPLIES`, :data:`SKIPPED` or :data:`NOT_APPLICABLE` for one instance."""
        return APPLIES

    def count(self, result, rule: CountingRule, section: str | None) -> dict:
        """``{metric: (hits, items)}`` of an instance the family applies to (``section``: only the
        items of that note section)."""
        raise NotImplementedError

    def counts(self, result, rule: CountingRule, section: str | None = None) -> dict:
        """:meth:`count` where the family applies, else ``{}``."""
        return self.count(result, rule, section) if self.applicability(result, rule) == APPLIES else {}

    def instance_scores(self, counts: dict) -> dict:
        """The per-instance scores this family adds to ``InstanceResult.scores``."""
        return {m: ratio(*counts[m]) if m in counts else None for m in self.metrics
                if m in counts or self.none_when_absent}

    def tally(self, result) -> dict[str, int]:
        """Counters this family's report block adds up over the run, one instance at a time
        (what a family reports beyond its metrics, kept as running sums, never as rows)."""
        return {}

    def signature_fields(self, scorer) -> list[tuple[str, str]]:
        """``(key, value)`` signature fields the family's settings add, as data (rendered once by
        :func:`doclens.scoring.signature.render_signature`)."""
        return []
