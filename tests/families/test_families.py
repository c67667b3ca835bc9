"""Metric families (``docs/design.md`` §1, "Metric families") and the citation family's n/a rule.

The judge is TokenSubsetEvaluator (a premise entails a hypothesis iff it holds every word of it),
so each count below can be checked by eye.
"""

import json
import warnings

import pytest

from doclens import DocLens
from doclens.cli import main
from doclens.core.errors import ConfigurationError
from doclens.core.types import InstanceResult
from doclens.families import (
    APPLIES,
    CITATIONS,
    NOT_APPLICABLE,
    SKIPPED,
    CountingRule,
    MetricFamily,
    register,
    registered,
    result_counts,
    selected,
    selectors,
)
from doclens.reports.report import Report
from doclens.views.html import instance_failures
from doclens.views.text import summary_text
from tests.helpers import TokenSubsetEvaluator

UNITS = ["alpha", "beta", "gamma"]


def row(ident, prediction, source=UNITS):
    return {"id": ident, "prediction": prediction, "reference": "alpha beta", "source": source,
            "reference_claims": ["alpha"], "prediction_claims": ["alpha"]}


def score(rows, **options):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = DocLens(TokenSubsetEvaluator(), **options).score(rows, progress=False)
    return report, [str(w.message) for w in caught]


# ---- the n/a rule (issue 25 item 1) --------------------------------------------------------------
def test_an_output_citing_nothing_is_not_applicable_never_zero():
    report, messages = score([row("a", "Alpha. Beta."), row("b", "Gamma.")])
    assert report["citation_recall"] is None and report["citation_precision"] is None  # n/a, not 0.00
    counts = report.counts["citation_recall"]
    assert counts["not_applicable"] == 2 and counts["skipped"] == 0 and counts["items"] == 0
    assert all(r.scores["citation_recall"] is None for r in report.instances)
    found = [m for m in messages if "cite no source unit" in m]
    assert len(found) == 1 and found[0].startswith("2 instance(s)")  # one warning per run, with the count
    text = summary_text(report)
    assert "n/a: citation_recall, citation_precision for 2 instance(s)" in text
    assert "uncited-outputs:na" in report.signature


def test_the_paper_rule_stays_for_outputs_that_cite_something():
    # "a" cites: its uncited "Beta." scores 0 (1 hit of 2 statements); "b" cites nothing: n/a
    report, _ = score([row("a", "Alpha [0]. Beta."), row("b", "Gamma.")])
    counts = report.counts["citation_recall"]
    assert (counts["hits"], counts["items"], counts["not_applicable"]) == (1, 2, 1)
    assert report["citation_recall"] == 0.5 and report.instances[1].scores["citation_recall"] is None


def test_strict_restores_the_papers_reading_everywhere():
    report, messages = score([row("a", "Alpha [0]. Beta."), row("b", "Gamma.")], uncited_outputs="strict")
    counts = report.counts["citation_recall"]
    assert (counts["hits"], counts["items"], counts["not_applicable"]) == (1, 3, 0)
    assert report["citation_recall"] == pytest.approx(1 / 3) and report.instances[1].scores["citation_recall"] == 0
    assert not [m for m in messages if "cite no source unit" in m] and "uncited-outputs:strict" in report.signature
    with pytest.raises(ConfigurationError, match="uncited_outputs"):
        DocLens(TokenSubsetEvaluator(), uncited_outputs="lenient")


def test_no_source_stays_skipped_and_no_statement_stays_empty():
    report, _ = score([row("a", "Alpha.", source=None), row("b", "")])
    counts = report.counts["citation_recall"]
    assert (counts["skipped"], counts["empty"], counts["not_applicable"]) == (1, 1, 0)


def test_the_report_page_does_not_count_an_uncited_perfect_copy_as_failures():
    report, _ = score([row("a", "Alpha. Alpha.")])
    result = report.instances[0]
    assert instance_failures(result, CountingRule.from_config(report.config)) == 0
    assert instance_failures(result, CountingRule(uncited_outputs="strict")) == 2  # the strict reading


def test_the_cli_option_and_the_streamed_summary(tmp_path, capsys):
    data = tmp_path / "in.jsonl"
    data.write_text("".join(json.dumps(row(i, "Alpha.")) + "\n" for i in ("a", "b")), encoding="utf-8")
    for mode in ("not-applicable", "strict"):
        out = tmp_path / f"{mode}.json"
        assert main(["score", str(data), "--evaluator", "overlap", "-o", str(out), "--output-format", "jsonl",
                     "--uncited-outputs", mode]) == 0
        summary = json.loads(out.read_text(encoding="utf-8"))
        assert summary["config"]["uncited_outputs"] == mode
        expected = None if mode == "not-applicable" else 0
        assert summary["scores"]["citation_recall"] == expected
        assert summary["instance_counts"]["citation_recall"]["items"] == ([None, None] if expected is None else [1, 1])
        assert Report.load(out).size == 2  # the summary's counts agree with its results, recounted
    assert "n/a: citation_recall" in capsys.readouterr().out


def test_a_file_written_before_the_rule_is_recounted_strictly():
    assert CountingRule.from_config({"on_unparsed": "zero"}).uncited_outputs == "strict"
    assert CountingRule.from_config({"uncited_outputs": "not-applicable"}).uncited_outputs == "not-applicable"


# ---- what a family is ----------------------------------------------------------------------------
def test_citation_applicability():
    report, _ = score([row("a", "Alpha [0]."), row("b", "Alpha."), row("c", "Alpha.", source=None)])
    rule = CountingRule()
    assert [CITATIONS.applicability(r, rule) for r in report.instances] == [APPLIES, NOT_APPLICABLE, SKIPPED]
    assert "citation_recall" not in result_counts(report.instances[1]) and "claim_recall" in result_counts(
        report.instances[1])
    assert result_counts(report.instances[1], CountingRule(uncited_outputs="strict"))["citation_recall"] == (0, 1)


class UncitedShare(MetricFamily):
    """A family written for this test: the share of a prediction's statements that cite nothing."""

    name = selector = "uncited_share"
    metrics = ("uncited_statement_rate",)
    item_fields = {"uncited_statement_rate": "statements"}
    none_when_absent = False

    def applicability(self, result, rule):
        return APPLIES if result.has_source else SKIPPED

    def count(self, result, rule, section):
        statements = [s for s in result.statements if section is None or s.section == section]
        return {"uncited_statement_rate": (sum(not s.cited for s in statements), len(statements))}


def test_a_new_family_is_one_class_and_one_registration(tmp_path):
    """Registered (the public API; ``tests/families/test_toy_family.py`` has a family with a judging step
    of its own), a family counted from the scorer's own verdicts is reduced (streamed too),
    written and shown without any other change."""
    with registered(UncitedShare()) as family:
        assert selected(("doclens", "uncited_share"))[-1] is family
        _score_uncited_share(tmp_path)
    assert "uncited_share" not in selectors()
    with pytest.raises(ValueError, match="registered already"):
        register(CITATIONS.__class__())


@pytest.mark.parametrize("name", sorted(InstanceResult(id="i", task="t").to_dict()))
def test_a_family_named_like_an_instance_field_is_refused(name):
    """Its items would overwrite that field of every result's JSON (``"scores"`` …)."""
    family = type("Clash", (UncitedShare,), {"name": name, "selector": "clash", "metrics": ("clash_rate",)})()
    with pytest.raises(ValueError, match=f"{name!r}: the name is an instance field"):
        with registered(family):
            pass
    assert "clash" not in selectors()


def _score_uncited_share(tmp_path):
    rows = [row(str(k), "Alpha [0]. Beta." if k % 2 else "Alpha [0].") for k in range(12)]
    scorer = DocLens(TokenSubsetEvaluator(), metrics="doclens,uncited_share")
    report = scorer.score(rows, progress=False)
    assert report["uncited_statement_rate"] == pytest.approx(6 / 18)
    assert report.counts["uncited_statement_rate"]["items"] == 18
    assert report.counts["uncited_statement_rate"]["unparsed"] == 0
    assert report.instances[1].scores["uncited_statement_rate"] == 0.5
    streamed = scorer.score_to(str(tmp_path / "s.json"), rows, output_format="jsonl", progress=False)
    assert streamed.scores == report.scores and streamed.instance_counts["uncited_statement_rate"]["items"][1] == 2
    assert "uncited_statement_rate" in summary_text(report)


# ---- contracts instead of getattr (issue 28 item 3) ----------------------------------------------
def test_every_cache_class_keeps_the_cache_protocol(tmp_path):
    from doclens.evaluators.cache import AnswerCache, Cache, CachedAnswers, NullCache, ShardCache

    shard = ShardCache.__new__(ShardCache)  # the protocol is about methods: no worker needed
    for cache in (Cache(tmp_path), NullCache(), shard):
        assert isinstance(cache, AnswerCache)
    holder = CachedAnswers()
    with pytest.raises(TypeError, match="get_many"):
        holder.set_cache({})


def test_the_component_contract_has_defaults_a_minimal_judge_inherits():
    judge = TokenSubsetEvaluator()
    assert judge.prompt_tags() == [] and judge.decoding() == {} and judge.redact("key sk-1") == "key sk-1"


# ---- vocabularies (issue 40 item 4) ----------------------------------------------------------------
def test_vocabularies_are_string_enums_that_read_as_the_strings_they_were():
    from doclens.core.tasks import TASKS, Task, check_task
    from doclens.core.types import ClaimVerdict, Direction, Reason, Status
    from doclens.families import Applicability, UncitedOutputs

    verdict = ClaimVerdict("x", None, status=Status.UNPARSED, reason=Reason.EMPTY_PREMISE)
    assert json.dumps(verdict.to_dict()) == ('{"text": "x", "entailed": null, "explanation": "", "status": "unparsed", '
                                             '"section": null, "raw": null, "reason": "empty_premise"}')
    assert ClaimVerdict.from_dict(json.loads(json.dumps(verdict.to_dict()))) == verdict  # read back: equal
    assert {"unparsed": 1}[Status.UNPARSED] == 1 and f"{Direction.SUPPORT}" == "support" == str(Direction.SUPPORT)
    assert repr(TASKS) == "('general', 'note_generation', 'report_summarization', 'question_summarization')"
    assert check_task("note_generation") == Task.NOTE_GENERATION
    with pytest.raises(Exception, match="choose one of general, note_generation, report_summarization"):
        check_task("notes")
    assert [a.value for a in Applicability] == ["applies", "skipped", "not_applicable"]
    assert UncitedOutputs("not-applicable") is UncitedOutputs.NOT_APPLICABLE
    from doclens.core.settings import UNCITED_OUTPUTS  # the option's vocabulary: the Enum has the same values
    assert tuple(member.value for member in UncitedOutputs) == UNCITED_OUTPUTS
