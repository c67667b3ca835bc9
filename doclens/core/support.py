"""Source support: is each claim of the prediction backed by the instance's own source?

Every prediction claim gets one of three verdicts against evidence taken from the source (the
whole source when it is short, else the facts retrieved for that claim):

==================  =====================================================================
``supported``       the evidence states the claim
``not_supported``   the evidence says otherwise (a contradiction)
``not_addressed``   the evidence is silent on it
==================  =====================================================================

The three metrics are shares of judged claims, per instance ``(hits, items)`` like every other
DocLens metric (``docs/design.md`` §1), pooled over the corpus with the macro mean beside it:

* ``source_supported`` = supported / claims;
* ``source_not_supported`` = not supported / claims;
* ``source_not_addressed`` = not addressed / claims.

A claim without a verdict (``unparsed`` or ``failed``) counts per ``on_unparsed``: with ``zero``
it stays in every denominator and in no numerator (so the three rates then sum to less than 1),
with ``exclude`` it leaves all three. An instance without a source is ``skipped``; one with a
source but no prediction claims is ``empty``. Nothing becomes NaN.

A judge that cannot tell a contradiction from silence (an entailment-only judge) gives only
``supported`` / ``not_addressed``; the report says which kind of judge was used
(``verdicts: 2`` or ``3``) and the card ``cards/source-support.md`` explains the difference.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from doclens.core.types import NO_VERDICT, STATUS_FAILED, STATUS_OK, STATUS_UNPARSED

__all__ = ["SUPPORTED", "NOT_SUPPORTED", "NOT_ADDRESSED", "SUPPORT_LABELS", "SUPPORT_LABEL_TEXT", "SUPPORT_METRICS",
           "SupportJudgement", "SupportVerdict", "support_counts"]

SUPPORTED = "supported"
NOT_SUPPORTED = "not_supported"
NOT_ADDRESSED = "not_addressed"
#: The three verdicts, in the order reports list them.
SUPPORT_LABELS = (SUPPORTED, NOT_SUPPORTED, NOT_ADDRESSED)
#: How the verdicts are written in prompts and replies.
SUPPORT_LABEL_TEXT = {SUPPORTED: "Supported", NOT_SUPPORTED: "Not Supported", NOT_ADDRESSED: "Not Addressed"}
#: metric → the verdict it counts
SUPPORT_METRICS = {"source_supported": SUPPORTED, "source_not_supported": NOT_SUPPORTED,
                   "source_not_addressed": NOT_ADDRESSED}


@dataclass
class SupportJudgement:
    """A judge's answer for one claim against its evidence: a verdict of :data:`SUPPORT_LABELS`
    (``None`` when unparsed or failed)."""

    verdict: str | None
    explanation: str = ""
    status: str = STATUS_OK
    raw: str | None = None

    @classmethod
    def unparsed(cls, raw: str | None, explanation: str = "reply could not be parsed") -> SupportJudgement:
        return cls(verdict=None, explanation=explanation, status=STATUS_UNPARSED, raw=raw)

    @classmethod
    def failed(cls, error: str) -> SupportJudgement:
        return cls(verdict=None, explanation=f"call failed: {error}", status=STATUS_FAILED)


@dataclass
class SupportVerdict:
    """One prediction claim in the report: its verdict, and the evidence it was judged against
    (each item a :meth:`doclens.retrieval.Hit.to_dict`: unit, fact, text, rank and every
    retrieval score). ``retrieved`` is false when the whole source was given in source order."""

    text: str
    verdict: str | None
    explanation: str = ""
    status: str = STATUS_OK
    section: str | None = None
    raw: str | None = None
    retrieved: bool = True
    evidence: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"text": self.text, "verdict": self.verdict, "explanation": self.explanation, "status": self.status,
                "section": self.section, "raw": self.raw, "retrieved": self.retrieved,
                "evidence": [dict(e) for e in self.evidence]}

    @classmethod
    def from_dict(cls, data: dict) -> SupportVerdict:
        return cls(text=data["text"], verdict=data.get("verdict"), explanation=data.get("explanation", ""),
                   status=data.get("status", STATUS_OK), section=data.get("section"), raw=data.get("raw"),
                   retrieved=data.get("retrieved", True), evidence=list(data.get("evidence") or []))


def support_counts(verdicts: Iterable[SupportVerdict] | None, on_unparsed: str = "zero",
                   section: str | None = None) -> dict:
    """``{metric: (hits, items)}`` for one instance (or one note section of it); ``{}`` when the
    metric did not apply (``verdicts is None``: no source, or source support not asked for)."""
    if verdicts is None:
        return {}
    counted = [v for v in verdicts if (section is None or v.section == section)
               and not (v.status in NO_VERDICT and on_unparsed == "exclude")]
    return {metric: (sum(v.verdict == label for v in counted), len(counted))
            for metric, label in SUPPORT_METRICS.items()}
