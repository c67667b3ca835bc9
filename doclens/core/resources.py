"""Files shipped with the package: prompt templates, cards, the ``evaluate`` module and JSON
Schemas, read one way only: ``importlib.resources`` over the packages ``doclens.prompts``,
``doclens.cards``, ``doclens.metric`` and ``doclens.schemas``.

In a wheel setup.cfg maps those packages from the repository's top-level ``prompts/``, ``cards/``,
``metrics/doclens/`` and ``schemas/``; in a checkout ``doclens/prompts`` … are symbolic links to
the same folders, so the same import names resolve there too (``docs/design.md`` §6).
"""

from __future__ import annotations

import importlib.resources

#: resource kind → the package that holds it
PACKAGES = {
    "prompts": "doclens.prompts",
    "cards": "doclens.cards",
    "metric": "doclens.metric",
    "schemas": "doclens.schemas",
}

#: what one file of each kind is called in an error message
_ITEM = {"prompts": "prompt", "cards": "card", "metric": "metric module file", "schemas": "schema"}


def resource_root(kind: str):
    """The folder (a Traversable) of ``kind``: ``"prompts"``, ``"cards"``, ``"metric"`` (the
    ``evaluate`` module) or ``"schemas"`` (JSON Schemas of submissions and scores files)."""
    if kind not in PACKAGES:
        raise ValueError(f"unknown resource kind {kind!r}; choose one of {', '.join(PACKAGES)}")
    return importlib.resources.files(PACKAGES[kind])


def read_resource(kind: str, name: str) -> str:
    """The text of ``name`` (a path relative to the ``kind`` folder, ``/``-separated)."""
    node = resource_root(kind)
    for part in name.split("/"):
        node = node / part
    if not node.is_file():
        raise FileNotFoundError(f"no {_ITEM[kind]} named {name!r} in {resource_root(kind)}")
    return node.read_text(encoding="utf-8")


def read_card(name: str) -> str:
    """A card's markdown, e.g. ``read_card("doclens.md")``."""
    return read_resource("cards", name)
