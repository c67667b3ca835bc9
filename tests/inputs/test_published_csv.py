"""ACI-BENCH's system outputs scored straight from the CSVs ACI-BENCH publishes
(``../shared/data/aci_bench_systems/published_csv/``): the outputs and the gold notes both keep
their text in a column named ``note``, the ids are ``encounter_id`` and the dialogue is
unnumbered. ``--columns`` maps the outputs table, ``--reference-columns`` the references table,
``--source-units lines`` numbers the dialogue (one turn a line); the scores equal the JSONL route's (the same data
converted once to ``{id, prediction}`` / ``{id, reference, source "[0][doctor] …"}``).

The overlap judge and the sentence extractor (instant, offline): the join, the numbering and the
section split are what is tested here, not a judge.
"""

import json

import pytest

from doclens.cli import main
from doclens.core.errors import EXIT_OK, EXIT_USAGE
from tests.aci_published import DATA

CSV = DATA / "published_csv"
needs_data = pytest.mark.skipif(not (CSV / "test2").is_dir(),
                                reason="the published ACI-BENCH CSVs (../shared/data/aci_bench_systems/published_csv) "
                                       "are not on this machine")
JUDGE = ["--evaluator", "overlap", "--extractor", "sentences", "-q"]
REFERENCE_COLUMNS = "id=encounter_id,reference=note,source=dialogue"


def run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def results(path):
    report = json.loads(path.read_text())
    return ({key: report[key] for key in ("scores", "sections", "counts")},
            {r["id"]: r for r in report["instances"]}, report)


@needs_data
@pytest.mark.parametrize("split,system,published", [
    ("test2", "train_UMLS", "UMLS_similarity_clinicalnlp_taskC_test2.csv"),
    ("test2", "GPT-4", "test2GPT-4_.csv"),  # the LLM tables' other layout: Dialogues, Reference Summaries, note
    ("test3", "BART", "BART_large_clef_taskC_test3_full.csv"),
])
def test_published_csvs_join_directly_and_equal_the_jsonl_route(tmp_path, capsys, split, system, published):
    gold = CSV / split / ("clinicalnlp_taskC_test2.csv" if split == "test2" else "clef_taskC_test3.csv")
    code, _, err = run(["score", DATA / split / "systems" / f"{system}.jsonl", "--references",
                        DATA / split / "references.jsonl", *JUDGE, "-o", tmp_path / "jsonl.json"], capsys)
    assert code == EXIT_OK, err
    code, _, err = run(["score", CSV / split / published, "--columns", "id=encounter_id,prediction=note",
                        "--references", gold, "--reference-columns", REFERENCE_COLUMNS, "--source-units", "lines",
                        *JUDGE, "-o", tmp_path / "csv.json"], capsys)
    assert code == EXIT_OK, err
    jsonl_scores, jsonl_instances, _ = results(tmp_path / "jsonl.json")
    csv_scores, csv_instances, report = results(tmp_path / "csv.json")
    assert len(csv_instances) == 40
    assert csv_instances == jsonl_instances and csv_scores == jsonl_scores
    assert "units:lines" in report["signature"]


@needs_data
def test_swapped_tables_are_named(tmp_path, capsys):
    """The references given as INPUT and the outputs as --references: said in those words,
    never "'prediction' must be a string, got NoneType"."""
    code, _, err = run(["score", DATA / "test2" / "references.jsonl", "--references",
                        DATA / "test2" / "systems" / "GPT-4.jsonl", *JUDGE], capsys)
    assert code == EXIT_USAGE
    assert "swapped" in err and "NoneType" not in err, err
    # tables: a references table (a 'reference' column, no 'prediction') as INPUT, an outputs table as REFS
    refs = tmp_path / "refs.csv"
    refs.write_text("id,reference\nD1,Fever for two days.\n")
    outputs = tmp_path / "outputs.csv"
    outputs.write_text("id,prediction\nD1,Fever.\n")
    for argv in ([refs, "--references", outputs], [outputs, "--references", outputs]):
        code, _, err = run(["score", *argv, *JUDGE], capsys)
        assert code == EXIT_USAGE and "swapped" in err and "doclens score OUTPUTS --references REFS" in err, err


def test_columns_map_the_outputs_and_reference_columns_the_references(tmp_path, capsys):
    outputs = tmp_path / "outputs.csv"
    outputs.write_text("encounter_id,note\nD1,Fever for two days.\nD2,No cough.\n")
    gold = tmp_path / "gold.csv"
    gold.write_text("encounter_id,note\nD1,Fever for two days and a rash.\nD2,Cough at night.\n")
    code, _, err = run(["score", outputs, "--columns", "id=encounter_id,prediction=note", "--references", gold,
                        "--reference-columns", "id=encounter_id,reference=note", *JUDGE,
                        "-o", tmp_path / "s.json"], capsys)
    assert code == EXIT_OK, err
    report = json.loads((tmp_path / "s.json").read_text())
    assert [r["id"] for r in report["instances"]] == ["D1", "D2"]
    assert report["instances"][0]["scores"]["claim_precision"] == 1.0  # the output's own text, not the gold's
    # the references' fields given to --columns (the table it maps is the outputs): pointed to the other option
    code, _, err = run(["score", outputs, "--columns", "id=encounter_id,prediction=note,reference=note",
                        "--references", gold, *JUDGE], capsys)
    assert code == EXIT_USAGE and "--reference-columns" in err, err
    # --reference-columns without --references
    code, _, err = run(["score", outputs, "--reference-columns", "id=encounter_id", *JUDGE], capsys)
    assert code == EXIT_USAGE and "--reference-columns" in err and "--references" in err, err
