"""A metric family's name is found only in its own modules and the registry (issue 50,
deliverable 1: "the family is the only home of a metric").

Every module of the package (and its HTML templates) is searched for each built-in family's
name as a whole word. A family whose name is a plain word that the package uses as an ordinary
JSON key too (``claims``, ``citations``) cannot be searched for that way; the opt-in family's name
(``source_support``) can. Where a name is still found outside its homes, the place is listed in
:data:`STILL_NAMED` with the reason, and the test fails when such an entry is no longer needed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from doclens.families import CITATIONS, CLAIMS, FAMILIES

PACKAGE = Path(__file__).resolve().parents[2] / "doclens"
REGISTRY = "families/__init__.py"
#: family name → its own modules (relative to doclens/)
HOMES = {
    "source_support": {"families/source_support.py", "scoring/source_support.py", "core/support.py"},  # its verdicts
}
#: (family name, file) → why the name is still there
STILL_NAMED: dict[tuple[str, str], str] = {}
#: names that are plain words the package uses as JSON keys of its own (not searchable)
PLAIN_WORDS = {CLAIMS.name, CITATIONS.name}


def _files():
    for path in sorted(PACKAGE.rglob("*")):
        if path.suffix in (".py", ".html") and "__pycache__" not in path.parts and path.is_file():
            yield path.relative_to(PACKAGE).as_posix(), path.read_text(encoding="utf-8")


def test_every_built_in_family_is_searched_for():
    assert {family.name for family in FAMILIES[:3]} == PLAIN_WORDS | set(HOMES)


@pytest.mark.parametrize("name", sorted(HOMES))
def test_a_family_is_named_only_in_its_own_modules_and_the_registry(name):
    pattern = re.compile(rf"\b{re.escape(name)}\b")
    found = {relative for relative, text in _files() if pattern.search(text)}
    allowed = HOMES[name] | {REGISTRY}
    outside = sorted(found - allowed - {file for family, file in STILL_NAMED if family == name})
    assert not outside, f"{name!r} is named outside its own modules and the registry: {outside}"
    stale = sorted(file for family, file in STILL_NAMED if family == name and file not in found)
    assert not stale, f"STILL_NAMED lists {stale} for {name!r}, which no longer name it: remove the entries"
    assert f"families/{name}.py" in found  # the search finds the name where it is
