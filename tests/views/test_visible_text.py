"""Bidi controls and invisible characters in any text the pages or the terminal show are drawn
visibly (``⟨U+202E⟩``) and, on pages, isolated in ``<bdi>`` (issue 31): a page cannot display a
claim other than the one judged. The judged and stored text is not changed."""

import json

from doclens import DocLens
from doclens.evaluators.rules.overlap import OverlapEvaluator
from doclens.views.visible import html_text, visible
from tests.inputs.test_hostile_inputs import ROWS, run, write_jsonl

RLO = "\u202e"
HIDDEN = f"{RLO}revef on\u200b\u2066x\u2069\u00ad\x1b[31m"  # drawn "no fever" by a browser; ESC colours a terminal
SHOWN = "⟨U+202E⟩revef on⟨U+200B⟩⟨U+2066⟩x⟨U+2069⟩⟨U+00AD⟩⟨U+001B⟩[31m"


def test_visible_and_html_text():
    assert visible(HIDDEN) == SHOWN
    assert visible("Fièvre 38.5 °C, 患者发烧\n\tشاهد") == "Fièvre 38.5 °C, 患者发烧\n\tشاهد"  # real scripts pass
    assert html_text(f"<b>{RLO}") == "<bdi>&lt;b&gt;⟨U+202E⟩</bdi>"


def _scores(tmp_path):
    rows = [dict(r, reference_claims=[f"Fever {HIDDEN}."]) for r in ROWS]
    report = DocLens(OverlapEvaluator()).score(rows, progress=False)
    report.config["system"] = f"sys{HIDDEN}"
    report.warnings.append(f"a warning naming {HIDDEN}")
    path = tmp_path / "scores.json"
    report.save(path)
    return path, rows


def test_report_and_leaderboard_pages_and_tables_show_controls_visibly(tmp_path, capsys):
    path, rows = _scores(tmp_path)
    stored = json.loads(path.read_text())
    assert stored["instances"][0]["reference_claims"][0]["text"] == f"Fever {HIDDEN}."  # the judged text, unchanged
    inputs = write_jsonl(tmp_path / "in.jsonl", [dict(r, prediction=f"{r['prediction']} {HIDDEN}") for r in rows])
    page, board = tmp_path / "report.html", tmp_path / "board.html"
    assert run(["report", path, "--input", inputs, "-o", page, "--resamples", 0], capsys)[0] == 0
    code, out, _ = run(["leaderboard", path, "-o", board, "--resamples", 10], capsys)
    assert code == 0
    for html in (page.read_text(), board.read_text()):
        for character in (RLO, "\u200b", "\u2066", "\u2069", "\u00ad", "\x1b"):
            assert character not in html
        assert "⟨U+202E⟩revef on⟨U+200B⟩" in html
    assert f"<bdi>Fever {SHOWN}.</bdi>" in page.read_text()
    assert f"<bdi>sys{SHOWN}</bdi>" in board.read_text()
    code, out, _ = run(["leaderboard", path, "--resamples", 10], capsys)  # the terminal table
    assert code == 0 and RLO not in out and "\x1b" not in out and "sys⟨U+202E⟩" in out


def test_score_summary_in_the_terminal_shows_controls_visibly(tmp_path):
    from doclens import Report
    from doclens.views.text import summary_text

    path, _ = _scores(tmp_path)
    text = summary_text(Report.load(path))
    assert RLO not in text and "\x1b" not in text and f"a warning naming {SHOWN}" in text
