"""Reference claims extracted once per reference for a whole training run.

A training loop scores many completions against the same few references (GRPO samples several
completions per prompt, and every epoch comes back to the same prompts): extracting each
reference's claims again at every step would repeat the same extractor call. The cache keys a
reference by its task and text and extracts, per step, only the references it has not seen, in
one batched :meth:`doclens.Extractor.extract_many` call, section by section for notes — the
same segments the scorer itself would extract (:func:`doclens.parsing.sections.segments`), so
the claims, and the scores, are the ones :meth:`doclens.DocLens.score` gets by extracting.
"""

from __future__ import annotations

from doclens.core.tasks import Task
from doclens.extraction.extractors import ExtractionRequest, Extractor, FailedExtraction
from doclens.parsing.sections import segments

Claims = list | dict


class ReferenceClaimsCache:
    """``claims_for(pairs)``: the reference claims of each ``(task, reference)`` pair, from the
    cache or extracted now. ``extracted`` counts the references extracted (each once unless its
    extraction failed), ``hits`` the look-ups answered without extracting (a reference met again,
    in this step or an earlier one)."""

    def __init__(self, extractor: Extractor):
        self.extractor = extractor
        self._claims: dict[tuple[str, str], Claims] = {}
        self.extracted = 0
        self.hits = 0

    def __len__(self) -> int:
        return len(self._claims)

    def claims_for(self, pairs: list[tuple[str, str]]) -> list[Claims | None]:
        """One entry per pair: a claim list (a section mapping for ``note_generation``), or
        ``None`` where the scorer must handle the reference itself (``question_summarization``,
        whose reference is one claim, or an extraction that failed: the scorer then extracts it
        again and records the failure in its report)."""
        missing = list(dict.fromkeys(pair for pair in pairs if pair not in self._claims
                                     and pair[0] != Task.QUESTION_SUMMARIZATION))
        self.hits += sum(1 for pair in pairs if pair[0] != Task.QUESTION_SUMMARIZATION) - len(missing)
        if missing:
            self._extract(missing)
        return [self._claims.get(pair) for pair in pairs]

    def _extract(self, missing: list[tuple[str, str]]) -> None:
        requests, targets = [], []
        found: dict[tuple[str, str], dict] = {}
        for task, reference in missing:
            found[(task, reference)] = {}
            for section, text in segments(task, reference).items():
                found[(task, reference)][section] = []
                if text.strip():
                    requests.append(ExtractionRequest(text, task, section))
                    targets.append(((task, reference), section))
        extracted = self.extractor.extract_many(requests) if requests else []
        if len(extracted) != len(requests):
            raise RuntimeError(f"{type(self.extractor).__name__} returned {len(extracted)} claim lists for "
                               f"{len(requests)} texts")
        failed = set()
        for (pair, section), claims in zip(targets, extracted):
            if isinstance(claims, FailedExtraction):
                failed.add(pair)
            found[pair][section] = list(claims)
        for pair, sections in found.items():
            if pair in failed:
                continue
            self.extracted += 1
            self._claims[pair] = sections if pair[0] == Task.NOTE_GENERATION else sections.get(None, [])
