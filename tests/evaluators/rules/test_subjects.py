"""clinical-rules v14: a claim about a clinical subject the note never names
(doclens/evaluators/rules/subjects.py). Each claim's subject — the vital signs, a test or study by its
abbreviation, an examined body system — occurs nowhere in the note, by no name nor an equivalent,
while its other words match; each was accepted as rewording before the rule. The guards name the
subject otherwise (the vital signs by their parts, a study by another name, a system by its organs)
and never carry the rule's finding. Sentences are made up. The judge's tests need the [clinical]
extra (conftest.py's ``clinical_judge`` skips without it)."""

import pytest

from doclens.evaluators.rules.concepts import read_concepts
from doclens.evaluators.rules.findings import FindingKind
from doclens.evaluators.rules.subjects import framing_only, unnamed_vitals
from tests.evaluators.rules.absences import decided_absences

KIDNEYS = ("The patient is here today for follow up of his chronic kidney disease. He reports feeling good today "
           "and his energy is good. We will check a urinalysis yearly to monitor the kidneys. Continue lisinopril "
           "10 mg daily.")
KNEE = ("She is here for her knee pain after a fall 3 weeks ago. Examination of the knee shows tenderness over the "
        "medial joint line. We will order physical therapy for the knee.")

# (premise, claim, the subject the explanation must quote)
UNNAMED = {
    "the vital signs, in a note that gives none": (KIDNEYS, "Vitals look good today.", "vitals"),
    "one vital sign, in a note that gives none": (KIDNEYS, "His temperature is good today.", "temperature"),
    "a study by its abbreviation": (KNEE, "We will order an MRI of the knee.", "mri"),
    "a test by its abbreviation": (KNEE, "We will order an EKG for the knee pain.", "ekg"),
    "an examined body system": (KNEE, "A neurological exam of the knee was performed.", "neurological"),
}

# (premise, claim): the subject is named otherwise; these stay supported
SUPPORTED = {
    "the vital signs by their parts": ("Vitals: BP 120/80, HR 72, afebrile. Lungs clear.", "Vital signs are normal."),
    "the vital signs by their readings": ("BP 118/76. Pulse 64. She is afebrile. She feels good today.",
                                          "Vitals look good today."),
    "a CT the note calls a CAT scan": ("A CAT scan of the head was negative.", "A CT of the head was negative."),
    "an MRI the note writes out": ("A magnetic resonance imaging of the knee shows a meniscal tear.",
                                   "An MRI of the knee shows a meniscal tear."),
    "an x-ray the note calls a radiograph": ("A radiograph of the right ankle shows no fracture.",
                                             "An x-ray of the right ankle shows no fracture."),
    "an x-ray the note counts in views": ("Three views of the right ankle were obtained and show no fracture.",
                                          "An x-ray of the right ankle shows no fracture."),
    "an EKG the note writes out": ("Electrocardiogram today shows normal sinus rhythm.",
                                   "An EKG today shows normal sinus rhythm."),
    "an examination of a part the note examined": (KNEE, "Examination of the knee was performed."),
}

# (premise, claim): the subject is named otherwise; the rule does not decide them (other words may)
NOT_DECIDED = {
    "a blood pressure the note gives as hypertension": (
        "His hypertension is well controlled on lisinopril.", "His blood pressure is well controlled on lisinopril."),
    "a temperature the note gives as a fever": (
        "She has had a fever of 101 for two days.", "She has had an elevated temperature for two days."),
    "a heart rate the note gives as the rate and rhythm": ("CV: Regular rate and rhythm.",
                                                           "His heart rate and rhythm are normal."),
    "a neurological exam the note gives by its parts": (
        "Neuro: cranial nerves intact, strength 5/5 in all extremities. Reflexes 2+.",
        "A neurological exam was performed and was normal."),
    "a cardiovascular exam the note gives as the heart's": ("Heart: regular rate and rhythm, no murmurs.",
                                                            "Cardiovascular exam is normal."),
    "a body system the claim does not say was examined": (
        "We discussed his diet and exercise today.", "We discussed his cardiovascular risk and his diet today."),
    "labs the note lists by their values": ("Sodium 140, potassium 4.2, creatinine 1.1, hemoglobin 13.5.",
                                            "Labs were reviewed."),
}


@pytest.mark.parametrize("case", sorted(UNNAMED))
def test_a_subject_the_note_never_names_decides_not_supported(clinical_judge, case):
    premise, claim, subject = UNNAMED[case]
    verdict = clinical_judge.verdict(premise, claim)
    decided_absences(verdict, FindingKind.CONCEPT)  # an absence, never phrased as a contradiction
    assert f"never names \"{subject}\"" in verdict.explanation, verdict.explanation


@pytest.mark.parametrize("case", sorted(SUPPORTED))
def test_a_subject_named_otherwise_stays_supported(clinical_judge, case):
    premise, claim = SUPPORTED[case]
    verdict = clinical_judge.verdict(premise, claim)
    assert verdict.entailed, verdict.explanation
    assert not any(f.kind is FindingKind.CONCEPT for f in verdict.findings), verdict.explanation


@pytest.mark.parametrize("case", sorted(NOT_DECIDED))
def test_a_subject_named_otherwise_is_not_decided_by_the_rule(clinical_judge, case):
    premise, claim = NOT_DECIDED[case]
    verdict = clinical_judge.verdict(premise, claim)
    assert not any(f.kind is FindingKind.CONCEPT for f in verdict.findings), verdict.explanation


def test_a_framing_line_states_no_finding(clinical_judge):
    """A template's line that introduces what follows, with no clinical word, decides "not supported"
    (measured: docs/changelog.md); a framing line about a named part is read as before."""
    verdict = clinical_judge.verdict(KIDNEYS, "Examination of the following systems was performed today.")
    found = decided_absences(verdict, FindingKind.EMPTY)
    assert "introduces what follows" in found[0].text
    assert clinical_judge.verdict(KNEE, "Examination of the knee was performed.").entailed


def test_the_vital_signs_are_named_by_any_part():
    assert unnamed_vitals("Vitals look good today.", ["vitals"], "He feels good today.") == ["vitals"]
    for note in ("BP 130/85 today.", "She is afebrile.", "Heart: regular rate and rhythm.", "SpO2 97% on room air.",
                 "Vitals reviewed."):
        assert unnamed_vitals("Vitals look good today.", ["vitals"], note) == [], note
    # a vital sign whose words the note uses is not missing: nothing to decide
    assert unnamed_vitals("His temperature is good.", [], "He feels good.") == []
    assert unnamed_vitals("His temperature is good.", ["temperature"], "No fever.") == []


def test_study_abbreviations_and_framing_come_from_their_tables():
    studies = read_concepts().studies
    assert {"mri", "ct", "ekg", "ultrasound", "tsh"} <= studies
    assert "gerd" not in studies  # a diagnosis: its lay names are not this rule's
    clinical = {"knee", "neurological"}.__contains__
    assert framing_only("Examination of the following areas was performed.", ["areas"], clinical)
    assert not framing_only("Examination of the following areas was performed.", [], clinical)
    assert not framing_only("Examination of the knee as follows.", ["follows"], clinical)
    assert not framing_only("Examination of the areas was performed.", ["areas"], clinical)
