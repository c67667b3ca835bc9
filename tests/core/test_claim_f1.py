"""Claim F1 everywhere a score is shown (issue 38, item 3): pooled (the harmonic mean of pooled
claim recall and precision) and macro (the mean of each instance's F1), with bootstrap intervals,
in the report's scores, the summary, Report.to_pandas, compare and the leaderboard (a column,
``--rank-by`` any statistic, all-n/a columns hidden with a line saying why).

The per-instance F1 is the reward's (``doclens.rewards.values``): a missing side counts as 0, both
missing has no value. The overlap judge (instant, offline)."""

import json

import pytest

from doclens import DocLens
from doclens.cli import main
from doclens.core.metrics import f1
from doclens.evaluators.rules.overlap import OverlapEvaluator
from doclens.stats.bootstrap import bootstrap_intervals, report_instance_counts


#: 12 instances (enough for an interval): recall and precision vary apart, one output has no claims
def _row(k):
    reference = ["Fever.", "Cough.", "Rash."][: 1 + k % 3]
    prediction = ["Fever.", "Headache.", "Rash.", "Pain."][: k % 4] if k != 5 else []
    return {"id": f"i{k}", "prediction": " ".join(prediction) or "Nothing.", "reference": " ".join(reference),
            "reference_claims": reference, "prediction_claims": prediction}


ROWS = [_row(k) for k in range(12)]


def run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture()
def report():
    return DocLens(OverlapEvaluator()).score(ROWS, progress=False)


def test_report_scores_carry_claim_f1_pooled_and_macro(report):
    scores = report.scores
    assert 0 < scores["claim_recall"] < 1 and 0 < scores["claim_precision"] < 1 and scores["claim_f1"] > 0
    assert scores["claim_f1"] == pytest.approx(f1(scores["claim_recall"], scores["claim_precision"]))
    per_instance = [f1(r.scores.get("claim_recall"), r.scores.get("claim_precision")) for r in report.instances]
    assert scores["claim_f1_macro"] == pytest.approx(sum(per_instance) / len(per_instance))
    assert f1(0.5, None) == 0.0 and f1(None, None) is None  # the reward's rule


def test_intervals_carry_claim_f1(report):
    ids, counts = report_instance_counts(report)
    intervals = bootstrap_intervals(counts)
    for key in ("claim_f1", "claim_f1_macro"):
        interval = intervals[key]
        assert interval.point == pytest.approx(report.scores[key]), key
        assert interval.low is not None and interval.low <= interval.point <= interval.high, key


def test_summary_and_rows_show_claim_f1(report):
    from doclens.views.text import summary_text

    line = next(line for line in summary_text(report).splitlines() if line.startswith("claim_f1"))
    assert f"{100 * report.scores['claim_f1']:.2f}" in line and f"{100 * report.scores['claim_f1_macro']:.2f}" in line
    rows = report.to_rows()
    assert [row["claim_f1"] for row in rows] == [
        f1(r.scores.get("claim_recall"), r.scores.get("claim_precision")) for r in report.instances]
    pytest.importorskip("pandas", reason="the tables extra (pandas) is not installed")
    assert "claim_f1" in report.to_pandas().columns


def _scores_file(tmp_path, name, rows):
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_compare_and_leaderboard_show_and_rank_by_claim_f1(tmp_path, capsys):
    # B recalls more, A is more precise and wins on F1
    def row(r, claims):  # the texts hold their claims, so the overlap judge finds them
        return {**r, "prediction": " ".join(claims), "reference": " ".join(r["reference_claims"]),
                "prediction_claims": claims}

    a_rows = [row(r, r["reference_claims"][:1]) for r in ROWS]
    b_rows = [row(r, r["reference_claims"] + ["Noise one.", "Noise two.", "Noise three."]) for r in ROWS]
    files = []
    for name, rows in (("A", a_rows), ("B", b_rows)):
        output = tmp_path / f"{name}.json"
        code, _, err = run(["score", _scores_file(tmp_path, name, rows), "--evaluator", "overlap", "-q",
                            "-o", output], capsys)
        assert code == 0, err
        files.append(output)
    code, out, err = run(["compare", *files], capsys)
    assert code == 0, err
    assert any(line.startswith("claim_f1 ") for line in out.splitlines()), out
    assert any(line.startswith("claim_f1_macro") for line in out.splitlines()), out
    code, out, err = run(["leaderboard", *files, "--rank-by", "claim_f1"], capsys)
    assert code == 0, err
    assert "ranked by claim_f1" in out and "claim_f1" in out.splitlines()[3], out
    first = next(line for line in out.splitlines() if line.startswith("1 "))
    assert " A " in f" {first} ", out  # the precise system wins on F1 (recall ranks B first)
    # no output cites anything: the citation columns are n/a for every system, hidden, and the table says why
    header = next(line for line in out.splitlines() if line.startswith("rank"))
    assert "citation_recall" not in header and "citation_precision" not in header, out
    assert "hidden" in out and "citation_recall" in out and "n/a for every system" in out, out
    code, out, err = run(["leaderboard", *files], capsys)
    first = next(line for line in out.splitlines() if line.startswith("1 "))
    assert " A " in f" {first} " and "ranked by claim_f1" in out, out  # claim F1 is the default ranking (issue 48)
    code, out, err = run(["leaderboard", *files, "--rank-by", "claim_recall"], capsys)
    first = next(line for line in out.splitlines() if line.startswith("1 "))
    assert " B " in f" {first} ", out  # by recall B leads, and the board says what recall alone rewards
    assert "ranked by recall alone" in out and "claim_f1 (the default)" in out, out
    # the HTML pages: the leaderboard's column (citations hidden, said why) and the report's row
    board = tmp_path / "board.html"
    code, _, err = run(["leaderboard", *files, "--rank-by", "claim_f1", "--no-plots", "-o", board], capsys)
    assert code == 0, err
    page = board.read_text()
    assert '<th class="sortable">claim_f1</th>' in page and '<th class="sortable">citation_recall</th>' not in page
    assert "hidden: citation_recall, citation_precision" in page
    code, _, err = run(["report", files[0], "--no-plots", "-o", tmp_path / "a.html"], capsys)
    assert code == 0, err
    assert "<td>claim_f1</td>" in (tmp_path / "a.html").read_text()
