"""From prepared instances to judge requests, and from the judge's answers back to verdicts.

The scorer sends every request of a chunk in one batch; ``slots`` say which instance (and which
direction and section, or which statement) each answer belongs to.
"""

from __future__ import annotations

from doclens.core.settings import PREMISE_SCOPES, SECTION_FALLBACKS  # noqa: F401  (re-exported)
from doclens.core.types import (
    EMPTY_PREMISE,
    EXTRACTION_FAILED,
    INVALID_IDS,
    NO_CITATION,
    PLACEMENT_OTHER_SECTION,
    PLACEMENT_OWN_SECTION,
    PLACEMENT_WHOLE_NOTE,
    REASON_EMPTY_PREMISE,
    REASON_INVALID_IDS,
    STATUS_FAILED,
    STATUS_OK,
    CitationJudgement,
    CitationVerdict,
    ClaimJudgement,
    ClaimVerdict,
    Direction,
    InstanceResult,
)
from doclens.evaluators.base import CitationRequest, ClaimRequest
from doclens.families import CountingRule, instance_scores
from doclens.parsing.sections import segments
from doclens.parsing.statements import parse_citations, strip_citations
from doclens.scoring.run import Work

__all__ = ["EMPTY_PREMISE", "NO_CITATION", "INVALID_IDS", "EXTRACTION_FAILED", "claim_requests",
           "whole_note_requests", "citation_requests", "instance_result", "SECTION_FALLBACKS", "PREMISE_SCOPES"]

#: the explanation's opening for a claim entailed by the whole note but not by its own section
OTHER_SECTION_NOTE = "[stated in another section of the note]"
#: ... and for one that neither its section nor the whole note entails
NOWHERE_NOTE = "[not in its section; judged against the whole note]"


def _directions(work: Work):
    """``(direction, claims by section, premise text, field)``: reference claims are judged
    against the prediction (recall), prediction claims against the reference (precision)."""
    return ((Direction.RECALL, work.ref_claims, strip_citations(work.instance.prediction), "reference_claims"),
            (Direction.PRECISION, work.pred_claims, work.instance.reference, "prediction_claims"))


def claim_requests(works: list[Work], section_fallback: str = "note") -> tuple[list[ClaimRequest], list[tuple]]:
    """One request per (instance, direction, section) with claims and a non-empty premise. With
    ``section_fallback="note"`` a section the premise note lacks is replaced by the whole note and
    recorded in ``work.section_fallbacks``."""
    requests, slots = [], []
    for i, work in enumerate(works):
        for direction, claims_by_section, premise_text, _ in _directions(work):
            premises = segments(work.task, premise_text)
            for section, claims in claims_by_section.items():
                premise = premise_text if section is None else premises[section]
                if claims and not premise.strip() and section is not None and section_fallback == "note":
                    premise = premise_text
                    work.section_fallbacks.add((direction, section))
                if claims and premise.strip():
                    requests.append(ClaimRequest(premise.strip(), claims, work.task, direction, section))
                    slots.append((i, direction, section))
    return requests, slots


def whole_note_requests(works: list[Work], claim_slots: list[tuple], claim_answers: list[list[ClaimJudgement]]
                        ) -> tuple[list[ClaimRequest], list[tuple]]:
    """``premise_scope="note"``'s second step: for each section request of :func:`claim_requests`,
    the claims its section judged *not entailed* (a readable verdict, from the judge) asked again
    against the whole premise note. Entailed claims, unparsed or failed ones, claims of a section
    the note lacks (already judged against the whole note) and claims outside note sections are
    not asked again. Each slot is ``(i, direction, section, positions)``: which claims of that
    section's list the request holds."""
    requests, slots = [], []
    for (i, direction, section), answers in zip(claim_slots, claim_answers):
        work = works[i]
        if section is None or (direction, section) in work.section_fallbacks:
            continue
        positions = tuple(k for k, answer in enumerate(answers)
                          if answer.status == STATUS_OK and answer.entailed is False and answer.reason is None)
        if not positions:
            continue
        claims, premise = {d: (c[section], p) for d, c, p, _ in _directions(work)}[direction]
        requests.append(ClaimRequest(premise.strip(), [claims[k] for k in positions], work.task, direction, section,
                                     whole_note=True))
        slots.append((i, direction, section, positions))
    return requests, slots


def whole_note_lookup(slots: list[tuple], answers: list[list[ClaimJudgement]]) -> dict:
    """``(i, direction, section)`` → ``{position: judgement against the whole note}``."""
    lookup: dict = {}
    for (i, direction, section, positions), found in zip(slots, answers):
        lookup[(i, direction, section)] = dict(zip(positions, found))
    return lookup


def _placed(judgement: ClaimJudgement, again: ClaimJudgement | None, section, fallback: bool
            ) -> tuple[ClaimJudgement, str | None, str]:
    """The judgement a note claim keeps, its placement and explanation: ``again`` is the whole
    note's answer for a claim its own section did not entail (``premise_scope="note"``)."""
    if again is not None:
        if again.entailed:
            return again, PLACEMENT_OTHER_SECTION, f"{OTHER_SECTION_NOTE} {again.explanation or ''}"
        return again, None, f"{NOWHERE_NOTE} {again.explanation or ''}"
    explanation = judgement.explanation
    if fallback:
        explanation = f"[the note has no {section} section: judged against the whole note] {explanation or ''}"
    placement = None
    if judgement.entailed and section is not None:
        placement = PLACEMENT_WHOLE_NOTE if fallback else PLACEMENT_OWN_SECTION
    return judgement, placement, explanation


def citation_requests(works: list[Work]) -> tuple[list[CitationRequest], list[tuple]]:
    """One request per statement that cites only ids the source has."""
    requests, slots = [], []
    for i, work in enumerate(works):
        for statement in work.statements or []:
            cited = statement.citations
            if cited and not statement.stray and all(c in work.units for c in cited):
                requests.append(CitationRequest(statement.text, {c: work.units[c] for c in cited}, work.task))
                slots.append((i, statement.index))
    return requests, slots


def _claim_verdicts(i: int, work: Work, claim_lookup: dict, note_lookup: dict, result: InstanceResult) -> None:
    targets = {"reference_claims": result.reference_claims, "prediction_claims": result.prediction_claims}
    for direction, claims_by_section, _, field_name in _directions(work):
        target = targets[field_name]
        for section, claims in claims_by_section.items():
            answers = claim_lookup.get((i, direction, section))
            again = note_lookup.get((i, direction, section), {})
            fallback = (direction, section) in work.section_fallbacks
            empty = EMPTY_PREMISE if section is None else f"empty premise: the note has no {section} section"
            for k, claim in enumerate(claims):
                first = answers[k] if answers else ClaimJudgement(entailed=False, explanation=empty,
                                                                  reason=REASON_EMPTY_PREMISE)
                judgement, placement, explanation = _placed(first, again.get(k), section, fallback)
                target.append(ClaimVerdict(text=claim, entailed=judgement.entailed, explanation=explanation,
                                           status=judgement.status, section=section, raw=judgement.raw,
                                           reason=judgement.reason, placement=placement))
            error = work.failed_extractions.get((field_name, section))
            if error is not None:  # the claims are unknown: one item says so, scored per on_unparsed
                target.append(ClaimVerdict(text=EXTRACTION_FAILED, entailed=None, status=STATUS_FAILED,
                                           section=section, explanation=f"claim extraction failed: {error}"))


def _citation_verdicts(i: int, work: Work, citation_lookup: dict, result: InstanceResult) -> None:
    for statement in work.statements or []:
        stray = [c for group in statement.stray for c in parse_citations(group)]
        valid = [c for c in statement.citations if c in work.units]
        invalid = [c for c in statement.citations if c not in work.units] + stray
        judgement: CitationJudgement | None = citation_lookup.get((i, statement.index))
        if judgement is None:
            judgement = (CitationJudgement.uncited() if not statement.citations and not statement.stray else
                         CitationJudgement(entailed=False, explanation=_unjudged_reason(statement, invalid, work),
                                           reason=REASON_INVALID_IDS))
        precise = [c for c in valid if judgement.precise.get(c)] if judgement.entailed else []
        result.statements.append(CitationVerdict(
            index=statement.index, text=statement.text, cited=list(statement.citations) + stray, valid=valid,
            invalid=invalid, precise=precise, entailed=judgement.entailed, section=statement.section,
            inherited=statement.inherited, status=judgement.status, explanation=judgement.explanation,
            provenance=judgement.provenance, raw=judgement.raw, reason=judgement.reason))


def _unjudged_reason(statement, invalid: list[int], work: Work) -> str:
    """Why a statement with invalid ids was not sent to the judge."""
    reasons = []
    if statement.stray:
        shown = "; ".join(repr(group) for group in statement.stray)
        reasons.append(f"bracketed number(s) that cite nothing in context (opening the sentence, or before a unit), "
                       f"not read as citations: {shown}")
    unknown = [c for c in statement.citations if c not in work.units]
    if unknown:
        reasons.append(f"the source has {work.n_units} units")
    return f"{INVALID_IDS} {invalid}: " + "; ".join(reasons)


def instance_result(i: int, work: Work, claim_lookup: dict, citation_lookup: dict,
                    rule: CountingRule, families, note_lookup: dict | None = None) -> InstanceResult:
    """The verdicts of instance ``i`` of the chunk, with its per-instance scores over ``families``
    (those that judge in this step: claims and citations; source support adds its own after).
    ``note_lookup``: the whole note's answers of :func:`whole_note_requests` (:func:`whole_note_lookup`)."""
    result = InstanceResult(id=work.instance.id, task=work.task, has_source=work.statements is not None)
    _claim_verdicts(i, work, claim_lookup, note_lookup or {}, result)
    _citation_verdicts(i, work, citation_lookup, result)
    result.scores = instance_scores(result, rule, families)
    return result
