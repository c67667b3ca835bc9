"""A leaderboard maintainer's afternoon (issue 48): several systems scored with one command end
with one table ranked by claim F1 (``DIR/leaderboard.html`` and ``.json`` beside the reports), one
progress line per system, names given as ``NAME=PATH`` and never cut so that two look alike; the
pairwise matrix for any ``--rank-by``; ``-q`` quiet; each warning said once, at its level."""

from __future__ import annotations

import json

import pytest

from doclens.cli import main
from doclens.core.errors import EXIT_OK, EXIT_USAGE
from tests.cli.test_cli_score_many import files  # noqa: F401  (the fixture: two systems' outputs and their references)

#: two names that share their first 40 characters (ACI-BENCH's BioBART runs, full and division-combined)
LONG = ("BioBART_clinicalnlp_taskC_test2_full_run_one", "BioBART_clinicalnlp_taskC_test2_division_combined")


def _score(argv, capsys):
    code = main(["score", *map(str, argv), "--evaluator", "overlap", "--extractor", "clauses"])
    out, err = capsys.readouterr()
    return code, out, err


def test_several_systems_end_with_one_table_and_its_page(files, tmp_path, capsys):  # noqa: F811
    refs, systems = files
    folder = tmp_path / "board"
    code, out, err = _score([f"Good system={systems['good']}", systems["poor"], "--references", refs,
                             "-o", f"{folder}/"], capsys)
    assert code == EXIT_OK, err
    # one progress line per system, no per-system summary
    progress = [line for line in err.splitlines() if line.startswith("doclens: [")]
    assert [line.split(":")[1].strip() for line in progress] == ["[1/2] Good system", "[2/2] poor"], err
    assert "instances in" in progress[0] and "claim F1" in progress[0] and "Good_system.doclens.json" in progress[0]
    assert "DocLens — 2 instances" not in out + err and "per note section" not in out
    # one table, ranked by claim F1, precision beside recall, each system's time, names whole
    assert "ranked by claim_f1" in out and "claim_recall" in out and "claim_precision" in out and "time" in out
    assert out.index("Good system") < out.index("poor") and "1    Good system" in out, out
    # each warning once, for all systems, at its level (a note: nothing is wrong)
    assert out.count("cite no source unit") == 1 and "note (all 2 systems):" in out, out
    assert "cite no source unit" not in err
    # the page and the JSON beside the reports; the report names its system
    board = json.loads((folder / "leaderboard.json").read_text())
    assert board["format"] == "doclens-leaderboard/1" and board["rank_by"] == "claim_f1"
    table = board["tables"][0]
    assert [s["system"] for s in table["systems"]] == ["Good system", "poor"]
    assert all(s["seconds"] > 0 for s in table["systems"]) and table["systems"][0]["rank"] == 1
    assert {"claim_f1", "claim_recall", "claim_precision"} <= set(table["systems"][0]["scores"])
    page = (folder / "leaderboard.html").read_text()
    assert "Good system" in page and "time (s)" in page and "harmonic mean of claim recall and precision" in page
    report = json.loads((folder / "Good_system.doclens.json").read_text())
    assert report["config"]["system"] == "Good system"


def test_summaries_when_asked_and_nothing_when_quiet(files, tmp_path, capsys):  # noqa: F811
    refs, systems = files
    code, out, err = _score([*systems.values(), "--references", refs, "-o", f"{tmp_path / 'a'}/", "--summaries"],
                            capsys)
    assert code == EXIT_OK and out.count("DocLens — 2 instances") == 2 and "ranked by claim_f1" in out, err
    code, out, err = _score([*systems.values(), "--references", refs, "-o", f"{tmp_path / 'q'}/", "-q"], capsys)
    assert code == EXIT_OK and out == "" and err == ""
    assert (tmp_path / "q" / "leaderboard.html").is_file() and (tmp_path / "q" / "good.doclens.json").is_file()


def test_long_names_are_never_cut_alike(files, tmp_path, capsys):  # noqa: F811
    refs, systems = files
    named = [f"{LONG[0]}={systems['good']}", f"{LONG[1]}={systems['poor']}"]
    code, out, err = _score([*named, "--references", refs, "-o", f"{tmp_path / 'b'}/"], capsys)
    assert code == EXIT_OK, err
    assert LONG[0] in out and LONG[1] in out  # the terminal table: whole names (it cut them at 27 characters)
    from doclens.reports.plots import plain_label

    assert plain_label(LONG[0], 30) != plain_label(LONG[1], 30)  # pictures cut in the middle, keeping the ends
    assert plain_label(LONG[1], 30).endswith("combined")
    page = (tmp_path / "b" / "leaderboard.html").read_text()
    assert LONG[0] in page and LONG[1] in page


@pytest.mark.parametrize("argv, message", [
    (["A=x.jsonl", "A=y.jsonl"], "the name 'A' is given to more than one input"),
    (["=x.jsonl", "y.jsonl"], "the name before '=' is empty"),
])
def test_names_are_checked(tmp_path, capsys, argv, message):
    code, _, err = _score([*argv, "-o", f"{tmp_path}/"], capsys)
    assert code == EXIT_USAGE and message in err, err


def test_one_input_takes_a_name_but_no_board_options(files, tmp_path, capsys):  # noqa: F811
    refs, systems = files
    code, _, err = _score([f"GPT-9={systems['good']}", "--references", refs, "-o", tmp_path / "one.json", "-q"],
                          capsys)
    assert code == EXIT_OK, err
    assert json.loads((tmp_path / "one.json").read_text())["config"]["system"] == "GPT-9"
    code, _, err = _score([systems["good"], "--references", refs, "--rank-by", "claim_recall"], capsys)
    assert code == EXIT_USAGE and "--rank-by applies to several inputs" in err
    code, _, err = _score([*systems.values(), "--references", refs, "--system", "x", "-o", f"{tmp_path}/"], capsys)
    assert code == EXIT_USAGE and "NAME=PATH" in err


def test_the_pairwise_matrix_and_marks_work_for_claim_f1():
    """Ranked by claim F1 the matrix was every cell "—": it resampled the statistic's own name, which
    no instance counts; claim F1 needs both its sides."""
    pytest.importorskip("matplotlib", reason="the plots extra")
    from doclens.core.signature import Signature
    from doclens.stats.bootstrap import bootstrap_intervals
    from doclens.views.leaderboard import Entry, rank_group
    from doclens.views.plots import pairwise_differences

    ids = [str(i) for i in range(12)]
    strong = [{"claim_recall": (5, 6), "claim_precision": (4, 5)}] * 12
    weak = [{"claim_recall": (2, 6), "claim_precision": (1, 5)}] * 6 + [{"claim_recall": (3, 6),
                                                                          "claim_precision": (2, 5)}] * 6
    entries = [Entry(name, name, Signature.read("doclens:1|judge:x"), False, bootstrap_intervals(counts, 200),
                     ids, counts) for name, counts in (("weak", weak), ("strong", strong))]
    ranked = rank_group(entries, "claim_f1", 200)
    assert [e.system for e in ranked] == ["strong", "weak"]
    assert ranked[1].versus_leader_note == "distinguishable from #1"
    matrix = pairwise_differences(ranked, "claim_f1", 200)
    assert matrix[1][0].delta == pytest.approx(ranked[1].versus_leader.delta) and matrix[1][0].distinguishable
    assert matrix[0][1].delta == pytest.approx(-matrix[1][0].delta)
