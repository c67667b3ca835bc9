"""What the rules of ``clinical-rules`` return: :class:`Finding` (one thing the premise does not
support, typed by its kind) and :class:`Assessment` (everything read of one pair)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from doclens.core.types import TextEnum


class FindingKind(TextEnum):
    """What a :class:`Finding` is about. Its value is the name written before the kinds were typed
    (``FindingKind.NUMBER == "number"``), so the kinds compare and hash as those strings.

    ``missing``: content words the note does not use; ``drug``: a drug it does not name; ``polar``:
    a polar word or qualifier it does not say; ``qualifier``: another of the same scale it says
    (trace / severe); ``opposite``: its prefixed opposite; ``substitution``: a related word, no
    synonym, where the claim's word would stand ("knee swelling" for "knee pain"; a conflict only when
    the word names a thing, v7); ``assertion``: the word with another status (negated, a relative's
    …; a conflict only where the note speaks of the claim's concept, v7); ``number`` / ``side``: a number or side
    not found or another one found; ``together``: numbers and sides no one sentence holds together;
    ``empty``: a claim with nothing to check. v6's near misses, each stated otherwise where the note
    speaks of the claim's concept (:func:`~doclens.evaluators.rules.near_misses.near_miss_problems`):
    ``site`` another body site (or, not conflicting, a site the note never names), ``direction`` the
    opposite direction of change or state, ``person`` the fact said of someone else, ``dose`` /
    ``frequency`` another dose or daily frequency of the same drug. v8: ``denial``, a finding the claim
    denies that the note gives and never denies (a contradiction where the note's sentence holds the
    whole denied item). v11: ``addition``, a reason, purpose or basis, or "other" things, that the
    claim adds and the note never gives (:mod:`~doclens.evaluators.rules.additions`; never a
    contradiction, but it decides). v12: ``concept``, the claim's head clinical concept (a symptom,
    sign, diagnosis, test or procedure) that the note never names, nor an equivalent
    (:mod:`~doclens.evaluators.rules.concepts`; an absence that decides)."""

    MISSING = "missing"
    CONCEPT = "concept"
    DRUG = "drug"
    POLAR = "polar"
    QUALIFIER = "qualifier"
    OPPOSITE = "opposite"
    SUBSTITUTION = "substitution"
    ASSERTION = "assertion"
    NUMBER = "number"
    SIDE = "side"
    TOGETHER = "together"
    EMPTY = "empty"
    SITE = "site"
    DIRECTION = "direction"
    PERSON = "person"
    DOSE = "dose"
    FREQUENCY = "frequency"
    DENIAL = "denial"
    ADDITION = "addition"


#: The kinds' values, in :class:`FindingKind`'s order.
FINDING_KINDS = tuple(kind.value for kind in FindingKind)

#: How a finding says that the note states something else: "note says X, claim says Y", "note gives
#: …", "note compares …", or a status in brackets ("(negated)"). Only a contradiction
#: (``conflict=True``) may be phrased so (:class:`Finding` refuses any other), and every
#: contradiction decides "not supported" (:func:`decides`): so a supported verdict's explanation
#: never names a contradiction (issue 46's invariant; ``benchmarks/verdict_audit.py`` audits it).
CONTRADICTION_PHRASING = re.compile(
    r"\bnote (?:says|gives|compares)\b|\bclaim says\b|\((?:negated|about a family member|hypothetical|only "
    r"planned|only possible|as history|affirmed)\)")


@dataclass(frozen=True)
class Finding:
    """One thing the premise does not support, said in the premise's words. ``kind``: a
    :class:`FindingKind` (its value is read as one too); ``conflict`` is true when the premise states
    something else (a side, a number, an opposite, another assertion status), false when it only
    does not state the claim's."""

    kind: FindingKind
    text: str
    conflict: bool = False

    def __post_init__(self) -> None:
        try:  # decision.DECISIVE matches on kinds: a typo would never decide
            kind = FindingKind(self.kind)
        except ValueError:
            raise ValueError(f"unknown finding kind {self.kind!r}") from None
        object.__setattr__(self, "kind", kind)
        if not self.conflict and CONTRADICTION_PHRASING.search(self.text):
            # a finding that only weighs must not read as a contradiction (it would be printed beside a
            # supported verdict): say what is missing, or make it a contradiction, which decides
            raise ValueError(f"a {kind.value} finding phrased as a contradiction must be one (conflict=True): "
                             f"{self.text!r}")

    def to_json(self) -> dict:
        """``{"kind", "contradiction"}``: what a verdict's ``findings`` list holds (the text is in its
        explanation)."""
        return {"kind": self.kind.value, "contradiction": self.conflict}


@dataclass
class Assessment:
    """Everything :meth:`ClinicalRulesJudge.assess` read of one (premise, claim) pair: the rules'
    findings, the words forgiven as rewording, the closest premise sentence, and the features the
    decision model reads (:mod:`doclens.evaluators.rules.decision`)."""

    findings: list[Finding]
    forgiven: list[str]  # v12: each forgiven word as the verdict says it ('heart forgiven as paraphrase of "…"')
    closest: str | None
    features: dict[str, float]
    #: the premise sentences that hold the claim's words (the aligned one first): a supported claim's evidence
    evidence: tuple[str, ...] = ()


def short(text: str, limit: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
