"""Issue 49: the cyclic garbage collector's passes over a big heap cost a warm 40-note run about
0.15 s of its 2.8; it is paused while a chunk is scored and on again afterwards (docs/design.md,
"Threads are chosen")."""

import gc

from doclens import DocLens
from doclens.core.types import Instance
from doclens.evaluators.rules.overlap import OverlapEvaluator

ROW = {"id": "a", "task": "general", "reference": "The patient has a cough.",
       "prediction": "The patient has a cough.", "reference_claims": ["The patient has a cough."],
       "prediction_claims": ["The patient has a cough."]}


def test_the_collector_is_off_while_a_chunk_is_judged_and_on_afterwards(monkeypatch):
    seen: list[bool] = []
    judge = OverlapEvaluator.judge_claims_many

    def recording(self, requests, **kwargs):
        seen.append(gc.isenabled())
        return judge(self, requests, **kwargs)

    monkeypatch.setattr(OverlapEvaluator, "judge_claims_many", recording)
    scorer = DocLens(OverlapEvaluator())
    assert gc.isenabled()
    scorer.score([ROW], progress=False)
    assert seen and not any(seen) and gc.isenabled()
    seen.clear()
    scorer.score_chunk([Instance.from_dict(ROW, 0)])
    assert seen and not any(seen) and gc.isenabled()


def test_a_collector_the_caller_turned_off_stays_off():
    gc.disable()
    try:
        DocLens(OverlapEvaluator()).score([ROW], progress=False)
        assert not gc.isenabled()
    finally:
        gc.enable()
