"""Rule 4 of ``clinical-rules``, **assertion**: each claim word's status (affirmed, negated,
possible, hypothetical, historical, planned, a relative's) is compatible with the word's status
where the premise speaks of the claim's concept most closely."""

from __future__ import annotations

import re

from doclens.evaluators.rules.findings import Finding, FindingKind, short
from doclens.evaluators.rules.sentences import Sentence, Status, Word
from doclens.evaluators.rules.words import RESULT_WORDS


def reports_result(claim: str) -> bool:
    return any(w in RESULT_WORDS for w in re.findall(r"[a-z]+", claim.lower()))


def _compatible(claim_status: Status, premise_status: Status, reports_result: bool = False) -> bool:
    """Whether a claim word's status is supported by the premise word's. ``reports_result``: the
    claim says what a test found (:func:`reports_result`), which a planned test does not support."""
    if claim_status == premise_status:
        return True
    if Status.NEGATED in (claim_status, premise_status) or Status.FAMILY in (claim_status, premise_status):
        return False
    if Status.PLANNED in (claim_status, premise_status):
        # "MRI of the lumbar spine" in a plan is the note's "will order an MRI"; "the MRI showed a
        # tear" is not
        return claim_status == Status.PLANNED or not (reports_result and claim_status in (Status.AFFIRMED, Status.HISTORICAL))
    if claim_status in (Status.POSSIBLE, Status.HYPOTHETICAL):
        return premise_status in (Status.AFFIRMED, Status.POSSIBLE, Status.HYPOTHETICAL)
    # history and the present are one fact in a note ("history of hypertension" / "has
    # hypertension"; a header or "past medical history" elsewhere in a sentence marks all of it)
    return {claim_status, premise_status} == {Status.HISTORICAL, Status.AFFIRMED}
    # claim affirmed: a possible or hypothetical premise does not assert it


def _covers(premise_word: Word, claim_stems: set[str]) -> bool:
    """Whether a negated premise word negates as much as the claim: every word of its item is the
    claim's ("no pain" says more than "no pain with dorsiflexion": the latter does not support
    "denies any pain")."""
    return premise_word.status == Status.NEGATED and premise_word.phrase <= claim_stems


def _negates(sentence: Sentence, negated: list[Word], claim_stems: set[str]) -> bool:
    """Whether ``sentence`` negates the claim's first negated word, or half its negated words, no
    more narrowly than the claim (:func:`_covers`)."""
    there = {w.stem for w in sentence.words if _covers(w, claim_stems)}
    stems = list(dict.fromkeys(w.stem for w in negated))
    return stems[0] in there or 2 * len(there.intersection(stems)) >= len(stems)


def _describe(status: Status) -> str:
    return {Status.NEGATED: "negated", Status.FAMILY: "about a family member", Status.HYPOTHETICAL: "hypothetical",
            Status.PLANNED: "only planned", Status.POSSIBLE: "only possible", Status.HISTORICAL: "as history",
            Status.AFFIRMED: "affirmed"}[status]


def assertion_problems(words: list[Word], index: dict, reports_result: bool = False) -> list[Finding]:
    """Claim words the premise gives only with an incompatible status (negated, a relative's, a
    planned test for a claim that reports its result: ``reports_result``, :func:`_compatible`).
    A negation is checked on its concept, not on every word in its scope: "no fracture on
    his knee x-ray" is the note's "x-rays did not reveal any fractures" (the knee and the x-ray
    are not negated there); it holds when one note sentence negates the first negated word, or
    half the negated words, of the claim."""
    claim_stems = {w.stem for w in words}
    if _negation_holds(words, index, claim_stems):
        words = [w for w in words if w.status != Status.NEGATED]
    conflicts: dict[tuple[str, Status, Status, bool], list[str]] = {}
    for word in words:
        occurrence = _conflicting_occurrence(word, index, claim_stems, reports_result)
        if occurrence is not None:
            premise_word, sentence, about_claim = occurrence
            conflicts.setdefault((sentence.text, premise_word.status, word.status, about_claim), []).append(word.text.lower())
    return [Finding(FindingKind.ASSERTION, f"note says \"{short(text)}\" ({_describe(premise_status)}), claim states "
                    f"{', '.join(dict.fromkeys(conflicting))} {_describe(claim_status)}", conflict=about_claim)
            for (text, premise_status, claim_status, about_claim), conflicting in conflicts.items()]


def _negation_holds(words: list[Word], index: dict, claim_stems: set[str]) -> bool:
    """Whether the claim's negation holds where the note speaks of the negated concept most closely:
    "denies numbness in his right foot" is not supported by "no numbness in the hands" when the
    note says "reports numbness … in his right foot"."""
    negated = [w for w in words if w.status == Status.NEGATED]
    if not negated:
        return False
    about = [sentence for found in map(index.get, {w.stem for w in negated}) for _, sentence in (found or [])]
    best = max((len(sentence.stems & claim_stems) for sentence in about), default=0)
    return any(_negates(sentence, negated, claim_stems) for sentence in about if len(sentence.stems & claim_stems) == best)


def _conflicting_occurrence(word: Word, index: dict, claim_stems: set[str],
                            reports_result: bool) -> tuple[Word, Sentence, bool] | None:
    """The premise occurrence whose status conflicts with ``word``'s, read where the note speaks of
    the claim's concept, and whether that sentence is about the claim (v7: only then is the other
    status a contradiction; a word the note gives only in a sentence about something else, "I do
    not expect to see anything significant on x-ray" for "pressing caused significant pain", is not
    stated as the claim states it, and the decision model weighs that); ``None`` when none
    conflicts."""
    if word.dependent:
        return None  # "no problems with the knee" says nothing of the knee's status
    if word.text.lower() in ("controlled", "control"):
        return None  # its negation is a direction ("not well controlled" = "poorly controlled"): near_misses
    found = index.get(word.stem)
    if not found:
        return None
    # the word's status where the note speaks of the claim's concept: the occurrences in
    # the sentences with the most claim keys ("reports numbness in his right foot" against
    # "denies numbness … in his right foot", whatever numbness the note affirms elsewhere)
    common = [len(sentence.stems & claim_stems) for _, sentence in found]
    best = max(common)
    closest = [(w, sentence) for (w, sentence), n in zip(found, common) if n == best]
    if word.status == Status.NEGATED:
        closest = _stated_against_negation(word, closest, claim_stems)
        if not closest:
            return None
    elif any(_compatible(word.status, w.status, reports_result) for w, _ in closest):
        return None
    about_claim = best >= min(2, len(claim_stems))
    if not about_claim and (word.status == Status.NEGATED or any(_compatible(word.status, w.status, reports_result)
                                                             for w, _ in found)):
        return None  # a negated word the note gives only about something else ("right lower quadrant")
    return (*closest[0], about_claim)


def _stated_against_negation(word: Word, closest: list[tuple[Word, Sentence]],
                             claim_stems: set[str]) -> list[tuple[Word, Sentence]]:
    """The occurrences that contradict a negated claim word. A narrower negation ("denies left knee
    pain" for "denies any pain") neither supports the claim nor contradicts it (none); a stated
    finding contradicts the claim's negation only when it is the claim's whole negated concept:
    "heart sounds are regular" says nothing of "no extra heart sounds"."""
    if any(_covers(w, claim_stems) for w, _ in closest):
        return []
    return [(w, sentence) for w, sentence in closest
            if w.status != Status.NEGATED and (word.phrase or {word.stem}) <= sentence.stems]
