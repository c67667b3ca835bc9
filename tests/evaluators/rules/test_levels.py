"""clinical-rules v12: a claim whose assertion is the level of a thing ("elevated", "low", "increased")
where the note names the thing but never gives it that level (doclens/evaluators/rules/levels.py).
Before the rule the missing level word was weighed as rewording and such claims were accepted. The
guards are notes that do give the level: a reading outside the adult range, a word of the same
direction, and a reading in range for a claim of "normal"; and a note whose poorly controlled
condition may imply it, where the rule abstains. Sentences are made up. The judge's tests need the
[clinical] extra (conftest.py's ``clinical_judge`` skips without it)."""

import pytest

from doclens.evaluators.rules.decision import DECISIVE
from doclens.evaluators.rules.findings import FindingKind
from doclens.evaluators.rules.sentences import Sentence, Status, Word

# (premise, claim, what the explanation must quote of both texts)
UNSAID = {
    "a blood pressure that went up and down, called elevated": (
        "HPI: Her blood pressure has been up and down for the past few weeks.", "Blood Pressure: Elevated.",
        ("up and down", "claim says elevated")),
    "enzymes checked, called increased": (
        "Her liver enzymes were checked last month.", "Her liver enzymes were increased.",
        ("liver enzymes without a level", "claim says increased")),
    "a hormone drawn, called elevated": (
        "He had his thyroid hormone level drawn at his last visit.", "His thyroid hormone was elevated.",
        ("thyroid hormone without a level", "claim says elevated")),
    "a blood pressure reading in range, called elevated": (
        "VITALS\n\nBlood pressure: 118/76. Heart rate: 78.", "Her blood pressure was elevated.",
        ("note says blood pressure 118/76 (in the normal range)", "claim says elevated")),
    "a level the note calls good, called elevated": (
        "His cholesterol looked good on his most recent lipid panel.", "His cholesterol was elevated.",
        ("note says good", "claim says elevated")),
}

# (premise, claim): the note gives the claim's level
SAID = {
    "a blood pressure reading above the range": (
        "VITALS\n\nBlood pressure: 152/96. Heart rate: 78.", "Her blood pressure was elevated."),
    "a heart rate reading below the range": (
        "VITALS\n\nHeart rate: 48. Blood pressure: 122/70.", "Her heart rate was low."),
    "a word of the same direction": (
        "Her blood pressure has been high at home.", "Her blood pressure has been elevated."),
    "a reading in range for a claim of normal": (
        "VITALS\n\nBlood pressure: 118/76. Heart rate: 78.", "Her blood pressure is normal."),
}


@pytest.mark.parametrize("case", sorted(UNSAID))
def test_a_level_the_note_never_gives_decides_not_supported(clinical_judge, case):
    premise, claim, quoted = UNSAID[case]
    verdict = clinical_judge.verdict(premise, claim)
    assert not verdict.entailed, verdict.explanation
    found = [f for f in verdict.findings if f.kind is FindingKind.QUALIFIER and f.conflict]
    assert found and all((f.kind, f.conflict) in DECISIVE for f in found)
    assert all(q in verdict.explanation for q in quoted), verdict.explanation


@pytest.mark.parametrize("case", sorted(SAID))
def test_a_level_the_note_gives_is_supported_and_not_missing(clinical_judge, case):
    premise, claim = SAID[case]
    verdict = clinical_judge.verdict(premise, claim)
    assert verdict.entailed, verdict.explanation
    assert "note does not say" not in verdict.explanation, verdict.explanation


def test_a_poorly_controlled_condition_leaves_the_level_weighed(clinical_judge):
    """"Her diabetes is uncontrolled" may mean high sugars: the rule abstains and the missing word is
    weighed as before (not decided)."""
    verdict = clinical_judge.verdict("Her diabetes is uncontrolled. She checks her blood sugars every morning.",
                                     "Her blood sugars have been high.")
    assert not any("without a level" in f.text for f in verdict.findings), verdict.explanation
    assert any(f.kind is FindingKind.POLAR and not f.conflict for f in verdict.findings), verdict.explanation


def test_reading_levels_place_each_reading_against_its_range():
    from doclens.evaluators.rules.vitals import claim_vitals, reading_levels

    said = [Sentence("BP 150/85, HR 48, temperature 37.2, SpO2 97 %.", [Word("bp", "BP", Status.AFFIRMED, 0)])]
    assert claim_vitals("Her blood pressure and heart rate were high.") == {"blood pressure", "heart rate"}
    levels = reading_levels(said, frozenset({"blood pressure", "heart rate", "temperature", "oxygen saturation"}))
    assert sorted(levels) == [("blood pressure", "150/85", 1), ("heart rate", "48", -1),
                              ("oxygen saturation", "97", 0), ("temperature", "37.2", 0)]
