"""clinical-rules v17 (issue 46): a claim that is a fragment stating no fact, and a "label: value"
claim whose value the note gives only of something else (doclens/evaluators/rules/subjects.py,
``states_no_fact``; levels.py, ``_keyed_level``). Before v17 each claim below was accepted: its words
all occur in the note. A heading or topic word alone ("Diet"), a body part alone, an adjective with
no noun ("Cognitive") asserts nothing the note could state; a level after a label asserts that level
of the label's thing. The guards are fragments that do state something — a condition, a drug, a
finding, a denial, a qualifier of a named part — and "label: value" claims the note says of that
label: they stay as they were. Sentences are made up. The judge's tests need the [clinical] extra
(conftest.py's ``clinical_judge`` skips without it)."""

import pytest

from doclens.evaluators.rules.findings import FindingKind
from doclens.evaluators.rules.subjects import states_no_fact
from tests.evaluators.rules.absences import decided_absences

NOTE = ("New patient. Chief complaint: follow-up of hypertension and type 2 diabetes. She has mild cognitive "
        "impairment and decreased appetite. Her energy is good. An abnormal mole was removed last year. Diet: she "
        "follows a low-carbohydrate diet and walks daily. Medications: lisinopril 10 mg daily and metformin 500 mg "
        "twice a day. Physical examination: Abdomen is soft. Lungs clear. Skin: normal. Kidney function was "
        "reviewed. Labs: the ferritin was drawn today; her LDL cholesterol is elevated. Blood pressure is elevated "
        "at 152/94.")

# (claim, what the explanation must quote): the fragment states nothing
FRAGMENTS = {
    "a dangling adjective": ("Cognitive", "cognitive"),
    "an adjective of a level, alone": ("Abnormal.", "abnormal"),
    "a normal word, alone": ("Good.", "good"),
    "a topic heading": ("Diet", "diet"),
    "a topic heading with its stop": ("Medications.", "medications"),
    "a body part alone": ("Kidney", "kidney"),
    "an examination heading of a system": ("Examination of abdomen", "abdomen"),
    "a vital sign's name with no reading": ("Blood pressure", "blood pressure"),
}

# claims of the same shape that state something: never this rule's
STATEMENTS = {
    "a condition from a problem list": "Hypertension.",
    "a condition with its qualifier": "Mild cognitive impairment.",
    "a drug with its dose": "Lisinopril 10 mg",
    "a drug alone": "Metformin.",
    "a finding of a named part": "Abdomen soft.",
    "a system said normal": "Skin: Normal.",
    "a level of a named thing": "Elevated LDL cholesterol.",
    "a symptom with its qualifier": "Decreased appetite.",
    "a vital sign with its level": "Elevated blood pressure.",
    "a qualifier of the patient": "New patient.",
}


@pytest.mark.parametrize("claim, quoted", FRAGMENTS.values(), ids=list(FRAGMENTS))
def test_a_fragment_that_states_no_fact_is_not_supported(clinical_judge, claim, quoted):
    verdict = clinical_judge.verdict(NOTE, claim)
    found = decided_absences(verdict, FindingKind.EMPTY)
    assert "states no finding, condition, drug, value or action" in found[0].text
    assert quoted in found[0].text


@pytest.mark.parametrize("claim", STATEMENTS.values(), ids=list(STATEMENTS))
def test_a_fragment_that_states_something_is_judged_as_before(clinical_judge, claim):
    verdict = clinical_judge.verdict(NOTE, claim)
    assert verdict.entailed, verdict.explanation
    assert not any(f.kind is FindingKind.EMPTY for f in verdict.findings)


def test_a_label_with_a_level_the_note_gives_only_of_something_else(clinical_judge):
    """"Labs: the ferritin was drawn today; her LDL cholesterol is elevated": the note's "elevated"
    is the cholesterol's, not the ferritin's."""
    verdict = clinical_judge.verdict(NOTE, "Ferritin: Elevated.")
    assert not verdict.entailed, verdict.explanation
    assert any(f.kind is FindingKind.QUALIFIER and "without a level" in f.text for f in verdict.findings)


@pytest.mark.parametrize("claim", ["LDL cholesterol: Elevated.", "Blood pressure: Elevated.",
                                   "Blood pressure: High."])
def test_a_label_with_the_level_the_note_gives_it_stays_supported(clinical_judge, claim):
    verdict = clinical_judge.verdict(NOTE, claim)
    assert verdict.entailed, verdict.explanation


def test_a_fragment_the_note_writes_as_its_own_part_is_left_to_the_other_rules(clinical_judge):
    """A note's own clause is the note's (the reference as prediction supports itself): "Good." where
    the note writes "Good." is judged as before."""
    verdict = clinical_judge.verdict("How is she feeling today? Good. She denies fever.", "Good.")
    assert not any(f.kind is FindingKind.EMPTY for f in verdict.findings), verdict.explanation


def test_what_a_fragment_is_made_of():
    qualifier = {"cognitive", "good", "abnormal"}.__contains__
    heading = {"diet", "kidney", "abdomen", "examination"}.__contains__
    assert states_no_fact("Cognitive", qualifier, heading)
    assert states_no_fact("Examination of abdomen.", qualifier, heading)
    # a number, a denial, a subject or a word of neither kind makes it a statement
    for claim in ("Diet 1800 kcal.", "No abdomen.", "She is good.", "Kidney stones.", "Good kidney.",
                  "Cognitive good abnormal diet."):
        assert states_no_fact(claim, qualifier, heading) is None, claim
