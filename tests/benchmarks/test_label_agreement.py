"""The labels read a second time: benchmarks/label_agreement.py (Cohen's κ, and the second readers'
labels it reads: every one an item of the labelled set, labelled true, false or null, once) and
benchmarks/table_reading.py (the system table's claims read)."""

import json

import pytest

from benchmarks import label_agreement


def test_cohen_kappa():
    assert label_agreement.cohen_kappa([(True, True), (False, False)] * 5) == 1.0
    # 8 of 10 agree; each reader says yes half the time: chance 0.5, κ (0.8 - 0.5) / 0.5
    pairs = [(True, True)] * 4 + [(False, False)] * 4 + [(True, False), (False, True)]
    assert label_agreement.cohen_kappa(pairs) == pytest.approx(0.6)
    assert label_agreement.cohen_kappa([(True, True)] * 3) is None  # one label only: κ undefined
    assert label_agreement.cohen_kappa([]) is None


def test_second_labels_are_items_of_the_set(shared_data, tmp_path):
    from benchmarks.real_outputs import DEFAULT_LABELS, read_labels

    items = {i["item"]: i for i in read_labels(DEFAULT_LABELS, "both")}
    second = label_agreement.read_second(label_agreement.SECOND, items)
    assert len(second) > 200 and {items[k]["half"] for k in second} == {"dev", "held_out"}
    readers = label_agreement.agreement([(items[k], items[k]["label"], v) for k, v in second.items()])
    assert readers["both_labelled"] + readers["null_left_out"] == len(second)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"item": next(iter(items)), "label": "yes"}) + "\n")
    with pytest.raises(SystemExit, match="bad.jsonl:1: label must be"):
        label_agreement.read_second(bad, items)
    bad.write_text(json.dumps({"item": "test2/none/x/recall/0", "label": True}) + "\n")
    with pytest.raises(SystemExit, match="not in the labelled set"):
        label_agreement.read_second(bad, items)


def test_table_claims_sample_is_well_formed(shared_data):
    """benchmarks/table_reading.py's sample: both systems, both sides, encounters the labelled set
    never draws (so it is no copy of its items)."""
    from benchmarks import table_reading
    from benchmarks.real_outputs_sample import draw

    rows = table_reading.read_sample(table_reading.SAMPLE)
    assert len(rows) == 200
    assert {(r["system"], r["side"]) for r in rows} == {(s, side) for s in ("GPT-4", "train_UMLS")
                                                        for side in table_reading.SIDES}
    drawn = {(d["split"], d["encounter"]) for d in draw()}
    assert not {(r["split"], r["encounter"]) for r in rows} & drawn
