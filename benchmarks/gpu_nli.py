"""The TRUE judge at full speed on one GPU (issue 39): throughput, memory and verdicts of
``TrueNLIEvaluator`` at the T5-11B shape under fixed batch sizes and the token-budget plan, and how
often bf16 verdicts agree with float32's.

The TRUE checkpoint (``google/t5_xxl_true_nli_mixture``) cannot be fetched here, so the model is a
T5 with T5-11B's dimensions (``t5-11b``'s config: d_model 1024, d_ff 65536, d_kv 128, 128 heads,
24 encoder and 24 decoder layers, ReLU, relative attention with 32 buckets / max distance 128,
vocabulary 32128; 11.3 B parameters) with random weights, built directly on the GPU, and the
tests' tokenizer (``tests/tiny_models.py``). As in the tests' tiny T5, the output rows of ``1``
and ``0`` are set along the direction in which the calibration pairs' decoder states differ most
(plus and minus), so about half the pairs come out entailed and verdicts vary; the logit margins
are scaled to a standard deviation of 4 on those pairs. The model reaches the judge through
:meth:`~doclens.evaluators.models.nli.InProcessNLI.load_network` (no 22 GB save and reload); the
tokenizer, batching, padding and forward are the judge's own.

Inputs:

* **throughput** — ACI-BENCH-like premise windows: stretches of each dialogue of 90–190 tokens of
  the tests' tokenizer, each with three reference claims of the same encounter in turn as
  hypotheses (inputs of 188 tokens on average, 52–313). From ACI-BENCH test 1 (``../shared/data``) where present, else from the
  notes shipped in ``examples/``; ``--write-pairs FILE`` stores them (with the agreement pairs) for
  a machine without ``../shared`` (``--pairs FILE`` reads them).
* **agreement** — the NLI benchmark's pairs (``benchmarks/nli_throughput.py``: the first 240
  distinct (prediction section, reference claim) pairs of its 40-note job) where ACI-BENCH is
  present, else the throughput pairs.

Plans: batch sizes 1, 32, 64, 128, 256 requested (``batch_size=N``: on CUDA the token budget from
free memory still caps a batch, so none can run out of memory) and the token-budget plan alone
(no ``batch_size``). Each plan gets a fresh judge whose first batch is the memory probe; a short
warm-up call (the probe included) precedes the timed call. ``tokens/s`` counts real input tokens
(not padding); batch 1 is timed on the first ``--single-inputs`` inputs only. ``judged_alone``
counts the inputs ``TrueNLIEvaluator`` judged again alone (bf16 gaps under ``alone_margin``).

Also measured: bf16 against float32 verdicts (and the float32 margin of every flipped one) for
the T5-11B-shaped model (float32 first, then cast in place to bf16), the tests' tiny TRUE-format
T5 and the tests' tiny classifier on the same device; the peak memory of one batch with and
without the decoder's key/value cache; a torch.profiler summary of one batch.

``--tiny`` replaces the 11B model by the tests' tiny T5 (a CPU smoke test of this script).
Prints one JSON object (and writes it to ``--out``). Target: ≥ 25,000 tokens/s at the T5-11B
shape on an H200, no out-of-memory at any requested batch, verdicts equal across plans.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

import torch  # noqa: E402
import transformers  # noqa: E402

from doclens.evaluators.models.nli import NLIClassifierEvaluator, TrueNLIEvaluator  # noqa: E402
from tests.tiny_models import (  # noqa: E402
    _splitting_direction,
    _tokenizer,
    build_tiny_classifier,
    build_tiny_t5,
)

ACI_BENCH = ROOT.parent / "shared" / "data" / "aci_bench_test1.jsonl"
#: t5-11b's config.json (the TRUE checkpoint is a fine-tuned T5-11B)
T5_11B = dict(vocab_size=32128, d_model=1024, d_ff=65536, d_kv=128, num_heads=128, num_layers=24,
              num_decoder_layers=24, feed_forward_proj="relu", relative_attention_num_buckets=32,
              relative_attention_max_distance=128, dropout_rate=0.1, layer_norm_epsilon=1e-6)
SMALL = dict(d_model=64, d_ff=256, d_kv=16, num_heads=4, num_layers=2, num_decoder_layers=2)
PLANS = (1, 32, 64, 128, 256, None)  # None: the token budget alone


# ---- inputs --------------------------------------------------------------------------------------
def dialogue_windows(tokenizer, texts: list[tuple[list[str], list[str]]], count: int,
                     claims_per_window: int = 3) -> list[tuple[str, str]]:
    """(premise, hypothesis) pairs: consecutive stretches of each dialogue of 90–190 tokens
    (cycling through 90, 115, 140, 165, 190; cut at token boundaries, as DocLens cuts premise
    windows), each with ``claims_per_window`` of the encounter's claims in turn."""
    sizes = [90, 140, 190, 115, 165]
    pairs: list[tuple[str, str]] = []
    windows = 0
    for turns, claims in texts:
        text = " ".join(turns)
        offsets = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
        begin = 0
        while begin < len(offsets):
            end = min(len(offsets), begin + sizes[windows % len(sizes)])
            premise = text[offsets[begin][0]:offsets[end - 1][1]].strip()
            windows += 1
            for k in range(claims_per_window):
                pairs.append((premise, claims[(windows + k) % len(claims)]))
            if len(pairs) >= count:
                return pairs[:count]
            begin = end
    return pairs


def aci_bench_pairs(tokenizer, count: int) -> dict:
    from benchmarks.nli_throughput import build_instances
    from doclens.parsing.sections import split_note_sections
    from doclens.parsing.source_units import parse_source_units
    from doclens.parsing.statements import strip_citations

    instances = build_instances(40)
    agreement = list(dict.fromkeys((split_note_sections(strip_citations(i["prediction"]))[section].strip(), claim)
                                   for i in instances for section, claims in i["reference_claims"].items()
                                   for claim in claims))[:240]
    texts = [([u.text for u in parse_source_units(i["source"])],
              [c for claims in i["reference_claims"].values() for c in claims] or ["the patient has a fever"])
             for i in instances]
    return {"source": "ACI-BENCH test 1 (40 dialogues): dialogue windows; agreement: nli_throughput.py's 240 pairs",
            "throughput": dialogue_windows(tokenizer, texts, count), "agreement": agreement}


def example_pairs(tokenizer, count: int) -> dict:
    rows = [json.loads(line) for line in (ROOT / "examples" / "notes.jsonl").read_text().splitlines() if line.strip()]
    texts = []
    for row in rows:
        turns = [line.split("]", 2)[-1].strip() for line in row["source"].splitlines() if line.strip()]
        claims = [s.strip() for s in row.get("reference", "").replace("\n", " ").split(".") if len(s.split()) >= 4]
        texts.append((turns, claims or ["the patient has a fever"]))
    pairs: list[tuple[str, str]] = []
    while len(pairs) < count:  # the examples are short: their turns are reused, in rotating order
        rotated = [(turns[k:] + turns[:k], claims) for k in range(len(pairs) % 7, 50, 7) for turns, claims in texts]
        pairs += dialogue_windows(tokenizer, rotated, count - len(pairs))
    return {"source": "examples/notes.jsonl turns (ACI-BENCH not present)", "throughput": pairs,
            "agreement": pairs[:240]}


# ---- the T5-11B-shaped model -----------------------------------------------------------------------
class PrebuiltTrue(TrueNLIEvaluator):
    """The TRUE judge on a model built in this process (folder: its tokenizer and config)."""

    #: SDPA backends the forward may use (``None``: torch's own choice)
    sdpa_backends: list | None = None

    def __init__(self, folder: str, network, **options):
        super().__init__(folder, no_cache=True, **options)
        self.prebuilt = network

    def load_network(self, transformers):
        return self.prebuilt

    def _forward(self, batch: dict) -> list[bool]:
        if self.sdpa_backends is None:
            return super()._forward(batch)
        from torch.nn.attention import sdpa_kernel

        with sdpa_kernel(self.sdpa_backends):
            return super()._forward(batch)


def build_t5_11b_shape(tokenizer, device: str, dtype, shape: dict):
    config = transformers.T5Config(**shape, pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
                                   decoder_start_token_id=tokenizer.pad_token_id, tie_word_embeddings=False)
    torch.manual_seed(0)
    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with torch.device(device):
            model = transformers.T5ForConditionalGeneration(config)
    finally:
        torch.set_default_dtype(previous)
    return model.eval()


def set_answer_rows(model, tokenizer, device: str, pairs: list[tuple[str, str]]) -> None:
    """The rows of ``1`` and ``0`` along the direction in which the decoder states of ``pairs``
    differ most (as tests/tiny_models.py does with its calibration pairs), scaled so the margins
    have a standard deviation of 4 on them."""
    one = tokenizer("1", add_special_tokens=False)["input_ids"][-1]
    zero = tokenizer("0", add_special_tokens=False)["input_ids"][-1]
    batch = tokenizer([f"premise: {p} hypothesis: {h}" for p, h in pairs], padding=True, return_tensors="pt").to(device)
    with torch.inference_mode():
        start = torch.full((len(pairs), 1), tokenizer.pad_token_id, device=device)
        hidden = model(**batch, decoder_input_ids=start, output_hidden_states=True,
                       use_cache=False).decoder_hidden_states[-1][:, 0].float()
    direction = _splitting_direction(hidden)
    row = direction * (2.0 / float((hidden @ direction).std()))  # margin = 2 row·h: std 4
    with torch.no_grad():
        head = model.lm_head.weight
        head[one] = row.to(head.dtype)
        head[zero] = (-row).to(head.dtype)


def save_tokenizer_folder(folder: Path, tokenizer, model) -> str:
    tokenizer.save_pretrained(folder)
    model.config.save_pretrained(folder)
    return str(folder)


# ---- measurements ----------------------------------------------------------------------------------
class BatchLog:
    """Counts the batches, rows and padded tokens the network ran (a forward pre-hook)."""

    def __init__(self, network):
        self.shapes: list[tuple[int, int]] = []
        self.handle = network.register_forward_pre_hook(self.record, with_kwargs=True)

    def record(self, module, args, kwargs):
        shape = kwargs["input_ids"].shape
        self.shapes.append((int(shape[0]), int(shape[1])))

    def summary(self) -> dict:
        rows = [s[0] for s in self.shapes]
        return {"batches": len(rows), "largest_batch": max(rows, default=0),
                "mean_batch": round(sum(rows) / max(1, len(rows)), 1),
                "padded_tokens": sum(a * b for a, b in self.shapes)}


def synchronize(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def peak_gb(device: str) -> float | None:
    return round(torch.cuda.max_memory_allocated() / 1e9, 2) if device.startswith("cuda") else None


def reset_peak(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()


def time_plan(make_judge, plan, inputs: list[dict], single_inputs: int, device: str) -> dict:
    judge = make_judge(batch_size=plan)
    judge.load()
    timed = inputs[:single_inputs] if plan == 1 else inputs
    judge.run_inputs(inputs[-8:])  # warm-up: the memory probe and kernel set-up
    log = BatchLog(judge.network)
    reset_peak(device)
    synchronize(device)
    start = time.perf_counter()
    try:
        verdicts = judge.run_inputs(timed)
        error = None
    except Exception as exc:  # noqa: BLE001 -- reported: a plan that fails is a finding, not a crash
        verdicts, error = None, f"{type(exc).__name__}: {str(exc)[:300]}"
    synchronize(device)
    seconds = time.perf_counter() - start
    log.handle.remove()
    tokens = sum(len(i["input_ids"]) for i in timed)
    result = {"batch_requested": plan if plan else "token budget", "inputs": len(timed),
              "seconds": round(seconds, 3), "inputs_per_s": round(len(timed) / seconds, 1),
              "tokens_per_s": round(tokens / seconds), "peak_memory_gb": peak_gb(device),
              "out_of_memory_halvings": judge.oom_halvings, "judged_alone": getattr(judge, "judged_alone", None),
              "error": error, **log.summary()}
    if judge.token_cost is not None:
        result["probe_bytes_per_token"] = round(judge.token_cost[0])
        result["probe_length"] = judge.token_cost[1]
        result["token_budget"] = judge.batch_token_limit(max(len(i["input_ids"]) for i in timed))
    del judge
    if device.startswith("cuda"):
        torch.cuda.empty_cache()
    return {"result": result, "verdicts": verdicts}


def agreement(exact_judge, fast_judge, inputs: list[dict], margin) -> dict:
    """Verdicts of two judges on ``inputs`` and the float32 margins of those that differ."""
    exact = exact_judge.run_inputs(inputs)
    fast = fast_judge.run_inputs(inputs)
    flipped = [n for n, (a, b) in enumerate(zip(exact, fast)) if a != b]
    result = {"inputs": len(inputs), "equal": len(inputs) - len(flipped),
              "agreement": round(1 - len(flipped) / max(1, len(inputs)), 4),
              "entailed_float32": sum(exact)}
    if margin is not None and flipped:
        result["flipped"] = flipped_summary(margin(exact_judge, [inputs[n] for n in flipped]))
    return result


def flipped_summary(margins: list[float]) -> dict:
    """The float32 margins of the inputs whose bf16 verdict differs: how many, the largest, a few."""
    ordered = sorted(margins, key=abs)
    return {"count": len(margins), "largest_abs_float32_margin": round(abs(ordered[-1]), 4) if ordered else None,
            "first": [round(m, 4) for m in ordered[:10]]}


def t5_margins(judge, inputs: list[dict]) -> list[float]:
    return judge.map_batches(inputs, lambda batch: judge._logit_gaps(batch).tolist())


def classifier_margins(judge, inputs: list[dict]) -> list[float]:
    return judge.map_batches(inputs, lambda batch: judge._decision_margin(judge.network(**batch).logits.float()).tolist())


def margin_quantiles(values: list[float]) -> dict:
    ordered = sorted(abs(v) for v in values)
    pick = lambda q: round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 4)  # noqa: E731
    return {"p01": pick(0.01), "p05": pick(0.05), "p10": pick(0.10), "median": pick(0.5)}


def cache_memory(judge, inputs: list[dict], device: str) -> dict:
    """Peak memory of one forward pass of ``inputs`` with and without the decoder's key/value cache."""
    batch = judge.tokenizer.pad(inputs, padding="longest", return_tensors="pt").to(device)
    start = torch.full((len(inputs), 1), judge.decoder_start, dtype=torch.long, device=device)
    result = {"batch": len(inputs), "padded_length": int(batch["input_ids"].shape[1])}
    for name, use_cache in (("with_cache_gb", True), ("without_cache_gb", False)):
        torch.cuda.empty_cache()
        reset_peak(device)
        before = torch.cuda.memory_allocated()
        with torch.inference_mode():
            output = judge.network(**batch, decoder_input_ids=start, use_cache=use_cache)
            result[name] = round((torch.cuda.max_memory_allocated() - before) / 1e9, 2)
        del output
    return result


def profile_one_batch(judge, inputs: list[dict], device: str) -> list[dict]:
    from torch.profiler import ProfilerActivity, profile

    def own_time(event) -> float:  # kernel time of the event itself (µs); CPU-side ops have none
        return float(getattr(event, "self_device_time_total", None) or getattr(event, "self_cuda_time_total", 0) or 0)

    judge.run_inputs(inputs)
    synchronize(device)
    start = time.perf_counter()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        judge.run_inputs(inputs)
        synchronize(device)
    wall = time.perf_counter() - start
    events = prof.key_averages()
    total = sum(own_time(e) for e in events) or 1.0
    rows = [{"wall_ms_under_profiler": round(wall * 1000, 1), "kernel_ms": round(total / 1000, 1)}]
    for event in sorted(events, key=own_time, reverse=True)[:12]:
        rows.append({"op": event.key[:90], "kernel_ms": round(own_time(event) / 1000, 2),
                     "share": round(own_time(event) / total, 3), "calls": event.count})
    return rows


def sdpa_backends(device: str, batch: int, length: int) -> dict:
    """Which SDPA kernels accept T5's encoder attention (a float bias mask of shape
    (batch, 128, length, length), bf16, head size 128): each backend alone, its error if refused,
    and the time of one call."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    q = torch.randn(batch, 128, length, 128, device=device, dtype=torch.bfloat16)
    mask = torch.randn(batch, 128, length, length, device=device, dtype=torch.bfloat16)
    out = {}
    for name in ("EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "MATH"):
        try:
            with sdpa_kernel([getattr(SDPBackend, name)]), warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                torch.nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=mask, scale=1.0)
                synchronize(device)
                start = time.perf_counter()
                for _ in range(3):
                    torch.nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=mask, scale=1.0)
                synchronize(device)
            out[name] = {"ms": round((time.perf_counter() - start) / 3 * 1000, 2),
                         "warnings": [str(w.message)[:200] for w in caught][:3]}
        except Exception as exc:  # noqa: BLE001 -- a refused backend is the finding
            out[name] = f"refused: {str(exc)[:300]}"
    return out


def attention_experiment(model, make, inputs: list[dict], device: str, save, result: dict,
                         wanted: list[str], skip_backend_check: bool = False) -> dict:
    """Batch 64 and the token budget under attention variants (``wanted``, by name); verdicts
    against the first variant's batch 64. ``sdpa_no_math``: torch's SDPA without its math backend
    (which computes bf16 attention in float32), so an efficient kernel must take T5's bias mask."""
    out: dict = {}
    if device.startswith("cuda") and not skip_backend_check:
        for length in (196, 208):
            try:
                out[f"sdpa_backends_64x{length}"] = sdpa_backends(device, 64, length)
            except Exception as exc:  # noqa: BLE001
                out[f"sdpa_backends_64x{length}"] = f"failed: {str(exc)[:200]}"
            result["attention_experiment"] = out
            save()
    from torch.nn.attention import SDPBackend

    reference = None
    no_math = [SDPBackend.CUDNN_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.FLASH_ATTENTION]
    variants = {"sdpa": ("sdpa", None, None), "sdpa_pad16": ("sdpa", 16, None), "eager": ("eager", None, None),
                "sdpa_no_math": ("sdpa", None, no_math), "sdpa_no_math_pad16": ("sdpa", 16, no_math)}
    for name in wanted:
        implementation, multiple, backends = variants[name]
        try:
            model.set_attn_implementation(implementation)
        except Exception as exc:  # noqa: BLE001
            out[name] = f"cannot set {implementation}: {str(exc)[:200]}"
            continue
        rows = []
        for plan in (64, None):
            def padded_judge(multiple=multiple, backends=backends, **options):
                judge = make("bfloat16", **options)
                judge.pad_multiple = multiple
                judge.sdpa_backends = backends
                return judge

            with warnings.catch_warnings(record=True) as caught:  # SDPA says why it refuses a kernel
                warnings.simplefilter("always")
                timed = time_plan(padded_judge, plan, inputs, 48, device)
            timed["result"]["warnings"] = list(dict.fromkeys(str(w.message)[:300] for w in caught))[:6]
            if reference is None and timed["verdicts"] is not None:
                reference = timed["verdicts"]
            timed["result"]["verdicts_differing_from_first"] = (
                sum(a != b for a, b in zip(timed["verdicts"], reference)) if timed["verdicts"] and reference else None)
            rows.append(timed["result"])
            print(json.dumps({name: timed["result"]}), file=sys.stderr, flush=True)
        out[name] = rows
        result["attention_experiment"] = out
        save()
    model.set_attn_implementation("sdpa")
    return out


def tiny_agreement(folder: Path, device: str, pairs: list[tuple[str, str]]) -> dict:
    """bf16 against float32 for the tests' tiny TRUE-format T5 and tiny classifier on ``device``."""
    out = {}
    t5 = build_tiny_t5(folder / "tiny-t5")
    classifier = build_tiny_classifier(folder / "tiny-nli")
    for name, cls, path, margin in (("tiny_true_t5", TrueNLIEvaluator, t5, t5_margins),
                                    ("tiny_classifier", NLIClassifierEvaluator, classifier, classifier_margins)):
        exact = cls(str(path), device=device, dtype="float32", no_cache=True).load()
        fast = cls(str(path), device=device, dtype="bfloat16", no_cache=True).load()
        inputs = [w for p, h in pairs for w in exact.premise_windows(p, h)]
        out[name] = agreement(exact, fast, inputs, margin)
        out[name]["float32_margin_quantiles"] = margin_quantiles(margin(exact, inputs))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--tiny", action="store_true", help="the tests' tiny T5 instead of the T5-11B shape")
    parser.add_argument("--small-shape", action="store_true",
                        help="T5-11B's layout at a small size (d_model 64, 2 layers): a CPU check of the 11B path")
    parser.add_argument("--inputs", type=int, default=1024, help="timed inputs per plan")
    parser.add_argument("--single-inputs", type=int, default=48, help="timed inputs for batch 1")
    parser.add_argument("--agreement-inputs", type=int, default=240)
    parser.add_argument("--pairs", help="a JSON file written by --write-pairs")
    parser.add_argument("--write-pairs", help="write the throughput and agreement pairs to this file and stop")
    parser.add_argument("--plans", default=",".join(str(p or 0) for p in PLANS),
                        help="batch sizes to time, 0 = the token budget alone")
    parser.add_argument("--skip-tiny", action="store_true", help="no bf16 agreement for the tests' tiny models")
    parser.add_argument("--skip-float32", action="store_true", help="no float32 agreement at the T5-11B shape")
    parser.add_argument("--out", help="also write the JSON here")
    parser.add_argument("--attention-experiment", action="store_true",
                        help="bf16 only: time batch 64 and the token budget under attention variants (transformers' "
                             "sdpa as is, sdpa with batches padded to a multiple of 16, eager) instead of the plans")
    parser.add_argument("--variants", default="sdpa,sdpa_pad16,eager",
                        help="--attention-experiment: which of sdpa, sdpa_pad16, eager, sdpa_no_math, "
                             "sdpa_no_math_pad16")
    parser.add_argument("--skip-backend-check", action="store_true",
                        help="--attention-experiment: no stand-alone timing of each SDPA backend")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    transformers.logging.set_verbosity_error()
    tokenizer = _tokenizer("t5", model_max_length=512)
    if args.write_pairs:
        pairs = aci_bench_pairs(tokenizer, args.inputs) if ACI_BENCH.is_file() else example_pairs(tokenizer, args.inputs)
        Path(args.write_pairs).write_text(json.dumps(pairs))
        print(json.dumps({"written": args.write_pairs, "source": pairs["source"],
                          "throughput": len(pairs["throughput"]), "agreement": len(pairs["agreement"])}))
        return
    if args.pairs:
        pairs = json.loads(Path(args.pairs).read_text())
    else:
        pairs = aci_bench_pairs(tokenizer, args.inputs) if ACI_BENCH.is_file() else example_pairs(tokenizer, args.inputs)
    device = args.device
    began = time.perf_counter()

    def save() -> None:
        result["seconds_so_far"] = round(time.perf_counter() - began, 1)
        if args.out:
            Path(args.out).write_text(json.dumps(result, indent=2))

    result: dict = {"machine": {"python": platform.python_version(), "torch": torch.__version__,
                                "transformers": transformers.__version__, "device": device,
                                "gpu": torch.cuda.get_device_name() if device.startswith("cuda") else None,
                                "gpu_memory_gb": round(torch.cuda.get_device_properties(0).total_memory / 1e9, 1)
                                if device.startswith("cuda") else None,
                                "cpus": os.cpu_count(), "load_average": [round(x, 2) for x in os.getloadavg()]},
                    "pairs_source": pairs["source"]}
    throughput_pairs = [tuple(p) for p in pairs["throughput"]][:args.inputs]
    agreement_pairs = [tuple(p) for p in pairs["agreement"]][:args.agreement_inputs]
    with tempfile.TemporaryDirectory() as folder_name:
        folder = Path(folder_name)
        if not (args.attention_experiment or args.skip_tiny):
            result["tiny_bf16_agreement"] = tiny_agreement(folder, device, agreement_pairs)
            save()
        if args.tiny:
            path = build_tiny_t5(folder / "model")
            model = transformers.AutoModelForSeq2SeqLM.from_pretrained(path).to(device).eval()
            shape = "tests' tiny T5"
        else:
            built = time.perf_counter()
            dtype = torch.bfloat16 if args.skip_float32 else torch.float32
            shape_dims = {**T5_11B, **SMALL} if args.small_shape else T5_11B
            model = build_t5_11b_shape(tokenizer, device, dtype, shape_dims)
            set_answer_rows(model, tokenizer, device, throughput_pairs[:32] + agreement_pairs[:32])
            path = save_tokenizer_folder(folder / "t5-11b-shape", tokenizer, model)
            shape = "T5-11B layout, small (CPU check)" if args.small_shape else "T5-11B (random weights)"
            result["build_seconds"] = round(time.perf_counter() - built, 1)
        result["model"] = {"shape": shape, "parameters": sum(p.numel() for p in model.parameters()),
                           **{k: getattr(model.config, k) for k in ("d_model", "d_ff", "d_kv", "num_heads",
                                                                   "num_layers", "num_decoder_layers")}}

        def make(dtype: str, **options):
            return PrebuiltTrue(str(path), model, device=device, dtype=dtype, **options)

        probe = make("float32" if not args.skip_float32 else "bfloat16").load()
        agreement_inputs = [w for p, h in agreement_pairs for w in probe.premise_windows(p, h)]
        inputs = [w for p, h in throughput_pairs for w in probe.premise_windows(p, h)]
        lengths = [len(i["input_ids"]) for i in inputs]
        result["inputs"] = {"throughput": len(inputs), "mean_tokens": round(sum(lengths) / len(lengths), 1),
                            "min_tokens": min(lengths), "max_tokens": max(lengths),
                            "agreement": len(agreement_inputs)}
        save()
        if not args.skip_float32:
            started = time.perf_counter()
            exact_margins = t5_margins(probe, agreement_inputs)  # the judge's rule: entailed iff margin > 0
            exact_verdicts = [m > 0 for m in exact_margins]
            float32_seconds = time.perf_counter() - started
            model.to(torch.bfloat16)
            if device.startswith("cuda"):
                torch.cuda.empty_cache()
            fast = make("bfloat16").load()
            fast_verdicts = fast.run_inputs(agreement_inputs)
            fast_margins = t5_margins(fast, agreement_inputs)
            flipped = [n for n, (a, b) in enumerate(zip(exact_verdicts, fast_verdicts)) if a != b]
            result["bf16_agreement"] = {
                "inputs": len(agreement_inputs), "equal": len(agreement_inputs) - len(flipped),
                "agreement": round(1 - len(flipped) / len(agreement_inputs), 4),
                "entailed_float32": sum(exact_verdicts),
                "flipped": flipped_summary([exact_margins[n] for n in flipped]),
                "float32_margin_quantiles": margin_quantiles(exact_margins),
                "largest_bf16_margin_error": round(max(abs(a - b) for a, b in zip(exact_margins, fast_margins)), 4),
                "float32_seconds": round(float32_seconds, 1)}
            del fast
            save()
        elif model.dtype != torch.bfloat16:
            model.to(torch.bfloat16)
        if args.attention_experiment:
            result["attention_experiment"] = attention_experiment(model, make, inputs, device, save, result,
                                                                  args.variants.split(","), args.skip_backend_check)
            result["seconds_total"] = round(time.perf_counter() - began, 1)
            save()
            print(json.dumps(result, indent=2))
            return
        plans = []
        verdicts = {}
        for plan in [int(p) or None for p in args.plans.split(",")]:
            timed = time_plan(lambda **options: make("bfloat16", **options), plan, inputs, args.single_inputs, device)
            plans.append(timed["result"])
            verdicts[plan] = timed["verdicts"]
            print(json.dumps(timed["result"]), file=sys.stderr, flush=True)
            result["plans"] = plans
            save()
        done = {plan: v for plan, v in verdicts.items() if v is not None}
        reference = done.get(None) or next(iter(done.values()), None)
        differing = {str(plan or "budget"): sum(a != b for a, b in zip(v, reference)) for plan, v in done.items()} \
            if reference else {}
        result["verdicts_equal_across_plans"] = bool(done) and not any(differing.values())
        result["verdicts_differing_from_budget_plan"] = differing
        result["entailed_share"] = round(sum(reference) / len(reference), 3) if reference else None
        result["no_out_of_memory_failure"] = all(p["error"] is None for p in plans)
        judge = make("bfloat16").load()
        if device.startswith("cuda"):
            for name, measure in (("decoder_cache_memory", cache_memory), ("profile_one_batch_of_64", profile_one_batch)):
                try:
                    result[name] = measure(judge, inputs[:64], device)
                except Exception as exc:  # noqa: BLE001 -- extras: a failure is reported, the figures above stay
                    result[name] = f"failed: {type(exc).__name__}: {str(exc)[:200]}"
                save()
        best = max((p["tokens_per_s"] for p in plans if p["error"] is None), default=0)
        result["best_tokens_per_s"] = best
        result["target_tokens_per_s"] = 25000
        result["seconds_total"] = round(time.perf_counter() - began, 1)
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text)


if __name__ == "__main__":
    main()
