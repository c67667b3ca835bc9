"""clinical-rules v16 (issue 46): a bone x-ray the note reads as normal shows no fracture.

A normal (or unremarkable) x-ray is one with no evidence of fracture (clinical_equivalents.json's
``implies_absent``, source "Davis bone x-ray"); a claim that denies a fracture against such a note was
rejected as naming what the note never names ("note never names "fractures""). Guards: a claim of a
fracture, of another side, of another finding the source does not list (a dislocation), a study that is
not an x-ray, an x-ray not called normal or only ordered, and a note whose x-ray shows a fracture stay
unsupported. Sentences are made up. The judge's tests need the [clinical] extra (conftest.py's
``clinical_judge`` skips without it)."""

import pytest

from doclens.evaluators.rules.lexicons import equivalents

# (premise, claim): supported now, rejected before
NO_FRACTURE = {
    "a knee x-ray called normal": ("The x-ray of his left knee was normal.", "There was no fracture."),
    "an ankle x-ray called unremarkable": ("X-ray of the right ankle: unremarkable.",
                                           "The right ankle x-ray shows no fracture."),
    "x-rays of a wrist called normal": ("The x-rays of her wrist were normal.", "No fractures were seen."),
}
# (premise, claim): stays unsupported
NO_FRACTURE_GUARDS = {
    "a claim of a fracture": ("The x-ray of his left knee was normal.", "There is a fracture of the left knee."),
    "the knee of the other side": ("The x-ray of his left knee was normal.", "There is no fracture of the right knee."),
    "a dislocation the source does not list": ("The x-ray of his left knee was normal.", "There is no dislocation."),
    "an MRI, not an x-ray": ("The MRI of his left knee was normal.", "There was no fracture."),
    "an x-ray not called normal": ("The x-ray of his left knee was not normal.", "There was no fracture."),
    "an x-ray only ordered": ("We will order an x-ray of the left knee.", "The x-ray showed no fracture."),
    "an x-ray that shows a fracture": ("Blood pressure is normal. X-ray of the left knee shows a fracture.",
                                       "There was no fracture."),
}


@pytest.mark.parametrize("case", sorted(NO_FRACTURE))
def test_a_normal_x_ray_shows_no_fracture(clinical_judge, case):
    premise, claim = NO_FRACTURE[case]
    verdict = clinical_judge.verdict(premise, claim)
    assert verdict.entailed, verdict.explanation


@pytest.mark.parametrize("case", sorted(NO_FRACTURE_GUARDS))
def test_a_normal_x_ray_says_nothing_more(clinical_judge, case):
    premise, claim = NO_FRACTURE_GUARDS[case]
    verdict = clinical_judge.verdict(premise, claim)
    assert not verdict.entailed, verdict.explanation


def test_the_entry_names_its_checked_source():
    table = equivalents()
    assert "Davis bone x-ray" in table.sources
    assert any("fracture" in absent for _, absent in table.implies_absent)
