"""Every card follows one outline (issue 50): the same six sections, in order, and nothing else at
that level; the clinical-rules card keeps its current figures and leaves the rounds' history to the
changelog it links to."""

import re

import pytest

from tests.conftest import REPO

OUTLINE = ["What it measures", "How to use it", "Inputs", "Outputs", "Limits", "Current figures"]
CARDS = sorted((REPO / "cards").glob("*.md"))


def _headings(text: str, level: str) -> list[str]:
    prose = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    return re.findall(rf"^{level} (.+)$", prose, flags=re.MULTILINE)


def test_the_cards_are_found():
    assert len(CARDS) >= 9, [c.name for c in CARDS]


@pytest.mark.parametrize("card", CARDS, ids=[c.name for c in CARDS])
def test_each_card_follows_the_outline(card):
    text = card.read_text(encoding="utf-8")
    assert len(_headings(text, "#")) == 1, "one title"
    assert _headings(text, "##") == OUTLINE


def test_the_clinical_rules_card_leaves_its_rounds_to_the_changelog():
    text = (REPO / "cards" / "clinical-rules.md").read_text(encoding="utf-8")
    changelog = (REPO / "docs" / "changelog.md").read_text(encoding="utf-8")
    assert "docs/changelog.md" in text
    rounds = [h for h in _headings(text, "###+") if re.match(r"v\d|Before v\d", h) and "(this card" not in h]
    assert rounds == [], f"a round's section in the card: {rounds}"
    for version in ("v7", "v6", "v5", "v4", "Before v4"):
        assert any(h.startswith(version) for h in _headings(changelog, "###")), version
    current = re.search(r"^## Current figures\n(.*)", text, flags=re.MULTILINE | re.DOTALL).group(1)
    assert "v8" in current and "0.982" in current, "the current version's figures stay in the card"
