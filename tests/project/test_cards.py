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
    """One "Current figures" with the current version's figures; the rounds' sections, their class
    lists and the superseded measurements are in docs/changelog.md, by version."""
    text = (REPO / "cards" / "clinical-rules.md").read_text(encoding="utf-8")
    changelog = (REPO / "docs" / "changelog.md").read_text(encoding="utf-8")
    assert "docs/changelog.md" in text
    assert text.count("\n## Current figures\n") == 1
    rounds = [h for h in _headings(text, "#{3,6}") if re.match(r"v\d|Before v\d|In short", h)]
    assert rounds == [], f"a round's section in the card: {rounds}"
    for version in ("v11 (`lr-bd937b8f`) as shipped", "v10 (`lr-bf9c8d6e`) as shipped", "v10 (`lr-11f7aeb6`)",
                    "v10 (`lr-971b1aa2`)", "v10 (`lr-734a1cf8`)", "v9", "v8", "v7", "v6",
                    "v5", "v4", "Before v4"):
        assert any(h.startswith(version) for h in _headings(changelog, "###")), version
    current = _current_figures(text)
    signature = re.search(r"\+lr-([0-9a-f]{8})", text).group(1)
    assert f"lr-{signature}" in current, "the current figures are the shipped model's"
    assert "0.836 [0.798, 0.874]" in current, "the sealed half's figure stays in the card"
    superseded = ["0.803 [0.762, 0.843]", "0.813 [0.774, 0.854]", "177/1,438", "0.806** [0.770, 0.838]",
                  "21 of 40 placements right", "24 of 40 placements right", "0.830 [0.792, 0.869]",
                  "30 of 40 placements right", "0.831 [0.793, 0.870]", "20 of 40 placements right",
                  "0.833 [0.796, 0.871]", "0.831 [0.791, 0.869]",
                  "33 of 40 placements right", "0.831 [0.794, 0.868]", "25 of 40 placements right"]
    assert [figure for figure in superseded if figure in current] == []
    assert all(figure in changelog for figure in superseded)
    sealed = current.index("| **sealed** |")
    assert sealed < current.index("| **fresh** (unread)") < current.index("| held-out"), "the sealed half first"

#: how a figure's benchmark is named: a module run with ``python -m benchmarks.…``, its file
#: ``benchmarks/….py``, or a ``doclens`` command (``doclens judge-check …``)
BENCHMARK = re.compile(r"python -m benchmarks\.\w+|benchmarks/\w+\.py|`doclens [a-z][a-z-]*")


def _current_figures(text: str) -> str:
    return re.search(r"^## Current figures\n(.*)", text, flags=re.MULTILINE | re.DOTALL).group(1)


def _tables_and_their_lead(section: str) -> list[tuple[str, str]]:
    """Each Markdown table of a section, with the text that leads to it: from the nearest heading
    above it (the heading included) to the table's first row."""
    found, lead, in_table, in_code = [], [], False, False
    for line in section.split("\n"):
        in_code ^= line.startswith("```")
        if in_code or line.startswith("```"):
            lead.append(line)  # a command shown in a code block names it too
            continue
        if line.startswith("|"):
            if not in_table:
                found.append((line, "\n".join(lead)))
                in_table = True
            continue
        in_table = False
        if line.startswith("#"):
            lead = []
        lead.append(line)
    return found


@pytest.mark.parametrize("card", CARDS, ids=[c.name for c in CARDS])
def test_every_figure_table_names_the_benchmark_that_prints_it(card):
    """Every figure lives in one card and is printed by one benchmark (issue 50): each table of a
    card's "Current figures" names its command in its heading or in the text that leads to it."""
    tables = _tables_and_their_lead(_current_figures(card.read_text(encoding="utf-8")))
    unnamed = [row for row, lead in tables if not BENCHMARK.search(lead)]
    assert unnamed == [], f"tables with no benchmark named before them: {unnamed}"


def test_the_table_reader_sees_each_table_once_with_its_lead():
    section = ("### A (`python -m benchmarks.a`)\n\ntext\n\n| x |\n| - |\n| 1 |\n\n### B\n\nno command\n\n| y |\n\n"
               "### C\n\n```\n| not a table |\npython -m benchmarks.c\n```\n\n| z |\n")
    tables = _tables_and_their_lead(section)
    assert [row for row, _ in tables] == ["| x |", "| y |", "| z |"]
    assert [bool(BENCHMARK.search(lead)) for _, lead in tables] == [True, False, True]


#: a measured figure: a decimal with its unit, a three-decimal fraction or a count "N of M"
#: (settings such as a 20,000-character cut are not matched)
FIGURE = re.compile(r"(?<![\w.,])(?:\d+\.\d+ ?(?:s|ms|MB|GB|KB|%|×)|0\.\d{3}|\d+ of \d[\d,]*)(?![\w])")
#: the user guide: the README and the pages under docs/ (the changelog keeps superseded figures, and
#: docs/design.md states no figure but names the card)
GUIDE = [REPO / "README.md", *(p for p in sorted((REPO / "docs").glob("*.md")) if p.name not in ("changelog.md", "design.md"))]


def test_a_figure_of_a_card_is_not_stated_again_in_the_guide():
    """One home per figure (issue 50): a figure a card's "Current figures" gives is not written again
    on a guide page, which links to the card instead."""
    current = {card.name: set(FIGURE.findall(_current_figures(card.read_text(encoding="utf-8")))) for card in CARDS}
    twice = [(page.name, figure, sorted(name for name, figures in current.items() if figure in figures))
             for page in GUIDE for figure in sorted(set(FIGURE.findall(page.read_text(encoding="utf-8"))))
             if any(figure in figures for figures in current.values())]
    assert twice == [], f"figures stated on a guide page and in a card: {twice}"


def test_the_figure_pattern_matches_measured_figures_not_settings():
    text = "took 4.6 s wall, 12.5 s of CPU, 2.42× the wall, 86.7 % right, 0.813 balanced, 6 of 8 replies; cut at 20,000"
    assert FIGURE.findall(text) == ["4.6 s", "12.5 s", "2.42×", "86.7 %", "0.813", "6 of 8"]
