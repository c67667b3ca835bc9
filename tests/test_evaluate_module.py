"""The `evaluate` module: loaded from the repo folder, and by bare name after install-metric,
offline, in fresh processes with their own HF_HOME."""

import doctest
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

pytest.importorskip("evaluate", reason="the [evaluate]/[dev] extra is not installed")

COMPUTE = """
import evaluate, json
from tests.helpers import TokenSubsetEvaluator
metric = evaluate.load({where!r})
metric.add_batch(predictions=["fever"], references=["fever"], reference_claims=[["fever"]], prediction_claims=[[]])
metric.add_batch(predictions=["fever"], references=["fever"], reference_claims=[["fever", "cough", "rash", "pain"]],
                 prediction_claims=[["fever"]])
result = metric.compute(evaluator=TokenSubsetEvaluator())
print(json.dumps({{k: v for k, v in result.items() if k != "counts"}}))
"""


def run_python(code, cwd, tmp_path, extra_path=()):
    env = dict(os.environ, HF_HOME=str(tmp_path / "hf"), HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1",
               PYTHONPATH=os.pathsep.join([str(REPO), *map(str, extra_path)]))
    env.pop("HF_MODULES_CACHE", None)
    result = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    import json

    return json.loads(result.stdout.strip().splitlines()[-1])


EXPECTED = {"claim_recall": 2 / 5, "claim_recall_macro": (1 + 0.25) / 2, "claim_precision": 1.0,
            "claim_precision_macro": 1.0, "citation_recall": None, "citation_precision": None}


def check(result):
    for key, value in EXPECTED.items():
        assert result[key] == pytest.approx(value) if value is not None else result[key] is None, key
    assert result["signature"].startswith("doclens:")


@pytest.mark.slow
def test_load_from_repo_folder(tmp_path):
    check(run_python(COMPUTE.format(where="metrics/doclens"), REPO, tmp_path))


@pytest.mark.slow
def test_install_metric_then_load_by_name_anywhere_offline(tmp_path):
    install = subprocess.run([sys.executable, "-m", "doclens.cli", "install-metric"], cwd=tmp_path,
                             env=dict(os.environ, HF_HOME=str(tmp_path / "hf"), PYTHONPATH=str(REPO)),
                             capture_output=True, text=True)
    assert install.returncode == 0, install.stderr
    installed = list((tmp_path / "hf" / "modules" / "evaluate_modules" / "metrics" /
                      "evaluate-metric--doclens").glob("*/doclens.py"))
    assert len(installed) == 1 and len(installed[0].parent.name) == 64
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    check(run_python(COMPUTE.format(where="doclens"), elsewhere, tmp_path))


@pytest.mark.slow
def test_card_examples_run_as_doctests(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    for card in (REPO / "metrics" / "doclens" / "README.md", ):
        result = doctest.testfile(str(card), module_relative=False, optionflags=doctest.ELLIPSIS)
        assert result.attempted > 0 and result.failed == 0, card


@pytest.mark.slow
def test_module_docstring_example(tmp_path, monkeypatch):
    import importlib.util

    monkeypatch.chdir(REPO)
    spec = importlib.util.spec_from_file_location("doclens_metric_module", REPO / "metrics" / "doclens" / "doclens.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    test = finder.find(module._KWARGS_DESCRIPTION, "kwargs", globs={})[0]
    runner.run(test)
    assert test.examples and runner.failures == 0


@pytest.mark.slow
def test_config_name_picks_the_evaluator_preset(tmp_path):
    code = (
        "import evaluate, json\n"
        "metric = evaluate.load('metrics/doclens', 'overlap')\n"
        "r = metric.compute(predictions=['Fever [0].'], references=['Fever.'], sources=['[0] the patient has fever'],"
        " reference_claims=[['Fever.']], prediction_claims=[['Fever.', 'Rash.']])\n"
        "print(json.dumps({'signature': r['signature'], 'claim_precision': r['claim_precision'],"
        " 'citation_recall': r['citation_recall']}))\n")
    result = run_python(code, REPO, tmp_path)
    assert "judge:overlap" in result["signature"]
    assert result["claim_precision"] == 0.5 and result["citation_recall"] == 1.0
