"""The small things a new user trips on in the first hour (issue 38, item 7), each as the user
meets it: real files in tmp_path, the real command line, the overlap judge (instant, offline)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from doclens.cli import main
from doclens.core.errors import EXIT_OK, EXIT_USAGE

ROOT = Path(__file__).resolve().parents[2]
ROW = {"id": "a", "prediction": "Fever for two days. No cough.", "reference": "Fever for two days and a cough.",
       "reference_claims": ["Fever for two days.", "A cough."], "prediction_claims": ["Fever for two days.", "No cough."]}
JUDGE = ["--evaluator", "overlap", "-q"]


def run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


# ---- empty input --------------------------------------------------------------------------------
def _empty_inputs(tmp_path):
    inputs = {"empty.jsonl": "", "blank.jsonl": "\n\n", "empty.json": "[]", "header.csv": "id,prediction,reference\n",
              "nothing.csv": "", "header.tsv": "id\tprediction\treference\n"}
    paths = []
    for name, text in inputs.items():
        (tmp_path / name).write_text(text)
        paths.append(tmp_path / name)
    pa = pytest.importorskip("pyarrow", reason="the tables extra (pyarrow) is not installed")
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"id": pa.array([], pa.string()), "prediction": pa.array([], pa.string()),
                             "reference": pa.array([], pa.string())}), tmp_path / "empty.parquet")
    return paths + [tmp_path / "empty.parquet"]


def test_empty_input_is_refused_the_same_way_in_every_format(tmp_path, capsys):
    for path in _empty_inputs(tmp_path):
        output = tmp_path / f"{path.name}.scores.json"
        code, _, err = run(["score", path, *JUDGE, "-o", output], capsys)
        assert code == EXIT_USAGE, (path.name, err)
        assert f"{path}: no instances to score" in err, (path.name, err)
        assert not output.exists(), path.name


def test_an_empty_stdin_is_refused_as_well(tmp_path, capsys, monkeypatch):
    import io

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"\n")))
    code, _, err = run(["score", "-", *JUDGE], capsys)
    assert code == EXIT_USAGE and "<stdin>: no instances to score" in err, err
    assert list(tmp_path.iterdir()) == []  # no report, no journal, no lock


# ---- the lock file ------------------------------------------------------------------------------
def test_a_clean_run_leaves_no_lock_file(tmp_path, capsys):
    source = write_jsonl(tmp_path / "in.jsonl", [ROW])
    code, _, err = run(["score", source, *JUDGE, "-o", tmp_path / "s.json"], capsys)
    assert code == EXIT_OK, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "s.json"]


def test_a_lock_on_a_removed_file_is_known_as_such(tmp_path):
    """The race the removal opens: a run that opened the lock file just before the run holding it
    removed it would lock a file no longer at the path; it must see that and lock the new one."""
    from filelock import FileLock

    from doclens.reports.files import _holds, lock_path, output_lock

    path = lock_path(str(tmp_path / "s.json"))
    lock = FileLock(path, timeout=0)
    lock.acquire()
    assert _holds(lock, path)
    Path(path).unlink()
    Path(path).write_text("")  # the next run's file
    assert not _holds(lock, path)
    lock.release()
    with output_lock(str(tmp_path / "s.json")):
        assert Path(path).exists()
    assert not Path(path).exists()


# ---- journals -----------------------------------------------------------------------------------
def test_a_failed_runs_journal_is_explained(tmp_path, capsys):
    rows = [ROW, {**ROW, "id": "b"}, {"id": "c", "prediction": "x"}]  # the third has no reference
    source = write_jsonl(tmp_path / "in.jsonl", rows)
    output = tmp_path / "s.json"
    code, _, err = run(["score", source, *JUDGE, "--chunk-size", "1", "-o", output], capsys)
    assert code == EXIT_USAGE and "field 'reference'" in err, err
    journal = tmp_path / "s.journal.jsonl"
    assert journal.exists() and "--resume" in err  # two instances scored, kept for --resume
    write_jsonl(source, rows[:2])
    code, _, err = run(["score", source, "--evaluator", "overlap", "--chunk-size", "1", "-o", output], capsys)
    assert code == EXIT_OK, err
    assert "stopped before it finished" in err and "2 instance(s)" in err and "--resume" in err, err
    assert "interrupted run's journal" not in err
    # a run that fails before it scores anything leaves no journal to explain
    output.unlink()
    write_jsonl(source, [{"id": "c", "prediction": "x"}])
    code, _, err = run(["score", source, *JUDGE, "-o", output], capsys)
    assert code == EXIT_USAGE and not journal.exists(), err


# ---- validate -----------------------------------------------------------------------------------
def test_validate_tells_an_input_file_from_a_scores_file(tmp_path, capsys):
    source = write_jsonl(tmp_path / "in.jsonl", [ROW, {**ROW, "id": "b"}])
    code, out, err = run(["validate", source], capsys)
    assert "scores object" not in out + err
    assert code == EXIT_OK and "input file" in out and "2 instance(s)" in out, out + err
    bad = write_jsonl(tmp_path / "bad.jsonl", [ROW, {"id": "b", "prediction": "x"}])
    code, out, err = run(["validate", bad], capsys)
    assert code == EXIT_USAGE and "input file" in out and "line 2" in out and "'reference'" in out, out + err
    csv_input = tmp_path / "in.csv"
    csv_input.write_text("id,prediction,reference\na,Fever.,Fever.\n")
    code, out, err = run(["validate", csv_input], capsys)
    assert code == EXIT_OK and "input file" in out, out + err


# ---- errors in plain words ----------------------------------------------------------------------
def test_the_medcon_error_is_plain_words(tmp_path, capsys):
    source = write_jsonl(tmp_path / "in.jsonl", [ROW])
    code, _, err = run(["score", source, *JUDGE, "--baselines", "medcon", "-o", tmp_path / "s.json"], capsys)
    assert code == EXIT_USAGE and "MEDCON needs its backend chosen explicitly" in err
    assert "{'medcon'" not in err and "--baseline-option medcon=" in err, err


def test_the_dry_run_says_where_an_endpoint_extractor_runs(tmp_path, capsys):
    source = write_jsonl(tmp_path / "in.jsonl", [{k: v for k, v in ROW.items() if not k.endswith("claims")}])
    code, out, err = run(["score", source, "--evaluator", "mistral-cot", "--base-url", "http://127.0.0.1:9/v1",
                          "--dry-run"], capsys)
    assert code == EXIT_OK, err
    extractor = json.loads(out)["extractor"]
    assert "in this process" not in extractor and "endpoint" in extractor, extractor


# ---- the reward detects the task as the command line does ---------------------------------------
def test_the_reward_detects_the_task_as_the_command_line_does(tmp_path, capsys):
    from doclens.rewards import DocLensReward

    note = ("HISTORY OF PRESENT ILLNESS\nKnee pain for two weeks.\n\nPHYSICAL EXAM\nSwelling of the left knee.\n\n"
            "ASSESSMENT AND PLAN\nRest and ice.")
    completion = ("HISTORY OF PRESENT ILLNESS\nKnee pain.\n\nPHYSICAL EXAM\nKnee pain for two weeks.\n\n"
                  "ASSESSMENT AND PLAN\nRest and ice.")
    source = write_jsonl(tmp_path / "in.jsonl", [{"id": "0", "prediction": completion, "reference": note}])
    # the paper's per-section premise, where the task changes what a claim is judged against (under
    # the whole-note default this note's claims score alike either way)
    code, _, err = run(["score", source, "--evaluator", "overlap", "--extractor", "sentences", "-q",
                        "--premise-scope", "section", "-o", tmp_path / "s.json"], capsys)
    assert code == EXIT_OK, err
    cli = json.loads((tmp_path / "s.json").read_text())["instances"][0]
    assert cli["task"] == "note_generation"
    reward = DocLensReward("overlap", "sentences", score="claim_recall", premise_scope="section")
    components = reward.score_components([completion], reference=[note])[0]
    assert components["claim_recall"] == cli["scores"]["claim_recall"]
    assert DocLensReward("overlap", "sentences", task="general", premise_scope="section").score_components(
        [completion], reference=[note])[0]["claim_recall"] != cli["scores"]["claim_recall"]  # the task matters here


# ---- the GRPO example ---------------------------------------------------------------------------
@pytest.mark.parametrize("argv,said", [(["--prompts", "1"], "--prompts"), (["--steps", "0"], "--steps"),
                                       (["--generations", "1"], "--generations")])
def test_the_grpo_example_refuses_settings_that_cannot_train(argv, said):
    """Refused before any model loads: one prompt makes no GRPO batch (0 steps, exit 0 before)."""
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "grpo_notes.py"), *argv], capture_output=True,
                          text=True, timeout=60, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 2 and said in done.stderr and "cannot train" in done.stderr, done.stderr
