"""What the file checkers share (:mod:`doclens.reports.submissions`, :mod:`doclens.reports.scores_files`):
the shipped JSON Schemas, a located :class:`Problem` and ``$``-rooted JSON paths. Kept apart so
that each checker imports this and neither imports the other back."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

SCHEMA_FILES = {"submission": "submission.schema.json", "scores": "scores.schema.json"}


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a file: where (``$``-rooted path) and what."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


@cache
def load_schema(kind: str) -> dict:
    """The JSON Schema (a dict) of ``kind``: ``"submission"`` or ``"scores"``, as shipped in the wheel."""
    from doclens.core.resources import read_resource

    if kind not in SCHEMA_FILES:
        raise ValueError(f"unknown schema {kind!r}; choose one of {', '.join(SCHEMA_FILES)}")
    return json.loads(read_resource("schemas", SCHEMA_FILES[kind]))


def json_path(parts: Iterable) -> str:
    """``["outputs", 3, "id"]`` → ``"$.outputs[3].id"``."""
    text = "$"
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text
