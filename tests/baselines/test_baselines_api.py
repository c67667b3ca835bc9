"""compute_baselines: names, options, errors, and per-section results for note_generation."""

import json
from pathlib import Path

import pytest

from doclens.baselines import BASELINE_NAMES, compute_baselines, remove_citation_markers
from doclens.core.errors import ConfigurationError, InputError
from doclens.parsing.sections import SECTION_NAMES, split_note_sections

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"


def test_baseline_names():
    assert BASELINE_NAMES == ("rouge", "bertscore", "medcon")


def test_unknown_name_lists_valid_names():
    with pytest.raises(ValueError, match="rouge, bertscore, medcon"):
        compute_baselines(["a"], ["a"], ["bleu"])


def test_medcon_without_backend_is_a_configuration_error():
    with pytest.raises(ConfigurationError, match="backend"):
        compute_baselines(["fever"], ["fever"], ["medcon"])
    with pytest.raises(ConfigurationError, match="backend"):
        compute_baselines(["fever"], ["fever"], ["medcon"], options={"medcon": {"quickumls_path": "/x"}})


def test_unknown_backend_is_a_configuration_error():
    with pytest.raises(ConfigurationError, match="quickumls, scispacy"):
        compute_baselines(["fever"], ["fever"], ["medcon"], options={"medcon": {"backend": "metamap"}})


def test_unknown_task_and_options():
    with pytest.raises(ValueError, match="note_generation"):
        compute_baselines(["a"], ["a"], ["rouge"], task="notes")
    with pytest.raises(ValueError, match="valid names"):
        compute_baselines(["a"], ["a"], ["rouge"], options={"bleu": {}})
    with pytest.raises(ConfigurationError, match="use_stemmer"):
        compute_baselines(["a"], ["a"], ["rouge"], options={"rouge": {"stemming": True}})


@pytest.mark.parametrize("predictions, references", [(["a", "b"], ["a"]), ([], []), (["a"], [None]), ("a", "a")])
def test_bad_inputs(predictions, references):
    with pytest.raises(InputError):
        compute_baselines(predictions, references, ["rouge"])


def test_remove_citation_markers_keeps_lines():
    assert remove_citation_markers("HPI:\nFever [0][2].\nCough [3, 4] .") == "HPI:\nFever.\nCough."
    untouched = "Temp 38.5 [C]\n  indented"
    assert remove_citation_markers(untouched) == untouched


def _aci_note() -> str:
    path = DATA / "aci_bench_test1.jsonl"
    if not path.is_file():
        pytest.skip(f"ACI-BENCH test data not found at {path} (the shared data folder beside the repo)")
    with open(path, encoding="utf-8") as handle:
        return json.loads(handle.readline())["reference"]


def test_note_generation_sections_on_an_aci_bench_note():
    rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer",
                                       reason="rouge-score is not installed (the 'baselines' extra)")
    reference = _aci_note()
    sections = split_note_sections(reference)
    present = [name for name in SECTION_NAMES if sections[name]]
    assert {"subjective", "assessment_and_plan"} <= set(present), present
    # The prediction keeps the subjective section, drops the assessment and plan, and changes the exam.
    prediction = "\n".join([sections["subjective"], "PHYSICAL EXAM\n\nThe patient is well appearing.",
                            sections["objective_results"]]).strip()
    result = compute_baselines([prediction], [reference], ["rouge"], task="note_generation")["rouge"]
    assert set(result["sections"]) == set(SECTION_NAMES)
    predicted_sections = split_note_sections(prediction)
    scorer = rouge_scorer.RougeScorer(["rouge1", "rougeL"], use_stemmer=False)
    for name in SECTION_NAMES:
        if not sections[name] and not predicted_sections[name]:
            assert result["config"]["section_support"][name] == 0
            assert result["sections"][name]["rougeL_recall"] == 0.0
            continue
        assert result["config"]["section_support"][name] == 1
        expected = scorer.score(sections[name], predicted_sections[name])
        assert result["sections"][name]["rougeL_recall"] == expected["rougeL"].recall
        assert result["sections"][name]["rouge1_f1"] == expected["rouge1"].fmeasure
    assert result["sections"]["subjective"]["rouge1_f1"] == 1.0
    assert result["sections"]["assessment_and_plan"]["rouge1_recall"] == 0.0  # dropped by the prediction
    total = scorer.score(reference, prediction)
    assert result["scores"]["rougeL_recall"] == total["rougeL"].recall


def test_section_mean_skips_instances_where_neither_side_has_the_section():
    pytest.importorskip("rouge_score", reason="rouge-score is not installed (the 'baselines' extra)")
    notes = ["CHIEF COMPLAINT\n\nKnee pain.\n\nRESULTS\n\nX-ray normal.",
             "CHIEF COMPLAINT\n\nCough.\n\nASSESSMENT AND PLAN\n\nRest."]
    predictions = ["CHIEF COMPLAINT\n\nKnee pain.\n\nRESULTS\n\nX-ray normal.",
                   "CHIEF COMPLAINT\n\nCough."]
    result = compute_baselines(predictions, notes, ["rouge"], task="note_generation")["rouge"]
    support = result["config"]["section_support"]
    assert support == {"subjective": 2, "objective_exam": 0, "objective_results": 1, "assessment_and_plan": 1}
    assert result["sections"]["objective_results"]["rouge1_f1"] == 1.0  # only instance 0 counts
    assert result["sections"]["assessment_and_plan"]["rouge1_f1"] == 0.0  # instance 1 omitted it
    assert result["sections"]["objective_exam"] == {key: 0.0 for key in result["scores"]}


def test_missing_package_names_the_extra(monkeypatch):
    import sys

    from doclens.core.errors import MissingExtraError

    monkeypatch.setitem(sys.modules, "rouge_score.rouge_scorer", None)  # makes the import fail
    with pytest.raises(MissingExtraError, match=r"doclens\[baselines\]"):
        compute_baselines(["a"], ["a"], ["rouge"])


def test_instance_text_is_not_logged_above_debug(caplog):
    pytest.importorskip("rouge_score", reason="rouge-score is not installed (the 'baselines' extra)")
    secret = "Zyxwv Qwerty has HIV"
    with caplog.at_level("INFO", logger="doclens"):
        compute_baselines([secret], [secret + " and diabetes"], ["rouge"], task="note_generation")
    assert caplog.records  # something was logged, but no text of the instance
    assert "Zyxwv" not in caplog.text and "Qwerty" not in caplog.text
