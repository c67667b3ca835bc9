"""The HTML pages' templates (doclens/views/templates, Jinja2): hostile text stays text, the
policy's hashes match the page's own style and script, pages stream instance by instance, an
undefined name is an error, and the templates ship as package data."""

from __future__ import annotations

import base64
import configparser
import fnmatch
import hashlib
import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import jinja2
import pytest

from doclens.core.support import SupportVerdict
from doclens.core.types import CitationVerdict, ClaimVerdict, InstanceResult
from doclens.inputs.jsonl import SourceIndex
from doclens.views.html import _environment, write_leaderboard_html, write_report_html
from doclens.views.visible import visible

REPO = Path(__file__).resolve().parents[2]

#: text a template engine or a browser could act on: markup, both quotes, Jinja2's own syntax,
#: an entity, non-ASCII letters and emoji, a bidi override and a zero-width space
HOSTILE = ('<script>alert("x")</script> \'q\' {{ 7*7 }} {% if 1 %}IF{% endif %} {# c #} &amp; '
           "caf\u00e9 \u65e5\u672c \U0001f600 \u202eRLO \u200b <img src=x onerror=alert(1)>")


class _Page(HTMLParser):
    """Elements, attribute values and text of a page, entities decoded (as a browser reads it)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.attributes, self.text = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attributes += [value for _, value in attrs if value is not None]

    def handle_data(self, data):
        self.text.append(data)


def _parse(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    page.close()
    return page


def _hostile_result() -> InstanceResult:
    claims = [ClaimVerdict(HOSTILE, True, HOSTILE, section=HOSTILE), ClaimVerdict(HOSTILE, None, "", status="unparsed")]
    statements = [CitationVerdict(0, HOSTILE, [0, 7], [0], [7], [0], True, section=HOSTILE, explanation=HOSTILE)]
    result = InstanceResult(HOSTILE, HOSTILE, claims, claims, statements, has_source=True)
    result.family_items["source_support"] = [SupportVerdict(HOSTILE, "supported", HOSTILE, section=HOSTILE,
                                            evidence=[{"unit": 0, "text": HOSTILE, "rank": 1, "score": 0.5}])]
    return result


def _report(tmp_path, **kwargs) -> str:
    handle = io.StringIO()
    # the title, note, interval method and source-support summary are the program's words (escaped,
    # not made visible)
    program = HOSTILE.replace("\u202e", "").replace("\u200b", "")
    header = {"scores": {"claim_recall": 0.5}, "signature": HOSTILE, "warnings": [HOSTILE], "partial": True,
              "error": HOSTILE, "source_support": {"verdicts": 3, "claims": {program: 1}, "note": program}}
    assert write_report_html(header, iter([_hostile_result()]), handle, title=program, note=program,
                             bootstrap=program, **kwargs) == 1
    return handle.getvalue()


def test_hostile_text_stays_text_in_the_report(tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"id": HOSTILE, "prediction": HOSTILE, "source": [HOSTILE]}) + "\n")
    index = SourceIndex(str(source))
    try:
        html = _report(tmp_path, sources=index)
    finally:
        index.close()
    page = _parse(html)
    # only the page's own elements: nothing the text holds became a tag
    assert "img" not in page.tags and page.tags.count("script") == 1
    assert "<script>alert" not in html and "<img src" not in html and 'alert("x")' not in html
    # Jinja2 syntax in the data is written, never evaluated: no 49, no IF without its tags
    assert "{{ 7*7 }}" in html and "{% if 1 %}IF{% endif %}" in html and "{# c #}" in html
    shown = visible(HOSTILE)  # the bidi override and zero-width space drawn as ⟨U+202E⟩ ⟨U+200B⟩
    text = "".join(page.text)
    # every place it is written (id, task, claims, sections, explanations, statement, source unit,
    # evidence, the signature, warnings, the error): as text, whole, its entity included
    assert text.count(shown) >= 14 and "\u202e" not in html and "&amp;amp;" in html
    assert any(value.endswith(": " + shown) for value in page.attributes)  # the statement's title


def test_hostile_names_stay_text_on_the_leaderboard(tmp_path, capsys):
    from doclens.cli import main
    from doclens.core.metrics import aggregate, ratio
    from doclens.families import DOCLENS_METRICS, result_counts
    from doclens.reports.report import Report

    results = [InstanceResult(f"i{i}", "qa", [ClaimVerdict("c", i % 2 == 0)], [ClaimVerdict("d", True)], [])
               for i in range(12)]
    for result in results:
        result.scores = {m: ratio(*c) for m, c in result_counts(result).items()}
    scores, counts = aggregate([result_counts(r) for r in results], DOCLENS_METRICS)
    path = tmp_path / "scores.json"
    Report(scores=scores, counts=counts, instances=results, signature=f"doclens:1|judge:{HOSTILE}",
           config={"system": HOSTILE}, version="t").save(path)
    board = tmp_path / "board.html"
    assert main(["leaderboard", str(path), "-o", str(board), "--resamples", "20", "--no-plots"]) == 0
    capsys.readouterr()
    html = board.read_text()
    page = _parse(html)
    assert "img" not in page.tags and page.tags.count("script") == 1 and "<script>alert" not in html
    assert "".join(page.text).count(visible(HOSTILE)) >= 2  # the system and the signature, whole


def test_the_policy_allows_exactly_the_pages_own_style_and_script(tmp_path):
    for html in (_report(tmp_path), _leaderboard()):
        policy = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', html).group(1)
        assert "&" not in policy and "unsafe-inline" not in policy  # written as is, never escaped
        for tag in ("script", "style"):
            bodies = re.findall(f"<{tag}>(.*?)</{tag}>", html, flags=re.S)
            assert len(bodies) == 1
            digest = base64.b64encode(hashlib.sha256(bodies[0].encode()).digest()).decode()
            assert f"{tag}-src 'sha256-{digest}'" in policy


def _leaderboard() -> str:
    handle = io.StringIO()
    write_leaderboard_html({}, handle, HOSTILE, HOSTILE, title=HOSTILE)
    return handle.getvalue()


def test_the_report_is_written_as_the_instances_arrive():
    handle = io.StringIO()
    seen = []

    def instances():
        for i in range(3):
            seen.append(handle.getvalue().count('<section class="instance"'))
            yield InstanceResult(f"i{i}", "qa", [ClaimVerdict("c", True)], [], [])

    assert write_report_html({"scores": {}}, instances(), handle) == 3
    # when instance n is asked for, the n before it are already in the file (TextIOWrapper's
    # buffer aside): the page is never held whole
    assert seen == [0, 1, 2]


def test_templates_escape_everything_and_refuse_undefined_names():
    environment = _environment()
    assert environment.autoescape is True and environment.undefined is jinja2.StrictUndefined
    with pytest.raises(jinja2.UndefinedError):
        "".join(environment.get_template("leaderboard.html").generate(title="t", csp="", style="", script=""))


def test_templates_ship_as_package_data():
    config = configparser.ConfigParser()
    config.read(REPO / "setup.cfg")
    patterns = [p.strip() for p in config["options.package_data"]["doclens.views"].split(",")]
    templates = sorted(p.relative_to(REPO / "doclens" / "views").as_posix()
                       for p in (REPO / "doclens" / "views" / "templates").iterdir())
    assert templates and all(any(fnmatch.fnmatch(t, pattern) for pattern in patterns) for t in templates)
    assert set(templates) >= {"templates/page.html", "templates/report.html", "templates/leaderboard.html"}
