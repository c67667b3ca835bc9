"""Counters of the work a run did: model calls, cache hits, tokens, cost, NLI pairs."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, fields
from pathlib import Path


@dataclass
class Usage:
    calls: int = 0  # requests actually sent to a model endpoint
    cached_calls: int = 0  # answers taken from the cache instead
    retries: int = 0  # requests sent again after a transient failure (429, 5xx, timeout, unreadable body …)
    failed_calls: int = 0  # calls that failed for good: their items are marked ``failed``, nothing cached
    prompt_tokens: int = 0
    #: of ``prompt_tokens``, those served from a prompt cache: reported by the endpoint
    #: (``usage.prompt_tokens_details.cached_tokens``); 0 for the in-process judges
    cached_prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    pairs: int = 0  # distinct (premise, hypothesis) pairs asked of entail_batch (cache hits included)
    model_inputs: int = 0  # sequences an in-process model actually ran on (one per premise window)
    windowed_premises: int = 0  # premises longer than the model window, judged in windows
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, **counts) -> None:
        with self._lock:
            for key, value in counts.items():
                setattr(self, key, getattr(self, key) + value)

    def reset(self) -> None:
        """Every counter back to zero, in place (a component that shares this counter keeps sharing
        it): ``doclens score`` with several inputs counts each input's work in its own report."""
        with self._lock:
            for f in fields(self):
                if not f.name.startswith("_"):
                    setattr(self, f.name, f.default)

    def to_dict(self) -> dict:
        data = {f.name: getattr(self, f.name) for f in fields(self) if not f.name.startswith("_")}
        data["cost_usd"] = round(data["cost_usd"], 6)
        return data


def estimate_tokens(messages: list[dict]) -> int:
    """Prompt tokens of a conversation before it is sent: about four characters per token, plus
    a few per message (the rate limiter and the dry run both count this way)."""
    return sum(len(m.get("content") or "") for m in messages) // 4 + 4 * len(messages)


class UsageCounted:
    """Gives a class a :attr:`usage` counter, created on first use so that subclasses which skip
    ``super().__init__()`` still work."""

    @property
    def usage(self) -> Usage:
        if "_usage" not in self.__dict__:
            self.__dict__["_usage"] = Usage()
        return self.__dict__["_usage"]

    @usage.setter
    def usage(self, value: Usage) -> None:
        self.__dict__["_usage"] = value


def size_on_disk(path: str) -> int | None:
    """Bytes of a local file or folder (every file in it); ``None`` when ``path`` is not local."""
    target = Path(path).expanduser()
    if target.is_file():
        return target.stat().st_size
    if target.is_dir():
        return sum(f.stat().st_size for f in target.rglob("*") if f.is_file())
    return None


class Component(UsageCounted):
    """What evaluators and extractors share: a name and model shown in signatures, whether
    instance text stays on this machine, a usage counter, and :meth:`close`."""

    #: Preset or class name, shown in signatures.
    name: str = "custom"
    #: The model that produced the verdicts or claims, shown in signatures.
    model: str | None = None
    #: True when no instance text leaves the machine.
    keeps_data_local: bool = True
    #: True for a component that loads a model into this process (torch): dry runs say what and where.
    loads_model_in_process: bool = False

    def __init__(self) -> None:
        self.usage = Usage()

    def config(self) -> dict:
        """Everything that can change this component's output (recorded in every report)."""
        return {"name": self.name, "model": self.model, "class": f"{type(self).__module__}.{type(self).__qualname__}"}

    def signature(self) -> str:
        """``name`` or ``name:model``: this component's part of a result's signature."""
        return f"{self.name}:{self.model}" if self.model else self.name

    def describe(self) -> dict:
        """What this component would run, read from its settings without loading anything (what
        ``--dry-run`` prints): its class and, when it names one, its model and the model's size
        on disk. Components that load a model here add device, precision and batch size."""
        described: dict = {"class": f"{type(self).__module__}.{type(self).__qualname__}"}
        if self.model:
            described["model"] = str(self.model)
            described["model_bytes"] = size_on_disk(str(self.model))
        return described

    def prompt_tags(self) -> list[str]:
        """The versioned prompts this component sends (their fingerprint goes into signatures);
        ``[]`` for one that sends none."""
        return []

    def decoding(self) -> dict:
        """Decoding and reading settings that can change an answer, recorded in signatures
        (``{}``: none beyond the model)."""
        return {}

    def redact(self, text: str) -> str:
        """``text`` with this component's secrets (an API key an endpoint may echo) masked; a
        component that holds none returns it unchanged."""
        return text

    def close(self) -> None:
        """Release clients, files and models. Safe to call twice."""
