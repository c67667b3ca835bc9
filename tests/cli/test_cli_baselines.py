"""``doclens baselines``: ROUGE / BERTScore / MEDCON alone, on one table or on predictions joined
by id with references, in the output formats ``score`` writes."""

import csv
import json

import pytest

pytest.importorskip("rouge_score", reason="rouge-score is not installed (the 'baselines' extra)")

from doclens.baselines import compute_baselines  # noqa: E402
from doclens.cli import main  # noqa: E402
from doclens.core.errors import EXIT_INCOMPLETE, EXIT_OK, EXIT_USAGE  # noqa: E402
from tests.aci_published import DATA, published_table  # noqa: E402

ROWS = [{"id": "a", "prediction": "Fever for two days [0].", "reference": "Fever for 2 days."},
        {"id": "b", "prediction": "Knee pain.\nNo swelling.", "reference": "Right knee pain.\nSwelling."}]


def _table(tmp_path):
    path = tmp_path / "notes.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    return path


def test_one_table_scores_predictions_as_given(tmp_path, capsys):
    code = main(["baselines", str(_table(tmp_path)), "-o", str(tmp_path / "out.json")])
    out = capsys.readouterr().out
    assert code == EXIT_OK and "rouge1_f1" in out and "stem:no" in out
    result = json.loads((tmp_path / "out.json").read_text())
    expected = compute_baselines([r["prediction"] for r in ROWS], [r["reference"] for r in ROWS], ["rouge"],
                                 remove_citations=False)["rouge"]
    assert result["format"] == "doclens-baselines/1" and result["n_instances"] == 2
    assert result["baselines"]["rouge"]["scores"] == expected["scores"]
    assert result["baselines"]["rouge"]["config"]["citation_markers_removed"] == "none"
    assert [row["id"] for row in result["instances"]] == ["a", "b"]
    assert result["instances"][1]["rouge1_f1"] == expected["per_instance"][1]["rouge1_f1"]
    main(["baselines", str(_table(tmp_path)), "--remove-citations", "-o", str(tmp_path / "stripped.json")])
    stripped = json.loads((tmp_path / "stripped.json").read_text())["baselines"]["rouge"]
    assert stripped["scores"]["rouge1_precision"] > expected["scores"]["rouge1_precision"]


def test_predictions_joined_with_references_and_jsonl_output(tmp_path, capsys):
    predictions = tmp_path / "predictions.csv"
    with open(predictions, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "prediction"])
        for row in reversed(ROWS):  # another order than the references
            writer.writerow([row["id"], row["prediction"]])
    references = tmp_path / "refs.jsonl"
    references.write_text("".join(json.dumps({"id": r["id"], "reference": r["reference"]}) + "\n" for r in ROWS))
    output = tmp_path / "joined.json"
    code = main(["baselines", str(predictions), "--references", str(references), "-o", str(output),
                 "--output-format", "jsonl", "-q"])
    assert code == EXIT_OK, capsys.readouterr().err
    summary = json.loads(output.read_text())
    rows = [json.loads(line) for line in (tmp_path / summary["instances_file"]).read_text().splitlines()]
    assert [row["id"] for row in rows] == ["b", "a"] and "instances" not in summary
    alone = compute_baselines([ROWS[1]["prediction"]], [ROWS[1]["reference"]], ["rouge"], remove_citations=False)
    assert rows[0]["rougeLsum_f1"] == alone["rouge"]["per_instance"][0]["rougeLsum_f1"]


def test_a_prediction_without_reference_is_named(tmp_path, capsys):
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(json.dumps({"id": "zzz", "prediction": "Fever."}) + "\n")
    references = tmp_path / "refs.jsonl"
    references.write_text(json.dumps({"id": "a", "reference": "Fever."}) + "\n")
    code = main(["baselines", str(predictions), "--references", str(references), "-o", str(tmp_path / "o.json")])
    assert code == EXIT_USAGE and "'zzz'" in capsys.readouterr().err
    assert not (tmp_path / "o.json").exists()


def test_a_failed_baseline_keeps_the_others_and_exits_incomplete(tmp_path, capsys):
    pytest.importorskip("bert_score", reason="bert-score is not installed (the 'baselines' extra)")
    option = json.dumps({"model_type": str(tmp_path / "gone"), "num_layers": 6})
    code = main(["baselines", str(_table(tmp_path)), "--baselines", "rouge,bertscore", "--baseline-option",
                 f"bertscore={option}", "-o", str(tmp_path / "out.json"), "-q"])
    err = capsys.readouterr().err
    assert code == EXIT_INCOMPLETE and "INCOMPLETE: baseline bertscore failed" in err and "does not exist" in err
    result = json.loads((tmp_path / "out.json").read_text())
    assert result["baselines"]["bertscore"]["failed"] is True
    assert result["baselines"]["rouge"]["scores"]["rouge1_f1"] > 0


def test_reproduces_a_published_aci_bench_row(tmp_path, capsys):
    if not (DATA / "test2" / "published_scores.csv").is_file():
        pytest.skip(f"ACI-BENCH system outputs not found at {DATA} (the shared data folder beside the repo)")
    code = main(["baselines", str(DATA / "test2" / "systems" / "GPT-4.jsonl"), "--references",
                 str(DATA / "test2" / "references.jsonl"), "--task", "note_generation", "--divisions", "aci-bench",
                 "--baseline-option", 'rouge={"rouge_types": ["rouge1", "rouge2", "rougeLsum"]}',
                 "-o", str(tmp_path / "gpt4.json"), "-q"])
    assert code == EXIT_OK, capsys.readouterr().err
    rouge = json.loads((tmp_path / "gpt4.json").read_text())["baselines"]["rouge"]
    published = published_table("test2")
    for block, scores in [("ALL", rouge["scores"])] + [(f"division-{s}", v) for s, v in rouge["sections"].items()]:
        for column, key in (("ROUGE-1", "rouge1_f1"), ("ROUGE-2", "rouge2_f1"), ("ROUGE-L", "rougeLsum_f1")):
            assert abs(100 * scores[key] - published[block]["GPT-4"][column]) <= 0.01, (block, column)
