"""clinical-rules v16 (issue 46): a normal finding the note writes with a normal-finding word that
qualifies it, or an examination written under how it was done or under a system's abbreviation.

* **The qualities a normal finding names** (content._qualified_normal): a claim that the rate and
  rhythm, or the range of motion, are normal, against a note sentence that states only normal findings
  and qualifies each of them with a normal-finding word ("regular rate and rhythm", "full range of
  motion"); before, "note does not say normal".
* **An examination named by how it was done** ("Auscultation of Heart: No murmurs"): the examining word
  is no finding of the examination (content._only_normal); before, the heart's examination there was
  not read as normal.
* **A system named by its abbreviation** ("CV: …", "GI: …", subjects._SYSTEM_SPELLINGS).

Guards: an abnormal qualifier ("irregular"), a finding stated beside the normal ones (a murmur), a
quality the note does not qualify, another system, a claim of an abnormal finding, and a claim that
adds a reading the note does not have stay unsupported. Sentences are made up. The judge's tests need
the [clinical] extra (conftest.py's ``clinical_judge`` skips without it)."""

import pytest

from doclens.evaluators.rules.subjects import system_of

# (premise, claim): supported now, rejected before ("note does not say normal")
SAID_BY_FINDINGS = {
    "a rate and rhythm the note calls regular under CV": ("CV: Regular rate and rhythm. No murmurs or gallops.",
                                                          "The heart's rate and rhythm were normal."),
    "a rate and rhythm the claim calls the heart's normal": ("CV: Regular rate and rhythm. Lungs: Clear bilaterally.",
                                                             "Her heart had a normal rate and rhythm."),
    "a cardiovascular exam under CV, written RRR": ("CV: RRR. No murmurs.", "The cardiovascular exam was normal."),
    "a heart examined by auscultation, only denials": ("Cardiovascular\n- Auscultation of Heart: No murmurs or rubs.",
                                                       "The cardiac exam was normal."),
    "a heart examined by auscultation, one line": ("Auscultation of Heart: No gallops or murmurs.",
                                                   "Cardiovascular exam was unremarkable."),
}
# (premise, claim): stays unsupported
SAID_BY_FINDINGS_GUARDS = {
    "an irregular rhythm": ("CV: Irregularly irregular rate and rhythm. No murmurs.", "The heart's rate and rhythm were normal."),
    "a murmur beside the regular rhythm": ("CV: Regular rate and rhythm with a 3/6 systolic murmur.",
                                           "The heart's rate and rhythm were normal."),
    "a murmur on auscultation": ("Auscultation of Heart: Systolic murmur at the apex.", "The cardiac exam was normal."),
    "a quality the note does not qualify": ("CV: Regular rate. No murmurs.", "The heart's rate and rhythm were normal."),
    "another system's findings": ("Lungs: Clear to auscultation. No wheezes.", "The heart's rate and rhythm were normal."),
    "a claim of an abnormal rhythm": ("CV: Regular rate and rhythm. No murmurs.", "The heart's rhythm was abnormal."),
    "a claim that adds a reading": ("CV: Regular rate and rhythm.", "Heart rate, rhythm and blood pressure were normal."),
    "a range of motion the claim places on another side": ("Right shoulder: Full range of motion.",
                                                           "Range of motion of the left shoulder was normal."),
}


@pytest.mark.parametrize("case", sorted(SAID_BY_FINDINGS))
def test_a_normal_finding_said_by_the_word_that_qualifies_it(clinical_judge, case):
    premise, claim = SAID_BY_FINDINGS[case]
    verdict = clinical_judge.verdict(premise, claim)
    assert verdict.entailed, verdict.explanation


@pytest.mark.parametrize("case", sorted(SAID_BY_FINDINGS_GUARDS))
def test_an_abnormal_or_unqualified_finding_is_not_normal(clinical_judge, case):
    premise, claim = SAID_BY_FINDINGS_GUARDS[case]
    verdict = clinical_judge.verdict(premise, claim)
    assert not verdict.entailed, verdict.explanation


def test_a_systems_abbreviation_names_the_system():
    assert system_of("cv") == "cardiovascular"
    assert system_of("gi") == "gastrointestinal"
    assert system_of("msk") == "musculoskeletal"
