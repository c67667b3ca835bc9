"""The citation family: citation recall and citation precision (``docs/design.md`` §1).

It applies to an instance with citable source units (``has_source``; without them the metrics
are ``skipped``). An output in which no statement cites anything is, by default, **not
applicable**: its citation metrics are counted as ``not_applicable`` and left out of the
headline (never a 0.00 for a note that simply has no citations). Where an output cites
something, the paper's rule stands: each uncited statement scores 0. ``uncited_outputs="strict"``
applies the paper's rule to uncited outputs too. An output with no statement at all stays
``empty``, as before.
"""

from __future__ import annotations

from doclens.core.errors import UncitedOutputsWarning, UnreadCitationsWarning
from doclens.core.metrics import citation_precision_counts, citation_recall_counts, f1
from doclens.families.base import (
    APPLIES,
    NOT_APPLICABLE,
    SKIPPED,
    Applicability,
    CountingRule,
    FamilyContext,
    MetricFamily,
    UncitedOutputs,
)
from doclens.families.claims import _in_section

#: the statement counts of ``counts["citations"]``, in order
STATEMENT_COUNTS = ("statements", "uncited_statements", "inherited_statements", "statements_with_invalid_ids",
                    "invalid_ids")


def cites_nothing(result) -> bool:
    """Whether ``result`` has statements and none of them cites a source unit."""
    return bool(result.statements) and not any(statement.cited for statement in result.statements)


class CitationFamily(MetricFamily):
    name = "citations"
    selector = "doclens"
    metrics = ("citation_recall", "citation_precision")
    item_fields = {"citation_recall": "statements", "citation_precision": "statements"}
    can_be_not_applicable = True
    not_applicable_reason = ("whose output cites no source unit (not applicable; --uncited-outputs strict scores "
                             "each of their statements 0)")

    def applicability(self, result, rule: CountingRule) -> Applicability:
        if not result.has_source:
            return SKIPPED
        if rule.uncited_outputs == UncitedOutputs.NOT_APPLICABLE and cites_nothing(result):
            return NOT_APPLICABLE
        return APPLIES

    def count(self, result, rule: CountingRule, section: str | None) -> dict:
        statements = _in_section(result.statements, section)
        return {"citation_recall": citation_recall_counts(statements, rule.on_unparsed),
                "citation_precision": citation_precision_counts(statements, rule.on_unparsed)}

    def reward_components(self, scores: dict) -> dict:
        """Citation F1 (the harmonic mean of citation recall and precision), a reward component
        only: no report column holds it."""
        return {"citation_f1": f1(scores.get("citation_recall"), scores.get("citation_precision"))}

    def tally(self, result) -> dict[str, int]:
        """The statements of an instance with a source: uncited, inherited, with invalid ids."""
        if not result.has_source:
            return {}
        statements = result.statements
        return {"statements": len(statements), "uncited_statements": sum(not s.cited for s in statements),
                "inherited_statements": sum(bool(s.inherited) for s in statements),
                "statements_with_invalid_ids": sum(bool(s.invalid) for s in statements),
                "invalid_ids": sum(len(s.invalid) for s in statements)}

    def add_counts(self, counts: dict, tally: dict[str, int], run) -> None:
        """``counts["citations"]``: the statements of the run (:meth:`tally`) and those whose
        citations ``max_citations`` capped."""
        counts["citations"] = {**{key: tally.get(key, 0) for key in STATEMENT_COUNTS},
                               "capped_statements": run.capped_statements}

    def run_warnings(self, counts: dict, block: dict, unparsed: int, failed: int, context: FamilyContext,
                     run) -> list[tuple[type, str]]:
        """One warning per run for the instances whose output cites nothing."""
        said: list[tuple[type, str]] = []
        unread = getattr(run, "unread_citations", None) or {}
        if unread:
            example = next(iter(unread))
            said.append((UnreadCitationsWarning,
                         f"{len(unread)} instance(s) hold bracketed numbers that are no consistent citation style "
                         f"({sum(unread.values())} bracketed group(s) in all, e.g. {unread[example]} in "
                         f"{example!r}: opening a fragment, not closing a sentence, past the source's units, or in a "
                         "stray fragment): none is read as a citation, so these outputs cite nothing"))
        found = (counts.get("citation_recall") or {}).get("not_applicable", 0)
        if found:
            said.append((UncitedOutputsWarning,
                         f"{found} instance(s) cite no source unit in any statement: their citation recall and "
                         "precision are not applicable (n/a, counted as not_applicable, left out of the citation "
                         "scores); uncited_outputs='strict' (--uncited-outputs strict) scores each of their "
                         "statements 0 instead"))
        return said

    def signature_fields(self, context: FamilyContext) -> list[tuple[str, str]]:
        # cite:styled: bracketed numbers read as citations only in a consistent citation style
        # (doclens.parsing.statements.citation_style; before it, every closing group was read)
        return [("uncited-outputs", "na" if context.settings.uncited_outputs == UncitedOutputs.NOT_APPLICABLE else "strict"),
                ("cite", "styled")]


CITATIONS = CitationFamily()
