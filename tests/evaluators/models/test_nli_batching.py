"""How the in-process NLI judges batch (issue 39): one decoder step without a key/value cache,
batches planned by a token budget, an out-of-memory batch halved and retried, the GPU dtype.

Real tiny models from disk (tests/tiny_models.py); the out-of-memory error is injected below the
tested line, in the model's forward, since a CPU cannot run out of CUDA memory.
"""

import pytest

torch = pytest.importorskip("torch", reason="the in-process NLI judges need the [local] extra (torch)")
transformers = pytest.importorskip("transformers", reason="the in-process NLI judges need the [local] extra")

from doclens.core.errors import ConfigurationError  # noqa: E402
from doclens.evaluators.models import nli  # noqa: E402
from doclens.evaluators.models.nli import (  # noqa: E402
    NLIClassifierEvaluator,
    TrueNLIEvaluator,
    plan_batches,
)
from doclens.evaluators.models.torch_utils import choose_dtype, placement  # noqa: E402
from tests.tiny_models import calibration_pairs  # noqa: E402

LONG_PREMISE = " ".join(f"turn {i}: the patient reports fever and cough, no chest pain." for i in range(12))


def pairs_for_tests():
    return calibration_pairs() + [(LONG_PREMISE, "fever"), ("no rash", "a rash on the arm")]


def make(kind, folder, **options):
    cls = TrueNLIEvaluator if kind == "t5" else NLIClassifierEvaluator
    return cls(str(folder), no_cache=True, **options)


@pytest.fixture
def folders(t5_dir, classifier_dir):
    return {"t5": t5_dir, "classifier": classifier_dir}


def test_true_nli_runs_one_decoder_step_and_keeps_no_key_value_cache(t5_dir):
    judge = make("t5", t5_dir, batch_size=7).load()
    calls = []
    decoder_steps = []
    judge.network.register_forward_hook(
        lambda module, args, kwargs, output: calls.append((kwargs["decoder_input_ids"].shape, output.past_key_values)),
        with_kwargs=True)
    judge.network.get_decoder().register_forward_hook(lambda module, args, output: decoder_steps.append(1))
    pairs = pairs_for_tests()
    inputs = [judge.encode(p, h) for p, h in pairs]
    verdicts = judge.run_inputs(inputs)
    batches = len(judge.batches(inputs))
    assert len(calls) == batches and len(decoder_steps) == batches  # one decoder step per batch
    assert all(shape[1] == 1 and cache is None for shape, cache in calls)
    # the answer is the model's own: the same verdicts with a cache built (transformers' default)
    tokenizer = judge.tokenizer
    one, zero = judge.answer_ids
    with torch.no_grad():
        expected = []
        for item in inputs:
            ids = torch.tensor([item["input_ids"]])
            out = judge.network(input_ids=ids, decoder_input_ids=torch.tensor([[judge.decoder_start]]), use_cache=True)
            assert out.past_key_values is not None
            expected.append(bool(out.logits[0, 0, one] > out.logits[0, 0, zero]))
    assert verdicts == expected
    assert tokenizer is not None and 0 < sum(verdicts) < len(verdicts)


def test_plan_batches_keeps_padded_tokens_under_the_budget():
    lengths = [100, 95, 91, 89, 50, 48, 47, 300, 12, 12, 12]
    batches = plan_batches(lengths, None, 1.0, max_tokens=200)
    assert batches == [[7], [0, 1], [2, 3], [4, 5, 6, 8], [9, 10]]  # 300 alone: it cannot be split
    for budget in (1, 50, 200, 1000, 10**6):
        planned = plan_batches(lengths, None, 1.0, max_tokens=budget)
        assert sorted(i for b in planned for i in b) == list(range(len(lengths)))
        assert all(len(b) == 1 or len(b) * lengths[b[0]] <= budget for b in planned)
    assert plan_batches(lengths, 4, 1.0, max_tokens=10**6) == plan_batches(lengths, 4, 1.0)
    assert plan_batches(lengths, None, 1.0) == [sorted(range(len(lengths)), key=lambda i: -lengths[i])]


@pytest.mark.parametrize("kind", ["t5", "classifier"])
def test_verdicts_are_equal_across_batch_plans(kind, folders):
    pairs = pairs_for_tests()
    plans = [{"batch_size": 1}, {"batch_size": 32}, {"max_batch_tokens": 60},
             {"max_batch_tokens": 400, "padding_tolerance": 1.0}, {"max_batch_tokens": 10**6, "padding_tolerance": 1.0}]
    results = []
    for plan in plans:
        judge = make(kind, folders[kind], **plan)
        results.append(judge.entail_batch(pairs))
        inputs = [judge.encode(p, h) for p, h in pairs]
        batches = judge.batches(inputs)
        if "max_batch_tokens" in plan:
            assert all(len(b) == 1 or len(b) * len(inputs[b[0]]["input_ids"]) <= plan["max_batch_tokens"]
                       for b in batches)
    assert all(r == results[0] for r in results)
    assert 0 < sum(results[0]) < len(pairs)


class FailingForward:
    """The model's forward, raising torch's out-of-memory error for batches above ``tokens``
    padded tokens (as CUDA would); counts the rows it answered."""

    def __init__(self, network, tokens: int):
        self.forward, self.tokens, self.rows, self.failures = network.forward, tokens, 0, 0

    def __call__(self, *args, **kwargs):
        ids = kwargs["input_ids"]
        if ids.shape[0] * ids.shape[1] > self.tokens:
            self.failures += 1
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB (simulated)")
        self.rows += ids.shape[0]
        return self.forward(*args, **kwargs)


@pytest.mark.parametrize("kind", ["t5", "classifier"])
def test_an_out_of_memory_batch_is_halved_and_retried_losing_nothing(kind, folders):
    pairs = pairs_for_tests()
    expected = make(kind, folders[kind], batch_size=1).entail_batch(pairs)
    judge = make(kind, folders[kind], batch_size=64, padding_tolerance=1.0).load()
    fits = 3 * max(len(judge.encode(p, h)["input_ids"]) for p, h in pairs)  # three of the longest fit
    failing = FailingForward(judge.network, tokens=fits)
    judge.network.forward = failing
    assert judge.entail_batch(pairs) == expected
    assert failing.failures >= 1 and judge.oom_halvings == failing.failures
    assert failing.rows == judge.usage.model_inputs == len(pairs)  # every input answered exactly once
    assert judge.oom_token_limit is not None and judge.oom_token_limit <= fits
    # later batches are planned under the lowered limit: no further failure
    failures = failing.failures
    assert judge.judge_pairs(pairs) == expected and failing.failures == failures


def test_an_input_that_alone_runs_out_of_memory_is_a_clear_error(classifier_dir):
    judge = make("classifier", classifier_dir).load()
    judge.network.forward = FailingForward(judge.network, tokens=5)
    with pytest.raises(ConfigurationError, match="does not fit the free memory"):
        judge.entail_batch([("the patient has a fever", "fever")])


def test_other_errors_in_a_batch_are_not_taken_for_out_of_memory(classifier_dir):
    judge = make("classifier", classifier_dir).load()

    def broken(*args, **kwargs):
        raise RuntimeError("expected scalar type Float but found BFloat16")

    judge.network.forward = broken
    with pytest.raises(RuntimeError, match="scalar type"):
        judge.entail_batch([("the patient has a fever", "fever")])
    assert judge.oom_halvings == 0


def test_the_cuda_token_budget_is_the_free_memory_over_the_measured_cost(classifier_dir, monkeypatch):
    judge = make("classifier", classifier_dir, max_batch_tokens=50_000)
    assert judge.batch_token_limit(100) == 50_000  # no cost measured yet: the user's cap alone
    monkeypatch.setattr(nli, "free_device_bytes", lambda torch, device: 10_000_000)
    judge.token_cost = (1_000.0, 100)  # 1 kB per padded token, measured at length 100
    assert judge.batch_token_limit(100) == int(nli.MEMORY_SHARE * 10_000)
    assert judge.batch_token_limit(50) == int(nli.MEMORY_SHARE * 10_000)  # shorter: not charged less
    assert judge.batch_token_limit(400) == int(nli.MEMORY_SHARE * 10_000 / 4)  # longer: in proportion
    judge.oom_token_limit = 3_000
    assert judge.batch_token_limit(100) == 3_000
    uncapped = make("classifier", classifier_dir)
    uncapped.token_cost = (1_000.0, 100)
    monkeypatch.setattr(nli, "free_device_bytes", lambda torch, device: 10**12)
    assert uncapped.batch_token_limit(100) == int(nli.MEMORY_SHARE * 10**9)
    with pytest.raises(ConfigurationError, match="max_batch_tokens"):
        make("classifier", classifier_dir, max_batch_tokens=0)


def test_gpu_default_dtype_is_bf16_only_for_the_judge_measured_to_agree(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)
    assert NLIClassifierEvaluator.gpu_dtype == "float32"
    assert TrueNLIEvaluator.gpu_dtype == "bfloat16"
    assert choose_dtype(torch, "cuda", None, NLIClassifierEvaluator.gpu_dtype) == torch.float32
    assert choose_dtype(torch, "cuda", None, TrueNLIEvaluator.gpu_dtype) == torch.bfloat16
    assert choose_dtype(torch, "cuda", "bfloat16", "float32") == torch.bfloat16  # asked for: given
    assert choose_dtype(torch, "cpu", None, "bfloat16") == torch.float32
    assert placement(torch, "cuda", None, "float32") == {"device": "cuda", "dtype": "float32"}
    assert placement(torch, "cuda", None, "bfloat16") == {"device": "cuda", "dtype": "bfloat16"}


def test_max_batch_tokens_reaches_the_judge_from_the_cli(classifier_dir, tmp_path, capsys):
    from doclens.cli import main
    from doclens.reports.report import Report

    output = tmp_path / "scores.json"
    code = main(["score", "examples/notes.jsonl", "--evaluator", "nli", "--model", str(classifier_dir),
                 "--max-batch-tokens", "300", "-o", str(output), "-q", "--no-cache"])
    assert code == 0, capsys.readouterr().err
    assert Report.load(output).config["evaluator"]["max_batch_tokens"] == 300


def test_reduced_precision_verdicts_near_the_boundary_are_judged_alone(t5_dir):
    pairs = pairs_for_tests()
    alone = make("t5", t5_dir, dtype="bfloat16", batch_size=1).entail_batch(pairs)
    for plan in ({"batch_size": 4}, {"batch_size": 32}, {"max_batch_tokens": 400}):
        # every gap under the margin: every input of a batch of several is judged again alone
        judge = make("t5", t5_dir, dtype="bfloat16", alone_margin=1e9, **plan)
        assert judge.entail_batch(pairs) == alone
        assert 0 < judge.judged_alone <= judge.usage.model_inputs
    off = make("t5", t5_dir, dtype="bfloat16", alone_margin=None, batch_size=32)
    off.entail_batch(pairs)
    exact = make("t5", t5_dir, alone_margin=1e9, batch_size=32)  # float32: batching changes no verdict
    exact.entail_batch(pairs)
    assert off.judged_alone == 0 and exact.judged_alone == 0
    assert make("t5", t5_dir).alone_margin == TrueNLIEvaluator.ALONE_MARGIN
    with pytest.raises(ConfigurationError, match="alone_margin"):
        make("t5", t5_dir, alone_margin=-1)
