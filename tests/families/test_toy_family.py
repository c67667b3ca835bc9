"""A metric family is one module and one registration (issue 40, deliverable 3).

This file is that module: it defines a toy family with a judging step of its own — each reference
claim asked of the judge against the instance's source, "is the reference grounded in the
source?" — registers it through the public API (:func:`doclens.families.register`) and finds it
in every output: the scores, the results files (JSON, JSONL and Parquet when pyarrow is
installed) and what reads them back, the text and HTML views, ``Report.to_rows``, the streamed
summary, the signature and the report's block, the reward's components and, when Ray is
installed, a run on Ray. No other module is edited for it. The judge is the tests' token-subset
judge, so the expected counts are read off the texts below.
"""

from __future__ import annotations

import json
import os
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path

import pytest

from doclens import DocLens, Report
from doclens.evaluators.base import ClaimRequest
from doclens.families import APPLIES, FAMILIES, SKIPPED, MetricFamily, register, registered
from doclens.views.text import summary_text
from tests.helpers import TokenSubsetEvaluator

REPO = Path(__file__).resolve().parents[2]
METRIC = "reference_grounded"


@dataclass
class Grounding:
    """One reference claim judged against the source."""

    text: str
    entailed: bool | None
    status: str = "ok"
    section: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


class GroundingFamily(MetricFamily):
    """The share of reference claims the instance's own source entails."""

    name = "grounding"
    selector = "grounding"
    metrics = (METRIC,)
    item_fields = {METRIC: "grounding"}
    none_when_absent = False

    def judge(self, works, scorer):
        asked = [(i, section, claims) for i, work in enumerate(works) if isinstance(work.instance.source, list)
                 for section, claims in work.ref_claims.items() if claims]
        requests = [ClaimRequest("\n".join(works[i].instance.source), claims, works[i].task, "recall", section)
                    for i, section, claims in asked]
        answers = scorer.evaluator.judge_claims_many(requests) if requests else []
        found: dict[int, list] = {i: [] for i, work in enumerate(works) if isinstance(work.instance.source, list)}
        for (i, section, claims), judgements in zip(asked, answers):
            found[i] += [Grounding(claim, j.entailed, j.status, section) for claim, j in zip(claims, judgements)]
        return found

    def item_from_dict(self, data):
        return Grounding(**data)

    def applicability(self, result, rule):
        return SKIPPED if self.items(result) is None else APPLIES

    def count(self, result, rule, section):
        items = [item for item in self.items(result) if section is None or item.section == section]
        return {METRIC: (sum(bool(item.entailed) for item in items), len(items))}

    def tally(self, result):
        return {"judged_claims": len(self.items(result) or [])}

    def signature_fields(self, scorer):
        return [("grounding", "v1")]

    def report_block(self, tally, scorer, run):
        return {"judged_claims": tally.get("judged_claims", 0)}


TOY = GroundingFamily()


def make_scorer():
    """The scorer of these tests (module level, so a Ray worker can import it; a worker process
    registers the family the way this module does)."""
    if TOY not in FAMILIES:
        register(TOY)
    return DocLens(TokenSubsetEvaluator(), metrics="doclens,grounding", chunk_size=2)


#: instance k: its reference claims "alpha k" (in the source) and "omega" (not in it); the last has no source
ROWS = [{"id": f"r{k}", "prediction": f"Alpha {k} [0].", "reference": f"Alpha {k}. Omega.",
         "source": [f"alpha {k} beta"], "reference_claims": [f"alpha {k}", "omega"],
         "prediction_claims": [f"alpha {k}"]} for k in range(4)]
ROWS.append({"id": "plain", "prediction": "Alpha.", "reference": "Alpha.", "reference_claims": ["alpha"],
             "prediction_claims": ["alpha"]})


@pytest.fixture
def toy():
    with registered(TOY):
        yield TOY


def _score(scorer, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the uncited-output notice of the instance without a source
        return scorer(*args, progress=False, **kwargs)


def _check_report(report: Report) -> None:
    assert report[METRIC] == pytest.approx(4 / 8) and report.scores[f"{METRIC}_macro"] == pytest.approx(0.5)
    assert report.counts[METRIC]["items"] == 8 and report.counts[METRIC]["skipped"] == 1
    assert report.counts[METRIC]["unparsed"] == 0 and report.counts[METRIC]["failed"] == 0
    assert "grounding:v1" in report.signature
    assert report.blocks["grounding"] == {"judged_claims": 8}


def test_the_toy_family_is_in_every_output(toy, tmp_path):
    scorer = make_scorer()
    report = _score(scorer.score, ROWS)
    _check_report(report)
    assert report.instance("r0").scores[METRIC] == 0.5 and METRIC not in report.instance("plain").scores
    assert [item.text for item in report.instance("r1").family_items["grounding"]] == ["alpha 1", "omega"]

    # the scores file, written and read back (its items read by the family)
    report.save(tmp_path / "scores.json")
    saved = json.loads((tmp_path / "scores.json").read_text(encoding="utf-8"))
    assert saved["grounding"] == {"judged_claims": 8} and saved["scores"][METRIC] == 0.5
    assert saved["instances"][0]["grounding"][1] == {"text": "omega", "entailed": False, "status": "ok",
                                                     "section": None}
    loaded = Report.load(tmp_path / "scores.json")
    assert loaded.instance("r0").family_items["grounding"][1] == Grounding("omega", False)
    assert loaded.blocks == report.blocks and loaded.scores == report.scores

    # the streamed layout: the summary's per-instance counts, the results file, read back
    _check_streamed(scorer, tmp_path, "jsonl", report)


def test_the_toy_family_in_parquet_results(toy, tmp_path):
    pytest.importorskip("pyarrow", reason="pyarrow is not installed (the [parquet] extra): Parquet not checked")
    scorer = make_scorer()
    _check_streamed(scorer, tmp_path, "parquet", _score(scorer.score, ROWS))


def _check_streamed(scorer, folder, fmt, report):
    out = folder / f"streamed-{fmt}.json"
    streamed = _score(scorer.score_to, str(out), ROWS, output_format=fmt)
    summary = json.loads(out.read_text(encoding="utf-8"))
    assert summary["scores"] == report.scores and summary["grounding"] == {"judged_claims": 8}
    assert summary["instance_counts"][METRIC] == {"hits": [1, 1, 1, 1, None], "items": [2, 2, 2, 2, None]}
    assert streamed.signature == report.signature
    again = Report.load(out)  # every result recounted against the summary, items read by the family
    assert again.instance("r3").family_items["grounding"][0] == Grounding("alpha 3", True)
    assert [r.to_dict() for r in again.instances] == [r.to_dict() for r in report.instances]


def test_the_toy_family_in_the_views_rows_and_reward(toy, tmp_path):
    from doclens.cli import main
    from doclens.rewards.values import component_names, components

    report = _score(make_scorer().score, ROWS)
    text = summary_text(report)
    assert any(line.startswith(METRIC) and " 50.00" in line for line in text.splitlines())

    rows = report.to_rows()
    assert [rows[0][k] for k in (METRIC, f"{METRIC}_hits", f"{METRIC}_items")] == [0.5, 1, 2]
    assert rows[-1][METRIC] is None and rows[-1][f"{METRIC}_items"] is None
    assert list(rows[0]).index(METRIC) > list(rows[0]).index("citation_precision_items")

    report.save(tmp_path / "scores.json")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["report", str(tmp_path / "scores.json"), "-o", str(tmp_path / "page.html"), "--no-plots",
                     "--resamples", "50"]) == 0
    page = (tmp_path / "page.html").read_text(encoding="utf-8")
    assert f'<tr><td>{METRIC}</td><td data-value="0.5">50.00' in page  # the metric table's row
    assert '<p class="muted"><bdi>grounding</bdi>: judged_claims 8</p>' in page  # the family's block

    assert METRIC in component_names()
    assert components(report.instance("r0").scores)[METRIC] == 0.5


def test_the_toy_family_on_ray(toy, tmp_path):
    ray = pytest.importorskip("ray", reason="Ray is not installed (the [ray] extra): the Ray run was not checked")
    from doclens.engines.ray import score_on_ray

    local = _score(make_scorer().score, ROWS)
    started = not ray.is_initialized()
    if started:  # the workers import doclens and this module from this checkout
        path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
        ray.init(num_cpus=2, include_dashboard=False, runtime_env={"env_vars": {"PYTHONPATH": path}})
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            on_ray = score_on_ray(make_scorer, ROWS, workers=1, progress=False)
    finally:
        if started:
            ray.shutdown()
    _check_report(on_ray)
    assert on_ray.scores == local.scores and on_ray.signature == local.signature
    assert [r.to_dict() for r in on_ray.instances] == [r.to_dict() for r in local.instances]


@dataclass(frozen=True)
class GroundingOptions:
    """The toy family's own settings: its CLI option (``--grounding-tag``) reaches the signature."""

    tag: str = "v1"

    @staticmethod
    def add_cli_options(group):
        group.add_argument("--grounding-tag", help="the toy family's signature tag")

    @staticmethod
    def cli_given(args):
        return ["--grounding-tag"] if getattr(args, "grounding_tag", None) else []

    @classmethod
    def from_cli(cls, args):
        return cls(tag=args.grounding_tag or "v1")


class LowerIsBetterGrounding(GroundingFamily):
    """The toy family with settings of its own, read by the CLI from the registry, and a metric
    where a lower value is better (the share of reference claims *not* in the source)."""

    name = "ungrounding"
    selector = "ungrounding"
    metrics = ("reference_ungrounded",)
    item_fields = {"reference_ungrounded": "ungrounding"}
    lower_is_better = frozenset({"reference_ungrounded"})
    options_path = f"{__name__}:GroundingOptions"

    def count(self, result, rule, section):
        items = [item for item in self.items(result) if section is None or item.section == section]
        return {"reference_ungrounded": (sum(not item.entailed for item in items), len(items))}

    def signature_fields(self, context):
        return [("ungrounding", context.options.tag)]


UNGROUNDED = LowerIsBetterGrounding()


def _write_rows(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def test_a_family_is_ranked_by_rank_by_and_its_options_come_from_the_registry(tmp_path):
    """The family's metric is a ``--rank-by`` choice (lower first, as it declares), its option a
    ``doclens score`` flag, and the leaderboard and its plots read both from the registry."""
    from doclens.cli import main
    from doclens.families import higher_is_better, statistics
    from doclens.views.leaderboard import group_by_signature, load_entry, rank_group

    # system "good": every reference claim in its source; system "bad": half of them
    good = [dict(ROWS[n % 4], id=f"i{n}", source=[f"alpha {n % 4} beta omega"]) for n in range(12)]
    bad = [dict(ROWS[n % 4], id=f"i{n}") for n in range(12)]
    _write_rows(tmp_path / "good.jsonl", good)
    _write_rows(tmp_path / "bad.jsonl", bad)
    with registered(UNGROUNDED):
        assert "reference_ungrounded_macro" in statistics() and not higher_is_better("reference_ungrounded")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for name in ("good", "bad"):
                assert main(["score", str(tmp_path / f"{name}.jsonl"), "--evaluator", "overlap", "--metrics",
                             "doclens,ungrounding", "--grounding-tag", "t7", "-o", str(tmp_path / f"{name}.json"),
                             "-q"]) == 0
            assert main(["leaderboard", str(tmp_path / "good.json"), str(tmp_path / "bad.json"), "--rank-by",
                         "reference_ungrounded", "--resamples", "50", "--json", str(tmp_path / "board.json"),
                         "-o", str(tmp_path / "board.html")]) == 0
        entries = [load_entry(str(tmp_path / f"{name}.json"), n_resamples=50) for name in ("bad", "good")]
        (group,) = group_by_signature(entries).values()
        ranked = rank_group(group, "reference_ungrounded", n_resamples=50)
    assert "ungrounding:t7" in str(entries[0].signature)
    assert [e.system for e in ranked] == ["good", "bad"]  # lower is better: 0 before 0.5
    assert ranked[0].intervals["reference_ungrounded"].point == 0.0
    board = json.loads((tmp_path / "board.json").read_text(encoding="utf-8"))
    assert board["rank_by"] == "reference_ungrounded"
    assert [s["system"] for s in board["tables"][0]["systems"]] == ["good", "bad"]
    assert "reference_ungrounded" in board["tables"][0]["columns"]
    page = (tmp_path / "board.html").read_text(encoding="utf-8")
    assert "reference_ungrounded" in page
    # unregistered: no longer a choice
    assert main(["leaderboard", str(tmp_path / "good.json"), "--rank-by", "reference_ungrounded"]) == 2


def test_a_family_option_without_its_family_is_a_usage_error(tmp_path, capsys):
    from doclens.cli import main

    _write_rows(tmp_path / "in.jsonl", ROWS[:1])
    with registered(UNGROUNDED):
        code = main(["score", str(tmp_path / "in.jsonl"), "--evaluator", "overlap", "--grounding-tag", "t7",
                     "-o", str(tmp_path / "out.json"), "-q"])
    assert code == 2 and "--grounding-tag only apply with --metrics doclens,ungrounding" in capsys.readouterr().err
