"""benchmarks/reward_values.py's comparison: the proof that a change left the reward's values as
they were (issue 49). The record itself needs ACI-BENCH's systems and the judge, so it is run by
hand (its docstring); here, its ``--compare`` on records written as it writes them."""

import copy
import json

from benchmarks.reward_values import differences, main, steps

ROW = {"encounter": "D2N088", "system": "GPT-4",
       "components": {"claim_recall": 0.5, "claim_precision": 0.25, "claim_f1": 1 / 3, "citation_recall": None}}
RECORD = {"benchmark": "reward_values", "judge": "clinical-rules:…", "steps": {"first_8": [ROW, {**ROW, "system": "LED"}]}}


def test_the_steps_are_reward_latencys():
    encounters = [f"E{n:02d}" for n in range(30)]
    made = dict(steps(encounters, tuple(f"S{n}" for n in range(10))))
    assert list(made) == ["first_8", "warm_8_S1", "warm_8_S2", "warm_8_S3", "meets_16", "warm_64"]
    assert [len(pairs) for pairs in made.values()] == [8, 8, 8, 8, 16, 64]
    assert {s for _, s in made["warm_64"]} == {"S5", "S6", "S7", "S8"}
    assert {e for e, _ in made["warm_64"]} == set(encounters[8:24])


def test_equal_records_have_no_difference(tmp_path, capsys):
    for name, record in (("a", RECORD), ("b", copy.deepcopy(RECORD))):
        (tmp_path / f"{name}.json").write_text(json.dumps(record))
    assert differences(RECORD, copy.deepcopy(RECORD)) == []
    assert main(["--compare", str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 0
    assert capsys.readouterr().out.strip() == "identical"


def test_every_changed_value_is_named(tmp_path, capsys):
    after = copy.deepcopy(RECORD)
    after["steps"]["first_8"][0]["components"]["claim_precision"] = 0.3
    after["steps"]["first_8"][1]["components"] = None  # unscored after
    found = differences(RECORD, after)
    assert found[0] == "first_8 #0 (D2N088, GPT-4) claim_precision: 0.25 -> 0.3"
    assert found[1].startswith("first_8 #1 (D2N088, LED): {") and found[1].endswith("-> None")
    (tmp_path / "a.json").write_text(json.dumps(RECORD))
    (tmp_path / "b.json").write_text(json.dumps(after))
    assert main(["--compare", str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 1
    assert "claim_precision" in capsys.readouterr().out


def test_a_missing_step_or_completion_is_a_difference():
    after = copy.deepcopy(RECORD)
    after["steps"]["warm_64"] = []
    after["steps"]["first_8"][1]["system"] = "BART"
    found = differences(RECORD, after)
    assert "first_8 #1 (D2N088, LED): another completion (D2N088, BART)" in found
    assert "warm_64: in one record only, or of another length" in found
