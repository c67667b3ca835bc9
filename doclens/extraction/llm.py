"""The LLM subclaim extractor (``prompts/extract/``) run on a chat judge's model.

:class:`ChatExtractor` is what :meth:`doclens.evaluators.llm.chat.ChatJudge.make_extractor` gives:
the extraction prompts rendered by :class:`doclens.extraction.extractors.PromptedExtractor`, sent
through the judge's own client, cache and usage counters. It knows the judge only by the methods
it calls (``ask_many``, ``cache_identity``, ``decoding``, ``redact``, ``close``), so this module
imports nothing of the judges.
"""

from __future__ import annotations

from doclens.extraction.extractors import FailedExtraction, PromptedExtractor


class ContextLengthError(RuntimeError):
    """A prompt that the endpoint refused as longer than the model's context window."""


class ChatExtractor(PromptedExtractor):
    """The LLM subclaim extractor (``prompts/extract/``) on a :class:`ChatJudge`'s model, client,
    cache and usage counters."""

    name = "llm"

    def __init__(self, judge):
        super().__init__()
        self.judge = judge
        self.model = judge.model
        self.keeps_data_local = judge.keeps_data_local
        self.usage = judge.usage  # one set of counters: the report adds them once

    def complete_many(self, conversations: list[list[dict]]) -> list:
        """The replies; a call that failed for good gives a :class:`FailedExtraction` instead."""
        completions = self.judge.ask_many(conversations, json_mode=False, tags=["extract"] * len(conversations))
        for completion in completions:
            if completion.context_overflow:
                raise ContextLengthError("a text to extract claims from is longer than the model's context window; "
                                         "DocLens never truncates it: split the text or use a longer-context model")
        return [FailedExtraction(c.error) if c.failed else c.text or "" for c in completions]

    def config(self) -> dict:
        return {**super().config(), **{k: v for k, v in self.judge.cache_identity().items() if k != "class"},
                "decoding": self.judge.decoding()}

    def close(self) -> None:
        self.judge.close()

    def redact(self, text: str) -> str:
        return self.judge.redact(text)
