"""Submissions, signatures, bootstrap intervals, human agreement and the HTML views (issue 5)."""

import csv
import json
import math
import random

import numpy as np
import pytest

from doclens import DocLens, Evaluator, Report
from doclens.cli import main
from doclens.core.errors import InputError
from doclens.core.metrics import aggregate
from doclens.evaluators.rules.overlap import OverlapEvaluator
from doclens.families import DOCLENS_METRICS
from doclens.reports.submissions import load_schema, validate_document, validate_file
from doclens.scoring.signature import component_signature, parse_signature, signature_differences
from doclens.stats.agreement import (
    instance_agreement,
    kendall_tau_b,
    pairwise_agreement,
    read_human_scores,
    read_preferences,
    spearman_rho,
)
from doclens.stats.bootstrap import (
    STATISTICS,
    CountTable,
    align_by_id,
    bootstrap_intervals,
    paired_bootstrap,
    report_instance_counts,
    resample_weights,
)
from doclens.views.leaderboard import group_by_signature, load_entry, rank_group
from tests.conftest import REPO

ROWS = [
    {"id": "a", "prediction": "The patient has a fever [0]. He coughs [1].", "reference": "Fever and cough.",
     "source": ["[patient] I have a fever.", "[patient] and a cough."],
     "reference_claims": ["The patient has a fever.", "The patient has a cough."],
     "prediction_claims": ["The patient has a fever.", "The patient coughs."]},
    {"id": "b", "prediction": "Headache since Monday [0]. Takes ibuprofen [3].", "reference": "Headache. Ibuprofen.",
     "source": ["[patient] my head hurts since monday", "[doctor] ok"],
     "reference_claims": ["The patient has a headache.", "The patient takes ibuprofen."],
     "prediction_claims": ["The patient has a headache since Monday.", "The patient takes ibuprofen."]},
    {"id": "c", "prediction": "No complaints.", "reference": "No complaints.", "reference_claims": [],
     "prediction_claims": []},
]


def run(argv, capsys):
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def score(rows, **options) -> Report:
    return DocLens(OverlapEvaluator(), **options).score(rows, progress=False)


# ---- submissions -----------------------------------------------------------------------------
GOOD_SUBMISSION = {"format": "doclens-submission/1", "system": "demo", "task": "general", "benchmark": "toy/test",
                   "metadata": {"model": "x"},
                   "outputs": [{"id": "a", "prediction": "Fever [0]."}, {"id": "b", "prediction": "Headache."}]}


def test_good_submission_is_valid_and_ids_are_checked(tmp_path, capsys):
    kind, problems = validate_document(GOOD_SUBMISSION, expected_ids=["a", "b"])
    assert kind == "submission" and problems == []
    path = tmp_path / "sub.json"
    path.write_text(json.dumps(GOOD_SUBMISSION))
    refs = tmp_path / "refs.jsonl"
    refs.write_text('{"id": "a"}\n{"id": "b"}\n{"id": "zz-missing"}\n')
    code, out, _ = run(["validate", str(path)], capsys)
    assert code == 0 and "valid submission" in out
    code, out, _ = run(["validate", str(path), "--references", str(refs)], capsys)
    assert code == 2 and "'zz-missing'" in out and "1 benchmark id(s) missing" in out


def test_broken_submission_lists_every_problem_with_its_path(tmp_path, capsys):
    broken = {"format": "doclens-submission/1", "system": "", "task": "poetry", "benchmark": "toy",
              "colour": "red",
              "outputs": [{"id": "a", "prediction": 3}, {"id": "a", "prediction": "x"},
                          {"prediction": "no id"}, {"id": "ghost", "prediction": "y", "score": 1}]}
    kind, problems = validate_document(broken, expected_ids=["a", "b"])
    found = {(p.path, p.message.split(" ")[0]) for p in problems}
    text = "\n".join(map(str, problems))
    assert kind == "submission"
    assert ("$.system", "''") in found  # too short
    assert any(p.path == "$.task" for p in problems)
    assert any(p.path == "$" and "colour" in p.message for p in problems)
    assert any(p.path == "$.outputs[0].prediction" and "not of type 'string'" in p.message for p in problems)
    assert any(p.path == "$.outputs[1].id" and "repeats the id at $.outputs[0].id" in p.message for p in problems)
    assert any(p.path == "$.outputs[2]" and "'id' is a required property" in p.message for p in problems)
    assert any(p.path == "$.outputs[3]" and "'score' was unexpected" in p.message for p in problems)
    assert any(p.path == "$.outputs[3].id" and "unknown id 'ghost'" in p.message for p in problems), text
    assert any(p.path == "$" and "missing: 'b'" in p.message for p in problems), text
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(broken))
    code, out, _ = run(["validate", str(path), "--kind", "submission"], capsys)
    assert code == 2 and "INVALID submission" in out and "$.outputs[0].prediction" in out


def test_duplicate_json_keys_bad_json_and_unknown_format(tmp_path):
    path = tmp_path / "dup.json"
    path.write_text('{"format": "doclens-submission/1", "system": "a", "system": "b", "task": "general", '
                    '"benchmark": "t", "outputs": [{"id": "1", "prediction": "x"}]}')
    _, problems = validate_file(str(path))
    assert [str(p) for p in problems] == ["$: key 'system' is given more than once (JSON keeps only the last)"]
    path.write_text('{"format": ')
    _, problems = validate_file(str(path))
    assert len(problems) == 1 and "not valid JSON" in problems[0].message and "line 1" in problems[0].message
    kind, problems = validate_document({"format": "nope"})
    assert kind is None and problems[0].path == "$.format" and "unknown format 'nope'" in problems[0].message


def test_scores_file_from_a_real_run_is_valid_and_broken_ones_are_named(tmp_path):
    report = score(ROWS)
    data = report.to_dict()
    assert validate_document(data, expected_ids=["a", "b", "c"]) == ("scores", [])
    data["scores"]["claim_recall"] = 1.5
    del data["signature"]
    data["instances"][1]["statements"][0]["cited"] = ["0"]
    _, problems = validate_document(data, expected_ids=["a", "b", "c", "d"])
    paths = {p.path for p in problems}
    assert {"$", "$.scores.claim_recall", "$.instances[1].statements[0].cited[0]"} <= paths
    assert any("'signature' is a required property" in p.message for p in problems)
    assert any("missing: 'd'" in p.message for p in problems)


def test_schemas_ship_as_package_data():
    import configparser

    config = configparser.ConfigParser()
    config.read(REPO / "setup.cfg")
    assert "doclens.schemas = schemas" in config["options"]["package_dir"]
    assert "*.json" in config["options.package_data"]["doclens.schemas"]
    assert load_schema("submission")["properties"]["format"]["const"] == "doclens-submission/1"
    assert load_schema("scores")["properties"]["format"]["const"] == "doclens-report/1"


# ---- signatures ------------------------------------------------------------------------------
class Judge(Evaluator):
    def entail_batch(self, pairs):
        return [True for _ in pairs]


class OtherJudge(Evaluator):
    def entail_batch(self, pairs):
        return [False for _ in pairs]


def test_signatures_equal_for_equal_runs_and_differ_for_any_option():
    first, second = score(ROWS), score(ROWS)
    assert first.signature == second.signature
    inherit = score(ROWS, uncited="inherit")
    capped = score(ROWS, max_citations=1)
    assert inherit.signature != first.signature and capped.signature != first.signature
    assert signature_differences(first.signature, inherit.signature) == ["uncited: zero != inherit"]
    assert parse_signature(capped.signature)["maxcit"] == "1"
    stricter = DocLens(OverlapEvaluator(threshold=0.9)).score(ROWS, progress=False)
    assert parse_signature(stricter.signature)["judge"] != parse_signature(first.signature)["judge"]


def test_custom_judges_are_named_by_class_so_they_never_share_a_signature():
    one = DocLens(Judge()).score(ROWS, progress=False)
    other = DocLens(OtherJudge()).score(ROWS, progress=False)
    assert parse_signature(one.signature)["judge"] == f"custom({__name__}.Judge)"
    assert one.signature != other.signature
    named = Judge()
    named.name, named.model = "mine", "m-1"
    assert component_signature(named) == "mine:m-1"


def test_prompt_style_is_in_the_signature_of_chat_judges():
    from doclens.evaluators.llm.chat import judge_prompt_tags
    from doclens.scoring.signature import make_signature

    common = dict(version="1", tasks=["general"], judge="openai-chat:m", extract="given")
    json_cot = make_signature(**common, style="json_cot", prompt_tags=judge_prompt_tags("json_cot"))
    cot = make_signature(**common, style="cot", prompt_tags=judge_prompt_tags("cot"))
    assert parse_signature(json_cot)["style"] == "json_cot" and parse_signature(cot)["style"] == "cot"
    assert parse_signature(json_cot)["prompts"] != parse_signature(cot)["prompts"]
    assert "style" not in parse_signature(score(ROWS).signature)  # entailment-only judges have no style


# ---- bootstrap -------------------------------------------------------------------------------
def random_counts(n, seed=0, empty_every=7):
    rng = random.Random(seed)
    out = []
    for i in range(n):
        counts = {"claim_recall": (0, 0) if i % empty_every == 0 else (rng.randint(0, 6), 6)}
        items = rng.randint(1, 4)
        counts["claim_precision"] = (rng.randint(0, items), items)
        if i % 3:  # a third of the instances have no source: citation metrics skipped
            counts["citation_recall"] = (rng.randint(0, 2), 2)
            counts["citation_precision"] = (rng.randint(0, 3), 3)
        out.append(counts)
    return out


@pytest.mark.parametrize("statistic", ["claim_recall", "claim_recall_macro", "claim_precision"])
def test_bootstrap_percentile_interval_equals_scipy_bootstrap(statistic):
    """scipy.stats.bootstrap (method="percentile", instances resampled as pairs (hits, items)) is the
    oracle; the two draw different resamples, so the endpoints agree within Monte-Carlo error: with
    20,000 resamples an endpoint's standard error is about 0.02 of the statistic's standard error,
    and the tolerance is 0.15 of it."""
    import inspect

    stats = pytest.importorskip("scipy.stats", reason="scipy is the oracle")
    counts = random_counts(80)
    metric = statistic.removesuffix("_macro")
    hits = np.array([c[metric][0] for c in counts], dtype=float)
    items = np.array([c[metric][1] for c in counts], dtype=float)

    def pooled(h, i, axis=-1):
        return h.sum(axis=axis) / i.sum(axis=axis)

    def macro(h, i, axis=-1):  # mean over the resampled instances that have items
        has = i > 0
        return np.where(has, h / np.where(has, i, 1), 0).sum(axis=axis) / has.sum(axis=axis)

    seed = {"rng" if "rng" in inspect.signature(stats.bootstrap).parameters else "random_state":
            np.random.default_rng(0)}
    oracle = stats.bootstrap((hits, items), macro if statistic.endswith("_macro") else pooled, paired=True,
                             vectorized=True, n_resamples=20_000, method="percentile", confidence_level=0.95, **seed)
    ours = bootstrap_intervals(counts, n_resamples=20_000, seed=0)[statistic]
    tolerance = 0.15 * oracle.standard_error
    assert ours.point == pytest.approx((macro if statistic.endswith("_macro") else pooled)(hits, items))
    assert ours.low == pytest.approx(oracle.confidence_interval.low, abs=tolerance)
    assert ours.high == pytest.approx(oracle.confidence_interval.high, abs=tolerance)


def test_bootstrap_is_reproducible_under_a_seed_and_covers_the_point_estimate():
    counts = random_counts(300)
    first = bootstrap_intervals(counts, n_resamples=500, seed=7)
    again = bootstrap_intervals(counts, n_resamples=500, seed=7)
    other = bootstrap_intervals(counts, n_resamples=500, seed=8)
    assert first == again and first != other
    points = aggregate(counts, DOCLENS_METRICS)[0]
    for key in STATISTICS:
        interval = first[key]
        assert interval.point == points[key]
        assert interval.low < interval.point < interval.high, key
        assert interval.resamples == 500
        assert not any(math.isnan(v) for v in (interval.low, interval.high))
    assert first["claim_recall"].high - first["claim_recall"].low < 0.1


def test_resampled_statistics_equal_aggregate_on_the_resampled_instances():
    counts = random_counts(60, seed=3)
    table = CountTable(counts)
    weights = resample_weights(np.random.default_rng(0), len(counts), 5)
    stats = table.statistics(weights)
    for row, w in enumerate(weights):
        resampled = [counts[i] for i in range(len(counts)) for _ in range(int(w[i]))]
        expected = aggregate(resampled, DOCLENS_METRICS)[0]
        for j, key in enumerate(STATISTICS):
            assert stats[row, j] == pytest.approx(expected[key], abs=1e-12), key


def test_intervals_are_never_nan():
    nothing = [{"claim_recall": (0, 0), "claim_precision": (0, 0)} for _ in range(5)]
    intervals = bootstrap_intervals(nothing, n_resamples=50)
    assert all(v.point is None and v.low is None and v.high is None for v in intervals.values())
    one_scored = nothing + [{"claim_recall": (1, 2), "claim_precision": (0, 0)}]
    interval = bootstrap_intervals(one_scored, n_resamples=200, seed=1)["claim_recall"]
    assert interval.point == 0.5 and interval.low is None and not interval.informative  # n=1 < 10
    assert interval.note == "not informative (n=1 < 10)" and interval.instances == 1
    interval = bootstrap_intervals(one_scored, n_resamples=200, seed=1, min_instances=1)["claim_recall"]
    assert interval.point == 0.5 and interval.low == interval.high == 0.5
    assert 0 < interval.resamples < 200  # resamples without the scored instance are undefined, left out
    assert bootstrap_intervals([], n_resamples=10)["claim_recall"].point is None
    json.dumps({k: v.to_dict() for k, v in intervals.items()}, allow_nan=False)
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_intervals(one_scored, confidence=1.0)


def test_paired_bootstrap_tells_a_real_difference_from_none():
    base = random_counts(400, seed=5)
    better = [{k: (min(h + 1, n), n) if n else (h, n) for k, (h, n) in c.items()} for c in base]
    same = paired_bootstrap(base, base, n_resamples=300)
    assert all(d.delta == 0 and not d.distinguishable and d.p_value == 1.0 for d in same.values())
    diff = paired_bootstrap(base, better, n_resamples=300, seed=2)["claim_recall"]
    assert diff.delta > 0 and diff.distinguishable and diff.low <= diff.delta <= diff.high and diff.p_value < 0.01
    assert paired_bootstrap(base, better, n_resamples=300, seed=2)["claim_recall"] == diff


def test_too_few_instances_give_no_interval_p_value_or_verdict(tmp_path, capsys):
    """Two instances once printed "A better, p=0.000" and "distinguishable from #1"."""
    base = [{"claim_recall": (i % 3, 4)} for i in range(9)]
    better = [{"claim_recall": (4, 4)} for _ in range(9)]
    diff = paired_bootstrap(base, better, n_resamples=100)["claim_recall"]
    assert diff.delta > 0 and diff.low is None and diff.p_value is None and not diff.distinguishable
    assert diff.verdict == "not informative (n=9 < 10)" and diff.to_dict()["informative"] is False
    enough = paired_bootstrap(base + base[:1], better + better[:1], n_resamples=100)["claim_recall"]
    assert enough.informative and enough.low is not None and enough.verdict == "B better"

    a, b = tmp_path / "a.json", tmp_path / "b.json"
    score(ROWS).save(a)
    score([dict(r, prediction_claims=["Nothing relevant."]) for r in ROWS]).save(b)
    code, out, err = run(["compare", str(a), str(b), "--resamples", "50"], capsys)
    assert code == 0, err
    assert "not informative (n=2 < 10)" in out and "better" not in out and "0.000" not in out
    code, out, err = run(["compare", str(a), str(b), "--resamples", "50", "--json"], capsys)
    result = json.loads(out)["differences"]["claim_precision"]
    assert result["p_value"] is None and result["distinguishable"] is False
    assert result["verdict"] == "not informative (n=3 < 10)" and json.loads(out)["min_instances"] == 10
    code, out, err = run(["leaderboard", str(a), str(b), "--resamples", "50", "-o", str(tmp_path / "b.html")], capsys)
    # ranked by claim F1 (the default): 3 instances have claims on one side or the other
    assert code == 0 and "distinguishable" not in out and "vs #1: not informative (n=3 < 10)" in out
    assert "no CI" in out
    html = (tmp_path / "b.html").read_text()
    assert "not informative (n=2 &lt; 10)" in html and "distinguishable" not in html.split("</h1>")[1]


def test_paired_comparison_needs_the_same_instances():
    counts = random_counts(3)
    a, b = align_by_id(["x", "y", "z"], counts, ["z", "x", "y"], [counts[2], counts[0], counts[1]])
    assert b == a
    with pytest.raises(InputError, match=r"1 id\(s\) only in A: 'z'; 1 id\(s\) only in B: 'w'"):
        align_by_id(["x", "y", "z"], counts, ["x", "y", "w"], counts)


# ---- compare and leaderboard -----------------------------------------------------------------
def test_compare_and_leaderboard_refuse_to_mix_signatures(tmp_path, capsys):
    paths = {}
    for name, options in (("zero", {}), ("zero2", {}), ("inherit", {"uncited": "inherit"})):
        paths[name] = tmp_path / f"{name}.json"
        score(ROWS, **options).save(paths[name])
    code, out, err = run(["compare", str(paths["zero"]), str(paths["inherit"])], capsys)
    assert code == 2 and "different signatures" in err and "uncited: zero != inherit" in err
    code, out, err = run(["compare", str(paths["zero"]), str(paths["inherit"]), "--allow-different-signatures",
                          "--resamples", "50"], capsys)
    assert code == 0 and "WARNING: signatures differ" in out
    code, out, err = run(["compare", str(paths["zero"]), str(paths["zero2"]), "--json", "--resamples", "50"], capsys)
    result = json.loads(out)
    assert code == 0 and result["differences"]["claim_recall"]["delta"] == 0 and not result["signatures_differ"]

    board = tmp_path / "board.html"
    code, out, err = run(["leaderboard", *map(str, paths.values()), "-o", str(board), "--resamples", "50"], capsys)
    assert code == 0 and "table 2 of 2" in out and "2 different signatures" in out
    entries = [load_entry(str(p), n_resamples=50) for p in paths.values()]
    groups = group_by_signature(entries)
    assert sorted(len(g) for g in groups.values()) == [1, 2]
    with pytest.raises(ValueError, match="never ranked together"):
        rank_group(entries)
    html = board.read_text()
    assert html.count('<table class="board">') == 2


def test_ranking_marks_systems_not_distinguishable_from_the_leader():
    ids = [str(i) for i in range(200)]
    base = random_counts(200, seed=9)
    better = [{k: (min(h + 2, n), n) if n else (h, n) for k, (h, n) in c.items()} for c in base]
    from doclens.views.leaderboard import Entry

    def entry(name, counts, sample_ids=ids):
        return Entry(system=name, path=name, signature="s", partial=False,
                     intervals=bootstrap_intervals(counts, 100), ids=list(sample_ids), counts=counts)

    ranked = rank_group([entry("base", base), entry("best", better), entry("twin", [dict(c) for c in better]),
                         entry("elsewhere", base, [f"x{i}" for i in ids])], n_resamples=100)
    assert [e.system for e in ranked][:2] in (["best", "twin"], ["twin", "best"])
    assert ranked[0].rank == 1 and ranked[1].versus_leader_note == "not distinguishable from #1"
    by_name = {e.system: e for e in ranked}
    assert by_name["base"].versus_leader_note == "distinguishable from #1"
    assert by_name["elsewhere"].versus_leader is None
    assert "different instances" in by_name["elsewhere"].versus_leader_note


# ---- human agreement -------------------------------------------------------------------------
def _tau_b_by_definition(x, y):
    """Kendall's τ-b straight from its definition, every pair visited: (C − D) / sqrt((n₀ − n₁)(n₀ − n₂))."""
    n = len(x)
    signs = [np.sign(x[i] - x[j]) * np.sign(y[i] - y[j]) for i in range(n) for j in range(i + 1, n)]
    n0 = n * (n - 1) / 2
    tied_x = sum(1 for i in range(n) for j in range(i + 1, n) if x[i] == x[j])
    tied_y = sum(1 for i in range(n) for j in range(i + 1, n) if y[i] == y[j])
    return float(sum(signs)) / np.sqrt((n0 - tied_x) * (n0 - tied_y))


def _rho_by_definition(x, y):
    """Spearman's ρ: Pearson's r of average ranks (a tie shares the mean of the ranks it spans)."""
    def ranks(v):
        return np.array([np.sum(v < a) + (np.sum(v == a) + 1) / 2 for a in v])

    return float(np.corrcoef(ranks(x), ranks(y))[0, 1])


@pytest.mark.parametrize("seed", range(6))
def test_rank_correlations_equal_their_definitions(seed):
    rng = np.random.default_rng(seed)
    n = [2, 3, 17, 60, 250, 400][seed]
    x = rng.integers(0, 5, n).astype(float)  # many ties, as with Likert ratings
    y = np.round(x + rng.normal(0, 1.5, n), 1)
    if seed == 0:
        x, y = np.array([0.2, 0.9]), np.array([3.0, 1.0])
    assert spearman_rho(x, y) == pytest.approx(_rho_by_definition(x, y), abs=1e-12)
    assert kendall_tau_b(x, y) == pytest.approx(_tau_b_by_definition(x, y), abs=1e-12)


def test_rank_correlations_are_none_where_scipy_gives_nan():
    assert spearman_rho([1.0], [2.0]) is None and kendall_tau_b([1.0], [2.0]) is None
    assert spearman_rho([1, 1, 1], [1, 2, 3]) is None and kendall_tau_b([2, 2], [1, 3]) is None


def write_csv(path, header, rows):
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)


def test_agreement_cli_per_instance_matches_scipy(tmp_path, capsys):
    stats = pytest.importorskip("scipy.stats", reason="scipy (the [dev] extra) is the reference")
    report = score(ROWS)
    path = tmp_path / "scores.json"
    report.save(path)
    human = tmp_path / "human.csv"
    write_csv(human, ["id", "completeness"], [["a", "5"], ["b", "2"], ["c", "4"]])
    code, out, err = run(["agreement", str(path), str(human), "--human-column", "completeness", "--json"], capsys)
    assert code == 0, err
    results = {r["metric"]: r for r in json.loads(out)["results"]}
    recall = results["claim_recall"]
    # c has no reference claims: its claim recall is undefined and it is left out, counted
    xs = [report.instance("a").scores["claim_recall"], report.instance("b").scores["claim_recall"]]
    assert recall["n"] == 2 and recall["metric_undefined"] == 1
    # two pairs always give rho = ±1: below the minimum n no correlation is reported
    assert recall["spearman_rho"] is None and recall["kendall_tau_b"] is None
    assert recall["note"] == "not informative (n=2 < 10)" and recall["informative"] is False
    code, out, err = run(["agreement", str(path), str(human), "--human-column", "completeness"], capsys)
    assert code == 0 and "not informative (n=2 < 10)" in out and "1.000" not in out
    from doclens.stats.agreement import read_human_scores as read_scores

    direct = instance_agreement(report.instance("a") and {r.id: r.scores.get("claim_recall") for r in report.instances},
                                read_scores(str(human), "completeness")[0], "claim_recall", "completeness",
                                min_pairs=2)
    assert direct.spearman_rho == pytest.approx(stats.spearmanr(xs, [5, 2]).statistic) and direct.note == ""
    code, out, err = run(["agreement", str(path), str(human)], capsys)
    assert code == 2 and "--human-column" in err and "completeness" in err
    write_csv(human, ["id", "completeness"], [["a", "5"], ["b", "lots"]])
    code, out, err = run(["agreement", str(path), str(human), "--human-column", "completeness"], capsys)
    assert code == 2 and "line 3: column 'completeness' is not a number" in err
    write_csv(human, ["id", "completeness"], [["a", "5"], ["nobody", "1"]])
    code, out, err = run(["agreement", str(path), str(human), "--human-column", "completeness"], capsys)
    assert code == 2 and "'nobody'" in err


def test_read_human_scores_counts_empty_cells_and_refuses_repeats(tmp_path):
    path = tmp_path / "h.csv"
    write_csv(path, ["id", "s"], [["a", "1"], ["b", ""], ["c", "2.5"]])
    assert read_human_scores(str(path), "s") == ({"a": 1.0, "c": 2.5}, 1)
    write_csv(path, ["id", "s"], [["a", "1"], ["a", "2"]])
    with pytest.raises(InputError, match="line 3: id 'a' repeats line 2"):
        read_human_scores(str(path), "s")
    with pytest.raises(InputError, match="column\\(s\\) 'nope' missing"):
        read_human_scores(str(path), "nope")


def test_pairwise_agreement_counts_by_hand(tmp_path, capsys):
    scores = {"gpt": {"1": 0.9, "2": 0.2, "3": 0.5, "4": None, "5": 0.7},
              "mis": {"1": 0.4, "2": 0.6, "3": 0.5, "4": 0.3, "5": 0.1}}
    prefs = tmp_path / "prefs.csv"
    write_csv(prefs, ["id", "system_a", "system_b", "preferred"],
              [["1", "gpt", "mis", "gpt"], ["2", "gpt", "mis", "gpt"], ["3", "gpt", "mis", "mis"],
               ["4", "gpt", "mis", "gpt"], ["5", "mis", "gpt", "tie"]])
    result = pairwise_agreement(scores, read_preferences(str(prefs)), "claim_recall", min_pairs=1)
    assert (result.agree, result.disagree, result.metric_ties, result.human_ties, result.undefined) == (1, 1, 1, 1, 1)
    assert result.agreement == pytest.approx(1 / 3)
    few = pairwise_agreement(scores, read_preferences(str(prefs)), "claim_recall")  # 3 judged < 10
    assert few.agreement is None and few.note == "not informative (n=3 < 10)"
    write_csv(prefs, ["id", "system_a", "system_b", "preferred"], [["1", "gpt", "mis", "both"]])
    with pytest.raises(InputError, match="line 2: preferred must be 'gpt', 'mis' or 'tie'"):
        read_preferences(str(prefs))

    a, b = tmp_path / "a.json", tmp_path / "b.json"
    score([dict(r, prediction_claims=[r["reference"]]) for r in ROWS]).save(a)  # each claim is the reference
    worse = [dict(r, prediction_claims=["Nothing relevant."]) for r in ROWS]
    score(worse).save(b)
    write_csv(prefs, ["id", "system_a", "system_b", "preferred"], [["a", "good", "bad", "good"],
                                                                   ["b", "bad", "good", "good"],
                                                                   ["c", "good", "bad", "tie"]])
    code, out, err = run(["agreement", f"good={a}", f"bad={b}", str(prefs), "--metric", "claim_precision",
                          "--json"], capsys)
    assert code == 0, err
    result = json.loads(out)["results"][0]
    assert (result["agree"], result["disagree"], result["human_ties"]) == (2, 0, 1), result
    assert result["agreement"] is None and result["note"] == "not informative (n=2 < 10)"
    with pytest.raises(InputError, match="no scores file for system 'good'"):
        pairwise_agreement({"bad": {}}, read_preferences(str(prefs)), "claim_recall")


# ---- HTML ------------------------------------------------------------------------------------
INJECTION = '<script>document.title="pwned"</script><img src=x onerror="document.title=\'pwned\'">'


def injected_rows():
    rows = [dict(r) for r in ROWS]
    rows[0] = dict(rows[0], id='a<b>&"id"', prediction=f"The patient has a fever {INJECTION} [0]. He coughs [1].",
                   prediction_claims=[f"Fever {INJECTION}", "The patient coughs."])
    rows[0]["source"] = [f"[patient] I have a fever {INJECTION}", "[patient] and a cough."]
    return rows


def test_report_html_escapes_instance_text_and_links_citations(tmp_path, capsys):
    rows = injected_rows()
    inputs = tmp_path / "in.jsonl"
    inputs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    scores = tmp_path / "scores.json"
    score(rows).save(scores)
    page = tmp_path / "report.html"
    code, out, err = run(["report", str(scores), "--input", str(inputs), "-o", str(page), "--resamples", "50"], capsys)
    assert code == 0, err
    html = page.read_text()
    assert "<script>document.title" not in html and "<img src=x" not in html
    assert "&lt;script&gt;document.title=&quot;pwned&quot;&lt;/script&gt;" in html
    assert "a&lt;b&gt;&amp;&quot;id&quot;" in html
    assert html.count("<script>") == 1  # the page's own
    assert 'href="#src-0-0"' in html and 'id="src-0-0"' in html and 'id="src-1-1"' in html
    assert 'class="cite invalid"' in html  # b cites [3], which names no unit
    assert "http://" not in html and "https://" not in html  # nothing fetched from anywhere
    assert 'data-failures="0"' in html and 'id="only-failures"' in html
    missing = tmp_path / "partial.jsonl"
    missing.write_text(json.dumps(rows[1]) + "\n")
    code, out, err = run(["report", str(scores), "--input", str(missing), "-o", str(page)], capsys)
    assert code == 2 and "2 scored instance(s) not found" in err


def chromium_binary():
    import shutil

    return shutil.which("chromium") or shutil.which("chromium-browser")


def open_in_chromium(page, tmp_path, screenshot=None):
    """``(dom, console_errors)`` of ``page`` opened in headless Chromium (and a screenshot)."""
    import subprocess

    binary = chromium_binary()
    if binary is None:
        pytest.skip("headless Chromium is not installed (Debian package 'chromium'; .ci/run installs it)")
    flags = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'chromium-profile'}", "--enable-logging=stderr", "--v=0",
             "--virtual-time-budget=3000"]
    dom = subprocess.run([*flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    console = [line for line in dom.stderr.splitlines() if "CONSOLE" in line]
    errors = [line for line in console if "Uncaught" in line or "Error" in line or ":ERROR:CONSOLE" in line]
    if screenshot is not None:
        shot = subprocess.run([*flags, f"--screenshot={screenshot}", "--window-size=1200,1600", page.as_uri()],
                              capture_output=True, text=True, timeout=120)
        assert shot.returncode == 0 and screenshot.is_file() and screenshot.stat().st_size > 1000, shot.stderr[-2000:]
    return dom.stdout, errors


def test_console_error_detection_works(tmp_path):
    """The console check below could never fail if it could not see an error: show that it does."""
    page = tmp_path / "broken.html"
    page.write_text("<!DOCTYPE html><html><head><title>t</title></head><body><script>undefinedFunction();"
                    "</script></body></html>")
    _, errors = open_in_chromium(page, tmp_path)
    assert errors and "undefinedFunction" in "\n".join(errors)


def test_report_and_leaderboard_pages_render_in_chromium(tmp_path, capsys):
    rows = injected_rows()
    inputs = tmp_path / "in.jsonl"
    inputs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    scores, other = tmp_path / "scores.json", tmp_path / "other.json"
    score(rows).save(scores)
    score([dict(r, prediction_claims=["Nothing."]) for r in rows]).save(other)
    page = tmp_path / "report.html"
    assert run(["report", str(scores), "--input", str(inputs), "-o", str(page), "--resamples", "50"], capsys)[0] == 0
    dom, errors = open_in_chromium(page, tmp_path, screenshot=tmp_path / "report.png")
    assert errors == []
    assert "<title>DocLens report" in dom and "pwned" not in dom.split("</title>")[0]
    assert "&lt;script&gt;document.title" in dom  # shown as text, not run
    assert dom.count('class="instance"') == 3 and 'class="stmt supported"' in dom

    board = tmp_path / "board.html"
    code, out, err = run(["leaderboard", str(scores), str(other), "-o", str(board), "--resamples", "50"], capsys)
    assert code == 0, err
    dom, errors = open_in_chromium(board, tmp_path, screenshot=tmp_path / "board.png")
    assert errors == [] and "<title>DocLens leaderboard</title>" in dom
    assert dom.count('class="sortable"') >= 7 and "[" in dom


# ---- bounded-memory reading ------------------------------------------------------------------
@pytest.mark.parametrize("window", [7, 64, 1 << 20])
def test_streamed_report_equals_the_loaded_one(tmp_path, monkeypatch, window):
    import doclens.reports.scores_files as scores_files

    monkeypatch.setattr(scores_files, "_CHUNK", window)  # tiny windows cut values at every boundary
    report = score(injected_rows() * 1)
    report.scores["claim_recall"] = 0.123456789012345  # a long number to cut
    path = tmp_path / "scores.json"
    report.save(path)
    header = {}
    instances = list(scores_files.iter_report(str(path), header))
    expected = json.loads(path.read_text())
    assert instances == expected.pop("instances") and header == expected
    header, ids, counts = scores_files.scan_report(str(path))
    assert ids == [r.id for r in report.instances]
    assert counts == report_instance_counts(Report.load(path))[1]


def test_streamed_report_accepts_any_key_order_and_refuses_other_files(tmp_path):
    from doclens.reports.scores_files import iter_report, scan_report

    data = score(ROWS, on_unparsed="exclude").to_dict()
    reordered = {"instances": data.pop("instances"), **data}
    path = tmp_path / "reordered.json"
    path.write_text(json.dumps(reordered))
    header, ids, _ = scan_report(str(path))
    assert ids == ["a", "b", "c"] and header["config"]["on_unparsed"] == "exclude"
    path.write_text(json.dumps(GOOD_SUBMISSION))
    with pytest.raises(ValueError, match="not a DocLens report"):
        list(iter_report(str(path)))
    path.write_text("[1, 2]")
    with pytest.raises(ValueError, match="not a DocLens scores file"):
        list(iter_report(str(path)))
