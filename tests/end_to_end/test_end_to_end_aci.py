"""End to end over real ACI-BENCH notes (../shared/data) with deterministic judges."""

import json

import pytest

from doclens import DocLens
from doclens.evaluators.rules.overlap import OverlapEvaluator
from doclens.extraction.extractors import SentenceExtractor
from doclens.parsing.sections import SECTION_NAMES
from tests.helpers import TokenSubsetEvaluator

HAND_WRITTEN = """HISTORY OF PRESENT ILLNESS
Andrew is a 59-year-old male [6]. Have you had your covid vaccines [8][9]. Seasonal allergies none whatsoever [10, 11].
He denies fever.
Fevers [16][99].

ASSESSMENT AND PLAN
Upper respiratory infection [6]."""


def aci_rows(shared_data):
    return [json.loads(line) for line in (shared_data / "aci_bench_test1.jsonl").read_text().splitlines()]


def test_hand_written_cited_note(shared_data):
    row = aci_rows(shared_data)[0]
    instance = {"id": row["id"], "task": "note_generation", "prediction": HAND_WRITTEN,
                "reference": row["reference"], "source": row["source"],
                "reference_claims": {"subjective": ["Andrew is a 59-year-old male", "Andrew has a dog"],
                                     "assessment_and_plan": ["upper respiratory infection"]},
                "prediction_claims": {"subjective": ["Andrew is a 59-year-old male"]}}
    report = DocLens(TokenSubsetEvaluator()).score([instance], progress=False)
    statements = report.instances[0].statements
    assert [(s.section, s.cited, s.precise, s.entailed) for s in statements] == [
        ("subjective", [6], [6], True),
        ("subjective", [8, 9], [8], True),  # 8 alone suffices; 9 ("yeah , both .") is redundant
        ("subjective", [10, 11], [10, 11], True),  # question and answer are both needed
        ("subjective", [], [], False),  # uncited
        ("subjective", [16, 99], [], False),  # 99 is not a turn of this 80-turn dialogue
        ("assessment_and_plan", [6], [6], True),
    ]
    assert statements[4].invalid == [99]
    assert report["citation_recall"] == pytest.approx(4 / 6)
    assert report["citation_precision"] == pytest.approx(5 / 8)
    assert report["claim_recall"] == pytest.approx(2 / 3)
    assert report["claim_precision"] == 1.0
    assert report.sections["subjective"]["claim_recall"] == 0.5
    assert report.sections["assessment_and_plan"]["claim_recall"] == 1.0
    assert report.sections["objective_exam"]["claim_recall"] is None
    assert report.sections["subjective"]["citation_recall"] == pytest.approx(3 / 5)


def test_reference_as_prediction_scores_perfectly_in_every_section(shared_data):
    rows = aci_rows(shared_data)
    instances = [{"id": r["id"], "task": "note_generation", "prediction": r["reference"], "reference": r["reference"]}
                 for r in rows]
    report = DocLens(OverlapEvaluator(), SentenceExtractor()).score(instances, progress=False)
    assert len(report.instances) == 40
    assert report["claim_recall"] == 1.0 and report["claim_precision"] == 1.0
    for section in SECTION_NAMES:
        assert report.sections[section]["claim_recall"] == 1.0
    assert report.counts["claim_recall"]["items"] > 40 * 10  # every note yields many sentence claims
    assert "extract:sentences" in report.signature and "task:note_generation" in report.signature


def test_wrong_note_scores_low(shared_data):
    rows = aci_rows(shared_data)[:6]
    # each prediction is the NEXT patient's note: few of the reference's sentences can be covered
    instances = [{"id": r["id"], "task": "note_generation", "prediction": rows[(i + 1) % len(rows)]["reference"],
                  "reference": r["reference"]} for i, r in enumerate(rows)]
    report = DocLens(OverlapEvaluator(), SentenceExtractor()).score(instances, progress=False)
    assert report["claim_recall"] < 0.3 and report["claim_precision"] < 0.3
