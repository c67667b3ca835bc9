"""Subclaim extractors: turn a text (or one section of a note) into a list of claims.

* :class:`SentenceExtractor` (``sentences``): each sentence is a claim. Deterministic, offline,
  no model — a coarse stand-in for an LLM extractor, useful for smoke tests and as a floor.
* :class:`ClauseExtractor` (``clauses``): each sentence, split further into independent clauses
  where that is reliable (``;``, and ``, but`` / ``, and`` / ``, so`` / ``, however``
  before a new subject such as ``he``, ``the patient``, ``we``). No model: the offline default of
  the ``clinical-rules`` judge.
* :class:`PromptedExtractor`: the base of LLM extractors. It renders the task's extraction
  prompt (``prompts/extract/…``), asks the model through :meth:`PromptedExtractor.complete_many`
  and reads the reply with :func:`doclens.parsing.claim_lists.parse_claim_list`.

``question_summarization`` needs no extractor: the whole question is one claim.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from doclens.core.tasks import extraction_prompt_name
from doclens.evaluators.prompting import load_prompt, make_fence
from doclens.evaluators.usage import Component
from doclens.parsing.claim_lists import parse_claim_list
from doclens.parsing.statements import parse_statements, strip_citations


@dataclass
class ExtractionRequest:
    text: str
    task: str = "general"
    section: str | None = None


class Extractor(Component):
    """Base class. Implement :meth:`extract`, or :meth:`extract_many` to batch."""

    def extract(self, text: str, task: str = "general", section: str | None = None) -> list[str]:
        return self.extract_many([ExtractionRequest(text, task, section)])[0]

    def extract_many(self, requests: list[ExtractionRequest]) -> list[list[str]]:
        if type(self).extract is Extractor.extract:
            raise NotImplementedError(f"{type(self).__name__} must implement extract() or extract_many()")
        return [self.extract(r.text, r.task, r.section) for r in requests]

    def prompt_tags(self) -> list[str]:
        return []


class SentenceExtractor(Extractor):
    """Each sentence, bullet or line (header lines excluded) is one claim."""

    name = "sentences"

    def extract(self, text: str, task: str = "general", section: str | None = None) -> list[str]:
        return [s.text for s in parse_statements(strip_citations(text))]


class FailedExtraction(list):
    """The claims of a text whose extraction call failed for good: an empty list (code that treats
    it as a claim list sees no claims) carrying ``error``. The scorer records such a text as one
    item with status ``failed`` instead of silently scoring it as having no claims."""

    def __init__(self, error: str):
        super().__init__()
        self.error = error


#: A clause boundary: ``;``, or a coordinator (``but``, ``and``, ``so``, ``however``; after a comma or not) followed by
#: a new subject — the right-hand side is then a clause of its own, not a list item or a phrase.
_SUBJECTS = r"(?:he|she|they|we|i|it|there|this|his|her|their|the patient|patient|the pain|symptoms)"
_CLAUSE_BOUNDARY = re.compile(
    r"\s*;\s+|,?\s+(?:but|and|so|however,?)\s+(?=" + _SUBJECTS + r"\b)", re.IGNORECASE)

_CONDITIONAL = re.compile(r"\b(?:if|unless|should|in case|whether)\b", re.IGNORECASE)


def split_clauses(sentence: str) -> list[str]:
    """``"He denies fever, but he felt warm."`` → ``["He denies fever.", "He felt warm."]``.

    Splits only where the right-hand part starts with a subject (a pronoun, ``the patient``), so
    lists (``denies nausea, vomiting, and diarrhea``) and the scope of a negation stay whole; a
    sentence with a condition (``if``, ``unless``, ``should``) is never split. A part of fewer
    than three words is not split off.
    """
    if _CONDITIONAL.search(sentence):  # "if X and this happens, Y": the condition binds both parts
        return [sentence]
    parts = [p.strip(" ,") for p in _CLAUSE_BOUNDARY.split(sentence)]
    if len(parts) < 2 or any(len(p.split()) < 3 for p in parts):
        return [sentence]
    out = []
    for part in parts:
        part = part[0].upper() + part[1:]
        out.append(part if part[-1] in ".!?" else part + ".")
    return out


class ClauseExtractor(Extractor):
    """Each sentence, bullet or line (header lines excluded), split into its independent clauses."""

    name = "clauses"

    def extract(self, text: str, task: str = "general", section: str | None = None) -> list[str]:
        return [c for s in parse_statements(strip_citations(text)) for c in split_clauses(s.text)]

    def signature(self) -> str:
        return "clauses:v1"


class PromptedExtractor(Extractor):
    """An LLM extractor. Subclasses implement :meth:`complete_many` (chat messages → replies)."""

    def complete_many(self, conversations: list[list[dict]]) -> list[str]:
        raise NotImplementedError

    def render(self, request: ExtractionRequest) -> list[dict]:
        """The extraction prompt, the text inside a fence it cannot close (:func:`make_fence`)."""
        text = strip_citations(request.text)
        fence = make_fence([text])
        return load_prompt(extraction_prompt_name(request.task, request.section)).render(
            text=fence.block(text), **fence.values())

    def extract_many(self, requests: list[ExtractionRequest]) -> list[list[str]]:
        todo = [i for i, r in enumerate(requests) if r.text.strip()]
        replies = self.complete_many([self.render(requests[i]) for i in todo]) if todo else []
        results: list[list[str]] = [[] for _ in requests]
        for i, reply in zip(todo, replies):
            results[i] = reply if isinstance(reply, FailedExtraction) else parse_claim_list(reply or "")
        return results

    def prompt_tags(self) -> list[str]:
        from doclens.core.tasks import TASKS, section_names

        return sorted({load_prompt(extraction_prompt_name(t, s)).tag for t in TASKS if t != "question_summarization"
                       for s in section_names(t)})
