"""What a metric family is (``docs/design.md`` §1, "Metric families").

A family is sacreBLEU's ``Metric`` for this package: it names its metrics, asks the judge what it
counts (its judging step, called by the scorer; the claim and citation families count the
scorer's own claim and citation pass), counts ``(hits, items)`` for each metric from one
:class:`doclens.core.types.InstanceResult`, says when it does not apply to an instance, and
declares its signature fields, its report block and its ``Report.to_rows`` columns. Everything
else — the scorer, Ray, the running reduction (streamed or in memory), per-section scores,
bootstrap intervals, the scores and results files, the text and HTML tables, ``Report.to_rows``,
the ``evaluate`` module and the reward — iterates over the registered families
(:data:`doclens.families.FAMILIES`, :func:`doclens.families.register`) and reads only these
declarations. A new family is one module (``tests/families/test_toy_family.py`` is one).
"""

from __future__ import annotations

import argparse
import importlib
from dataclasses import dataclass
from typing import Any

from doclens.core.errors import ConfigurationError
from doclens.core.metrics import ON_UNPARSED, counting_rule, ratio
from doclens.core.settings import UNCITED_OUTPUTS, ScoringSettings  # the vocabulary lives with the settings
from doclens.core.types import TextEnum


class Applicability(TextEnum):
    """:meth:`MetricFamily.applicability`'s answers: the family ``applies``; the instance is
    ``skipped`` (it lacks what the family reads: no source), or ``not_applicable`` (the family's own
    rule says it does not apply, as the citation family's for an output citing nothing): counted
    under that name in the report's ``counts``."""

    APPLIES = "applies"
    SKIPPED = "skipped"
    NOT_APPLICABLE = "not_applicable"


APPLIES = Applicability.APPLIES
SKIPPED = Applicability.SKIPPED
NOT_APPLICABLE = Applicability.NOT_APPLICABLE


class UncitedOutputs(TextEnum):
    """``uncited_outputs``: how the citation family counts an output in which no statement cites
    anything: ``not-applicable`` (its citation metrics do not apply: :data:`NOT_APPLICABLE`, the
    count's name, spelled with an underscore as every count is) or ``strict`` (the paper's
    reading: each of its statements scores 0). The option's spelling is the one files record
    (``config.uncited_outputs``)."""

    NOT_APPLICABLE = "not-applicable"
    STRICT = "strict"


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


@dataclass(frozen=True)
class FamilyContext:
    """What a family's judging step, signature fields, report block and warnings read of a run
    (never the scorer itself): the run's ``settings``, its ``evaluator`` (the judge, or on Ray
    the judge as the workers reported it) and ``extractor``, and the family's own ``options``
    (an instance of its :meth:`MetricFamily.options_type`; ``None`` for a family without)."""

    settings: ScoringSettings
    evaluator: Any
    extractor: Any = None
    options: Any = None


class MetricFamily:
    """The base of every metric family; a subclass sets the class attributes and :meth:`count`,
    and, when it asks the judge something of its own, :meth:`judge` (see ``docs/design.md`` §1,
    "Metric families", for the whole protocol).

    ``name``: the family's name (also the key of its items in
    :attr:`~doclens.core.types.InstanceResult.family_items`, in a result's JSON and of its block
    in a report); ``selector``: the ``metrics=`` name that turns it on (the claim and citation
    families are both ``"doclens"``); ``metrics``: its metric names, in table order;
    ``item_fields``: metric → the :class:`~doclens.core.types.InstanceResult` field (or the
    family's own items, by its ``name``) holding the items it counts (whose ``unparsed`` and
    ``failed`` statuses the report counts per metric); ``none_when_absent``: an instance's
    ``scores`` name every metric of the family, ``None`` where it does not apply (else only the
    metrics counted); ``can_be_not_applicable``: its reduction counts ``not_applicable``
    instances, ``not_applicable_reason`` says why.

    The judging step: a family that defines :meth:`judge` (:attr:`judges_itself`) asks the
    judge what it counts: the scorer calls it once per chunk, and its items are kept in
    ``InstanceResult.family_items[name]`` (each item has ``to_dict``; :meth:`item_from_dict`
    reads one back). A family without one counts the verdicts of the scorer's claim and citation
    pass (:mod:`doclens.scoring.verdicts`: one batch per chunk, the premise-scope second pass,
    the progress bar's per-instance steps): the claim and citation families. ``reads_judge``:
    names of judge attributes (or methods without arguments)
    that :meth:`signature_fields` and :meth:`report_block` read; an engine that scores elsewhere
    (Ray) reports their values. ``reads_plain_source``: the family reads a source that has no
    numbered units (a long text), which is then no input error.
    """

    name: str = ""
    selector: str = ""
    metrics: tuple[str, ...] = ()
    item_fields: dict[str, str] = {}
    none_when_absent: bool = True
    can_be_not_applicable: bool = False
    #: why an instance is ``not_applicable`` (the summary's ``n/a:`` line)
    not_applicable_reason: str = ""
    #: its scores are on each instance's score line of the HTML report
    on_instance_line: bool = True
    #: the macro of ``views/templates/family_views.html`` that draws its report block on the HTML
    #: report (called with the family's name and block; the default lists the block's counters)
    block_view: str = "family_block"
    #: the macro of that template that lists its items under each instance (called with the items
    #: and the instance's position); ``None``: not listed
    items_view: str | None = None
    reads_judge: tuple[str, ...] = ()
    reads_plain_source: bool = False
    #: metrics (and derived scores) for which a *lower* value is better; every other one ranks
    #: higher-is-better (:meth:`higher_is_better`: ``--rank-by``, the leaderboard, the plots)
    lower_is_better: frozenset[str] = frozenset()
    #: ``"module:Class"`` of the family's own settings (its options: ``DocLens(judge, <name>=…)``,
    #: its command-line options), named by path because a family sits below the judges and the
    #: scoring steps (docs/design.md §6); ``""``: the family has none
    options_path: str = ""

    # ---- what it declares ------------------------------------------------------------------------
    def higher_is_better(self, statistic: str) -> bool:
        """Whether a larger value of ``statistic`` (one of its metrics or derived scores, pooled or
        ``_macro``) is better."""
        return statistic.removesuffix("_macro") not in self.lower_is_better

    def statistics(self) -> tuple[str, ...]:
        """Every statistic a leaderboard may rank this family by: each metric and derived score,
        pooled and ``_macro``."""
        names = (*self.metrics, *self.derived_scores({}))
        return (*names, *(f"{name}_macro" for name in names))

    def options_type(self) -> type | None:
        """The class of the family's own settings (:attr:`options_path`), ``None`` without."""
        if not self.options_path:
            return None
        module, _, name = self.options_path.partition(":")
        return getattr(importlib.import_module(module), name)

    def default_options(self) -> Any:
        """The family's settings when none were given (the class's defaults)."""
        kind = self.options_type()
        return None if kind is None else kind()

    def check_options(self, options: Any) -> Any:
        """``options`` as given to ``DocLens(judge, <name>=options)``, checked against
        :meth:`options_type`."""
        kind = self.options_type()
        if kind is None:
            raise ConfigurationError(f"the metric family {self.name!r} takes no options")
        if not isinstance(options, kind):
            raise ConfigurationError(f"{self.name}= must be a {kind.__module__}.{kind.__name__}, "
                                     f"got {type(options).__name__}")
        return options

    def add_cli_options(self, parser: argparse.ArgumentParser) -> None:
        """Add the family's command-line options to ``doclens score`` (its settings class's
        ``add_cli_options(group)``, in an option group of its own)."""
        kind = self.options_type()
        if kind is not None and hasattr(kind, "add_cli_options"):
            kind.add_cli_options(parser.add_argument_group(
                f"{self.name.replace('_', ' ')} (--metrics doclens,{self.selector})"))

    def options_from_cli(self, args: argparse.Namespace, settings: ScoringSettings) -> Any:
        """The family's settings from ``doclens score``'s arguments (``None`` where the family is
        off). Its options given while it is off are a usage error, never silently ignored."""
        kind: Any = self.options_type()
        if kind is None or not hasattr(kind, "from_cli"):
            return None
        if self.selector not in settings.metrics:
            given = kind.cli_given(args)
            if given:
                raise ConfigurationError(f"{', '.join(given)} only apply with --metrics doclens,{self.selector}")
            return None
        return kind.from_cli(args)

    # ---- counting -----------------------------------------------------------------------------
    def applicability(self, result, rule: CountingRule) -> Applicability:
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

    def derived_scores(self, scores: dict) -> dict:
        """Scores derived from this family's metrics (claim F1), ``None`` where they have no
        value: shown after its metrics in ``Report.to_rows``, the ``evaluate`` module's
        instance scores and a reward's components."""
        return {}

    def reward_components(self, scores: dict) -> dict:
        """The per-instance values a training reward may be made of besides this family's metrics
        (:mod:`doclens.rewards.values`): its derived scores, unless the family adds more."""
        return self.derived_scores(scores)

    def tally(self, result) -> dict[str, int]:
        """Counters this family's report block adds up over the run, one instance at a time
        (what a family reports beyond its metrics, kept as running sums, never as rows)."""
        return {}

    # ---- its judging step ------------------------------------------------------------------------
    @property
    def judges_itself(self) -> bool:
        """Whether the family has a judging step of its own (defines :meth:`judge`)."""
        return type(self).judge is not MetricFamily.judge

    def judge(self, works: list, context: FamilyContext) -> dict[int, list]:
        """``{position in works: items}`` for one chunk: what the family asks ``context.evaluator``
        (``works``: :class:`doclens.scoring.run.Work`, the chunk's instances prepared, claims
        extracted). Instances absent from the answer have no items (``None``)."""
        raise NotImplementedError(f"the metric family {self.name!r} is not judged by the scorer and has no judge()")

    def items(self, result) -> list | None:
        """The family's own items of ``result`` (``None``: not judged for it)."""
        return result.family_items.get(self.name)

    def item_from_dict(self, data: dict):
        """One of the family's items from its ``to_dict`` (results files, Ray)."""
        raise NotImplementedError(f"the metric family {self.name!r} keeps no items of its own")

    # ---- what the report says of it --------------------------------------------------------------
    def add_counts(self, counts: dict, tally: dict[str, int], run) -> None:
        """Add what the family counts besides its metrics to the report's ``counts`` (in place),
        from the run's sums of :meth:`tally` and ``run`` (:class:`doclens.scoring.run.RunMeta`)."""

    def signature_fields(self, context: FamilyContext) -> list[tuple[str, str]]:
        """``(key, value)`` signature fields the family's settings add, as data (rendered once by
        :func:`doclens.scoring.signature.render_signature`)."""
        return []

    def report_block(self, tally: dict[str, int], context: FamilyContext, run) -> dict:
        """The family's block in the report (``Report.blocks[name]``, a key of the scores file;
        ``{}``: none) from the run's sums of :meth:`tally`, the run's ``context`` and ``run``
        (:class:`doclens.scoring.run.RunMeta`)."""
        return {}

    def run_warnings(self, counts: dict, block: dict, unparsed: int, failed: int, context: FamilyContext,
                     run) -> list[tuple[type, str]]:
        """``(category, message)`` warnings of the run about this family, from the report's
        ``counts``, the family's ``block``, its items without a verdict (``unparsed``,
        ``failed``; the scorer's own warning names those of the families it judges), the run's
        ``context`` and ``run``."""
        return []

    def verdict_counts(self, block: dict) -> dict[str, dict[str, int]]:
        """``{kind of item: {verdict: count}}`` the verdict plot adds for this family, from its
        report ``block`` (``{}``: nothing to add; the claim and citation verdicts are drawn from
        the report's counts)."""
        return {}

    # ---- a dry run -------------------------------------------------------------------------------
    def planning_options(self, options: Any) -> Any:
        """The family's settings in a dry run's planning scorer (``options``: the real run's);
        by default the same."""
        return options

    def plan(self, options: Any) -> tuple[dict, list[str]] | None:
        """What a dry run reports of this family once planned (``options``: those
        :meth:`planning_options` gave): ``(block, notes)``, or ``None`` (nothing to say)."""
        return None

    def row(self, result, counts: dict) -> dict:
        """The family's columns in ``Report.to_rows``: per metric its score, ``_hits`` and
        ``_items`` (``None`` where it does not apply), then its derived scores."""
        row: dict = {}
        for metric in self.metrics:
            hits, items = counts.get(metric, (None, None))
            row[metric] = result.scores.get(metric)
            row[f"{metric}_hits"] = hits
            row[f"{metric}_items"] = items
        row.update(self.derived_scores(result.scores))
        return row

    def row_columns(self) -> list[str]:
        """The names :meth:`row` gives, in order."""
        columns = [f"{metric}{suffix}" for metric in self.metrics for suffix in ("", "_hits", "_items")]
        return columns + list(self.derived_scores({}))

    def trailing_row(self, result) -> dict:
        """Columns ``Report.to_rows`` gives after every family's metrics (claims stated in
        another section)."""
        return {}

    def trailing_columns(self) -> list[str]:
        """The names :meth:`trailing_row` gives, in order."""
        return []
