"""A judge whose process dies once, for the Ray engine's retry test (``tests/engines/test_ray_engine.py``):
the first time it is asked about a hypothesis containing ``trigger`` while the file ``marker``
exists, it removes the file and ends its process with ``os._exit`` (as an out-of-memory kill
would: no exception, no clean-up)."""

from __future__ import annotations

import os

from doclens.evaluators.llm.openai_chat import GPT4JsonCoT

from .helpers import TokenSubsetEvaluator


class CrashOnceJudge(TokenSubsetEvaluator):
    name = "crash-once"

    def __init__(self, marker: str = "", trigger: str = ""):
        super().__init__()
        self.marker = marker
        self.trigger = trigger

    def entail_batch(self, pairs):
        if self.marker and any(self.trigger in hypothesis for _, hypothesis in pairs):
            try:
                os.unlink(self.marker)  # only one process can remove it: only one dies
            except FileNotFoundError:
                pass
            else:
                os._exit(1)
        return super().entail_batch(pairs)


class CrashOnceChatJudge(GPT4JsonCoT):
    """``gpt4-json-cot`` whose process dies once, after the chunk's claim answers are cached and
    before its citations are asked: the first time it is asked about a statement containing
    ``trigger`` while the file ``marker`` exists."""

    def __init__(self, marker: str = "", trigger: str = "", **options):
        super().__init__(**options)
        self.marker = marker
        self.trigger = trigger

    def judge_citations_many(self, requests):
        if self.marker and any(self.trigger in request.statement for request in requests):
            try:
                os.unlink(self.marker)
            except FileNotFoundError:
                pass
            else:
                os._exit(1)
        return super().judge_citations_many(requests)


class SlowJudge(TokenSubsetEvaluator):
    """A judge that takes ``seconds`` per batch: a driver can be killed while its workers judge."""

    name = "slow"

    def __init__(self, seconds: float = 120.0):
        super().__init__()
        self.seconds = seconds

    def entail_batch(self, pairs):
        import time

        time.sleep(self.seconds)
        return super().entail_batch(pairs)
