"""The labelled items of doclens judge-check / judge-fit (doclens/datasets/labelled.py): the shipped
real-output set (its fields still the sampler's draw, its premises the notes benchmarks read) and a
user's CSV / JSONL, every bad input an error naming the line and the field."""

import json

import pytest

from doclens.core.errors import InputError
from doclens.datasets.labelled import (
    AciBenchNotes,
    PremiseRef,
    near_miss_probe,
    parse_label,
    read_labelled,
    shipped_set,
)


def test_halves_are_disjoint_by_encounter_and_counted(shared_data):
    dev = shipped_set("real-outputs", "dev", shared_data / "aci_bench_systems")
    held_out = shipped_set("real-outputs", "held-out", shared_data / "aci_bench_systems")
    assert (len(dev.items), dev.undecided, len(held_out.items), held_out.undecided) == (542, 7, 557, 7)
    assert not {i.fold for i in dev.items} & {i.fold for i in held_out.items}
    assert {i.group for i in held_out.items} == {"GPT-4", "ChatGPT", "Text-Davinci-003", "BioBART-div", "LED",
                                                 "train_UMLS"}
    assert {i.side for i in dev.items} == {"recall", "precision"}
    fresh = shipped_set("real-outputs", "fresh", shared_data / "aci_bench_systems")
    assert (len(fresh.items), fresh.undecided) == (272, 2)  # round 3: drawn after held-out was read
    assert not {i.fold for i in fresh.items} & ({i.fold for i in dev.items} | {i.fold for i in held_out.items})
    fresh_2 = shipped_set("real-outputs", "fresh-2", shared_data / "aci_bench_systems")
    assert (len(fresh_2.items), fresh_2.undecided) == (278, 0)  # round 4: drawn after v7 was measured on fresh
    assert not {i.fold for i in fresh_2.items} & {i.fold for i in dev.items + held_out.items + fresh.items}
    sealed = shipped_set("real-outputs", "sealed", shared_data / "aci_bench_systems")
    assert (len(sealed.items), sealed.undecided) == (357, 0)  # round 5: drawn and labelled before issue 46's changes
    assert not {i.fold for i in sealed.items} & {i.fold for i in dev.items + held_out.items + fresh.items
                                                 + fresh_2.items}
    calibration = shipped_set("real-outputs", "calibration", shared_data / "aci_bench_systems")
    assert (len(calibration.items), calibration.undecided) == (281, 0)  # round 6: drawn after v11 shipped
    assert not {i.fold for i in calibration.items} & {i.fold for i in dev.items + held_out.items + fresh.items
                                                      + fresh_2.items + sealed.items}
    every = shipped_set("real-outputs", "all", shared_data / "aci_bench_systems")
    # 'all' never holds the sealed or the calibration half: they are read by name only
    assert len(every.items) == len(dev.items) + len(held_out.items) + len(fresh.items) + len(fresh_2.items)


def test_shipped_items_are_the_samplers_draw_and_the_benchmarks_premises(shared_data):
    """Each line's split, encounter, system, side, half and round are still what
    benchmarks/real_outputs_sample.py draws for its id, and each premise is the note
    benchmarks/real_outputs.py judges the item against."""
    from benchmarks.real_outputs import DEFAULT_LABELS, premises, read_labels
    from benchmarks.real_outputs_sample import draw
    drawn = {d["item"]: d for d in draw()}
    lines = [json.loads(line) for path in sorted(DEFAULT_LABELS.glob("labels_*.jsonl"))
             for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(lines) == 2303  # rounds 1 and 2 (1,113), 3 (274), 4 (278), 5 (357), 6 (281)
    for line in lines:
        assert {k: line[k] for k in ("split", "encounter", "system", "side", "half", "round")} == \
            {k: drawn[line["item"]][k] for k in ("split", "encounter", "system", "side", "half", "round")}
    benchmark = [i for i in read_labels(DEFAULT_LABELS, "held_out") if i["label"] is not None]
    ours = shipped_set("real-outputs", "held-out", shared_data / "aci_bench_systems").items
    assert [i.id for i in ours] == [i["item"] for i in benchmark]
    assert [i.premise for i in ours] == premises(benchmark)
    assert [(i.claim, i.label) for i in ours] == [(i["claim"], bool(i["label"])) for i in benchmark]


def test_a_missing_aci_bench_folder_says_which_option_to_give(tmp_path):
    with pytest.raises(InputError, match="--aci-bench-dir"):
        shipped_set("real-outputs", "dev", tmp_path / "nowhere")


@pytest.mark.parametrize("value, expected", [(True, True), ("false", False), ("Yes", True), (0, False), ("1", True),
                                             ("supported", True), ("not supported", False), ("", None),
                                             (None, None), ("  ", None)])
def test_labels_read_as_booleans(value, expected):
    assert parse_label(value, "f line 2") is expected


@pytest.mark.parametrize("value", ["maybe", 2, 0.5, "tru", [True], "null", "None"])  # only an empty cell is undecided
def test_a_label_that_is_not_boolean_like_names_line_and_field(value):
    with pytest.raises(InputError, match="f line 2: 'label' is not a boolean-like label") as caught:
        parse_label(value, "f line 2")
    assert caught.value.field == "label"


def test_csv_and_jsonl_items(tmp_path):
    csv_file = tmp_path / "items.csv"
    csv_file.write_text("claim,premise,label,site\nHas a cough.,Has a cough.,true,A\nHas fever.,Has a cough.,no,B\n"
                        "Not a claim,Has a cough.,,B\n", encoding="utf-8")
    read = read_labelled(str(csv_file), group_column="site")
    assert [(i.id, i.claim, i.label, i.group) for i in read.items] == [("line 2", "Has a cough.", True, "A"),
                                                                       ("line 3", "Has fever.", False, "B")]
    assert read.undecided == 1 and read.group_name == "site"
    jsonl = tmp_path / "items.jsonl"
    jsonl.write_text(json.dumps({"id": 7, "claim": "c", "premise": "p", "label": False, "side": "precision",
                                 "kind": "laterality"}) + "\n\n", encoding="utf-8")
    item = read_labelled(str(jsonl)).items[0]
    assert (item.id, item.side, item.kind, item.fold_key) == ("7", "precision", "laterality", "7")


@pytest.mark.parametrize("content, message, field", [
    ("", "no labelled items (an empty file", None),
    ("claim,label\nx,true\n", "column(s) 'premise' missing", "premise"),
    ("claim,premise\nx,y\n", "column(s) 'label' missing", "label"),
    ("claim,premise,label\nx,y,true\nz,w,perhaps\n", "line 3: 'label' is not a boolean-like label", "label"),
    ("claim,premise,label\n,y,true\n", "line 2: 'claim' is missing or empty", "claim"),
    ("claim,premise,label\nx,,true\n", "line 2: 'premise' is missing or empty", "premise"),
    ("id,claim,premise,label\na,x,y,true\na,x,y,false\n", "line 3: id 'a' repeats line 2", "id"),
    ("claim,premise,label,side\nx,y,true,sideways\n", "line 2: 'side' must be recall or precision", "side"),
])
def test_bad_csv_names_the_line_and_field(tmp_path, content, message, field):
    path = tmp_path / "items.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_labelled(str(path))
    assert message in str(caught.value) and str(path) in str(caught.value)
    assert caught.value.field == field


def test_group_column_must_exist_and_be_filled(tmp_path):
    path = tmp_path / "items.csv"
    path.write_text("claim,premise,label,site\nx,y,true,\n", encoding="utf-8")
    with pytest.raises(InputError, match="column\\(s\\) 'ward' missing"):
        read_labelled(str(path), group_column="ward")
    with pytest.raises(InputError, match="line 2: 'site' is missing or empty"):
        read_labelled(str(path), group_column="site")


def test_bad_jsonl_names_the_line(tmp_path):
    path = tmp_path / "items.jsonl"
    path.write_text('{"claim": "x", "premise": "y", "label": true}\n{"claim": "x", oops}\n', encoding="utf-8")
    with pytest.raises(InputError, match="items.jsonl line 2: not valid JSON"):
        read_labelled(str(path))
    path.write_text('{"claim": ["x"], "premise": "y", "label": true}\n', encoding="utf-8")
    with pytest.raises(InputError, match="line 1: 'claim' must be text, got list"):
        read_labelled(str(path))


def test_premise_references_resolve_to_aci_bench_notes(shared_data, tmp_path):
    folder = shared_data / "aci_bench_systems"
    notes = AciBenchNotes(folder)
    reference = json.loads((folder / "test2" / "references.jsonl").read_text(encoding="utf-8").splitlines()[0])
    path = tmp_path / "items.jsonl"
    path.write_text(json.dumps({"claim": "c", "label": True, "premise_ref": f"test2/{reference['id']}/reference"})
                    + "\n" + json.dumps({"claim": "c", "label": False, "premise_ref": {
                        "split": "test2", "encounter": reference["id"], "note": "GPT-4"}}) + "\n", encoding="utf-8")
    items = read_labelled(str(path), aci_bench_dir=folder).items
    assert items[0].premise == reference["reference"]
    assert items[1].premise == notes.text(PremiseRef("test2", reference["id"], "GPT-4"))
    for ref, message in (("test2/NOPE/reference", "encounter 'NOPE' is not in"),
                         ("test2/x/../../etc", "a premise reference is"), ("test9/x/reference", "cannot read")):
        path.write_text(json.dumps({"claim": "c", "label": True, "premise_ref": ref}) + "\n", encoding="utf-8")
        with pytest.raises(InputError, match="line 1") as caught:
            read_labelled(str(path), aci_bench_dir=folder)
        assert message in str(caught.value)


def test_the_near_miss_probe_format_resolves_its_notes_and_has_no_dev_half(shared_data, tmp_path):
    """The probe's lines name their note by ``premise`` ("reference" or "system": the item's
    system's note); grouped by kind; never a dev half (it is held out from every fit)."""
    folder = shared_data / "aci_bench_systems"
    notes = AciBenchNotes(folder)
    encounter = json.loads((folder / "test2" / "references.jsonl").read_text(encoding="utf-8").splitlines()[0])["id"]
    rows = [{"id": "nm1", "system": "GPT-4", "split": "test2", "encounter": encounter, "premise": "reference",
             "claim": "a", "label": True, "kind": "correct", "variant_of": None, "reason": "r"},
            {"id": "nm1.1", "system": "GPT-4", "split": "test2", "encounter": encounter, "premise": "system",
             "claim": "b", "label": False, "kind": "side", "variant_of": "nm1", "reason": "r"}]
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    probe = near_miss_probe(tmp_path, "held-out", notes)
    assert [(i.id, i.group, i.kind, i.label) for i in probe.items] == [("nm1", "correct", "correct", True),
                                                                      ("nm1.1", "side", "side", False)]
    assert probe.items[0].premise == notes.text(PremiseRef("test2", encounter, "reference"))
    assert probe.items[1].premise == notes.text(PremiseRef("test2", encounter, "GPT-4"))
    with pytest.raises(InputError, match="no dev half"):
        near_miss_probe(tmp_path, "dev", notes)
    rows[1]["premise"] = "the note text"
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(InputError, match="line 2: 'premise' names the note"):
        near_miss_probe(tmp_path, "all", notes)
