import json
import subprocess
import sys

import pytest

from doclens.cli import main
from doclens.reports.report import Report

GOOD = {"id": "a", "prediction": "Fever [0].", "reference": "fever", "source": ["[patient] fever"],
        "reference_claims": ["fever"], "prediction_claims": ["fever"]}


def write_jsonl(path, rows):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def run(argv, capsys):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_score_writes_report_and_summary(tmp_path, capsys):
    data = write_jsonl(tmp_path / "in.jsonl", [GOOD, {**GOOD, "id": "b", "prediction": "Rash [0]."}])
    code, out, err = run(["score", str(data), "--evaluator", "tests.helpers:TokenSubsetEvaluator",
                          "--output", str(tmp_path / "s.json")], capsys)
    assert code == 0, err
    report = Report.load(tmp_path / "s.json")
    assert report["citation_recall"] == 0.5 and not report.partial
    assert "citation_recall" in out and "signature: doclens:" in out
    code, out, err = run(["score", str(data), "--evaluator", "tests.helpers:TokenSubsetEvaluator",
                          "--output", str(tmp_path / "q.json"), "-q"], capsys)
    assert code == 0 and out == "" and err == "" and Report.load(tmp_path / "q.json") == report  # -q: quiet
    assert "judge:token-subset" in report.signature


def test_default_output_beside_input(tmp_path, capsys):
    data = write_jsonl(tmp_path / "notes.jsonl", [GOOD])
    code, _, _ = run(["score", str(data), "--evaluator", "overlap", "-q"], capsys)
    assert code == 0 and (tmp_path / "notes.doclens.json").exists()


@pytest.mark.parametrize("bad_line, message, field", [
    ({"id": "c", "reference": "x"}, "line 3: instance 'c': missing required field 'prediction'", "prediction"),
    ("{not json", "line 3: not valid JSON", None),
    ({**GOOD, "id": "a"}, "line 3: instance 'a': field 'id' repeats the id of line 1", "id"),
    ({**GOOD, "id": "c", "reference_claims": "fever"}, "line 3: instance 'c': field 'reference_claims'", None),
])
def test_bad_input_exits_nonzero_and_keeps_partial_report(tmp_path, capsys, bad_line, message, field):
    """A line whose id cannot be read, or repeats, is found before anything is scored (issue 47:
    every id is checked before the judge loads): nothing written. Other bad fields are found as
    the line is scored: what was scored before it is kept."""
    data = write_jsonl(tmp_path / "in.jsonl", [GOOD, {**GOOD, "id": "b"}, bad_line, {**GOOD, "id": "d"}])
    code, _, err = run(["score", str(data), "--evaluator", "overlap", "--chunk-size", "1", "-q",
                        "-o", str(tmp_path / "s.json")], capsys)
    assert code == 2
    assert message in err
    if "not valid JSON" in message or "repeats the id" in message:
        assert not (tmp_path / "s.json").exists()
        return
    report = Report.load(tmp_path / "s.json")
    assert report.partial and [r.id for r in report.instances] == ["a", "b"]
    assert "line 3" in report.error


def test_unknown_evaluator_and_option_errors(tmp_path, capsys):
    data = write_jsonl(tmp_path / "in.jsonl", [GOOD])
    code, _, err = run(["score", str(data), "--evaluator", "nope"], capsys)
    assert code == 2 and "unknown evaluator 'nope'" in err
    code, _, err = run(["score", str(data), "--evaluator", "overlap", "--model", "x"], capsys)
    assert code == 2 and "does not take option(s) model" in err
    code, _, err = run(["score", str(data), "--evaluator", "no_such_pkg.mod:Judge"], capsys)
    assert code == 2 and "cannot import module 'no_such_pkg.mod'" in err


def test_evaluator_arg_reaches_constructor(tmp_path, capsys):
    data = write_jsonl(tmp_path / "in.jsonl", [{**GOOD, "reference_claims": ["fever and chills"]}])
    code, _, _ = run(["score", str(data), "--evaluator", "overlap", "--evaluator-arg", "threshold=0.5", "-q",
                      "-o", str(tmp_path / "s.json")], capsys)
    assert code == 0
    report = Report.load(tmp_path / "s.json")
    assert report["claim_recall"] == 1.0 and "overlap:t0.5" in report.signature


def test_extractor_preset_sentences(tmp_path, capsys):
    data = write_jsonl(tmp_path / "in.jsonl", [{"id": "x", "prediction": "Fever. Rash.", "reference": "Fever."}])
    code, _, err = run(["score", str(data), "--evaluator", "overlap", "-q", "-o", str(tmp_path / "s.json")], capsys)
    assert code == 2 and "no 'reference_claims' given and no extractor" in err
    code, _, _ = run(["score", str(data), "--evaluator", "overlap", "--extractor", "sentences", "-q",
                      "-o", str(tmp_path / "s.json")], capsys)
    report = Report.load(tmp_path / "s.json")
    assert code == 0 and report["claim_recall"] == 1.0 and report["claim_precision"] == 0.5


def test_presets_lists_where_data_goes(capsys):
    code, out, _ = run(["presets"], capsys)
    assert code == 0 and "overlap" in out and "data stays on this machine" in out


def test_console_script_entry_point(tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", [GOOD])
    result = subprocess.run([sys.executable, "-m", "doclens.cli", "score", str(data), "--evaluator", "overlap", "-q",
                             "-o", str(tmp_path / "s.json")], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert json.loads((tmp_path / "s.json").read_text())["format"] == "doclens-report/1"


def test_baselines_side_by_side_in_summary(tmp_path, capsys):
    pytest.importorskip("rouge_score", reason="the [baselines] extra is not installed")
    note = "HPI\nFever for two days [0].\nASSESSMENT AND PLAN\nRest."
    row = {"id": "n", "task": "note_generation", "prediction": note, "reference": note.replace(" [0]", ""),
           "source": ["fever two days"],
           "reference_claims": {"subjective": ["Fever for two days."], "assessment_and_plan": ["Rest."]},
           "prediction_claims": {"subjective": ["Fever for two days."]}}
    data = write_jsonl(tmp_path / "in.jsonl", [row])
    code, out, err = run(["score", str(data), "--evaluator", "overlap", "--baselines", "rouge",
                          "-o", str(tmp_path / "s.json")], capsys)
    assert code == 0, err
    report = Report.load(tmp_path / "s.json")
    rows = report.side_by_side()
    assert [r["part"] for r in rows] == ["total", "subjective", "objective_exam", "objective_results",
                                         "assessment_and_plan"]
    assert rows[0]["claim_recall"] == 1.0 and rows[0]["rougeL_recall"] == 1.0
    assert "side by side" in out and "rougeL_recall" in out
    code, _, err = run(["score", str(data), "--evaluator", "overlap", "--baselines", "medcon", "-q",
                        "-o", str(tmp_path / "s.json")], capsys)
    assert code == 2 and "MEDCON needs its backend chosen explicitly" in err


def test_readme_worked_example_numbers(tmp_path, capsys):
    """docs/judges.md prints this run's summary (the README's worked example under the smoke-test
    judge): keep the two in step."""
    from tests.conftest import REPO

    code, out, err = run(["score", str(REPO / "examples" / "notes.jsonl"), "--evaluator", "overlap",
                          "-o", str(tmp_path / "s.json")], capsys)
    assert code == 0, err
    page = (REPO / "docs" / "judges.md").read_text()
    assert out.startswith("*** SMOKE-TEST JUDGE (overlap)")  # the banner of a judge not fit to compare systems
    for line in out.splitlines()[1:7]:
        assert line in page, line
    report = Report.load(tmp_path / "s.json")
    metoprolol = [s for s in report.instance("visit-002").statements if "metoprolol" in s.text][0]
    assert metoprolol.cited == [3] and not metoprolol.entailed
    assert [s.invalid for s in report.instance("visit-002").statements if s.invalid] == [[9]]
    code, _, err = run(["score", str(REPO / "examples" / "questions.jsonl"), "--evaluator", "overlap", "-q",
                        "-o", str(tmp_path / "q.json")], capsys)
    assert code == 0, err


def test_system_name_reaches_the_leaderboard(tmp_path, capsys):
    data = write_jsonl(tmp_path / "in.jsonl", [GOOD])
    for name in ("alpha", "beta"):
        code, _, err = run(["score", str(data), "--evaluator", "overlap", "--system", f"System {name}", "-q",
                            "-o", str(tmp_path / f"{name}.json")], capsys)
        assert code == 0, err
    assert Report.load(tmp_path / "alpha.json").config["system"] == "System alpha"
    code, out, err = run(["leaderboard", str(tmp_path / "alpha.json"), str(tmp_path / "beta.json")], capsys)
    assert code == 0, err
    assert "System alpha" in out and "System beta" in out


def test_question_statements_and_uncited_choices_reach_the_scorer(tmp_path, capsys):
    """--question-statements and every --uncited choice of the scorer are CLI options, recorded
    in the config and the signature."""
    question = {"id": "q", "task": "question_summarization", "prediction": "What treats it? [0] Is it rare? [0]",
                "reference": "What treats it?", "source": ["[patient] what treats it"]}
    data = write_jsonl(tmp_path / "q.jsonl", [question])
    statements = {}
    for choice in ("whole", "sentences"):
        out_path = tmp_path / f"{choice}.json"
        code, _, err = run(["score", str(data), "--evaluator", "overlap", "--question-statements", choice,
                            "--uncited", "inherit-across-sections", "-o", str(out_path), "-q"], capsys)
        assert code == 0, err
        report = Report.load(out_path)
        assert report.config["question_statements"] == choice
        assert report.config["uncited"] == "inherit-across-sections"
        statements[choice] = len(report.instances[0].statements)
    assert statements == {"whole": 1, "sentences": 2}
    assert "qstatements:sentences" in Report.load(tmp_path / "sentences.json").signature
    code, _, err = run(["score", str(data), "--evaluator", "overlap", "--question-statements", "words", "-q"], capsys)
    assert code == 2 and "invalid choice" in err
