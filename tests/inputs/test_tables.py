"""Any table in: the same instances as JSONL, JSON, CSV, TSV, Parquet, a saved Dataset/DatasetDict
and a Hub dataset from the local cache give the same scores; --columns, --split, bad cells,
--references, DocLens.score(dataset, columns=) and Report → pandas / datasets.

Real pyarrow, pandas and datasets on real files in tmp_path; the overlap judge (instant, offline).
"""

import csv
import glob
import json
import math
import os
import shutil
import socket

import pytest

pa = pytest.importorskip("pyarrow", reason="the tables extra (pyarrow) is not installed")
pq = pytest.importorskip("pyarrow.parquet", reason="the tables extra (pyarrow) is not installed")
pd = pytest.importorskip("pandas", reason="the tables extra (pandas) is not installed")
datasets = pytest.importorskip("datasets", reason="the tables extra (datasets) is not installed")

from doclens import DocLens  # noqa: E402
from doclens.cli import main  # noqa: E402
from doclens.core.errors import EXIT_OK, EXIT_USAGE, InputError  # noqa: E402
from doclens.evaluators.rules.overlap import OverlapEvaluator  # noqa: E402
from doclens.inputs import tables  # noqa: E402
from doclens.inputs.tables import read_table  # noqa: E402
from doclens.reports.report import Report  # noqa: E402

SHA = "3f2a9c0d1e4b5a6978877665544332211000ffee"

#: note_generation: per-section claim objects (different sections per row), source lists,
#: citations (valid, invalid, uncited), a row with no source
NOTES = [
    {"id": "n1", "task": "note_generation",
     "prediction": "SUBJECTIVE\nThe patient reports fever for three days [0]. Cough at night [1].\n"
                   "ASSESSMENT AND PLAN\nViral infection, rest and fluids [2].",
     "reference": "SUBJECTIVE\nFever for three days and a night cough.\nASSESSMENT AND PLAN\nViral infection.",
     "source": ["[patient] I have had a fever for three days", "[patient] I cough at night",
                "[doctor] it is a viral infection, rest and drink fluids"],
     "reference_claims": {"subjective": ["The patient has had a fever for three days.", "The patient coughs at night."],
                          "assessment_and_plan": ["Viral infection."]},
     "prediction_claims": {"subjective": ["The patient reports fever for three days.", "Cough at night."],
                           "assessment_and_plan": ["Viral infection.", "Rest and fluids."]}},
    {"id": "n2", "task": "note_generation",
     "prediction": "SUBJECTIVE\nHeadache since Monday [0][5]. No nausea.\nOBJECTIVE EXAM\nBlood pressure 150/90 [1].",
     "reference": "SUBJECTIVE\nHeadache since Monday.\nOBJECTIVE EXAM\nBlood pressure 150/90.",
     "source": ["[patient] my head hurts since monday", "[doctor] your blood pressure is 150 over 90"],
     "reference_claims": {"subjective": ["Headache since Monday."], "objective_exam": ["Blood pressure 150/90."]},
     "prediction_claims": {"subjective": ["Headache since Monday.", "No nausea."]}},
    {"id": "n3", "task": "note_generation",
     "prediction": "ASSESSMENT AND PLAN\nStart metformin.",
     "reference": "ASSESSMENT AND PLAN\nStart metformin 500 mg.",
     "source": None,
     "reference_claims": {"assessment_and_plan": ["Start metformin 500 mg."]},
     "prediction_claims": {"assessment_and_plan": ["Start metformin."]}},
]
#: general: flat claim lists, a source *string* "[0] … [1] …" (starts with a bracket, not JSON)
GENERAL = [
    {"id": "g1", "prediction": "Fever [0]. Rash on the arm [1].", "reference": "Fever and a rash.",
     "source": "[0] patient: I have a fever [1] patient: there is a rash on my arm",
     "reference_claims": ["Fever.", "A rash."], "prediction_claims": ["Fever.", "Rash on the arm."]},
    {"id": "g2", "prediction": "No chest pain [0].", "reference": "Chest pain on exertion.",
     "source": "[0] patient: my chest hurts when I walk",
     "reference_claims": ["Chest pain on exertion."], "prediction_claims": ["No chest pain."]},
    {"id": "g3", "prediction": "Knee swelling.", "reference": "Left knee swelling.", "source": None,
     "reference_claims": ["Left knee swelling."], "prediction_claims": ["Knee swelling."]},
    {"id": "g4", "prediction": "Allergy to penicillin [0].", "reference": "Penicillin allergy.",
     "source": "[0] patient: penicillin gives me hives",
     "reference_claims": ["Penicillin allergy."], "prediction_claims": ["Allergy to penicillin."]},
    {"id": "g5", "prediction": "Sleeps well.", "reference": "Insomnia for weeks.", "source": None,
     "reference_claims": ["Insomnia for weeks."], "prediction_claims": ["Sleeps well."]},
]
DATA = {"notes": NOTES, "general": GENERAL}
STRUCTURED = ("source", "reference_claims", "prediction_claims")


def run(argv, capsys):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps({k: v for k, v in r.items() if v is not None}) + "\n" for r in rows))
    return path


def write_csv(path, rows, delimiter=",", rename=None):
    """CSV as a spreadsheet writes it: nested values as JSON text, absent values as empty cells."""
    rename = rename or {}
    columns = list(dict.fromkeys(k for r in rows for k in r))
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, delimiter=delimiter)
        writer.writerow([rename.get(c, c) for c in columns])
        for row in rows:
            cells = []
            for c in columns:
                value = row.get(c)
                cells.append("" if value is None else value if isinstance(value, str) else json.dumps(value))
            writer.writerow(cells)
    return path


def arrow_table(rows):
    """Native Arrow types: lists, structs of section lists (absent sections null), null sources."""
    return pa.Table.from_pylist([dict(r) for r in rows])


def scores_of(path):
    report = Report.load(path)
    return report.scores, [r.to_dict() for r in report.instances], report.counts


def score_cli(tmp_path, capsys, name, *argv):
    out = tmp_path / f"{name}.scores.json"
    # --task general: rows without a task are compared across inputs; a submission's task is general
    code, _, err = run(["score", *argv, "--evaluator", "overlap", "-q", "-o", out, "--chunk-size", 2,
                        "--task", "general"], capsys)
    assert code == EXIT_OK, err
    return scores_of(out)


def hub_arrow_cache(tmp_path, monkeypatch, repo_id, splits):
    """The Arrow cache a first, online ``datasets.load_dataset(repo_id)`` leaves behind:
    ``<HF_DATASETS_CACHE>/<owner>___<name>/default/0.0.0/<commit sha>/`` with ``dataset_info.json``
    and ``<name>-<split>.arrow``. Built by datasets' own Parquet builder (what an online load of a
    Parquet repo runs), then placed where the offline load looks (datasets/load.py,
    CachedDatasetModuleFactory; packaged_modules/cache/cache.py, _find_hash_in_cache)."""
    owner, name = repo_id.split("/")
    files = {}
    for split, table in splits.items():
        files[split] = [str(tmp_path / f"{split}.parquet")]
        pq.write_table(table, files[split][0])
    from datasets.packaged_modules.parquet.parquet import Parquet

    build = tmp_path / "build"
    Parquet(cache_dir=str(build), dataset_name=name, config_name="default", hash=SHA, data_files=files
            ).download_and_prepare()
    prepared = [p for p in glob.glob(str(build / name / "*" / "0.0.0" / SHA)) if os.path.isdir(p)]
    assert len(prepared) == 1
    cache = tmp_path / "hf-datasets"
    shutil.copytree(prepared[0], cache / f"{owner}___{name}" / "default" / "0.0.0" / SHA)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(cache))
    return cache


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to reach the network fails the test, even one a library catches and recovers
    from. The process is not in offline mode (as for a user without HF_HUB_OFFLINE): DocLens
    must go offline by itself."""
    import huggingface_hub.constants

    attempts = []

    def refuse(*args, **kwargs):
        attempts.append(args)
        raise OSError(f"network access attempted: {args}")
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    yield
    assert not attempts, f"network access attempted: {attempts}"


# ---- the same data in every format gives identical scores ---------------------------------------
@pytest.mark.parametrize("kind", ["notes", "general"])
def test_every_format_gives_identical_scores(tmp_path, capsys, monkeypatch, no_network, kind):
    rows = DATA[kind]
    monkeypatch.setattr(tables, "BATCH_ROWS", 2)  # Parquet and Arrow batches end mid-file
    table = arrow_table(rows)
    inputs = {
        "jsonl": write_jsonl(tmp_path / "in.jsonl", rows),
        "json": tmp_path / "in.json",
        "json-data": tmp_path / "wrapped.json",
        "csv": write_csv(tmp_path / "in.csv", rows),
        "tsv": write_csv(tmp_path / "in.tsv", rows, delimiter="\t"),
        "parquet": tmp_path / "in.parquet",
        "saved": tmp_path / "saved",
        "saved-dict": tmp_path / "saved_dict",
    }
    inputs["json"].write_text(json.dumps(rows, indent=2))
    inputs["json-data"].write_text(json.dumps({"version": 1, "data": rows}))
    pq.write_table(table, inputs["parquet"])
    dataset = datasets.Dataset(table)
    dataset.save_to_disk(str(inputs["saved"]))
    datasets.DatasetDict({"train": dataset.select([0]), "test": dataset}).save_to_disk(str(inputs["saved-dict"]))
    hub_arrow_cache(tmp_path, monkeypatch, f"acme/{kind}", {"train": table.slice(0, 1), "test": table})

    expected = score_cli(tmp_path, capsys, "jsonl", inputs["jsonl"])
    assert expected[0]["claim_recall"] is not None and 0 < expected[0]["claim_recall"] < 1
    assert expected[0]["citation_recall"] is not None and 0 < expected[0]["citation_recall"] < 1
    for name, path in inputs.items():
        extra = ["--split", "test"] if name == "saved-dict" else []
        assert score_cli(tmp_path, capsys, name, path, *extra) == expected, name
        assert len(read_table(str(path), split="test" if extra else None)) == len(rows), name
    assert score_cli(tmp_path, capsys, "hub", f"acme/{kind}", "--split", "test") == expected
    assert len(read_table(f"acme/{kind}", split="test")) == len(rows)


def test_formats_keep_nested_values_exactly(tmp_path, monkeypatch):
    """The instances themselves, not only the scores, are the same in every format."""
    rows = NOTES + [{**g, "task": "general"} for g in GENERAL]  # mixed claim shapes: JSON text in Arrow too
    as_text = [{k: (json.dumps(v) if k in STRUCTURED and v is not None and not isinstance(v, str) else v)
                for k, v in r.items()} for r in rows]
    write_jsonl(tmp_path / "in.jsonl", rows)
    write_csv(tmp_path / "in.csv", rows)
    pq.write_table(pa.Table.from_pylist(as_text), tmp_path / "in.parquet")
    datasets.Dataset.from_list(as_text).save_to_disk(str(tmp_path / "saved"))
    expected = list(read_table(str(tmp_path / "in.jsonl")))
    assert expected[0].reference_claims == NOTES[0]["reference_claims"] and expected[-1].source is None
    for name in ("in.csv", "in.parquet", "saved"):
        assert list(read_table(str(tmp_path / name))) == expected, name


def test_hub_download_cache_loads_offline(tmp_path, monkeypatch, capsys, no_network):
    """A repository fetched with huggingface_hub (``snapshot_download``) and never prepared by
    datasets: its files in the Hub cache are read offline."""
    import huggingface_hub.constants

    hub = tmp_path / "hub"
    repo = hub / "datasets--acme--raw_notes"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(SHA)
    (repo / "snapshots" / SHA / "data").mkdir(parents=True)
    pq.write_table(arrow_table(GENERAL), repo / "snapshots" / SHA / "data" / "test-00000-of-00001.parquet")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(hub))
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "hf-datasets"))
    expected = score_cli(tmp_path, capsys, "jsonl", write_jsonl(tmp_path / "in.jsonl", GENERAL))
    assert score_cli(tmp_path, capsys, "hub", "acme/raw_notes") == expected


def test_hub_dataset_not_cached_is_a_clear_error(tmp_path, monkeypatch, capsys, no_network):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "hf-datasets"))
    code, _, err = run(["score", "nobody/nothing", "--evaluator", "overlap", "-q"], capsys)
    assert code == EXIT_USAGE
    assert "nobody/nothing: Hub dataset not found in the local cache" in err and "never downloads" in err


# ---- --columns ----------------------------------------------------------------------------------
def test_columns_map_names_and_ignore_other_columns(tmp_path, capsys):
    rename = {"id": "encounter_id", "prediction": "generated_note", "reference": "note", "source": "dialogue",
              "reference_claims": "note_facts"}
    rows = [{**r, "annotator": "x"} for r in GENERAL]
    path = write_csv(tmp_path / "renamed.csv", rows, rename=rename)
    spec = ",".join(f"{f}={c}" for f, c in rename.items())
    expected = score_cli(tmp_path, capsys, "jsonl", write_jsonl(tmp_path / "in.jsonl", GENERAL))
    assert score_cli(tmp_path, capsys, "csv", path, "--columns", spec) == expected
    # the mapped field's own name is not read: 'prediction' comes from generated_note only
    frame = pd.read_csv(path).assign(prediction="something else entirely")
    frame.to_parquet(tmp_path / "renamed.parquet")
    assert score_cli(tmp_path, capsys, "pq", tmp_path / "renamed.parquet", "--columns", spec) == expected


@pytest.mark.parametrize("spec, words", [
    ("prediction=generated_note,refrence=note", ["unknown field 'refrence'", "prediction, reference"]),
    ("prediction=generated", ["no column 'generated' (for field 'prediction')", "'generated_note'", "'note'"]),
    ("prediction", ["expected FIELD=COLUMN"]),
    ("prediction=generated_note", ["no column for field 'reference' (looked for 'reference')",
                                   "--columns reference=COLUMN"]),
])
def test_columns_errors_name_fields_and_columns(tmp_path, capsys, spec, words):
    path = write_csv(tmp_path / "renamed.csv", GENERAL, rename={"prediction": "generated_note", "reference": "note"})
    code, _, err = run(["score", path, "--evaluator", "overlap", "-q", "--columns", spec], capsys)
    assert code == EXIT_USAGE and all(w in err for w in words), err
    assert not (tmp_path / "renamed.doclens.json").exists()


def test_columns_in_jsonl_rows(tmp_path, capsys):
    rows = [{"key": r["id"], "output": r["prediction"], **{k: v for k, v in r.items() if k not in ("id", "prediction")}}
            for r in GENERAL]
    rows[2].pop("output")
    path = write_jsonl(tmp_path / "renamed.jsonl", rows)
    code, _, err = run(["score", path, "--evaluator", "overlap", "-q", "--columns", "id=key,prediction=output",
                        "--chunk-size", 1, "-o", tmp_path / "s.json"], capsys)
    assert code == EXIT_USAGE
    assert "renamed.jsonl line 3: instance 'g3': no column 'output' (mapped to field 'prediction')" in err
    assert [r.id for r in Report.load(tmp_path / "s.json").instances] == ["g1", "g2"]


# ---- splits -------------------------------------------------------------------------------------
def test_split_choice_and_errors(tmp_path, capsys):
    dataset = datasets.Dataset(arrow_table(GENERAL))
    datasets.DatasetDict({"train": dataset.select([0, 1]), "validation": dataset.select([2]),
                          "test": dataset}).save_to_disk(str(tmp_path / "dd"))
    code, _, err = run(["score", tmp_path / "dd", "--evaluator", "overlap", "-q"], capsys)
    assert code == EXIT_USAGE and "has splits train, validation, test; choose one with --split" in err
    code, _, err = run(["score", tmp_path / "dd", "--split", "dev", "--evaluator", "overlap", "-q"], capsys)
    assert code == EXIT_USAGE and "no split 'dev'; the dataset has splits train, validation, test" in err
    scores = score_cli(tmp_path, capsys, "val", tmp_path / "dd", "--split", "validation")
    assert [r["id"] for r in scores[1]] == ["g3"]
    datasets.DatasetDict({"test": dataset}).save_to_disk(str(tmp_path / "one"))
    assert len(score_cli(tmp_path, capsys, "one", tmp_path / "one")[1]) == len(GENERAL)  # one split: no --split
    path = write_jsonl(tmp_path / "in.jsonl", GENERAL)
    code, _, err = run(["score", path, "--split", "test", "--evaluator", "overlap", "-q"], capsys)
    assert code == EXIT_USAGE and "--split applies to a saved dataset or a Hub dataset, not a jsonl file" in err


def test_a_folder_that_is_no_saved_dataset(tmp_path, capsys):
    (tmp_path / "folder").mkdir()
    code, _, err = run(["score", tmp_path / "folder", "--evaluator", "overlap", "-q"], capsys)
    assert code == EXIT_USAGE and "not one written by datasets' save_to_disk" in err


# ---- bad rows name the row, the instance, the field (and the column) ----------------------------
def test_bad_csv_cell_names_row_column_and_field(tmp_path, capsys):
    path = write_csv(tmp_path / "bad.csv", GENERAL, rename={"reference_claims": "ref_claims"})
    text = path.read_text().replace('"[""Chest pain on exertion.""]"', '"[""Chest pain on exertion."""')
    assert text != path.read_text()
    path.write_text(text)
    code, _, err = run(["score", path, "--evaluator", "overlap", "-q", "--chunk-size", 1, "--columns",
                        "reference_claims=ref_claims", "-o", tmp_path / "s.json"], capsys)
    assert code == EXIT_USAGE
    assert "bad.csv row 2: instance 'g2': column 'ref_claims' (field 'reference_claims') is not valid JSON" in err, err
    assert [r.id for r in Report.load(tmp_path / "s.json").instances] == ["g1"]  # the row before it is kept


@pytest.mark.parametrize("cell, words", [
    ('["a", ', ["column 'source' (field 'source') is not valid JSON", "a JSON list of strings"]),
    ('["a", 3]', ["field 'source[1]' must be a string (a unit or document) or an object (a table row)"]),
])
def test_bad_source_cell(tmp_path, capsys, cell, words):
    rows = [dict(GENERAL[0]), {**GENERAL[1], "source": cell}]
    path = write_csv(tmp_path / "bad.csv", rows)
    code, _, err = run(["score", path, "--evaluator", "overlap", "-q"], capsys)
    assert code == EXIT_USAGE and "bad.csv row 2: instance 'g2'" in err and all(w in err for w in words), err


def test_bad_parquet_row_names_row_instance_and_field(tmp_path, capsys):
    rows = [dict(r) for r in GENERAL]
    rows[3]["reference_claims"] = ["Penicillin allergy.", "  "]
    pq.write_table(arrow_table(rows), tmp_path / "bad.parquet")
    code, _, err = run(["score", tmp_path / "bad.parquet", "--evaluator", "overlap", "-q"], capsys)
    assert code == EXIT_USAGE
    assert "bad.parquet row 4: instance 'g4': field 'reference_claims[1]' is an empty claim" in err, err


def test_duplicate_id_and_short_csv_row(tmp_path, capsys):
    path = write_csv(tmp_path / "dup.csv", [GENERAL[0], GENERAL[1], {**GENERAL[2], "id": "g1"}])
    code, _, err = run(["score", path, "--evaluator", "overlap", "-q"], capsys)
    assert code == EXIT_USAGE and "dup.csv row 3: instance 'g1': field 'id' repeats the id of row 1" in err
    path = write_csv(tmp_path / "short.csv", GENERAL[:3])
    path.write_text(path.read_text() + "g9,only two cells\n")
    with pytest.raises(InputError, match=r"row 4: 2 cell\(s\), but the header names 6 column\(s\)"):
        list(read_table(str(path)))


def test_missing_id_column_is_refused_before_scoring(tmp_path, capsys):
    pq.write_table(arrow_table([{k: v for k, v in r.items() if k != "id"} for r in GENERAL]), tmp_path / "x.parquet")
    code, _, err = run(["score", tmp_path / "x.parquet", "--evaluator", "overlap", "-q"], capsys)
    assert code == EXIT_USAGE and "no column for field 'id' (looked for 'id')" in err and "--columns id=COLUMN" in err


def test_scorer_errors_are_located_by_row(tmp_path, capsys):
    rows = [dict(r) for r in GENERAL]
    rows[1]["task"] = "poetry"
    path = write_csv(tmp_path / "task.csv", rows)
    code, _, err = run(["score", path, "--evaluator", "overlap", "-q"], capsys)
    assert code == EXIT_USAGE and "task.csv row 2: instance 'g2'" in err and "poetry" in err, err


def test_a_submission_as_input_points_to_references(tmp_path, capsys):
    path = tmp_path / "sub.json"
    path.write_text(json.dumps(submission(GENERAL)))
    code, _, err = run(["score", path, "--evaluator", "overlap", "-q"], capsys)
    assert code == EXIT_USAGE and "a DocLens submission" in err and "--references" in err


# ---- Python: DocLens.score(dataset, columns=) ---------------------------------------------------
def test_python_api_takes_datasets_frames_and_mapped_dicts(tmp_path):
    scorer = DocLens(OverlapEvaluator())
    expected = scorer.score(GENERAL, progress=False)
    rename = {"prediction": "generated_note", "reference": "note"}
    renamed = [{rename.get(k, k): v for k, v in r.items()} for r in GENERAL]
    pq.write_table(arrow_table(renamed), tmp_path / "r.parquet")
    frame = pd.read_parquet(tmp_path / "r.parquet")  # list cells come back as numpy arrays
    assert type(frame.loc[0, "reference_claims"]).__module__ == "numpy"
    for data in (datasets.Dataset.from_list(renamed),
                 datasets.DatasetDict({"test": datasets.Dataset.from_list(renamed)}), frame, renamed):
        report = scorer.score(data, progress=False, columns=rename)
        assert report.scores == expected.scores and report.to_dict()["instances"] == expected.to_dict()["instances"]
    assert len(tables.as_instances(frame, rename)) == len(GENERAL)
    with pytest.raises(InputError, match="no column for field 'prediction'.*columns= prediction=COLUMN"):
        scorer.score(frame, progress=False)
    with pytest.raises(InputError, match="has splits a, b; choose one"):
        scorer.score(datasets.DatasetDict({"a": datasets.Dataset.from_list(renamed),
                                           "b": datasets.Dataset.from_list(renamed)}), progress=False, columns=rename)


def test_python_rows_without_ids_get_positions_as_dicts_do():
    rows = [{k: v for k, v in r.items() if k != "id"} for r in GENERAL]
    scorer = DocLens(OverlapEvaluator())
    from_dicts = scorer.score(rows, progress=False)
    from_frame = scorer.score(pd.DataFrame(rows), progress=False)
    assert [r.id for r in from_frame.instances] == [r.id for r in from_dicts.instances] == ["0", "1", "2", "3", "4"]
    assert from_frame.scores == from_dicts.scores


# ---- --references: a submission joined with references ------------------------------------------
def submission(rows, **extra):
    return {"format": "doclens-submission/1", "system": "notes-v2", "task": "general", "benchmark": "toy/test",
            "outputs": [{"id": r["id"], "prediction": r["prediction"], "prediction_claims": r["prediction_claims"]}
                        for r in rows], **extra}


def references(rows):
    return [{k: v for k, v in r.items() if k not in ("prediction", "prediction_claims")} for r in rows]


def test_references_join_scores_like_the_joined_file(tmp_path, capsys):
    expected = score_cli(tmp_path, capsys, "jsonl", write_jsonl(tmp_path / "in.jsonl", GENERAL))
    sub = tmp_path / "sub.json"
    shuffled = [GENERAL[i] for i in (3, 0, 4, 1, 2)]
    sub.write_text(json.dumps(submission(GENERAL)))
    refs_csv = write_csv(tmp_path / "refs.csv", references(shuffled))
    pq.write_table(arrow_table(references(shuffled)), tmp_path / "refs.parquet")
    for refs in (refs_csv, tmp_path / "refs.parquet"):
        assert score_cli(tmp_path, capsys, refs.suffix, sub, "--references", refs) == expected
    assert Report.load(tmp_path / ".csv.scores.json").config["system"] == "notes-v2"
    # a prediction column in the references is not used: the submission's prediction is
    with_prediction = [{**r, "prediction": "unrelated text"} for r in references(GENERAL)]
    write_jsonl(tmp_path / "refs_pred.jsonl", with_prediction)
    assert score_cli(tmp_path, capsys, "p", sub, "--references", tmp_path / "refs_pred.jsonl") == expected


def test_references_join_names_every_missing_id_on_both_sides(tmp_path, capsys):
    sub = tmp_path / "sub.json"
    sub.write_text(json.dumps(submission(GENERAL[:3] + [{**GENERAL[0], "id": "extra"}])))
    refs = write_jsonl(tmp_path / "refs.jsonl", references(GENERAL[1:]))
    code, _, err = run(["score", sub, "--references", refs, "--evaluator", "overlap", "-q"], capsys)
    assert code == EXIT_USAGE
    assert f"2 submission id(s) have no row in {refs}: 'g1', 'extra'" in err, err
    assert f"2 reference id(s) have no output in {sub}: 'g4', 'g5'" in err, err
    many = [{**GENERAL[0], "id": f"r{i}"} for i in range(25)]
    write_jsonl(tmp_path / "many.jsonl", references(GENERAL + many))
    sub.write_text(json.dumps(submission(GENERAL)))
    code, _, err = run(["score", sub, "--references", tmp_path / "many.jsonl", "--evaluator", "overlap", "-q"], capsys)
    assert code == EXIT_USAGE and "25 reference id(s) have no output" in err
    assert "'r19' … and 5 more" in err and "'r20'" not in err


def test_references_refuses_duplicates_and_invalid_submissions(tmp_path, capsys):
    sub = tmp_path / "sub.json"
    sub.write_text(json.dumps(submission(GENERAL)))
    refs = write_csv(tmp_path / "refs.csv", references(GENERAL + [GENERAL[1], GENERAL[1]]))
    code, _, err = run(["score", sub, "--references", refs, "--evaluator", "overlap", "-q"], capsys)
    assert code == EXIT_USAGE and "1 id(s) given more than once" in err and "'g2' at row 2, row 6, row 7" in err
    bad = submission(GENERAL)
    bad["outputs"][1]["id"] = bad["outputs"][0]["id"]
    del bad["system"]
    sub.write_text(json.dumps(bad))
    code, _, err = run(["score", sub, "--references", write_jsonl(tmp_path / "r.jsonl", references(GENERAL)),
                        "--evaluator", "overlap", "-q"], capsys)
    assert code == EXIT_USAGE and "not a valid submission" in err and "'system' is a required property" in err
    assert "$.outputs[1].id: id 'g1' repeats" in err


def test_references_use_the_submission_task_and_claims(tmp_path, capsys):
    notes = [{**r, "task": None} for r in NOTES]
    expected = score_cli(tmp_path, capsys, "jsonl", write_jsonl(tmp_path / "in.jsonl", NOTES))
    sub = tmp_path / "sub.json"
    sub.write_text(json.dumps(submission(NOTES, task="note_generation")))
    pq.write_table(arrow_table(references(notes)), tmp_path / "refs.parquet")
    assert score_cli(tmp_path, capsys, "refs", sub, "--references", tmp_path / "refs.parquet") == expected


# ---- Report → pandas / datasets -----------------------------------------------------------------
def test_report_to_pandas_and_dataset(tmp_path):
    report = DocLens(OverlapEvaluator()).score(GENERAL + [{**GENERAL[0], "id": "empty", "reference_claims": [],
                                                           "source": None}], progress=False)
    frame = report.to_pandas()
    rows = report.to_rows()
    assert list(frame["id"]) == [r.id for r in report.instances]
    assert list(frame.columns) == list(rows[0])
    for metric in ("claim_recall", "claim_precision", "citation_recall", "citation_precision"):
        hits = frame[f"{metric}_hits"].sum()
        items = frame[f"{metric}_items"].sum()
        assert hits / items == pytest.approx(report.scores[metric])  # the pooled score, from the rows
        for result, value in zip(report.instances, frame[metric]):
            expected = result.scores[metric]
            assert (math.isnan(value) and expected is None) or value == expected
    assert pd.isna(frame.set_index("id").loc["g3", "citation_recall_items"])  # no source: citations do not apply
    assert pd.isna(frame.set_index("id").loc["empty", "claim_recall"])  # nothing to score
    assert frame.set_index("id").loc["empty", "claim_recall_items"] == 0
    assert str(frame["claim_recall_items"].dtype) == "Int64" and frame["unparsed"].sum() == 0
    dataset = report.to_dataset()
    assert dataset.num_rows == len(report.instances) and dataset.column_names == list(rows[0])
    assert dataset.features["claim_recall"].dtype == "float64" and dataset.features["failed"].dtype == "int64"
    assert dataset.to_list() == rows
    dataset.to_parquet(str(tmp_path / "rows.parquet"))  # a real Arrow table: it round-trips
    assert pq.read_table(tmp_path / "rows.parquet").to_pylist() == rows


def test_report_rows_count_unparsed_and_failed():
    from tests.helpers import ProvenanceJudge

    rows = [{**GENERAL[0], "reference_claims": ["GARBLED claim", "Fever."]}, GENERAL[1]]
    report = DocLens(ProvenanceJudge()).score(rows, progress=False)
    frame = report.to_pandas().set_index("id")
    assert frame.loc["g1", "unparsed"] == 1 and frame.loc["g2", "unparsed"] == 0
    assert frame["failed"].sum() == 0


def test_references_join_a_table_of_outputs(tmp_path, capsys):
    """Outputs as a table (JSON Lines or CSV with id and prediction, the shape ACI-BENCH's system
    files have) join the references like a submission does; the system is the file's name."""
    expected = score_cli(tmp_path, capsys, "jsonl", write_jsonl(tmp_path / "in.jsonl", GENERAL))
    outputs = [{"id": r["id"], "prediction": r["prediction"], "prediction_claims": r["prediction_claims"]}
               for r in GENERAL]
    refs = write_jsonl(tmp_path / "refs.jsonl", references([GENERAL[i] for i in (2, 0, 4, 1, 3)]))
    for name in ("sys-a.jsonl", "sys-b.json"):  # JSON Lines, also under a .json name
        table = write_jsonl(tmp_path / name, outputs)
        assert score_cli(tmp_path, capsys, name, table, "--references", refs) == expected
    assert Report.load(tmp_path / "sys-a.jsonl.scores.json").config["system"] == "sys-a"
    write_jsonl(tmp_path / "bad.jsonl", [{"id": "g1", "prediction": 3}])
    code, _, err = run(["score", tmp_path / "bad.jsonl", "--references", refs, "--evaluator", "overlap", "-q"],
                       capsys)
    assert code == EXIT_USAGE and "bad.jsonl line 1" in err and "'prediction' must be a string" in err
