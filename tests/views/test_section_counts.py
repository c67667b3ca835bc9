"""Small numbers are not drawn as big ones (issue 38, item 4, the text and data part): every
per-section score carries the count of items behind it, sections with fewer than a threshold of
items (default 20) are flagged, and sections have human names in the summary."""

import json

from doclens import DocLens
from doclens.cli import main
from doclens.evaluators.rules.overlap import OverlapEvaluator
from doclens.views.text import MIN_SECTION_ITEMS, summary_text

NOTE = ("HISTORY OF PRESENT ILLNESS\nFever for two days. No cough.\n\nPHYSICAL EXAM\nTemperature 38.5.\n\n"
        "ASSESSMENT AND PLAN\nViral infection. Take ibuprofen.")
ROW = {"id": "n1", "task": "note_generation", "prediction": NOTE, "reference": NOTE,
       "reference_claims": {"subjective": ["Fever for two days.", "No cough."], "objective_exam": ["Temperature 38.5."],
                            "assessment_and_plan": ["Viral infection.", "Take ibuprofen."]},
       "prediction_claims": {"subjective": ["Fever for two days."], "assessment_and_plan": ["Take ibuprofen."]}}


def test_sections_carry_their_item_counts_and_small_ones_are_flagged():
    report = DocLens(OverlapEvaluator()).score([ROW], progress=False)
    assert report.sections["subjective"]["claim_recall_items"] == 2
    assert report.sections["objective_exam"]["claim_precision_items"] == 0
    assert MIN_SECTION_ITEMS == 20
    text = summary_text(report)
    subjective = next(line for line in text.splitlines() if line.strip().startswith("Subjective"))
    assert "100.00 (n=2)*" in subjective, text
    assert "Assessment and plan" in text and "assessment_and_plan" not in text
    assert "* fewer than 20 items" in text
    relaxed = summary_text(report, min_section_items=1)
    assert "(n=2)*" not in relaxed and "(n=2)" in relaxed


def test_the_threshold_is_an_option_of_score(tmp_path, capsys):
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(ROW) + "\n")
    code = main(["score", str(source), "--evaluator", "overlap", "--min-section-items", "2", "-o",
                 str(tmp_path / "s.json")])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "(n=2) " in out or out.rstrip().endswith("(n=2)") or "(n=2)\n" in out, out
    assert "(n=1)*" in out and "* fewer than 2 items" in out, out
