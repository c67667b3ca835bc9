"""Deterministic judges for tests: their verdicts are easy to compute by hand."""

from __future__ import annotations

import re

from doclens import Evaluator
from doclens.core.types import CitationJudgement, ClaimJudgement


def tokens(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower())) - {"patient", "speaker", "doctor"}


class TokenSubsetEvaluator(Evaluator):
    """Entailed iff every token of the hypothesis occurs in the premise. Records every pair it
    is asked, so tests can count model calls."""

    name = "token-subset"

    def __init__(self):
        super().__init__()
        self.received: list[tuple[str, str]] = []

    def entail_batch(self, pairs):
        self.received.extend(pairs)
        return [bool(tokens(h)) and tokens(h) <= tokens(p) for p, h in pairs]


class ProvenanceJudge(Evaluator):
    """An LLM-style judge: overrides the high-level methods, gives explanations and provenance
    (the cited units whose tokens overlap the statement), and answers 'unparsed' for any claim
    containing the word GARBLED."""

    name = "provenance-judge"

    def judge_claims(self, premise, claims, task="general", direction="recall"):
        out = []
        for claim in claims:
            if "GARBLED" in claim:
                out.append(ClaimJudgement.unparsed(raw="%%% not json %%%"))
            else:
                ok = bool(tokens(claim)) and tokens(claim) <= tokens(premise)
                out.append(ClaimJudgement(entailed=ok, explanation="all words found" if ok else "missing words"))
        return out

    def judge_citation(self, statement, cited, task="general"):
        whole = set().union(*(tokens(t) for t in cited.values()))
        entailed = tokens(statement) <= whole
        provenance = [c for c, text in cited.items() if tokens(text) & tokens(statement)]
        return CitationJudgement(entailed=entailed, provenance=provenance,
                                 precise={c: entailed and c in provenance for c in cited})


def assert_said_another_way(judge, premise: str, claim: str, word: str) -> None:
    """A claim that says the note's fact in other words is supported with every content word found:
    ``word`` (the claim's other way of saying it) neither missing, weighed nor forgiven."""
    verdict, explanation = judge.explain(premise, claim)
    assert verdict is True, explanation
    assert "every content word" in explanation, explanation  # nothing forgiven, nothing weighed
    assert word not in explanation.split("closest:")[0] and "forgiven" not in explanation, explanation


def assert_rejected_naming(judge, premise: str, claim: str, needles: list[str]) -> None:
    """A guard of the same shape with one detail changed is not supported, its explanation naming
    each of ``needles``."""
    verdict, explanation = judge.explain(premise, claim)
    assert verdict is False, explanation
    for needle in needles:
        assert needle in explanation, explanation
