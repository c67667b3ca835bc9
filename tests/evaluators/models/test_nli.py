"""In-process NLI judges (TRUE format T5, sequence classifiers) on real models loaded from disk.

The models are tiny and random (tests/tiny_models.py): the tests check that DocLens reads each
model's own answer, batches without changing it, splits long premises into windows instead of
truncating, takes the leave-one-out short-cuts, de-duplicates and caches — counting what the
model actually received.
"""

import json

import pytest

torch = pytest.importorskip("torch", reason="the in-process NLI judges need the [local] extra (torch)")
transformers = pytest.importorskip("transformers", reason="the in-process NLI judges need the [local] extra")

from doclens import DocLens, load_evaluator  # noqa: E402
from doclens.cli import main  # noqa: E402
from doclens.core.errors import ConfigurationError, InputError  # noqa: E402
from doclens.evaluators.models.nli import (  # noqa: E402
    NLIClassifierEvaluator,
    TrueNLIEvaluator,
    entailment_index,
    model_fingerprint,
    plan_batches,
)
from doclens.parsing.statements import strip_citations  # noqa: E402
from doclens.reports.report import Report  # noqa: E402
from tests.tiny_models import build_minilm_classifier, calibration_pairs  # noqa: E402

LONG_PREMISE = " ".join(f"turn {i}: the patient reports fever and cough, no chest pain." for i in range(40))


class Recording:
    """Mixin: keeps every encoded input the model ran on."""

    def run_inputs(self, inputs):
        self.received = getattr(self, "received", []) + [list(i["input_ids"]) for i in inputs]
        return super().run_inputs(inputs)


class RecordingT5(Recording, TrueNLIEvaluator):
    pass


class RecordingClassifier(Recording, NLIClassifierEvaluator):
    pass


def pairs_for_tests():
    return calibration_pairs()[:20] + [("the patient reports fever and cough", "fever"),
                                       ("blood pressure is 120 over 80", "the patient has a headache")]


def test_true_nli_reads_the_answer_a_generate_loop_gives(t5_dir):
    pairs = pairs_for_tests()
    judge = TrueNLIEvaluator(str(t5_dir), batch_size=5, no_cache=True)
    verdicts = judge.entail_batch(pairs)
    tokenizer = transformers.AutoTokenizer.from_pretrained(t5_dir)
    model = transformers.AutoModelForSeq2SeqLM.from_pretrained(t5_dir).eval()
    expected = []
    for premise, hypothesis in pairs:  # one at a time, generated, decoded: the original procedure
        inputs = tokenizer(f"premise: {premise} hypothesis: {hypothesis}", return_tensors="pt")
        with torch.no_grad():
            out = model.generate(**inputs, max_new_tokens=1, do_sample=False)
        expected.append(tokenizer.decode(out[0], skip_special_tokens=True).strip() == "1")
    assert verdicts == expected
    assert 0 < sum(verdicts) < len(verdicts)  # the tiny model says both: the test can tell them apart
    assert judge.usage.model_inputs == len(pairs)


def test_classifier_argmax_and_threshold_match_the_models_logits(classifier_dir):
    pairs = pairs_for_tests()
    tokenizer = transformers.AutoTokenizer.from_pretrained(classifier_dir)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(classifier_dir).eval()
    probabilities = []
    for premise, hypothesis in pairs:
        with torch.no_grad():
            logits = model(**tokenizer(premise, hypothesis, return_tensors="pt")).logits[0]
        probabilities.append(logits.softmax(-1).tolist())
    argmax = [max(range(3), key=p.__getitem__) == 0 for p in probabilities]
    for batch_size in (1, 4, 32):
        judge = NLIClassifierEvaluator(str(classifier_dir), batch_size=batch_size, no_cache=True)
        assert judge.entail_batch(pairs) == argmax
    assert 0 < sum(argmax) < len(argmax)
    judge = NLIClassifierEvaluator(str(classifier_dir), threshold=0.3, no_cache=True)
    assert judge.entail_batch(pairs) == [p[0] >= 0.3 for p in probabilities]


def test_plan_batches_bounds_padding_and_keeps_every_input_once():
    lengths = [100, 95, 91, 89, 50, 48, 47, 300, 12, 12, 12]
    plain = plan_batches(lengths, 4, 1.0)  # the old rule: length-sorted runs of batch_size
    assert plain == [[7, 0, 1, 2], [3, 4, 5, 6], [8, 9, 10]]
    tight = plan_batches(lengths, 4, 0.1)
    assert tight == [[7], [0, 1, 2], [3], [4, 5, 6], [8, 9, 10]]
    for batches in (plain, tight, plan_batches(lengths, 2, 0.0)):
        assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    for batch in tight:  # nobody is padded by more than 10% of the batch's longest
        assert all(lengths[i] >= 0.9 * lengths[batch[0]] for i in batch)
    padded = lambda batches: sum(max(lengths[i] for i in b) * len(b) for b in batches)  # noqa: E731
    assert padded(tight) < padded(plain)
    assert plan_batches([], 8, 0.1) == []


def test_padding_tolerance_changes_batches_not_verdicts(classifier_dir):
    pairs = pairs_for_tests()
    loose = RecordingClassifier(str(classifier_dir), batch_size=8, padding_tolerance=1.0, no_cache=True)
    tight = RecordingClassifier(str(classifier_dir), batch_size=8, padding_tolerance=0.05, no_cache=True)
    assert loose.entail_batch(pairs) == tight.entail_batch(pairs)
    inputs = [tight.encode(p, h) for p, h in pairs]
    assert len(tight.batches(inputs)) > len(loose.batches(inputs))
    default = NLIClassifierEvaluator(str(classifier_dir), no_cache=True).load()
    assert default.padding_tolerance == (0.1 if default.device == "cpu" else 1.0)
    with pytest.raises(ConfigurationError, match="padding_tolerance"):
        NLIClassifierEvaluator(str(classifier_dir), padding_tolerance=1.5)


@pytest.mark.parametrize("labels, wanted, index", [
    ({0: "ENTAILMENT", 1: "NEUTRAL", 2: "CONTRADICTION"}, None, 0),
    ({"0": "contradiction", "1": "entailment", "2": "neutral"}, None, 1),
    ({0: "entailment", 1: "not_entailment"}, None, 0),
    ({0: "LABEL_0", 1: "LABEL_1"}, "label_1", 1),
])
def test_entailment_label_is_found_from_id2label(labels, wanted, index):
    assert entailment_index(labels, wanted, "m") == index


def test_unknown_entailment_label_is_an_error_that_says_what_to_pass():
    with pytest.raises(ConfigurationError, match="entailment_label"):
        entailment_index({0: "LABEL_0", 1: "LABEL_1"}, None, "m")


def test_long_premise_is_judged_in_windows_never_truncated(classifier_dir):
    judge = RecordingClassifier(str(classifier_dir), batch_size=4, no_cache=True).load()
    tokenizer = judge.tokenizer
    hypotheses = ["the patient has a cough", "no chest pain", "fever", "turn 3"]
    premise_ids = tokenizer(LONG_PREMISE, add_special_tokens=False)["input_ids"]
    assert len(premise_ids) > 3 * 128
    windows = [[list(w["input_ids"]) for w in judge.premise_windows(LONG_PREMISE, h)] for h in hypotheses]
    verdicts = judge.entail_batch([(LONG_PREMISE, h) for h in hypotheses])
    assert judge.usage.windowed_premises == len(hypotheses)
    for hypothesis, cut in zip(hypotheses, windows):
        assert len(cut) > 3 and all(len(w) <= 128 for w in cut)
        # every premise token is in some window, in order, and neighbouring windows overlap
        texts = [tokenizer.decode(w, skip_special_tokens=True) for w in cut]
        premise_parts = [text[: text.rindex(hypothesis)] for text in texts]
        assert set(premise_ids) <= {i for part in premise_parts for i in tokenizer(part, add_special_tokens=False)
                                    ["input_ids"]}
        for left, right in zip(premise_parts, premise_parts[1:]):
            assert " ".join(left.split()[-3:]) in right
    # entailed iff some window entails; windows after the first that entails were never run
    single = RecordingClassifier(str(classifier_dir), batch_size=1, no_cache=True).load()
    received = sorted(map(tuple, judge.received))
    expected_received = []
    for cut, verdict in zip(windows, verdicts):
        window_verdicts = single.run_inputs([{"input_ids": w, "attention_mask": [1] * len(w),
                                              "token_type_ids": _types(w, tokenizer)} for w in cut])
        assert verdict == any(window_verdicts)
        ran = window_verdicts.index(True) + 1 if verdict else len(cut)
        expected_received += [tuple(w) for w in cut[:ran]]
    assert received == sorted(expected_received) and judge.usage.model_inputs == len(received)
    assert any(verdicts) and len(received) < sum(map(len, windows))  # the early exit was exercised


def _types(ids, tokenizer):
    first_sep = ids.index(tokenizer.sep_token_id)
    return [0] * (first_sep + 1) + [1] * (len(ids) - first_sep - 1)


def test_hypothesis_too_long_for_the_window_is_an_error(classifier_dir):
    judge = NLIClassifierEvaluator(str(classifier_dir), no_cache=True)
    with pytest.raises(InputError, match="never truncates"):
        judge.entail_batch([("fever", LONG_PREMISE)])


def test_t5_windows_respect_max_length(t5_dir):
    judge = RecordingT5(str(t5_dir), max_length=64, no_cache=True)
    judge.entail_batch([(LONG_PREMISE, "fever")])
    assert judge.usage.windowed_premises == 1 and all(len(w) <= 64 for w in judge.received)
    assert judge.signature().startswith("true-nli:tiny-t5#")


CITED = {
    "id": "v1",
    "prediction": ("The patient reports fever and cough [0][1]. No chest pain [2]. Fever since monday [0][1][2]. "
                   "Headache [1][3]. Cough [0][1]."),
    "reference": "Fever and cough. No chest pain.",
    "source": ["[patient] i have had a fever since monday", "[patient] and a cough", "[doctor] any chest pain ?",
               "[patient] no , just a headache"],
    "reference_claims": ["The patient has a fever.", "The patient has a cough.", "No chest pain."],
    "prediction_claims": ["The patient reports fever and cough.", "No chest pain.", "Headache."],
}


@pytest.mark.parametrize("kind", ["t5", "classifier"])
def test_leave_one_out_shortcuts_send_exactly_the_needed_pairs_once(kind, t5_dir, classifier_dir):
    judge_class, folder = (RecordingT5, t5_dir) if kind == "t5" else (RecordingClassifier, classifier_dir)
    asked = []

    class Spy(judge_class):
        def judge_pairs(self, pairs):
            asked.extend(pairs)
            return super().judge_pairs(pairs)

    judge = Spy(str(folder), no_cache=True)
    report = DocLens(judge).score([CITED, {**CITED, "id": "v2"}], progress=False)
    assert len(asked) == len(set(asked)) == judge.usage.model_inputs  # each distinct pair once, no windows
    verdict = dict(zip(asked, judge.judge_pairs(asked)))
    units = {i: u[1:].replace("] ", ": ", 1) for i, u in enumerate(CITED["source"])}  # "patient: …"
    premise = lambda ids: "\n".join(units[i] for i in sorted(ids))  # noqa: E731
    needed = set()
    for statement in report.instances[0].statements:
        whole = (premise(statement.cited), statement.text)
        needed.add(whole)
        if verdict[whole] and len(statement.cited) > 1:
            for c in statement.cited:
                needed.add((premise([c]), statement.text))
                if not verdict[(premise([c]), statement.text)]:
                    needed.add((premise([o for o in statement.cited if o != c]), statement.text))
    claim_premises = {CITED["reference"], strip_citations(CITED["prediction"]).strip()}
    claim_pairs = {(p, c) for p, c in asked if p in claim_premises}
    assert len(claim_pairs) == len(CITED["reference_claims"]) + len(CITED["prediction_claims"])
    assert set(asked) - claim_pairs == needed
    # the second instance is identical: it added no pair
    assert report.instances[0].scores == report.instances[1].scores


def test_cache_makes_a_rerun_run_the_model_on_nothing(classifier_dir, tmp_path):
    first = NLIClassifierEvaluator(str(classifier_dir), cache_dir=tmp_path / "c")
    one = DocLens(first).score([CITED], progress=False)
    assert first.usage.model_inputs > 0
    second = NLIClassifierEvaluator(str(classifier_dir), cache_dir=tmp_path / "c")
    two = DocLens(second).score([CITED], progress=False)
    assert second.usage.model_inputs == 0 and second.usage.cached_calls == first.usage.model_inputs
    assert one.scores == two.scores and not second._loaded  # the model was never even loaded
    other_rule = NLIClassifierEvaluator(str(classifier_dir), cache_dir=tmp_path / "c", threshold=0.5)
    DocLens(other_rule).score([CITED], progress=False)
    assert other_rule.usage.cached_calls == 0  # a different answer rule never reuses verdicts


def test_a_bfloat16_run_and_a_float32_run_share_no_cached_verdict(classifier_dir, tmp_path):
    """The cache key and the signature name the dtype and device kind (issue 28 item 4): verdicts a
    bfloat16 run stored are never served to a float32 run, and the two reports' signatures differ."""
    half = NLIClassifierEvaluator(str(classifier_dir), cache_dir=tmp_path / "c", device="cpu", dtype="bfloat16")
    half_report = DocLens(half).score([CITED], progress=False)
    assert half.usage.model_inputs > 0 and half.placement == {"device": "cpu", "dtype": "bfloat16"}
    full = NLIClassifierEvaluator(str(classifier_dir), cache_dir=tmp_path / "c", device="cpu", dtype="float32")
    full_report = DocLens(full).score([CITED], progress=False)
    assert full.usage.cached_calls == 0 and full.usage.model_inputs > 0  # (bf16 verdicts differ: other pairs)
    assert "dtype:bfloat16" in half_report.signature and "dtype:float32" in full_report.signature
    again = NLIClassifierEvaluator(str(classifier_dir), cache_dir=tmp_path / "c", device="cpu", dtype="bfloat16")
    DocLens(again).score([CITED], progress=False)
    assert again.usage.model_inputs == 0 and not again._loaded  # the same placement is still served


def test_fingerprint_is_content_based(classifier_dir, tmp_path):
    import shutil

    copy = shutil.copytree(classifier_dir, tmp_path / "copy")
    assert model_fingerprint(str(copy)) == model_fingerprint(str(classifier_dir))
    config = json.loads((copy / "config.json").read_text())
    config["id2label"] = {"0": "NEUTRAL", "1": "ENTAILMENT", "2": "CONTRADICTION"}
    (copy / "config.json").write_text(json.dumps(config))
    assert model_fingerprint(str(copy)) != model_fingerprint(str(classifier_dir))


def test_presets_and_configuration_errors(classifier_dir, t5_dir, tmp_path):
    judge = load_evaluator("nli", model=str(classifier_dir), batch_size=2, threshold=0.6)
    assert isinstance(judge, NLIClassifierEvaluator) and judge.keeps_data_local and not judge._loaded
    assert load_evaluator("true-nli").model == "google/t5_xxl_true_nli_mixture"
    with pytest.raises(ConfigurationError, match="needs --model"):
        load_evaluator("nli")
    with pytest.raises(ConfigurationError, match="threshold"):
        NLIClassifierEvaluator(str(classifier_dir), threshold=1.5)
    with pytest.raises(ConfigurationError, match="cannot load model"):
        NLIClassifierEvaluator(str(tmp_path / "missing"), no_cache=True).entail_batch([("a", "b")])


@pytest.mark.slow
def test_minilm_encoder_under_a_classification_head_through_the_cli(tmp_path, capsys):
    folder = build_minilm_classifier(tmp_path / "minilm-nli")
    output = tmp_path / "scores.json"
    code = main(["score", "examples/notes.jsonl", "--evaluator", "nli", "--model", str(folder), "--batch-size", "8",
                 "-o", str(output), "-q"])
    assert code == 0, capsys.readouterr().err
    report = Report.load(output)
    assert report.signature.count("judge:nli:minilm-nli#") == 1 and "|nli:argmax|" in report.signature
    assert report.config["evaluator_keeps_data_local"] is True
    claims = [c for r in report.instances for c in r.reference_claims + r.prediction_claims]
    assert claims and all(c.status == "ok" for c in claims)
    assert report.usage["model_inputs"] > 0 and report.counts["claim_recall"]["items"] == 22


@pytest.mark.slow
def test_evaluate_module_with_the_nli_config_in_a_training_loop(classifier_dir, tmp_path):
    """The real `evaluate` loader, config name `nli`, as a training loop calls it: twice, with the
    model loaded once and the second compute answered from the cache."""
    pytest.importorskip("evaluate", reason="the [evaluate]/[dev] extra is not installed")
    from tests.metric.test_evaluate_module import REPO, run_python

    code = f"""
import evaluate, json
metric = evaluate.load({str(REPO / 'metrics' / 'doclens')!r}, "nli")
rows = dict(predictions=["The patient reports fever and cough [0][1]."], references=["Fever and cough."],
            sources=[{" ".join(f"[{i}]{unit}" for i, unit in enumerate(CITED["source"]))!r}],
            reference_claims=[["Fever.", "Cough."]], prediction_claims=[["The patient reports fever and cough."]])
options = {{"model": {str(classifier_dir)!r}, "batch_size": 4}}
first = metric.compute(**rows, evaluator_options=options)
judge = metric._loaded_evaluator[1]
inputs = judge.usage.model_inputs
second = metric.compute(**rows, evaluator_options=options)
print(json.dumps({{"first": first["claim_recall"], "second": second["claim_recall"], "inputs": inputs,
                  "after": judge.usage.model_inputs, "signature": first["signature"],
                  "same_judge": metric._loaded_evaluator[1] is judge}}))
"""
    result = run_python(code, REPO, tmp_path)
    assert result["first"] == result["second"] and result["inputs"] > 0
    assert result["after"] == result["inputs"]  # the second compute ran the model on nothing
    assert result["same_judge"] and "judge:nli:tiny-nli#" in result["signature"]
