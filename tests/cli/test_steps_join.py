"""Steps that join (issue 48): ``report --input`` reads every format ``score`` reads, with the same
column options; ``baselines`` maps columns as ``score`` does; ``judge-check``'s shipped set finds
ACI-BENCH's notes in either layout, or says exactly what to pass; bracketed numbers are citations
only where a note cites in a consistent style; warnings have levels."""

from __future__ import annotations

import csv
import json

import pytest

from doclens.cli import main
from doclens.core.errors import EXIT_OK, EXIT_USAGE
from tests.aci_published import DATA

CSV = DATA / "published_csv"
needs_csv = pytest.mark.skipif(not (CSV / "test2").is_dir(), reason="the published ACI-BENCH CSVs "
                               "(../shared/data/aci_bench_systems/published_csv) are not on this machine")
OUTPUT_COLUMNS = "id=encounter_id,prediction=note"
REFERENCE_COLUMNS = "id=encounter_id,reference=note,source=dialogue"


def run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _tables(tmp_path):
    """A two-row outputs CSV and gold CSV laid out as ACI-BENCH publishes them (unnumbered dialogue)."""
    outputs, gold = tmp_path / "outputs.csv", tmp_path / "gold.csv"
    with outputs.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["encounter_id", "note"])
        writer.writerows([["D1", "Fever for two days."], ["D2", "Knee pain."]])
    with gold.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["encounter_id", "dialogue", "note"])
        writer.writerows([["D1", "[doctor] any fever ?\n[patient] yes , for two days", "Fever for two days."],
                          ["D2", "[doctor] your knee ?\n[patient] it hurts", "Left knee pain."]])
    return outputs, gold


def test_report_input_reads_the_tables_score_read(tmp_path, capsys):
    outputs, gold = _tables(tmp_path)
    joined = [outputs, "--columns", OUTPUT_COLUMNS, "--references", gold, "--reference-columns", REFERENCE_COLUMNS]
    code, _, err = run(["score", *joined, "--source-units", "lines", "--evaluator", "overlap", "--extractor",
                        "sentences", "-o", tmp_path / "s.json", "-q"], capsys)
    assert code == EXIT_OK, err
    code, _, err = run(["report", tmp_path / "s.json", "--input", *joined, "-o", tmp_path / "r.html", "--no-plots"],
                       capsys)
    assert code == EXIT_OK, err
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    # the dialogue numbered by lines, as when scored (the signature's units:lines): unit 1 of D1 is its second line
    assert 'id="src-0-1" value="1"' in page and "yes , for two days" in page
    # a CSV without the column options: named as score names it, never a list of JSON parse failures
    code, _, err = run(["report", tmp_path / "s.json", "--input", outputs, "-o", tmp_path / "x.html"], capsys)
    assert code == EXIT_USAGE and "no column for field 'id'" in err and "JSON" not in err, err


def test_baselines_map_columns_as_score_does(tmp_path, capsys):
    pytest.importorskip("rouge_score", reason="rouge-score is not installed (the 'baselines' extra)")
    outputs, gold = _tables(tmp_path)
    code, _, err = run(["baselines", outputs, "--columns", OUTPUT_COLUMNS, "--references", gold,
                        "--reference-columns", "id=encounter_id,reference=note", "-o", tmp_path / "b.json", "-q"],
                       capsys)
    assert code == EXIT_OK, err
    result = json.loads((tmp_path / "b.json").read_text())
    assert [row["id"] for row in result["instances"]] == ["D1", "D2"]
    assert result["instances"][0]["rouge1_f1"] == 1.0  # the output's note against the gold note, not itself
    assert result["instances"][1]["rouge1_f1"] < 1.0
    # --columns maps the outputs: a reference field given to it points to --reference-columns, as score says
    code, _, err = run(["baselines", outputs, "--columns", OUTPUT_COLUMNS + ",reference=note", "--references", gold,
                        "-o", tmp_path / "c.json"], capsys)
    assert code == EXIT_USAGE and "--reference-columns" in err, err


def test_judge_check_says_exactly_what_to_pass_when_no_notes_are_found(tmp_path, capsys, monkeypatch):
    """From an installed package the notes' folder beside a checkout does not exist: the error names
    the option, the variable and both layouts, and where it looked."""
    from doclens.datasets import labelled

    monkeypatch.setattr(labelled, "aci_bench_dir_candidates", lambda: [tmp_path / "nowhere"])
    code, _, err = run(["judge-check", "--sample", "5"], capsys)
    assert code == EXIT_USAGE, err
    for said in ("--aci-bench-dir", "DOCLENS_ACI_BENCH_DIR", "clinicalnlp_taskC_test2.csv", "references.jsonl",
                 str(tmp_path / "nowhere")):
        assert said in err, (said, err)


@needs_csv
def test_the_shipped_sets_read_acibench_as_published(monkeypatch):
    """The premises of the shipped set read from ACI-BENCH's own CSVs equal those read from the
    converted JSON Lines, item for item; $DOCLENS_ACI_BENCH_DIR names the folder."""
    from doclens.datasets.labelled import shipped_set

    monkeypatch.setenv("DOCLENS_ACI_BENCH_DIR", str(CSV))
    published = shipped_set("real-outputs", "dev")
    converted = shipped_set("real-outputs", "dev", DATA)
    assert len(published.items) == len(converted.items) > 500
    assert [i.premise for i in published.items] == [i.premise for i in converted.items]


@needs_csv
def test_stray_numbers_in_leds_notes_are_no_citations(tmp_path, capsys):
    """LED's notes hold fragments such as "[2]The onset …" and "[7]]Depression": numbered by lines
    they once became citations of dialogue lines, and LED alone got citation scores of 0.00. No
    consistent style: none is read, the citation metrics are n/a, and a warning names the count."""
    gold = CSV / "test2" / "clinicalnlp_taskC_test2.csv"
    code, out, err = run(["score", CSV / "test2" / "LED_clinicalnlp_taskC_test2_full.csv", "--columns", OUTPUT_COLUMNS,
                          "--references", gold, "--reference-columns", REFERENCE_COLUMNS, "--source-units", "lines",
                          "--evaluator", "overlap", "--extractor", "sentences", "-o", tmp_path / "led.json"], capsys)
    assert code == EXIT_OK, err
    report = json.loads((tmp_path / "led.json").read_text())
    assert report["scores"]["citation_recall"] is None and report["counts"]["citation_recall"]["not_applicable"] == 40
    assert not any(s["cited"] for r in report["instances"] for s in r["statements"])
    said = [w for w in report["warnings"] if "no consistent citation style" in w]
    assert len(said) == 1 and said[0].startswith("26 instance(s) hold bracketed numbers") and "bracketed group" in said[0]
    assert "cite:styled" in report["signature"]
    assert f"warning: {said[0]}" in out  # a warning: look at it (the notes are garbled), not an error


def test_warning_levels_in_the_summary_and_on_the_page(tmp_path, capsys):
    """Benign warnings (sources numbered as asked, outputs that cite nothing) are notes: not red."""
    outputs, gold = _tables(tmp_path)
    code, out, err = run(["score", outputs, "--columns", OUTPUT_COLUMNS, "--references", gold, "--reference-columns",
                          REFERENCE_COLUMNS, "--source-units", "lines", "--evaluator", "overlap", "--extractor",
                          "sentences", "-o", tmp_path / "s.json"], capsys)
    assert code == EXIT_OK, err
    assert "note: 2 source(s) without '[0]' markers were numbered" in out and "note: 2 instance(s) cite no" in out
    assert "warning:" not in out and "numbered" not in err  # said once, in the summary
    report = json.loads((tmp_path / "s.json").read_text())
    assert report["warning_levels"] == ["info", "info"]
    code, _, err = run(["report", tmp_path / "s.json", "-o", tmp_path / "r.html", "--no-plots"], capsys)
    page = (tmp_path / "r.html").read_text()
    assert page.count('<p class="info" data-level="info">note: ') == 2 and '<p class="warn"' not in page


def test_an_output_without_a_citation_style_cites_nothing_and_is_named():
    from doclens import DocLens, UnreadCitationsWarning
    from doclens.evaluators.rules.overlap import OverlapEvaluator

    rows = [{"id": "led", "prediction": "[2]The onset was sudden. Pain in both knees [1]=Neurological.",
             "reference": "Sudden knee pain.", "source": ["pain", "knees", "onset"], "reference_claims": ["Pain."],
             "prediction_claims": ["Pain."]},
            {"id": "cites", "prediction": "Pain [0]. Knees [1].", "reference": "Pain.", "source": ["pain", "knees"],
             "reference_claims": ["Pain."], "prediction_claims": ["Pain."]}]
    with pytest.warns(UnreadCitationsWarning, match=r"1 instance\(s\) hold bracketed numbers .* \(2 bracketed "
                                                    r"group\(s\) in all, e.g. 2 in 'led'"):
        report = DocLens(OverlapEvaluator()).score(rows, progress=False)
    led, cites = report.instances
    assert not any(s.cited for s in led.statements) and led.scores["citation_recall"] is None
    assert cites.statements[0].cited == [0] and report.counts["citation_recall"]["not_applicable"] == 1
