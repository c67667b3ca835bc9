"""From prepared instances to judge requests, and from the judge's answers back to verdicts.

The scorer sends every request of a chunk in one batch; ``slots`` say which instance (and which
direction and section, or which statement) each answer belongs to.
"""

from __future__ import annotations

import dataclasses
import functools
import re

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
    Placement,
)
from doclens.evaluators.base import CitationRequest, ClaimRequest
from doclens.families import CountingRule, instance_scores
from doclens.parsing.sections import segments
from doclens.parsing.statements import parse_citations, split_sentences, strip_citations
from doclens.scoring.run import Work

__all__ = ["EMPTY_PREMISE", "NO_CITATION", "INVALID_IDS", "EXTRACTION_FAILED", "claim_requests",
           "located_section", "own_section_requests", "own_section_lookup", "citation_requests", "instance_result",
           "mark_for_review", "SECTION_FALLBACKS", "PREMISE_SCOPES"]

#: the explanation's opening for a claim the note states in another section than its own (by its evidence)
OTHER_SECTION_NOTE = "[stated in another section of the note]"


def _directions(work: Work):
    """``(direction, claims by section, premise text, field)``: reference claims are judged
    against the prediction (recall), prediction claims against the reference (precision)."""
    return ((Direction.RECALL, work.ref_claims, strip_citations(work.instance.prediction), "reference_claims"),
            (Direction.PRECISION, work.pred_claims, work.instance.reference, "prediction_claims"))


def claim_requests(works: list[Work], section_fallback: str = "note",
                   premise_scope: str = "note") -> tuple[list[ClaimRequest], list[tuple]]:
    """One request per (instance, direction, section) with claims and a non-empty premise. With
    ``premise_scope="note"`` (the default) every claim is judged against the whole premise note;
    with ``"section"`` against its own section, and with ``section_fallback="note"`` a section the
    premise note lacks is replaced by the whole note. Either way a claim of a section the premise
    lacks is recorded in ``work.section_fallbacks`` (its placement is ``whole_note``)."""
    requests, slots = [], []
    for i, work in enumerate(works):
        for direction, claims_by_section, premise_text, _ in _directions(work):
            premises = segments(work.task, premise_text)
            for section, claims in claims_by_section.items():
                premise = premise_text if section is None or premise_scope == "note" else premises[section]
                lacking = claims and section is not None and not premises[section].strip()
                if lacking and (premise_scope == "note" or section_fallback == "note") and premise_text.strip():
                    premise = premise_text
                    work.section_fallbacks.add((direction, section))
                if claims and premise.strip():
                    requests.append(ClaimRequest(premise.strip(), claims, work.task, direction, section))
                    slots.append((i, direction, section))
    return requests, slots


#: Words that locate nothing: a claim's or an evidence sentence's other words find its section (:func:`located_section`).
_LOCATING_STOP = frozenset("""a an the and or of to in on at for with is are was were be been has have had he she his
her they their it its this that no not patient""".split())


@functools.lru_cache(maxsize=4096)
def _words(text: str) -> frozenset[str]:
    """The words placement compares (kept per text: each claim reads every section of its note
    again; issue 49)."""
    return frozenset(w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _LOCATING_STOP)


@functools.lru_cache(maxsize=4096)
def _flat(text: str) -> str:
    """``text`` in lower case, its whitespace runs one space (kept per text, as :func:`_words`)."""
    return " ".join(text.lower().split())


def located_section(sections: dict, evidence: list[str] | None, claim: str) -> str | None:
    """The note section a supported claim was found in (issue 46: placement from evidence): the
    section holding the judge's first evidence sentence (``ClaimJudgement.evidence``), read as
    written; without evidence (a judge that gives none), or where the sentence is not found verbatim,
    the section sharing the most words with it (or with the claim). ``None``: no section shares any."""
    needle = _flat((evidence or [claim])[0])
    for section, text in sections.items():
        if section is not None and needle and needle in _flat(text):
            return section
    words = _words(needle)
    best = max(((len(words & _words(text)), section) for section, text in sections.items() if section is not None),
               default=(0, None), key=lambda pair: pair[0])
    return best[1] if best[0] else None


def own_section_requests(works: list[Work], claim_slots: list[tuple], claim_answers: list[list[ClaimJudgement]]
                         ) -> tuple[list[ClaimRequest], list[tuple], dict]:
    """``premise_scope="note"``'s check of placement: the supported note claims whose evidence lies
    outside their own section (:func:`located_section`) and whose own section holds no sentence as
    close to them (:func:`_own_section_sentence`), asked again against that section alone. A claim its
    own section also supports is stated there (issue 46: "stated in another section" only when the
    sentence that supports it lies outside the claim's section, and no sentence of its own section
    does). Each slot is ``(i, direction, section, positions)``; ``held``: ``(i, direction, section)``
    → ``{position: [sentence]}`` for the claims found outside whose own section holds them as closely
    (not asked: placed in their own section, that sentence their evidence)."""
    requests, slots, held = [], [], {}
    sections_of: dict[tuple[str, str], dict] = {}  # a premise's sections, cut once for all its slots
    for (i, direction, section), answers in zip(claim_slots, claim_answers):
        work = works[i]
        if section is None or (direction, section) in work.section_fallbacks:
            continue
        claims, premise = {d: (c[section], p) for d, c, p, _ in _directions(work)}[direction]
        sections = sections_of.get((work.task, premise))
        if sections is None:
            sections = sections_of[(work.task, premise)] = segments(work.task, premise)
        own = sections.get(section, "")
        found = [k for k, answer in enumerate(answers) if answer.entailed and answer.status == STATUS_OK
                 and located_section(sections, answer.evidence, claims[k]) not in (None, section)]
        close = {k: _own_section_sentence(own, answers[k].evidence, claims[k]) for k in found}
        held[(i, direction, section)] = {k: [sentence] for k, sentence in close.items() if sentence is not None}
        positions = tuple(k for k in found if k not in held[(i, direction, section)])
        if positions and own.strip():
            requests.append(ClaimRequest(own.strip(), [claims[k] for k in positions], work.task, direction, section))
            slots.append((i, direction, section, positions))
    return requests, slots, held


def _own_section_sentence(own: str, evidence: list[str] | None, claim: str) -> str | None:
    """The sentence of the claim's own section sharing the most of the claim's words, when it shares
    as many as the evidence found elsewhere (and some): the fact is then stated in its own section
    too, whatever sentence the judge aligned it with ("encourage walking" in the plan for a plan's
    "walking is encouraged", however the judge aligned it with the history); ``None`` otherwise."""
    words = _words(claim)
    if not words:
        return None
    elsewhere = len(words & _words((evidence or [claim])[0]))
    here, sentence = max(((len(words & _words(s)), s) for s in split_sentences(own)), default=(0, None),
                         key=lambda pair: pair[0])
    return sentence if here > 0 and here >= elsewhere else None


def own_section_lookup(slots: list[tuple], answers: list[list[ClaimJudgement]], held: dict) -> dict:
    """``(i, direction, section)`` → ``{position: its evidence in its own section, or None}``: the
    claims :func:`own_section_requests` held, and the answers of those it asked (an answer that
    supports the claim gives its own evidence, ``[]`` from a judge that gives none; one that does
    not, ``None``: the claim is stated only in another section)."""
    lookup = {key: dict(found) for key, found in held.items()}
    for (i, direction, section, positions), found in zip(slots, answers):
        lookup.setdefault((i, direction, section), {}).update(
            {k: (list(a.evidence or []) if a.entailed else None) for k, a in zip(positions, found)})
    return lookup


#: Sections that report what is or was found (history, examination, results), not what is planned.
_STATE_SECTIONS = frozenset({"subjective", "objective_exam", "objective_results"})
#: The section that plans.
_PLAN_SECTION = "assessment_and_plan"
#: What makes a plan sentence propose something new: advice, a trial, a new prescription or order, a
#: referral, a follow-up ("recommended she try Alvesco", "prescribes motrin", "would like to get a lipid
#: panel", "to follow up … to see if he is ready to return to playing soccer"). Not counselling or
#: instructions: they are about a problem the patient has.
_PROPOSES = re.compile(r"\b(?:recommend\w*|advis\w*|encourag\w*|prescrib\w*|start\w*|initiat\w*|try|trial|"
                       r"order\w*|would like|refer\w*|schedul\w*|follow[ -]?up|return to|consider\w*)\b",
                       re.IGNORECASE)
#: Where what is proposed ends and why begins ("refer her to psychiatry for her depression").
_REASON = re.compile(r"\b(?:for|because|due to|given|since|secondary to|regarding|about)\b|[;:]", re.IGNORECASE)
#: What says the planned thing already goes on ("prescribed a refill of her albuterol", "will continue
#: Celebrex"): such a plan sentence states the present too.
_GOES_ON = re.compile(r"\b(?:continu\w*|refill\w*|renew\w*|still|currently|current|already|remains?|"
                      r"(?:has|have) been)\b", re.IGNORECASE)
#: A claim that itself plans, advises, agrees or waits ("she agreed to the recommended plan", "as
#: needed", "labs are pending").
_CLAIM_PLANS = re.compile(r"\b(?:will|should|plan\w*|recommend\w*|advis\w*|encourag\w*|instruct\w*|"
                          r"prescrib\w*|start\w*|continu\w*|try|order\w*|refer\w*|schedul\w*|follow[ -]?up|"
                          r"return|consider\w*|discuss\w*|agree\w*|as needed|prn|can|may|need\w*|want\w*|"
                          r"goal|resume|refill\w*|pending|awaiting|await\w*)\b", re.IGNORECASE)
#: the explanation of a claim that a plan elsewhere was the only evidence for
PLAN_ONLY_NOTE = "not supported: the note states it only as a plan in another section"


def _proposal(sentence: str, claim: str) -> str | None:
    """The word by which ``sentence`` proposes what ``claim`` says, when it proposes something new
    (:data:`_PROPOSES`, not :data:`_GOES_ON`) and names none of the claim's words outside what it
    proposes: before the proposing word, or in the reason after it ("Depression: referral to
    psychiatry" states the depression; "refer her to psychiatry for her depression" too)."""
    proposes = _PROPOSES.search(sentence)
    if proposes is None or _GOES_ON.search(sentence):
        return None
    after = sentence[proposes.end():]
    reason = _REASON.search(after)
    outside = sentence[:proposes.start()] + " " + (after[reason.start():] if reason else "")
    return None if _words(claim) & _words(outside) else proposes.group(0)


def _only_planned(judgement: ClaimJudgement, claim: str, section, premise_sections: dict | None) -> ClaimJudgement:
    """``judgement``, or, for a supported claim of a history, exam or results section whose every
    evidence sentence is a plan sentence of the assessment and plan that only proposes what the claim
    says (:func:`_proposal`), "not supported": the plan proposes it, the claim reports it as found or
    ongoing ("She has been using a heating pad." in the history, where only the plan "recommended she try
    a heating pad"; issue 46: a claim that appears only in a plan sentence elsewhere is no result). A claim
    that itself plans or waits (:data:`_CLAIM_PLANS`) is kept. The judge's probability (that the claim
    is supported) is kept, so the overturned verdict's confidence is low and ``--review-below`` puts it
    in the review queue."""
    evidence = judgement.evidence
    if (premise_sections is None or not judgement.entailed or section not in _STATE_SECTIONS or not evidence
            or _CLAIM_PLANS.search(claim)):
        return judgement
    proposed = [_proposal(sentence, claim) for sentence in evidence
                if located_section(premise_sections, [sentence], claim) == _PLAN_SECTION]
    if len(proposed) < len(evidence) or None in proposed:
        return judgement
    return dataclasses.replace(judgement, entailed=False, evidence=None,
                               explanation=f"{PLAN_ONLY_NOTE} (\"{proposed[0]}\"), the claim states it as found "
                                           f"({section}); the judge said: {judgement.explanation}")


def _placed(judgement: ClaimJudgement, claim: str, section, fallback: bool,
            premise_sections: dict | None, own: bool = False) -> tuple[Placement | None, str]:
    """A note claim's placement and explanation: where the premise note states an entailed claim
    (its own section, another — by the evidence, :func:`located_section`, unless its own section
    supports it too: ``own`` —, or the whole note when the note lacks the claim's section);
    ``premise_sections``: the note's sections when the claim was judged against the whole note,
    ``None`` under the paper's per-section premise."""
    explanation = judgement.explanation
    if fallback:
        explanation = f"[the note has no {section} section: judged against the whole note] {explanation or ''}"
    if not judgement.entailed or section is None:
        return None, explanation
    if fallback:
        return PLACEMENT_WHOLE_NOTE, explanation
    if premise_sections is not None and not own:
        found = located_section(premise_sections, judgement.evidence, claim)
        if found is not None and found != section:
            return PLACEMENT_OTHER_SECTION, f"{OTHER_SECTION_NOTE} {explanation or ''}"
    return PLACEMENT_OWN_SECTION, explanation


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


def _claim_verdicts(i: int, work: Work, claim_lookup: dict, premise_scope: str, result: InstanceResult,
                    own_lookup: dict) -> None:
    targets = {"reference_claims": result.reference_claims, "prediction_claims": result.prediction_claims}
    for direction, claims_by_section, premise_text, field_name in _directions(work):
        target = targets[field_name]
        premise_sections = segments(work.task, premise_text) if premise_scope == "note" else None
        for section, claims in claims_by_section.items():
            answers = claim_lookup.get((i, direction, section))
            own = own_lookup.get((i, direction, section), {})
            fallback = (direction, section) in work.section_fallbacks
            empty = EMPTY_PREMISE if section is None else f"empty premise: the note has no {section} section"
            for k, claim in enumerate(claims):
                judgement = answers[k] if answers else ClaimJudgement(entailed=False, explanation=empty,
                                                                      reason=REASON_EMPTY_PREMISE)
                own_evidence = own.get(k)
                if own_evidence is None and not fallback:
                    judgement = _only_planned(judgement, claim, section, premise_sections)
                placement, explanation = _placed(judgement, claim, section, fallback, premise_sections,
                                                 own_evidence is not None)
                evidence = own_evidence if own_evidence and placement == PLACEMENT_OWN_SECTION else judgement.evidence
                target.append(ClaimVerdict(text=claim, entailed=judgement.entailed, explanation=explanation,
                                           status=judgement.status, section=section, raw=judgement.raw,
                                           reason=judgement.reason, placement=placement,
                                           probability=judgement.probability, evidence=evidence,
                                           findings=judgement.findings))
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
                    rule: CountingRule, families, premise_scope: str = "note", own_lookup: dict | None = None
                    ) -> InstanceResult:
    """The verdicts of instance ``i`` of the chunk, with its per-instance scores over ``families``
    (those that judge in this step: claims and citations; source support adds its own after).
    ``premise_scope``: what the claims were judged against (placement reads it, :func:`_placed`);
    ``own_lookup``: :func:`own_section_lookup` of the placement check."""
    result = InstanceResult(id=work.instance.id, task=work.task, has_source=work.statements is not None)
    _claim_verdicts(i, work, claim_lookup, premise_scope, result, own_lookup or {})
    _citation_verdicts(i, work, citation_lookup, result)
    result.scores = instance_scores(result, rule, families)
    return result


def mark_for_review(results: list[InstanceResult], below: float | None, run) -> None:
    """The review queue (``review_below``, issue 46): each judged claim verdict is marked ``review``
    when its confidence (:attr:`ClaimVerdict.confidence`) is under ``below``; counted in ``run.review``:
    ``claims`` marked, ``rated`` (with a probability), ``unrated`` (a judge that gives none: never marked).
    ``below`` ``None``: no queue, nothing marked."""
    if below is None:
        return
    for result in results:
        for verdict in result.reference_claims + result.prediction_claims:
            if verdict.status != STATUS_OK or not verdict.judged:
                continue  # no verdict, or one no judge gave (an empty premise): nothing to review
            confidence = verdict.confidence
            what = "unrated" if confidence is None else "rated"
            run.review[what] = run.review.get(what, 0) + 1
            if confidence is not None and confidence < below:
                verdict.review = True
                run.review["claims"] = run.review.get("claims", 0) + 1
