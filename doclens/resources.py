"""Files shipped inside the wheel: prompt templates, cards and JSON Schemas.

Installed, they live in the packages ``doclens.prompts``, ``doclens.cards`` and ``doclens.metric``
(mapped from the repository's top-level ``prompts/``, ``cards/`` and ``metrics/doclens/`` by
setup.cfg). In a source checkout they are read from those folders.
"""

from __future__ import annotations

import importlib.resources
from pathlib import Path

_REPO_ROOT = Path(__file__).resolve().parent.parent


#: resource kind → (package in the wheel, folder in a source checkout)
_KINDS = {
    "prompts": ("doclens.prompts", "prompts"),
    "cards": ("doclens.cards", "cards"),
    "metric": ("doclens.metric", "metrics/doclens"),
    "schemas": ("doclens.schemas", "schemas"),
}


def resource_root(kind: str):
    """The folder (a Traversable) of ``kind``: ``"prompts"``, ``"cards"``, ``"metric"`` (the
    ``evaluate`` module) or ``"schemas"`` (JSON Schemas of submissions and scores files)."""
    if kind not in _KINDS:
        raise ValueError(f"unknown resource kind {kind!r}")
    package, folder = _KINDS[kind]
    try:
        return importlib.resources.files(package)
    except ModuleNotFoundError:
        return _REPO_ROOT / folder


def read_resource(kind: str, name: str) -> str:
    """The text of ``name`` (a path relative to the ``kind`` folder, ``/``-separated)."""
    node = resource_root(kind)
    for part in name.split("/"):
        node = node / part
    if not node.is_file():
        raise FileNotFoundError(f"no {kind[:-1]} named {name!r} in {resource_root(kind)}")
    return node.read_text(encoding="utf-8")


def read_card(name: str) -> str:
    """A card's markdown, e.g. ``read_card("doclens.md")``."""
    return read_resource("cards", name)
