"""The NLI judges' CPU runtimes (``runtime=``: doclens/evaluators/models/nli_runtimes.py) on the tiny real
models of tests/tiny_models.py: ONNX Runtime gives the torch path's logits, the int8 runtimes
really run quantised weights, and the runtime is named in the signature and the cache keys."""

import pytest

torch = pytest.importorskip("torch", reason="the in-process NLI judges need the [local] extra (torch)")
pytest.importorskip("transformers", reason="the in-process NLI judges need the [local] extra")
pytest.importorskip("onnxruntime", reason="the 'onnx' NLI runtimes need the [onnx] extra (onnxruntime)")
pytest.importorskip("onnx", reason="torch.onnx.export needs the [onnx] extra (onnx)")

from doclens import DocLens, load_evaluator  # noqa: E402
from doclens.core.errors import ConfigurationError  # noqa: E402
from doclens.evaluators.models.nli import NLIClassifierEvaluator, TrueNLIEvaluator  # noqa: E402
from doclens.evaluators.models.nli_runtimes import RUNTIMES, OnnxNetwork  # noqa: E402
from tests.evaluators.models.test_nli import CITED, LONG_PREMISE, pairs_for_tests  # noqa: E402


def logits_of(judge, pairs):
    """The loaded judge's logits for ``pairs``, one padded batch (T5: the first decoder step)."""
    judge.load()
    batch = dict(judge.tokenizer.pad([judge.encode(p, h) for p, h in pairs], padding="longest", return_tensors="pt"))
    if isinstance(judge, TrueNLIEvaluator):
        batch["decoder_input_ids"] = torch.full((len(pairs), 1), judge.decoder_start, dtype=torch.long)
    with torch.inference_mode():
        return judge.network(**batch).logits.float().reshape(len(pairs), -1)


@pytest.mark.parametrize("kind", ["classifier", "t5"])
def test_onnx_runtime_gives_the_torch_logits_and_verdicts(kind, classifier_dir, t5_dir):
    make = (lambda **o: NLIClassifierEvaluator(str(classifier_dir), no_cache=True, **o)) if kind == "classifier" \
        else (lambda **o: TrueNLIEvaluator(str(t5_dir), no_cache=True, **o))
    pairs = pairs_for_tests() + [(LONG_PREMISE, "chest pain")]  # a long one: windows, other lengths
    reference, onnx = make(), make(runtime="onnx")
    assert torch.allclose(logits_of(onnx, pairs[:8]), logits_of(reference, pairs[:8]), atol=1e-4)
    assert isinstance(onnx.network, OnnxNetwork)
    verdicts = onnx.entail_batch(pairs)
    assert verdicts == reference.entail_batch(pairs)
    assert 0 < sum(verdicts) < len(verdicts)  # both verdicts occur: the comparison can fail
    assert onnx.usage.windowed_premises == reference.usage.windowed_premises == 1


def test_int8_runtimes_run_quantised_weights(classifier_dir):
    pairs = pairs_for_tests()
    reference = logits_of(NLIClassifierEvaluator(str(classifier_dir), no_cache=True), pairs)
    torch_int8 = NLIClassifierEvaluator(str(classifier_dir), no_cache=True, runtime="torch-int8").load()
    linears = [type(m) for m in torch_int8.network.modules() if type(m).__name__ == "Linear"]
    assert linears and all(kind is torch.ao.nn.quantized.dynamic.Linear for kind in linears)
    onnx_int8 = NLIClassifierEvaluator(str(classifier_dir), no_cache=True, runtime="onnx-int8").load()
    assert {"MatMulInteger", "DynamicQuantizeLinear"} <= onnx_int8.network.operators
    assert "MatMulInteger" not in NLIClassifierEvaluator(str(classifier_dir), no_cache=True,
                                                         runtime="onnx").load().network.operators
    for judge in (torch_int8, onnx_int8):
        logits = logits_of(judge, pairs)
        assert logits.shape == reference.shape and torch.isfinite(logits).all()
        # int8 weights move the logits (how far, and what that does to verdicts, is measured by
        # benchmarks/nli_throughput.py --runtime: this random tiny model's margins are too small)
        assert not torch.equal(logits, reference)
        assert len(judge.entail_batch(pairs)) == len(pairs)


def test_runtime_is_named_in_signature_config_and_cache_keys(classifier_dir, tmp_path):
    torch_judge = NLIClassifierEvaluator(str(classifier_dir), cache_dir=tmp_path / "c")
    DocLens(torch_judge).score([CITED], progress=False)
    assert torch_judge.usage.model_inputs > 0 and "runtime" not in torch_judge.decoding()
    for runtime in ("onnx", "torch-int8"):
        judge = NLIClassifierEvaluator(str(classifier_dir), cache_dir=tmp_path / "c", runtime=runtime)
        report = DocLens(judge).score([CITED], progress=False)
        assert f"|rt:{runtime}" in report.signature and report.config["evaluator"]["runtime"] == runtime
        # another runtime's verdicts are never served from the cache: this run ran the model
        assert judge.usage.cached_calls == 0 and judge.usage.model_inputs > 0
        again = NLIClassifierEvaluator(str(classifier_dir), cache_dir=tmp_path / "c", runtime=runtime)
        DocLens(again).score([CITED], progress=False)
        assert again.usage.model_inputs == 0 and not again._loaded
    default_again = NLIClassifierEvaluator(str(classifier_dir), cache_dir=tmp_path / "c")
    report = DocLens(default_again).score([CITED], progress=False)
    assert default_again.usage.model_inputs == 0 and "rt:" not in report.signature


def test_runtime_errors_say_what_to_use(classifier_dir):
    with pytest.raises(ConfigurationError, match="unknown NLI runtime 'tensorrt'.*onnx"):
        NLIClassifierEvaluator(str(classifier_dir), runtime="tensorrt")
    judge = NLIClassifierEvaluator(str(classifier_dir), no_cache=True, runtime="onnx", dtype="bfloat16")
    with pytest.raises(ConfigurationError, match="runs on the CPU in float32.*bfloat16"):
        judge.load()
    preset = load_evaluator("nli", model=str(classifier_dir), runtime="onnx-int8")
    assert preset.runtime == "onnx-int8" and RUNTIMES[0] == "torch"


def test_a_cpu_bfloat16_judge_runs_its_model_in_bf16(classifier_dir):
    """``dtype="bfloat16"`` on the CPU (the fast option on a CPU with AVX512-BF16 or AMX:
    cards/in-process-evaluators.md, Runtimes) runs the model in bf16; its logits move a little
    (how many verdicts that changes is measured by benchmarks/nli_throughput.py --dtype bfloat16;
    this tiny random model's logits are ~0.03, too small for a tolerance that means anything)."""
    pairs = pairs_for_tests()[:8]
    reference = logits_of(NLIClassifierEvaluator(str(classifier_dir), no_cache=True, device="cpu"), pairs)
    half = NLIClassifierEvaluator(str(classifier_dir), no_cache=True, device="cpu", dtype="bfloat16")
    logits = logits_of(half, pairs)
    assert next(half.network.parameters()).dtype == torch.bfloat16 and half.runtime == "torch"
    assert torch.isfinite(logits).all() and not torch.equal(logits, reference)  # bf16 arithmetic, not an upcast


def test_bf16_checked_rejudges_near_boundary_inputs_in_float32(classifier_dir, t5_dir):
    """``runtime="bf16-checked"``: a bf16 copy judges, every input within RECHECK_MARGIN of the
    boundary is judged again by the float32 model (this tiny model's logits are all that small, so
    every input is re-judged and the verdicts are float32's); named in the signature."""
    pairs = pairs_for_tests()
    reference = NLIClassifierEvaluator(str(classifier_dir), no_cache=True)
    checked = NLIClassifierEvaluator(str(classifier_dir), no_cache=True, runtime="bf16-checked")
    verdicts = checked.entail_batch(pairs)
    assert next(checked.network.parameters()).dtype == torch.bfloat16
    assert next(checked.exact_network.parameters()).dtype == torch.float32
    assert checked.rechecked_inputs == checked.usage.model_inputs > 0
    assert verdicts == reference.entail_batch(pairs) and 0 < sum(verdicts) < len(verdicts)
    report = DocLens(NLIClassifierEvaluator(str(classifier_dir), no_cache=True, runtime="bf16-checked")).score(
        [CITED], progress=False)
    assert "|rt:bf16-checked" in report.signature
    with pytest.raises(ConfigurationError, match="'bf16-checked' is for the 'nli' classifier"):
        TrueNLIEvaluator(str(t5_dir), no_cache=True, runtime="bf16-checked").load()


@pytest.mark.parametrize("threshold", [None, 0.6])
def test_decision_margin_is_zero_exactly_where_the_verdict_flips(classifier_dir, threshold):
    judge = NLIClassifierEvaluator(str(classifier_dir), no_cache=True, threshold=threshold).load()
    e = judge.entailment_index
    logits = torch.zeros(5, 3)
    logits[:, e] = torch.tensor([-2.0, -0.1, 0.0, 0.1, 2.0])
    if threshold is not None:  # p(entail) = threshold where the entailment log-odds equal the threshold's
        logits[:, e] += float(torch.logit(torch.tensor(threshold)) + torch.log(torch.tensor(2.0)))
    margins = judge._decision_margin(logits)
    assert torch.allclose(margins, torch.tensor([-2.0, -0.1, 0.0, 0.1, 2.0]), atol=1e-5)


def test_bf16_checked_source_support_is_the_float32_models(classifier_dir):
    """Source support reads three class probabilities (no single margin to check), so under
    ``bf16-checked`` it runs the float32 model: the same labels as the default runtime."""
    pairs = pairs_for_tests()[:6]
    reference = NLIClassifierEvaluator(str(classifier_dir), no_cache=True).support_pairs(pairs)
    checked = NLIClassifierEvaluator(str(classifier_dir), no_cache=True, runtime="bf16-checked")
    assert checked.support_pairs(pairs) == reference and checked.exact_network is not None
