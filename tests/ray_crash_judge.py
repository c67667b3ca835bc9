"""A judge whose process dies once, for the Ray engine's retry test (``tests/test_ray_engine.py``):
the first time it is asked about a hypothesis containing ``trigger`` while the file ``marker``
exists, it removes the file and ends its process with ``os._exit`` (as an out-of-memory kill
would: no exception, no clean-up)."""

from __future__ import annotations

import os

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
