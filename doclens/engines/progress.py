"""The progress bar of a scoring run: one step per judged instance, with the calls, cache hits
and cost so far in its postfix.

The scorer sends a chunk's requests to the evaluator in one batch, with ``on_done`` (part of the
evaluator contract): the chat judges and ``clinical-rules`` call it as each request's last answer
is read, so the bar moves while the batch is still running; a judge that only overrides the batch
method without it has it called for every request when its batch returns.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from doclens.evaluators.usage import Usage

#: How often the postfix is redrawn while nothing steps (extraction, a long batch).
REFRESH_SECONDS = 1.0


def judge_batch(method, requests: list, on_done: Callable[[int], None] | None):
    """``method(requests, on_done=on_done)``: every evaluator's batch methods take ``on_done``
    (:class:`doclens.Evaluator` gives it to a subclass that overrides them without it)."""
    return method(requests, on_done=on_done)


class InstanceSteps:
    """Which requests of a chunk belong to which instance; ``step(k)`` is called once per
    instance ``k`` when its last request is done (claims and citations both)."""

    def __init__(self, n_instances: int, claim_slots: list[tuple], citation_slots: list[tuple],
                 step: Callable[[int], None], touch: Callable[[], None] = lambda: None):
        self.step, self.touch = step, touch
        self.claim_owner = [slot[0] for slot in claim_slots]
        self.citation_owner = [slot[0] for slot in citation_slots]
        self.pending = [0] * n_instances
        for owner in self.claim_owner + self.citation_owner:
            self.pending[owner] += 1
        self.stepped = [False] * n_instances

    def claim_done(self, n: int) -> None:
        self._done(self.claim_owner[n])

    def citation_done(self, n: int) -> None:
        self._done(self.citation_owner[n])

    def _done(self, owner: int) -> None:
        self.pending[owner] -= 1
        if self.pending[owner] <= 0:
            self._step(owner)
        self.touch()

    def _step(self, owner: int) -> None:
        if not self.stepped[owner]:
            self.stepped[owner] = True
            self.step(1)

    def finish(self) -> None:
        """Step every instance not stepped yet (nothing to judge, or a judge without ``on_done``)."""
        for owner in range(len(self.pending)):
            self._step(owner)


def usage_postfix(*components) -> str:
    """``calls=12 cached=3 cost=$0.0123`` for the given evaluator and extractor (counters shared
    between them are counted once); in-process judges show the pairs judged instead of calls."""
    seen: list[Usage] = []
    for component in components:
        usage = getattr(component, "usage", None)
        if isinstance(usage, Usage) and all(usage is not u for u in seen):
            seen.append(usage)
    total = {key: sum(getattr(u, key) for u in seen) for key in ("calls", "cached_calls", "failed_calls", "pairs",
                                                                   "cost_usd")}
    parts = []
    if total["calls"] or total["cached_calls"] or total["failed_calls"]:
        parts += [f"calls={total['calls']}", f"cached={total['cached_calls']}"]
        if total["failed_calls"]:
            parts.append(f"failed={total['failed_calls']}")
        priced = any(callable(getattr(c, "price_per_million", None)) and c.price_per_million() is not None
                     for c in components if c is not None)
        if priced or total["cost_usd"]:
            parts.append(f"cost=${total['cost_usd']:.4f}")
    elif total["pairs"]:
        parts.append(f"pairs={total['pairs']}")
    return " ".join(parts)


def _on_terminal() -> bool:
    """Whether stderr is a terminal (a log file gets no redraws every second)."""
    import sys

    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


class ProgressBar:
    """A tqdm bar over instances (``total`` when the input's size is known), whose postfix
    shows :func:`usage_postfix` of the run's evaluator and extractor."""

    def __init__(self, total: int | None, enabled: bool, evaluator, extractor=None):
        from tqdm.auto import tqdm

        self.components = (evaluator, extractor)
        self.bar = tqdm(total=total, disable=not enabled, unit="instance", desc="DocLens", leave=False,
                        dynamic_ncols=True)
        self._stop = threading.Event()
        self._ticker = None
        if not self.bar.disable and _on_terminal():  # the counts move during extraction too, when nothing steps
            self._ticker = threading.Thread(target=self._tick, name="doclens-progress", daemon=True)
            self._ticker.start()

    def _tick(self) -> None:
        while not self._stop.wait(REFRESH_SECONDS):
            self.bar.set_postfix_str(usage_postfix(*self.components), refresh=True)

    def step(self, n: int = 1) -> None:
        """``n`` more instances judged."""
        if self.bar.disable:
            return
        self.bar.set_postfix_str(usage_postfix(*self.components), refresh=False)
        self.bar.update(n)

    def touch(self) -> None:
        """A request finished: show the new counts without stepping (refreshed at tqdm's pace)."""
        if self.bar.disable:
            return
        self.bar.set_postfix_str(usage_postfix(*self.components), refresh=False)
        self.bar.update(0)

    def close(self) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        self.bar.close()
