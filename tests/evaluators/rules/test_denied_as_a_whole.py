"""clinical-rules r17 (issue 46): a negative the note says as a whole.

* **A symptom denied with its whole body system** (content.said_denied, clinical_equivalents.json's
  ``denied_with``): the claim denies a symptom ("denies nausea", "no dysuria") that the note never
  names, and the note denies that system's symptoms as a whole ("denies gastrointestinal symptoms",
  "no urinary issues"), as a review of systems does. Before, the symptom was a head concept the note
  never names (concepts.py), which decided "not supported".
* **A fracture or dislocation a normal radiograph rules out** (clinical_equivalents.json's
  ``implies_absent``): the claim says a bone or joint x-ray showed no fracture (or no dislocation),
  the note calls that x-ray normal or unremarkable.

Guards of the same shapes stay "not supported": a symptom the claim reports (the direction changed),
a symptom of another system, a note that denies one named symptom ("abdominal pain") or reports the
system's symptoms, a claim that adds a symptom of another system; a fracture the claim affirms, a
normal study of another kind or of another site or side, an x-ray the note calls not normal.
Sentences are made up. The judge's tests need the [clinical] extra (conftest.py's ``clinical_judge``
skips without it)."""

import pytest

from doclens.evaluators.rules.lexicons import equivalents

# (premise, claim): supported now, rejected before ("note never names ...")
SAID_AS_A_WHOLE = {
    "a digestive symptom under a review of systems' line": (
        "Review of systems: Gastrointestinal: Denies abdominal symptoms.", "Gastrointestinal: Denies vomiting."),
    "a digestive symptom, the system denied in prose": (
        "She denies any gastrointestinal symptoms.", "She denies diarrhea."),
    "a symptom of the second of two systems denied together": (
        "She denied any gastrointestinal or respiratory symptoms.", "She denies cough."),
    "a urinary symptom, the system's symptoms written with no": (
        "He reports no urinary symptoms.", "He denies dysuria."),
    "a cardiac symptom": ("He denies any cardiac symptoms.", "He denies palpitations."),
    "a normal wrist x-ray: no fracture": (
        "X-ray of the left wrist was normal.", "X-ray of the left wrist showed no fracture."),
    "a normal knee on x-ray: no fractures": ("Her x-ray showed a normal knee.", "Her knee x-ray showed no fractures."),
    "an unremarkable x-ray: no dislocation": (
        "X-ray of the left wrist was unremarkable.", "No dislocation was seen on the left wrist x-ray."),
}

# (premise, claim): stays unsupported
GUARDS = {
    "a symptom the claim reports, against the system denied": ("She denies abdominal symptoms.", "She reports nausea."),
    "a symptom the claim reports for days, against the system denied": (
        "She denies abdominal symptoms.", "She has had nausea for two days."),
    "a named symptom denied, not the system": ("She denies abdominal pain.", "She denies nausea."),
    "the system's symptoms reported": ("She reports abdominal symptoms.", "She denies nausea."),
    "another system denied": ("She denies any respiratory symptoms.", "She denies nausea."),
    "another system denied, a constitutional symptom": ("He denies urinary symptoms.", "He denies fever."),
    "a symptom denied beside the system's that the note reports": (
        "He denies fever but has had abdominal symptoms for a week.", "He denies nausea."),
    "a symptom of another system added": ("He denies any gastrointestinal symptoms.", "He denies nausea or chest pain."),
    "named symptoms denied, another one claimed": (
        "She denies chest pain or shortness of breath.", "She denies palpitations."),
    "a normal chest x-ray, a wrist fracture denied": (
        "X-ray of the chest was normal.", "X-ray of the left wrist showed no fracture."),
    "a normal chest x-ray, fractures denied with no site": (
        "The chest x-ray was unremarkable.", "Interpretation: No fractures were seen."),
    "a normal CT, an x-ray claimed": ("CT of the left wrist was normal.", "X-ray of the left wrist showed no fracture."),
    "an x-ray the note calls not normal": (
        "X-ray of the left wrist was not normal.", "X-ray of the left wrist showed no fracture."),
    "a normal x-ray of the other side": (
        "X-ray of the right wrist was normal.", "X-ray of the left wrist showed no fracture."),
}


@pytest.mark.parametrize("case", sorted(SAID_AS_A_WHOLE))
def test_a_negative_the_note_says_as_a_whole_is_supported(clinical_judge, case):
    premise, claim = SAID_AS_A_WHOLE[case]
    verdict = clinical_judge.verdict(premise, claim)
    assert verdict.entailed, verdict.explanation


@pytest.mark.parametrize("case", sorted(GUARDS))
def test_a_changed_direction_system_study_or_site_stays_unsupported(clinical_judge, case):
    premise, claim = GUARDS[case]
    verdict = clinical_judge.verdict(premise, claim)
    assert not verdict.entailed, verdict.explanation


def test_each_system_denied_lists_its_symptoms_with_a_source():
    table = equivalents()
    assert table.denied_with, "clinical_equivalents.json's denied_with is read"
    gastro = next(members for system, members in table.denied_with if "gastrointestinal" in system)
    assert {"nausea", "vomiting", "diarrhea"} <= gastro
    assert not any("pain" in members for _, members in table.denied_with)  # a generic head belongs to no one system
    assert "ROS" in table.sources and "Radiograph report" in table.sources
