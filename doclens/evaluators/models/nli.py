"""In-process NLI judges (``docs/design.md`` §2): the TRUE model and any sequence-classification NLI model.

Both answer :meth:`~doclens.Evaluator.entail_batch`; the base class derives claim verdicts and the
leave-one-out citation verdicts from it (its short-cuts: no precision pairs when ``C ⇏ s``, none
for a single citation, ``C∖{c}`` only when ``c`` alone does not entail; every distinct pair once).

What :class:`InProcessNLI` adds, for speed and for honesty:

* **cache** — every verdict goes through the DocLens cache (:mod:`doclens.evaluators.cache`), keyed by the
  model's identity (name or folder, a fingerprint of its files), the input format, the window
  and the pair: a rerun, or a resumed crash, runs the model on nothing twice;
* **windows, never truncation** — a premise longer than the model's window is split into
  overlapping windows (a quarter of the window by default) and the pair is entailed iff some
  window entails the hypothesis (the original DocLens scripts truncated premises to 500 words);
  windows after the first that entails are never run.
  Windowed premises are counted in ``usage.windowed_premises``; a hypothesis that alone does not
  fit the window is an error, not a silent cut;
* **length-sorted batches with dynamic padding** — inputs are tokenized once, sorted by length and
  padded only to the longest of their batch; on a CPU a batch also ends where the next input is
  more than ``padding_tolerance`` (10%) shorter than the batch's longest, because there a padded
  token costs as much as a real one (:func:`plan_batches`); ``torch.inference_mode``; the device
  is chosen automatically (CUDA, MPS, CPU);
* **batches sized by a token budget on a GPU** — a batch holds as many inputs as fit
  ``padded length × inputs ≤ budget``; on CUDA the budget is the free device memory divided by
  what one padded token costs, measured on the judge's first (small, probe) batch, and capped by
  ``max_batch_tokens``. A batch that still runs out of memory is halved and retried, and the
  budget lowered, so no requested batch size crashes and no input is lost
  (:meth:`InProcessNLI.batch_token_limit`);
* **precision by agreement** — bf16 is the default on a GPU only for a judge whose bf16 verdicts
  were measured to agree with float32's (``gpu_dtype``; ``cards/in-process-evaluators.md``).

Data stays on this machine. A model name that is not a local folder is loaded by ``transformers``
from its cache, or from the Hub for online users; tests and the offline default use folders.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import Any, cast

from doclens.core.errors import ConfigurationError, InputError
from doclens.core.settings import ModelSettings
from doclens.core.support import SUPPORT_LABELS
from doclens.evaluators.base import Evaluator
from doclens.evaluators.cache import CachedAnswers, cache_key
from doclens.evaluators.models.nli_runtimes import RECHECK_MARGIN, apply_runtime, check_runtime
from doclens.evaluators.models.torch_utils import (
    choose_device,
    choose_dtype,
    describe_in_process,
    import_torch,
    model_fingerprint,
    placement,
    stated_window,
)

logger = logging.getLogger("doclens")

TRUE_MODEL = "google/t5_xxl_true_nli_mixture"


class InProcessNLI(CachedAnswers, Evaluator):
    """The shared machinery of in-process NLI judges; subclasses load a model and score batches.

    Parameters
    ----------
    model : str
        Hub id or local folder.
    settings : ModelSettings, optional
        The model and how it runs (:class:`doclens.core.settings.ModelSettings`: every option
        below but the cache's), checked once when made; the options as keywords build it (or
        change the given one) through ``ModelSettings.from_kwargs``.
    device : str, optional
        ``cuda``, ``cuda:1``, ``mps``, ``cpu``; default: the best available.
    dtype : str, optional
        ``float32``, ``bfloat16``, ``float16``; default :attr:`gpu_dtype` on a CUDA GPU, else float32.
    batch_size : int, optional
        At most this many inputs per forward pass (length-sorted, padded to the longest in the
        batch). Default 8 on a CPU (measured best on 2 cores: larger batches were slower); on a
        GPU no count limit: the token budget sizes batches.
    max_batch_tokens : int, optional
        At most this many padded tokens (inputs × the batch's longest) per forward pass. On CUDA
        the budget otherwise comes from the free device memory (:meth:`batch_token_limit`) and
        this caps it; on a CPU or MPS only this (default: none) and ``batch_size`` limit batches.
    max_length : int, optional
        The model window in tokens; default the tokenizer's / model's own limit.
    padding_tolerance : float, optional
        A batch ends early where the next (shorter) input is more than this share shorter than the
        batch's longest, so at most about this share of a batch is padding (0 ≤ x ≤ 1; 1 = no
        limit). Default 0.1 on a CPU, where a padded token costs as much as a real one and a
        fuller batch gains little (``cards/in-process-evaluators.md``, Measured), and 1 on a GPU.
        Verdicts do not depend on it.
    window_overlap : float
        Share of a window repeated in the next one when a premise is split (0 ≤ x < 1).
    cache_dir, no_cache, refresh
        The verdict cache (:func:`doclens.evaluators.cache.open_cache`).
    runtime : str
        What runs the model (:mod:`doclens.evaluators.models.nli_runtimes`): ``torch`` (default),
        ``onnx`` (ONNX Runtime, float32), ``onnx-int8`` or ``torch-int8`` (dynamic int8
        quantisation), ``bf16-checked`` (``nli`` only: bf16, near-boundary inputs again in
        float32); all but ``torch`` on the CPU only. Named in the signature and cache keys.
    """

    keeps_data_local = True
    loads_model_in_process = True
    #: The default dtype on a CUDA GPU: ``bfloat16`` only for a judge whose bf16 verdicts were
    #: measured to agree with float32's on ≥ 99 % of the NLI benchmark's pairs, else ``float32``
    #: (``cards/in-process-evaluators.md``, "On a GPU").
    gpu_dtype: str = "float32"
    auto_batch_size = "auto (8 on CPU; on a GPU as many as the token budget allows)"
    #: Describes the input format and how the answer is read; part of cache keys and config.
    input_format: str = ""

    def __init__(self, model: str | None = None, *, settings: ModelSettings | None = None, cache_dir=None,
                 no_cache: bool = False, refresh: bool = False, **model_options):
        # every option is checked once, by ModelSettings (keywords build it, or change given ones)
        super().__init__()
        settings = ModelSettings.from_kwargs(settings, model=model, **model_options)
        if not settings.model:
            raise ConfigurationError(f"the {self.name!r} evaluator needs a model (--model: a hub id or local folder)")
        #: the model and how it runs, as checked (frozen)
        self.settings = settings
        self.runtime = check_runtime(settings.runtime)
        self.model: str = settings.model
        self.requested_device = settings.device
        self.requested_dtype = settings.dtype
        batch_size, max_batch_tokens = settings.batch_size, settings.max_batch_tokens
        self._placement: dict | None = None
        #: runtime bf16-checked: the float32 model that re-judges near-boundary inputs, and their count
        self.exact_network = None
        self.rechecked_inputs = 0
        self.batch_size = batch_size
        self.max_batch_tokens = max_batch_tokens
        #: CUDA: device bytes one padded token of a batch needed at the probe batch, and the padded
        #: length it was measured at (:meth:`batch_token_limit`)
        self.token_cost: tuple[float, int] | None = None
        #: padded tokens per batch at most, after a batch ran out of memory (halved each time)
        self.oom_token_limit: int | None = None
        #: batches halved after running out of device memory
        self.oom_halvings = 0
        #: a batch's padded length is rounded up to a multiple of this (``None``: to its longest)
        self.pad_multiple: int | None = None
        self.requested_max_length = settings.max_length
        self.window_overlap = settings.window_overlap
        self.padding_tolerance = settings.padding_tolerance
        self.use_cache(cache_dir, no_cache, refresh)
        self._fingerprint: str | None = None
        self._loaded = False
        # Set by load(): the torch module, where and in what precision the model runs, the
        # tokenizer and network, and the window (tokens) the network takes.
        # (typed ``Any``: torch and transformers are optional imports, their objects untyped here)
        self.torch: Any = None
        self.device: str | None = None
        self.dtype: Any = None
        self.tokenizer: Any = None
        self.network: Any = None
        self.max_length: int | None = None

    #: The ``transformers`` auto class that loads the model.
    auto_class: str = ""

    # ---- what a subclass provides --------------------------------------------------------------
    def _after_load(self) -> None:
        """Read what the subclass needs from the loaded :attr:`tokenizer` and :attr:`network`."""

    def encode(self, premise: str, hypothesis: str) -> dict:
        """The model input for one pair: token lists (``input_ids`` and friends), no padding."""
        raise NotImplementedError

    def _forward(self, batch: dict) -> list[bool]:
        """Verdicts for one padded batch (tensors on :attr:`device`)."""
        raise NotImplementedError

    # ---- loading ---------------------------------------------------------------------------------
    def load(self) -> InProcessNLI:
        """Load the tokenizer and model (done lazily on the first pair; call it to pay up front)."""
        if self._loaded:
            return self
        torch, transformers = import_torch(f"the {self.name!r} evaluator")
        self.torch = torch
        self.device = choose_device(torch, self.requested_device)
        self.dtype = choose_dtype(torch, self.device, self.requested_dtype, self.gpu_dtype)
        if self.batch_size is None and self.device == "cpu":
            self.batch_size = 8
        if self.padding_tolerance is None:
            self.padding_tolerance = 0.1 if self.device == "cpu" else 1.0
        logger.info("loading %s on %s (%s)", self.model, self.device, str(self.dtype).replace("torch.", ""))
        try:
            self.tokenizer = transformers.AutoTokenizer.from_pretrained(self.model)
            self.network = self.load_network(transformers)
        except OSError as exc:
            raise ConfigurationError(f"cannot load model {self.model!r}: {exc}") from exc
        if not getattr(self.tokenizer, "is_fast", False):
            raise ConfigurationError(f"{self.model!r} has no fast tokenizer; windows need token offsets")
        self.max_length = self.window_limit(self.tokenizer, self.network.config)
        self._after_load()
        self.network.to(self.device)
        self.network.eval()
        self.network = apply_runtime(self, self._sample_batch())
        # Inputs are tokenized once (their lengths decide windows and batches) and padded per
        # batch later; that is deliberate, so transformers' advice to pad in __call__ is muted.
        # Over-long pairs are split into windows before the model sees them, so the tokenizer's
        # length warning is muted too.
        for warning in ("Asking-to-pad-a-fast-tokenizer", "sequence-length-is-longer-than-the-specified-maximum"):
            getattr(self.tokenizer, "deprecation_warnings", {})[warning] = True
        self._loaded = True
        return self

    def load_network(self, transformers):
        """The model, read from :attr:`model` in :attr:`dtype` by the judge's ``auto_class`` (a
        benchmark may hand over a model it built instead)."""
        return getattr(transformers, self.auto_class).from_pretrained(self.model, dtype=self.dtype)

    def _sample_batch(self) -> dict:
        """A padded batch of two inputs, named as the model is called (traced by an ONNX export)."""
        inputs = [self.encode("the patient has a fever", "fever"), self.encode("no rash", "a rash on the arm")]
        return dict(self.tokenizer.pad(inputs, padding="longest", return_tensors="pt"))

    def window_limit(self, tokenizer, config) -> int:
        """The requested ``max_length``, else the smallest real limit the tokenizer and the model
        state, else 512."""
        return self.requested_max_length or stated_window(tokenizer, config) or 512

    @property
    def fingerprint(self) -> str:
        if self._fingerprint is None:
            self._fingerprint = model_fingerprint(self.model)
        return self._fingerprint

    # ---- the contract ------------------------------------------------------------------------------
    def entail_batch(self, pairs: list[tuple[str, str]]) -> list[bool]:
        """Verdicts from the cache where it has them; the rest from the model, stored at once."""
        keys = [self._key(premise, hypothesis) for premise, hypothesis in pairs]
        # a verdict that is not a boolean (a damaged or foreign entry) is a miss: judged again
        found = {key: value for key, value in self.cache.get_many(list(dict.fromkeys(keys))).items()
                 if isinstance(value, bool)}
        todo = list(dict.fromkeys(pair for pair, key in zip(pairs, keys) if key not in found))
        self.usage.add(cached_calls=len(pairs) - len(todo))
        if todo:
            fresh = {self._key(*pair): verdict for pair, verdict in zip(todo, self.judge_pairs(todo))}
            self.cache.put_many(fresh)
            found.update(fresh)
        return [bool(found[key]) for key in keys]

    @property
    def placement(self) -> dict:
        """The device kind and dtype the model runs with (:func:`doclens.evaluators.models.torch_utils.placement`)."""
        if self._placement is None:
            torch, _ = import_torch(f"evaluator {self.name!r}")
            self._placement = placement(torch, self.requested_device, self.requested_dtype, self.gpu_dtype)
        return self._placement

    def _key(self, premise: str, hypothesis: str) -> str:
        return cache_key({"kind": "nli", "class": type(self).__qualname__, "model": self.model,
                          "fingerprint": self.fingerprint, "format": self.input_format, **self.placement,
                          "max_length": self.requested_max_length, "overlap": self.window_overlap,
                          "premise": premise, "hypothesis": hypothesis, **self.runtime_identity()})

    def judge_pairs(self, pairs: list[tuple[str, str]]) -> list[bool]:
        """Run the model on ``pairs`` (no cache). A pair longer than the window is entailed iff
        some premise window entails; windows go in rounds (every pair's first window, then the
        second window of the pairs not yet entailed, …), so no window runs once the answer is known."""
        self.load()
        windows = [self.premise_windows(premise, hypothesis) for premise, hypothesis in pairs]
        split = sum(len(w) > 1 for w in windows)
        if split:
            self.usage.add(windowed_premises=split)
            logger.debug("%d premise(s) split into windows", split)
        entailed = [False] * len(pairs)
        for round_ in range(max((len(w) for w in windows), default=0)):
            owners = [n for n, w in enumerate(windows) if len(w) > round_ and not entailed[n]]
            for owner, verdict in zip(owners, self.run_inputs([windows[n][round_] for n in owners])):
                entailed[owner] = verdict
        return entailed

    def batches(self, inputs: list[dict]) -> list[list[int]]:
        """Positions of ``inputs`` per forward pass as planned now (:func:`plan_batches` with this
        judge's settings and its current token limit; on CUDA before the probe batch has been
        measured, by ``batch_size`` and ``max_batch_tokens`` alone)."""
        lengths = [len(i["input_ids"]) for i in inputs]
        return plan_batches(lengths, self.batch_size, cast(float, self.padding_tolerance),
                            self.batch_token_limit(max(lengths, default=0)))

    def progress_pairs(self) -> int:
        """With progress reporting, the fewest pairs sent at once: four CPU batches, or on a GPU
        enough for token-budget batches to fill (:meth:`Evaluator.progress_pairs`)."""
        return 4 * (self.batch_size or (8 if self.placement["device"] == "cpu" else 256))

    def run_inputs(self, inputs: list[dict]) -> list[bool]:
        """Verdicts for encoded inputs, in order: sorted by length, batched, dynamically padded."""
        verdicts = self.map_batches(inputs, self._forward)
        self.usage.add(model_inputs=len(inputs))
        return [bool(verdict) for verdict in verdicts]

    # ---- batch planning by a token budget ----------------------------------------------------
    def batch_token_limit(self, longest: int) -> int | None:
        """Padded tokens a batch may hold whose longest input has ``longest`` tokens: the least of
        ``max_batch_tokens``, the limit left by an out-of-memory batch, and on CUDA, once the
        probe batch has measured what a token costs, ``MEMORY_SHARE`` of the free device memory
        (driver-free plus what torch holds unused) over that cost. The cost was measured at one
        padded length; a longer batch is charged in proportion to its length (attention grows
        with it; the rest does not, so this errs on the safe side). ``None``: no token limit."""
        limits = [self.max_batch_tokens, self.oom_token_limit]
        if self.token_cost is not None:
            cost, measured_at = self.token_cost
            limits.append(int(MEMORY_SHARE * free_device_bytes(self.torch, cast(str, self.device))
                              / (cost * max(1.0, longest / measured_at))))
        return min((limit for limit in limits if limit is not None), default=None)

    def map_batches(self, inputs: list[dict], step) -> list:
        """``step(batch)`` (one result per row of a padded batch on :attr:`device`) over
        ``inputs``, results in input order. Inputs go longest first; each batch is planned when
        it runs (:func:`next_batch`), so the token limit can change between batches: on CUDA
        the first batch is a probe of at most ``PROBE_INPUTS`` inputs whose peak memory sets
        :attr:`token_cost`; a batch that runs out of device memory lowers the limit to half its
        padded tokens and is planned again (an input that alone does not fit is an error)."""
        lengths = [len(i["input_ids"]) for i in inputs]
        order = sorted(range(len(inputs)), key=lambda i: lengths[i], reverse=True)
        results: list = [None] * len(inputs)
        start = 0
        tolerance = cast(float, self.padding_tolerance)  # set by load()
        with self.torch.inference_mode():
            while start < len(order):
                longest = lengths[order[start]]
                probe = self.token_cost is None and str(self.device).startswith("cuda")
                limit = PROBE_INPUTS * longest if probe else self.batch_token_limit(longest)
                end = next_batch(lengths, order, start, self.batch_size, tolerance, limit)
                chunk = order[start:end]
                out_of_memory = False
                try:
                    rows = self._run_batch(step, [inputs[i] for i in chunk], probe)
                except Exception as exc:
                    if not is_out_of_memory(self.torch, exc):
                        raise
                    # handled below, outside this handler: its traceback still holds the batch's tensors
                    out_of_memory = True
                if out_of_memory:
                    self._after_out_of_memory(len(chunk) * longest)
                    if len(chunk) == 1:
                        raise ConfigurationError(
                            f"one input of {longest} tokens does not fit the free memory of {self.device} for "
                            f"{self.model!r}: use a smaller max_length (premises are then judged in windows), "
                            "another dtype or device") from None
                    continue
                for i, row in zip(chunk, rows):
                    results[i] = row
                start = end
        return results

    def _run_batch(self, step, rows: list[dict], probe: bool) -> list:
        """``step`` on ``rows`` padded to their longest; a probe also measures, on CUDA, the peak
        memory the batch needed above what was allocated before it, per padded token."""
        batch = self.tokenizer.pad(rows, padding="longest", pad_to_multiple_of=self.pad_multiple, return_tensors="pt")
        batch = {name: tensor.to(self.device) for name, tensor in batch.items()}
        if not probe:
            return step(batch)
        cuda = self.torch.cuda
        cuda.reset_peak_memory_stats(self.device)
        before = cuda.memory_allocated(self.device)
        result = step(batch)
        padded = batch["input_ids"].shape
        self.token_cost = (max(1, cuda.max_memory_allocated(self.device) - before) / (padded[0] * padded[1]),
                           int(padded[1]))
        logger.debug("token budget: %.0f bytes per padded token at length %d", *self.token_cost)
        return result

    def _after_out_of_memory(self, padded_tokens: int) -> None:
        self.oom_halvings += 1
        self.oom_token_limit = max(1, padded_tokens // 2)
        logger.warning("%s ran out of memory on a batch of %d padded tokens; retrying in smaller batches "
                       "(at most %d tokens)", self.device, padded_tokens, self.oom_token_limit)
        if str(self.device).startswith("cuda"):
            self.torch.cuda.empty_cache()

    def premise_windows(self, premise: str, hypothesis: str) -> list[dict]:
        """The encoded input for the pair, or for each overlapping premise window when the pair is
        longer than :attr:`max_length`. Windows are cut at token boundaries of the premise
        (its original characters are kept) and re-checked after encoding."""
        whole = self.encode(premise, hypothesis)
        max_length = cast(int, self.max_length)  # set by load()
        if len(whole["input_ids"]) <= max_length:
            return [whole]
        budget = max_length - len(self.encode("", hypothesis)["input_ids"])
        if budget < 4:
            raise InputError(f"a hypothesis of {len(self.encode('', hypothesis)['input_ids'])} tokens leaves no room "
                             f"for a premise in the {self.max_length}-token window of {self.model!r}; DocLens never "
                             "truncates text: raise max_length or shorten the claim")
        offsets = self.tokenizer(premise, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
        stride = max(1, int(budget * (1 - self.window_overlap)))
        windows, start = [], 0
        while start < len(offsets):
            size = budget
            while True:
                end = min(start + size, len(offsets))
                text = premise[offsets[start][0]:offsets[end - 1][1]]
                encoded = self.encode(text, hypothesis)
                excess = len(encoded["input_ids"]) - max_length
                if excess <= 0 or size <= 1:
                    break
                size -= max(1, excess)
            windows.append(encoded)
            if end >= len(offsets):
                break
            start += min(stride, size)
        return windows

    # ---- identity -----------------------------------------------------------------------------------
    def signature(self) -> str:
        """``name:model``; a local model shows its folder name and content fingerprint instead of a
        machine-specific path."""
        if Path(self.model).exists():
            return f"{self.name}:{Path(self.model).name}#{self.fingerprint[:8]}"
        return f"{self.name}:{self.model}"

    def describe(self) -> dict:
        return describe_in_process(self, self.model)

    def decoding(self) -> dict:
        """How verdicts are read and windows cut; recorded in the result's signature."""
        window = self.requested_max_length or "auto"
        return {"nli": self.answer_rule(), "win": f"{window}/{self.window_overlap:g}", **self.placement,
                **self.runtime_identity("rt")}

    def runtime_identity(self, name: str = "runtime") -> dict:
        """``{name: runtime}`` for a runtime other than the default ``torch`` (whose keys and
        signature stay as they were, so existing caches still serve it)."""
        return {} if self.runtime == "torch" else {name: self.runtime}

    def answer_rule(self) -> str:
        return "logit"

    def config(self) -> dict:
        return {**super().config(), "fingerprint": self.fingerprint, "input_format": self.input_format,
                "max_length": self.requested_max_length, "window_overlap": self.window_overlap,
                "batch_size": self.batch_size, "max_batch_tokens": self.max_batch_tokens,
                "padding_tolerance": self.padding_tolerance, "runtime": self.runtime}


#: On CUDA, the share of the free device memory a batch's activations may take (the rest is
#: headroom for the allocator's fragmentation and for what the probe's peak did not show).
MEMORY_SHARE = 0.65
#: On CUDA, the most inputs of a judge's first batch, whose peak memory is measured.
PROBE_INPUTS = 4


def plan_batches(lengths: list[int], batch_size: int | None, padding_tolerance: float = 1.0,
                 max_tokens: int | None = None) -> list[list[int]]:
    """Positions grouped into forward passes: longest first, at most ``batch_size`` per batch
    (``None``: no count limit), at most ``max_tokens`` padded tokens (inputs × the batch's longest;
    an input longer than that runs alone), and a new batch wherever the next input is more than
    ``padding_tolerance`` shorter than the longest of the current one (so each input is padded by
    at most that share of the batch's length). ``padding_tolerance=1`` and no ``max_tokens`` give
    plain length-sorted batches of ``batch_size``."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i], reverse=True)
    batches: list[list[int]] = []
    start = 0
    while start < len(order):
        end = next_batch(lengths, order, start, batch_size, padding_tolerance, max_tokens)
        batches.append(order[start:end])
        start = end
    return batches


def next_batch(lengths: list[int], order: list[int], start: int, batch_size: int | None,
               padding_tolerance: float, max_tokens: int | None) -> int:
    """The end of the batch that begins at ``order[start]`` (``order``: positions, longest first),
    by the rules of :func:`plan_batches`; a batch holds at least one input."""
    longest = lengths[order[start]]
    end = start + 1
    while end < len(order):
        if batch_size is not None and end - start >= batch_size:
            break
        if lengths[order[end]] < (1 - padding_tolerance) * longest:
            break
        if max_tokens is not None and (end - start + 1) * longest > max_tokens:
            break
        end += 1
    return end


def free_device_bytes(torch, device: str) -> int:
    """Bytes a new batch can use on a CUDA device: what the driver has free plus what torch's
    caching allocator holds without using it."""
    free, _ = torch.cuda.mem_get_info(device)
    return int(free + torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device))


def is_out_of_memory(torch, exc: BaseException) -> bool:
    """Whether ``exc`` is a device running out of memory (CUDA's ``OutOfMemoryError``, or MPS's
    ``RuntimeError`` saying so)."""
    return isinstance(exc, torch.cuda.OutOfMemoryError) or (
        isinstance(exc, RuntimeError) and "out of memory" in str(exc).lower())


def single_token_id(tokenizer, text: str) -> int:
    """The id of the one token the model writes for ``text`` (``"1"`` → ``▁1`` for T5). A lone
    word-boundary piece before it is ignored; anything else that is not one token is an error."""
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    meaningful = [i for i in ids if tokenizer.decode([i]).strip()]
    if len(meaningful) != 1:
        raise ConfigurationError(f"the tokenizer does not write {text!r} as one token (got ids {ids}); "
                                 "the TRUE answer cannot be read from the logits")
    return meaningful[0]


class TrueNLIEvaluator(InProcessNLI):
    """TRUE (Honovich et al., 2022): a T5 model that reads ``premise: {p} hypothesis: {h}`` and
    answers ``1`` (entailed) or ``0``. The verdict is read from the first decoder step's logits of
    the tokens ``1`` and ``0`` in one batched forward pass (no generate loop): entailed iff the
    logit of ``1`` is higher. For the TRUE checkpoint this is its greedy answer.

    Default model ``google/t5_xxl_true_nli_mixture`` (11B parameters: a GPU with ~24 GB in bf16);
    any T5 checkpoint in the same format works with ``model=``.

    ``alone_margin``: in a reduced precision (bf16, fp16), a GEMM's rounding depends on the shape
    of the batch, so an input within rounding error of the boundary could get another verdict
    under another batch plan (measured at the T5-11B shape in bf16: up to 5 of 1,024). Every
    input of a larger batch whose logit gap is under ``alone_margin`` is therefore judged again
    alone, as batch size 1 would judge it, and that verdict stands: verdicts then do not depend
    on the batch plan unless batching moves a gap by more than the margin (bf16 moved it by at
    most 0.078 against float32 there). ``None`` or 0: off. Ignored in float32.
    """

    #: default ``alone_margin`` (logits): about three times the largest bf16 change measured
    ALONE_MARGIN = 0.25

    name = "true-nli"
    auto_class = "AutoModelForSeq2SeqLM"
    gpu_dtype = "bfloat16"
    input_format = "premise: {p} hypothesis: {h} -> logits('1') > logits('0') at decoder step 1"

    def answer_rule(self) -> str:
        return "logit1>0"

    def __init__(self, model: str | None = None, *, alone_margin: float | None = ALONE_MARGIN, **options):
        if alone_margin is not None and alone_margin < 0:
            raise ConfigurationError("alone_margin must be at least 0 (logits)")
        settings = options.get("settings")
        super().__init__(model or (settings.model if settings is not None else None) or TRUE_MODEL, **options)
        self.alone_margin = alone_margin
        #: inputs judged again alone because their reduced-precision logit gap was under alone_margin
        self.judged_alone = 0
        #: set on load: the token ids of "1" and "0", and the decoder's start token
        self.answer_ids: tuple[int, int] | None = None
        self.decoder_start: int | None = None

    def _after_load(self) -> None:
        self.answer_ids = (single_token_id(self.tokenizer, "1"), single_token_id(self.tokenizer, "0"))
        start = self.network.config.decoder_start_token_id
        self.decoder_start = self.tokenizer.pad_token_id if start is None else start

    def encode(self, premise: str, hypothesis: str) -> dict:
        return self.tokenizer(f"premise: {premise} hypothesis: {hypothesis}")

    def _sample_batch(self) -> dict:
        batch = super()._sample_batch()
        batch["decoder_input_ids"] = self.torch.full((2, 1), self.decoder_start, dtype=self.torch.long)
        return batch

    def _forward(self, batch: dict) -> list[bool]:
        gaps = self._logit_gaps(batch)
        verdicts = (gaps > 0).tolist()
        if self.alone_margin and len(verdicts) > 1 and self.dtype != self.torch.float32:
            mask = batch["attention_mask"].bool()
            for row in (gaps.abs() < self.alone_margin).nonzero().flatten().tolist():
                alone = {"input_ids": batch["input_ids"][row][mask[row]][None],
                         "attention_mask": batch["attention_mask"][row][mask[row]][None]}
                verdicts[row] = bool(self._logit_gaps(alone)[0] > 0)
                self.judged_alone += 1
        return verdicts

    def _logit_gaps(self, batch: dict):
        """Per row, the logit of ``1`` less that of ``0`` (float32; entailed iff positive)."""
        size = batch["input_ids"].shape[0]
        decoder = self.torch.full((size, 1), self.decoder_start, dtype=self.torch.long, device=self.device)
        # One decoder step answers, so no key/value cache: with it, every decoder layer would keep
        # the cross-attention keys and values of the whole batch (most of the memory of a large
        # batch of the 11B model) for a second step that never comes.
        logits = self.network(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                              decoder_input_ids=decoder, use_cache=False).logits[:, 0, :].float()
        one, zero = cast(tuple[int, int], self.answer_ids)  # set by _after_load()
        return logits[:, one] - logits[:, zero]

    def config(self) -> dict:
        return {**super().config(), "alone_margin": self.alone_margin}


class NLIClassifierEvaluator(InProcessNLI):
    """Any sequence-classification NLI model (``premise``, ``hypothesis`` as a text pair). The
    entailment class is found in the model's ``id2label`` (a label containing ``entail``, or
    ``entailment_label``). Entailed iff it is the argmax class, or, with ``threshold``, iff its
    softmax probability is at least ``threshold``."""

    name = "nli"
    auto_class = "AutoModelForSequenceClassification"
    supports_recheck = True  # runtime bf16-checked: verdicts have a margin (_decision_margin)

    def __init__(self, model: str | None = None, *, threshold: float | None = None,
                 entailment_label: str | None = None, **options):
        settings = options.get("settings")
        if not model and (settings is None or not settings.model):
            raise ConfigurationError("the 'nli' evaluator needs --model: a sequence-classification NLI model "
                                     "(hub id or local folder)")
        if threshold is not None and not 0 < threshold < 1:
            raise ConfigurationError("threshold must be in (0, 1)")
        super().__init__(model, **options)
        self.threshold = threshold
        self.entailment_label = entailment_label
        #: set on load: the class index of the entailment label
        self.entailment_index: int | None = None

    @property
    def input_format(self) -> str:  # type: ignore[override]
        return f"text pair (premise, hypothesis) -> {self.answer_rule()}"

    def _after_load(self) -> None:
        self.entailment_index = entailment_index(self.network.config.id2label, self.entailment_label, self.model)

    def encode(self, premise: str, hypothesis: str) -> dict:
        return self.tokenizer(premise, hypothesis)

    def _forward(self, batch: dict) -> list[bool]:
        logits = self.network(**batch).logits.float()
        if self.exact_network is not None:  # runtime bf16-checked: rows near the boundary again in float32
            near = self._decision_margin(logits).abs() < RECHECK_MARGIN
            if near.any():
                logits[near] = self.exact_network(**{k: v[near] for k, v in batch.items()}).logits.float()
                self.rechecked_inputs += int(near.sum())
        if self.threshold is None:
            return (logits.argmax(dim=-1) == self.entailment_index).tolist()
        return (logits.softmax(dim=-1)[:, self.entailment_index] >= self.threshold).tolist()

    def _decision_margin(self, logits):
        """Per row, how far (in logits) the verdict is from flipping: the entailment logit less the
        largest other one (argmax rule), or the entailment log-odds less the threshold's."""
        index = cast(int, self.entailment_index)  # set by _after_load()
        others = self.torch.cat([logits[:, :index], logits[:, index + 1:]], dim=1)
        entail = logits[:, index]
        if self.threshold is None:
            return entail - others.max(dim=1).values
        return entail - others.logsumexp(dim=1) - math.log(self.threshold / (1 - self.threshold))

    # ---- source support ------------------------------------------------------------------------
    support_verdicts = 3

    def judge_support_many(self, requests):
        """3-way source support from the model's three classes (:func:`support_label`): each
        distinct (evidence, claim) pair once, through the cache; a long evidence is read in
        windows like any premise. ``threshold`` does not apply here (the argmax class is read)."""
        from doclens.core.support import SupportJudgement

        pairs = [(request.premise, claim) for request in requests for claim in request.claims]
        answers = self.support_pairs(list(dict.fromkeys(pairs)))
        results = []
        for request in requests:
            row = []
            for claim in request.claims:
                label, explanation = answers[(request.premise, claim)]
                row.append(SupportJudgement(label, explanation))
            results.append(row)
        return results

    def support_pairs(self, pairs: list[tuple[str, str]]) -> dict:
        """``{(premise, hypothesis): (verdict, explanation)}``: from the cache where it has them,
        else from the model (every window of a long premise is run: a contradiction in a later
        window matters)."""
        keys = {pair: cache_key({"kind": "nli-support", "class": type(self).__qualname__, "model": self.model,
                                 "fingerprint": self.fingerprint, "max_length": self.requested_max_length,
                                 **self.placement,
                                 "overlap": self.window_overlap, "premise": pair[0], "hypothesis": pair[1],
                                 **self.runtime_identity()})
                for pair in pairs}
        found = {key: value for key, value in self.cache.get_many(list(keys.values())).items()
                 if isinstance(value, list) and len(value) == 2 and value[0] in SUPPORT_LABELS
                 and isinstance(value[1], str)}
        todo = [pair for pair in pairs if keys[pair] not in found]
        self.usage.add(cached_calls=len(pairs) - len(todo))
        if todo:
            self.load()
            labels = support_labels(self.network.config.id2label, self.model)
            windows = [self.premise_windows(premise, hypothesis) for premise, hypothesis in todo]
            flat = [w for group in windows for w in group]
            probabilities = self._class_probabilities(flat)
            fresh, start = {}, 0
            for pair, group in zip(todo, windows):
                fresh[keys[pair]] = list(support_label(probabilities[start:start + len(group)], labels))
                start += len(group)
            self.usage.pairs += len(todo)
            self.cache.put_many(fresh)
            found.update(fresh)
        return {pair: tuple(found[keys[pair]]) for pair in pairs}

    def _class_probabilities(self, inputs: list[dict]) -> list[list[float]]:
        """Softmax class probabilities for encoded inputs, in order (length-sorted batches)."""
        network = self.network if self.exact_network is None else self.exact_network  # bf16-checked: float32
        result = self.map_batches(inputs, lambda batch: network(**batch).logits.float().softmax(dim=-1).tolist())
        self.usage.add(model_inputs=len(inputs))
        return result

    def answer_rule(self) -> str:
        rule = f"p>={self.threshold:g}" if self.threshold is not None else "argmax"
        return f"{rule}[{self.entailment_label}]" if self.entailment_label else rule

    def config(self) -> dict:
        return {**super().config(), "threshold": self.threshold, "entailment_label": self.entailment_label}


def entailment_index(id2label: dict, wanted: str | None, model: str) -> int:
    """The class index of the entailment label: ``wanted`` exactly (case-insensitive), else the one
    label that contains ``entail`` (and not ``not``/``non``)."""
    labels = {int(i): str(label) for i, label in id2label.items()}
    if wanted:
        matches = [i for i, label in labels.items() if label.lower() == wanted.lower()]
    else:
        matches = [i for i, label in labels.items() if "entail" in label.lower()
                   and not any(neg in label.lower() for neg in ("not", "non"))]
    if len(matches) != 1:
        raise ConfigurationError(f"cannot tell the entailment class of {model!r} from its labels {labels}; "
                                 "pass entailment_label=NAME (--evaluator-arg entailment_label=NAME)")
    return matches[0]


def support_labels(id2label: dict, model: str) -> dict[int, str]:
    """class index → source-support verdict: entailment → ``supported``, contradiction →
    ``not_supported``, neutral → ``not_addressed``. A model without exactly these three classes
    (told apart by their label names) cannot give the 3-way verdict: :class:`ConfigurationError`."""
    from doclens.core.support import NOT_ADDRESSED, NOT_SUPPORTED, SUPPORTED

    labels = {int(i): str(label).lower() for i, label in id2label.items()}
    found: dict[int, str] = {}
    for index, label in labels.items():
        if "contradict" in label:
            found[index] = NOT_SUPPORTED
        elif "neutral" in label:
            found[index] = NOT_ADDRESSED
        elif "entail" in label and not any(neg in label for neg in ("not", "non")):
            found[index] = SUPPORTED
    if len(labels) != 3 or sorted(found.values()) != sorted({SUPPORTED, NOT_SUPPORTED, NOT_ADDRESSED}):
        raise ConfigurationError(f"source support with an NLI model needs the three classes entailment, neutral and "
                                 f"contradiction; {model!r} has {labels}")
    return found


def support_label(window_probabilities: list[list[float]], labels: dict[int, str]) -> tuple[str, str]:
    """``(verdict, explanation)`` of one pair from the class probabilities of each premise window:
    ``supported`` if some window's argmax is entailment, else ``not_supported`` if some window's
    is contradiction, else ``not_addressed`` (evidence is a set of facts: one that states the
    claim supports it, one that contradicts it, and none that does is silence)."""
    from doclens.core.support import NOT_ADDRESSED, NOT_SUPPORTED, SUPPORTED

    argmax = [max(range(len(p)), key=lambda k: p[k]) for p in window_probabilities]
    for verdict in (SUPPORTED, NOT_SUPPORTED):
        hits = [n for n, k in enumerate(argmax) if labels[k] == verdict]
        if hits:
            index = next(k for k, v in labels.items() if v == verdict)
            best = max(hits, key=lambda n: window_probabilities[n][index])
            where = f" (window {best + 1} of {len(window_probabilities)})" if len(window_probabilities) > 1 else ""
            return verdict, f"{verdict.replace('_', ' ')}: p={window_probabilities[best][index]:.2f}{where}"
    index = next(k for k, v in labels.items() if v == NOT_ADDRESSED)
    top = max(p[index] for p in window_probabilities) if window_probabilities else 0.0
    return NOT_ADDRESSED, f"neutral in every window: p={top:.2f}"


__all__ = ["support_label", "support_labels", "InProcessNLI", "NLIClassifierEvaluator", "TRUE_MODEL",
           "TrueNLIEvaluator", "entailment_index", "model_fingerprint", "next_batch", "plan_batches",
           "single_token_id"]
