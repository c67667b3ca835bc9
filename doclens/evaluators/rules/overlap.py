"""``overlap``: a lexical containment judge. Offline, deterministic, instant.

A premise "entails" a hypothesis when at least ``threshold`` of the hypothesis's content words
(lower-cased, stop words removed, a plural ``s`` folded) occur in the premise, and the two
agree on negation (``no``, ``not``, ``denies`` …). It cannot see paraphrase or reasoning: use it
for smoke tests, examples and pipelines checks, never for publishable scores.

Source support (3 verdicts, a demo): a claim whose content words are covered by the evidence is
``supported`` when it agrees on negation with the evidence line that covers most of it, and
``not_supported`` when it does not ("no fever" against "patient reports fever"); a claim that is
not covered is ``not_addressed``.
"""

from __future__ import annotations

import re

from doclens.core.support import NOT_ADDRESSED, NOT_SUPPORTED, SUPPORTED, SupportJudgement
from doclens.evaluators.base import ClaimRequest, Evaluator
from doclens.parsing.tokens import DECIMAL_WORD, FUNCTION_WORDS, content_tokens, fold_plural

_NEGATION = frozenset({"no", "not", "denies", "denied", "deny", "without", "negative", "never", "none", "nor"})
_IGNORED = FUNCTION_WORDS | _NEGATION


def content_words(text: str) -> set[str]:
    return set(content_tokens(text, _IGNORED, fold_plural, DECIMAL_WORD))


def is_negated(text: str) -> bool:
    return any(t in _NEGATION or t.endswith("n't") for t in re.findall(r"[a-z']+", text.lower()))


class OverlapEvaluator(Evaluator):
    name = "overlap"
    keeps_data_local = True

    def __init__(self, threshold: float = 0.8):
        super().__init__()
        if not 0 < threshold <= 1:
            raise ValueError("threshold must be in (0, 1]")
        self.threshold = threshold

    def entail_batch(self, pairs: list[tuple[str, str]]) -> list[bool]:
        premises: dict[str, set[str]] = {}  # one premise is often asked about many claims
        return [self.explain(premise, hypothesis, premises)[0] for premise, hypothesis in pairs]

    def explain(self, premise: str, claim: str, premises: dict | None = None) -> tuple[bool, str]:
        """``(entailed, explanation)``: the share of the claim's content words in the premise, the
        words it lacks, and the negation rule's reading."""
        words = content_words(claim)
        if not words:
            return False, "claim has no content word"
        premises = {} if premises is None else premises
        if premise not in premises:
            premises[premise] = content_words(premise)
        missing = sorted(words - premises[premise])
        covered = 1 - len(missing) / len(words)
        lacks = f"; note lacks: {', '.join(missing[:8])}" if missing else ""
        if covered < self.threshold:
            return False, f"{covered:.0%} of the claim's content words are in the note (needs {self.threshold:.0%}){lacks}"
        if is_negated(claim) and not is_negated(premise):
            return False, "the claim is negated and the note has no negation"
        return True, f"{covered:.0%} of the claim's content words are in the note{lacks}"

    def judge_claims_many(self, requests: list[ClaimRequest], *, on_done=None):
        """Each verdict with its explanation (which content words the note lacks)."""
        from doclens.core.types import ClaimJudgement

        premises: dict[str, set[str]] = {}
        results = []
        for n, request in enumerate(requests):
            results.append([ClaimJudgement(*self.explain(request.premise, claim, premises)) for claim in request.claims])
            self.usage.pairs += len(request.claims)
            if on_done is not None:
                on_done(n)
        return results

    support_verdicts = 3

    def judge_support_many(self, requests: list[ClaimRequest]) -> list[list[SupportJudgement]]:
        return [[self.support(request.premise, claim) for claim in request.claims] for request in requests]

    def support(self, evidence: str, claim: str) -> SupportJudgement:
        """The 3-way verdict of the module docstring for one claim against ``evidence`` (facts,
        one per line)."""
        words = content_words(claim)
        if not words:
            return SupportJudgement(NOT_ADDRESSED, "claim has no content word")
        covered = len(words & content_words(evidence)) / len(words)
        if covered < self.threshold:
            return SupportJudgement(NOT_ADDRESSED, f"{covered:.0%} of the claim's content words are in the evidence "
                                                   f"(needs {self.threshold:.0%})")
        lines = [line for line in evidence.split("\n") if line.strip()] or [evidence]
        best = max(lines, key=lambda line: len(words & content_words(line)))
        if is_negated(claim) == is_negated(best):
            return SupportJudgement(SUPPORTED, f"{covered:.0%} of the claim's content words are in the evidence; "
                                               "negation agrees with the closest line")
        return SupportJudgement(NOT_SUPPORTED, f"{covered:.0%} of the claim's content words are in the evidence, "
                                               "but the closest line " + ("is" if is_negated(best) else "is not")
                                               + " negated and the claim " + ("is" if is_negated(claim) else "is not"))

    def config(self) -> dict:
        return {**super().config(), "threshold": self.threshold}

    def signature(self) -> str:
        return f"overlap:t{self.threshold:g}"
