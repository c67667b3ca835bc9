"""clinical-rules v16 (issue 46): a review of systems' "positive" for a symptom the note states.

A review of systems writes a symptom the patient has as "Positive for nausea" or "Respiratory:
Positive wheezing" (content.reported_positive); against a note that states the symptom of the patient
without that word ("She has been nauseated", "He reports wheezing at night"), the claim was rejected as
"note does not say positive". Guards: a symptom the note denies or gives to a family member, a second
symptom the note does not name, another side, and a "positive" before a sign, a test or a manoeuvre
(a result the note must state) stay unsupported. Sentences are made up. The judge's tests need the
[clinical] extra (conftest.py's ``clinical_judge`` skips without it)."""

import pytest

from doclens.evaluators.rules.concepts import read_concepts

# (premise, claim): supported now, rejected before ("note does not say positive")
POSITIVE_FOR = {
    "a symptom under its system's key": ("He has had diarrhea and some nausea since Friday.",
                                         "Gastrointestinal: Positive for nausea."),
    "a symptom without 'for'": ("She reports wheezing when she climbs stairs.", "Respiratory: Positive wheezing."),
    "a symptom on its own": ("He notes dizziness when he stands up quickly.", "Positive for dizziness."),
}
# (premise, claim): stays unsupported
POSITIVE_FOR_GUARDS = {
    "a symptom the note denies": ("She denies nausea or vomiting.", "Gastrointestinal: Positive for nausea."),
    "a symptom of a family member": ("His mother has frequent dizziness.", "Neurological: Positive for dizziness."),
    "a second symptom the note does not name": ("He notes dizziness when he stands up quickly.",
                                                "Neurological: Positive for dizziness and headache."),
    "a result of a test the note only orders": ("We will order a strep test today.", "Strep test: positive."),
    "a sign the note finds negative": ("Negative Tinel's sign at the right wrist.", "Positive Tinel's sign at the right wrist."),
    "a manoeuvre the note finds negative": ("Straight leg raise is negative on the left.",
                                           "Positive straight leg raise on the left."),
}


@pytest.mark.parametrize("case", sorted(POSITIVE_FOR))
def test_positive_for_a_symptom_the_note_states(clinical_judge, case):
    premise, claim = POSITIVE_FOR[case]
    verdict = clinical_judge.verdict(premise, claim)
    assert verdict.entailed, verdict.explanation


@pytest.mark.parametrize("case", sorted(POSITIVE_FOR_GUARDS))
def test_positive_for_what_the_note_does_not_state(clinical_judge, case):
    premise, claim = POSITIVE_FOR_GUARDS[case]
    verdict = clinical_judge.verdict(premise, claim)
    assert not verdict.entailed, verdict.explanation


def test_the_symptoms_are_the_concept_tables():
    symptoms = read_concepts().symptoms
    assert {"nausea", "wheezing", "dizziness"} <= symptoms
    assert "tinel" not in symptoms and "straight" not in symptoms
