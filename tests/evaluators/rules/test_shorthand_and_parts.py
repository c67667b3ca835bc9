"""clinical-rules v15 (issue 46): a fact the note writes in clinical shorthand, or as its parts.

* **Shorthand** (clinical_equivalents.json, source "Medical abbreviation lists"): "Fx", "DTRs", "N/V",
  "NAD" are read as the words they stand for, on either side; before, a claim that wrote the words
  out was rejected as naming what the note never names ("note never names "fracture"").
* **A normal examination given as its findings** (content.examined_normal): a claim that a body
  site's or system's examination is normal, against a note whose examination of it states only
  normal findings (soft, nontender, supple, regular rate and rhythm, denied findings); before,
  "note does not say normal". Its guards: one abnormal finding there (a tenderness, a murmur, a
  rash, a number), no examination of the site, another site, a claim that says more than "normal"
  (an x-ray) or the opposite ("abnormal", "not normal") stay unsupported.

Sentences are made up. The judge's tests need the [clinical] extra (conftest.py's
``clinical_judge`` skips without it)."""

import pytest

from doclens.evaluators.rules.lexicons import equivalents

# (premise, claim): supported now, rejected before
SHORTHAND = {
    "a fracture the note writes Fx": ("X-ray of the left wrist: no fx.", "The x-ray of the left wrist shows no fracture."),
    "reflexes the note writes DTRs": ("Neuro: DTRs 2+ and symmetric.", "Deep tendon reflexes are 2+ and symmetric."),
    "reflexes the claim writes DTRs": ("Deep tendon reflexes are 1+ bilaterally.", "DTRs 1+ bilaterally."),
    "nausea and vomiting the note writes N/V": ("He denies N/V.", "He denies nausea or vomiting."),
    "nausea and vomiting the claim writes N/V": ("She denies nausea and vomiting.", "Denies N/V."),
    "no acute distress the note writes NAD": ("General: NAD.", "She is in no acute distress."),
}
# (premise, claim): the shorthand read as its words changes nothing else: these stay unsupported
SHORTHAND_GUARDS = {
    "a fracture the note denies, the claim affirms": ("X-ray of the left wrist: no fx.",
                                                      "The x-ray of the left wrist shows a fracture."),
    "a fracture of another side": ("X-ray of the left wrist: no fx.", "The x-ray of the right wrist shows no fracture."),
    "reflexes of another grade": ("Neuro: DTRs 2+ and symmetric.", "Deep tendon reflexes are 1+ and symmetric."),
    "nausea the note affirms, the claim denies": ("She reports N/V since Monday.", "She denies nausea."),
    "distress the note denies, the claim affirms": ("General: NAD.", "She is in acute distress."),
}

ABDOMEN = "Abdomen: Soft, nontender, nondistended. No hepatomegaly."
HEART = "Heart: Regular rate and rhythm. No murmurs, gallops or rubs."
KNEE = "Examination of the right knee: No effusion. Full range of motion."
# (premise, claim): supported now, rejected before ("note does not say normal")
NORMAL_EXAM = {
    "an abdomen the note finds soft and nontender": (ABDOMEN, "Abdominal exam is normal."),
    "an abdomen whose examination only denies findings": ("Examination of Abdomen: No masses or organomegaly.",
                                                          "The abdominal examination was unremarkable."),
    "a cardiovascular exam the note gives as the heart's": (HEART, "Cardiovascular exam is normal."),
    "a heart the note writes RRR": ("Heart: RRR. No murmurs.", "Heart exam is normal."),
    "a respiratory exam the note gives as the lungs'": ("Lungs: Clear to auscultation bilaterally.",
                                                        "Respiratory exam is normal."),
    "a neck the note finds supple": ("Neck: Supple. No lymphadenopathy.", "Neck exam is normal."),
    "a knee whose findings go on after its line": (KNEE, "Examination of the right knee is normal."),
}
# (premise, claim): stays unsupported
NORMAL_EXAM_GUARDS = {
    "one tenderness in the abdomen": ("Abdomen: Soft. Tender in the right lower quadrant.", "Abdominal exam is normal."),
    "a tenderness after the abdomen's line": ("Examination of Abdomen: No hepatomegaly. Mild tenderness to "
                                              "palpation in the epigastrium.", "Abdominal exam is normal."),
    "a murmur beside a regular rhythm": ("Heart: Regular rate and rhythm with a 2/6 systolic murmur.",
                                         "Cardiovascular exam is normal."),
    "wheezes in the lungs": ("Lungs: Wheezes in the left lower lobe.", "Respiratory exam is normal."),
    "a rash on the skin": ("Skin: Erythematous rash on the left forearm.", "Skin exam is normal."),
    "a tenderness after the knee's line": ("Examination of the right knee: No effusion. Tenderness over the medial "
                                           "joint line.", "Examination of the right knee is normal."),
    "no examination of the abdomen, only its history": ("She reports abdominal pain for 2 days. Lungs are clear.",
                                                         "Abdominal exam is normal."),
    "the examination of another site": ("Neck: Supple. No lymphadenopathy.", "Abdominal exam is normal."),
    "the knee of the other side": (KNEE, "Examination of the left knee is normal."),
    "a study of the site, not its examination": (ABDOMEN, "Abdominal x-ray was normal."),
    "a claim of an abnormal examination": (ABDOMEN, "Abdominal exam is abnormal."),
    "a claim the examination was not normal": (ABDOMEN, "Abdominal exam was not normal."),
}


@pytest.mark.parametrize("case", sorted(SHORTHAND))
def test_shorthand_is_read_as_its_words(clinical_judge, case):
    premise, claim = SHORTHAND[case]
    verdict = clinical_judge.verdict(premise, claim)
    assert verdict.entailed, verdict.explanation


@pytest.mark.parametrize("case", sorted(SHORTHAND_GUARDS))
def test_shorthand_read_as_its_words_keeps_near_misses(clinical_judge, case):
    premise, claim = SHORTHAND_GUARDS[case]
    verdict = clinical_judge.verdict(premise, claim)
    assert not verdict.entailed, verdict.explanation


@pytest.mark.parametrize("case", sorted(NORMAL_EXAM))
def test_a_normal_examination_given_as_its_normal_findings(clinical_judge, case):
    premise, claim = NORMAL_EXAM[case]
    verdict = clinical_judge.verdict(premise, claim)
    assert verdict.entailed, verdict.explanation


@pytest.mark.parametrize("case", sorted(NORMAL_EXAM_GUARDS))
def test_an_examination_with_a_finding_or_none_is_not_normal(clinical_judge, case):
    premise, claim = NORMAL_EXAM_GUARDS[case]
    verdict = clinical_judge.verdict(premise, claim)
    assert not verdict.entailed, verdict.explanation


def test_the_shorthand_comes_from_the_table_with_its_source():
    table = equivalents()
    for short, words in {"fx": "fracture", "dtrs": "deep tendon reflexes", "n/v": "nausea and vomiting",
                         "nad": "no acute distress"}.items():
        assert table.spelled[short] == words
    assert "Medical abbreviation lists" in table.sources
