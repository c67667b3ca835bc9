"""Dense encoders (bi-encoder for the index, cross-encoder for re-ranking), loaded with
``transformers`` from a local folder.

A sentence-transformers model is a plain ``transformers`` encoder plus a pooling setting
(``1_Pooling/config.json``): this module reads that setting (mean pooling where none is given)
and L2-normalises the pooled vectors, so an inner product is the cosine similarity. It needs
neither the ``sentence-transformers`` package nor a network: a hub id is resolved to a folder by
``huggingface_hub.snapshot_download``, which downloads only for users who are online and have
not set ``HF_HUB_OFFLINE=1``; with it set, a model already in the hub cache loads offline.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from doclens.core.errors import ConfigurationError, require

logger = logging.getLogger(__name__)

EXTRA = "retrieval"


def import_torch(feature: str):
    """``(torch, transformers)``, or a :class:`~doclens.core.errors.MissingExtraError` naming ``[retrieval]``."""
    return require("torch", feature, EXTRA), require("transformers", feature, EXTRA)


def resolve_model(model: str) -> str:
    """A local folder for ``model`` (a folder, or a hub id found in or fetched into the hub cache)."""
    if Path(model).exists():
        return str(model)
    hub = require("huggingface_hub", f"loading the model {model!r}", EXTRA)
    try:
        return hub.snapshot_download(model)
    except Exception as exc:  # offline, unknown id, no permission: say which model and why
        raise ConfigurationError(
            f"model {model!r} is neither a local folder nor available from the Hugging Face hub here "
            f"({type(exc).__name__}: {exc}); give the folder of a downloaded copy") from exc


def _pooling_mode(folder: str) -> str:
    config = Path(folder) / "1_Pooling" / "config.json"
    if not config.is_file():
        return "mean"
    settings = json.loads(config.read_text(encoding="utf-8"))
    for mode in ("cls_token", "mean_tokens", "max_tokens"):
        if settings.get(f"pooling_mode_{mode}"):
            return mode.split("_")[0]
    return "mean"


def _length_order(texts: Sequence[str]) -> list[int]:
    """Indices of ``texts``, longest first: batches of similar length waste no padding."""
    return sorted(range(len(texts)), key=lambda i: -len(texts[i]))


class Encoder:
    """A sentence encoder: ``encode(texts)`` → float32 array ``(len(texts), dim)``, rows of unit
    length. ``texts_encoded`` counts every text passed through the model (the vector store's
    cache is checked with it); ``texts_truncated`` those longer than ``max_length`` tokens, of
    which only the first ``max_length`` tokens were encoded (BM25 still reads the whole fact).
    Loads lazily, on first use."""

    def __init__(self, model: str | None = None, *, device: str | None = None, batch_size: int = 32,
                 max_length: int = 256):
        from doclens.evaluators.models.torch_utils import model_fingerprint
        from doclens.retrieval.config import default_encoder_path

        self.model = model if model is not None else default_encoder_path()
        self.path = resolve_model(self.model)
        self.fingerprint = model_fingerprint(self.path)
        self.pooling = _pooling_mode(self.path)
        self.batch_size = batch_size
        self.max_length = max_length
        self.requested_device = device
        self.texts_encoded = 0
        self.texts_truncated = 0
        self._loaded = None

    def _load(self):
        if self._loaded is None:
            torch, transformers = import_torch("dense retrieval")
            from doclens.evaluators.models.torch_utils import choose_device

            device = choose_device(torch, self.requested_device)
            tokenizer = transformers.AutoTokenizer.from_pretrained(self.path)
            model = transformers.AutoModel.from_pretrained(self.path).to(device).eval()
            self._loaded = (torch, tokenizer, model, device)
        return self._loaded

    @property
    def dimension(self) -> int:
        _torch, _tokenizer, model, _device = self._load()
        return int(model.config.hidden_size)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        torch, tokenizer, model, device = self._load()
        out = np.zeros((len(texts), model.config.hidden_size), dtype=np.float32)
        order = _length_order(texts)
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                batch = order[start:start + self.batch_size]
                whole = tokenizer([texts[i] for i in batch], truncation=False)["input_ids"]
                self.texts_truncated += sum(len(ids) > self.max_length for ids in whole)
                inputs = tokenizer([texts[i] for i in batch], padding=True, truncation=True,
                                   max_length=self.max_length, return_tensors="pt").to(device)
                hidden = model(**inputs).last_hidden_state.float()
                mask = inputs["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                if self.pooling == "cls":
                    pooled = hidden[:, 0]
                elif self.pooling == "max":
                    pooled = hidden.masked_fill(mask == 0, float("-inf")).max(dim=1).values
                else:
                    pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
                pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
                out[batch] = pooled.cpu().numpy()
                self.texts_encoded += len(batch)
        return out


class CrossEncoder:
    """A cross-encoder re-ranker: ``score(query, texts)`` → one relevance logit per text, from a
    sequence-classification model with a single output (as the MS MARCO cross-encoders)."""

    def __init__(self, model: str, *, device: str | None = None, batch_size: int = 16, max_length: int = 256):
        from doclens.evaluators.models.torch_utils import model_fingerprint

        self.model = model
        self.path = resolve_model(model)
        self.fingerprint = model_fingerprint(self.path)
        self.batch_size = batch_size
        self.max_length = max_length
        self.requested_device = device
        self.pairs_scored = 0
        self._loaded = None

    def _load(self):
        if self._loaded is None:
            torch, transformers = import_torch("cross-encoder re-ranking")
            from doclens.evaluators.models.torch_utils import choose_device

            device = choose_device(torch, self.requested_device)
            tokenizer = transformers.AutoTokenizer.from_pretrained(self.path)
            model = transformers.AutoModelForSequenceClassification.from_pretrained(self.path).to(device).eval()
            if model.config.num_labels != 1:
                raise ConfigurationError(
                    f"re-ranker {self.model!r} has {model.config.num_labels} outputs; a cross-encoder re-ranker "
                    "gives one relevance score per pair (num_labels=1)")
            self._loaded = (torch, tokenizer, model, device)
        return self._loaded

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        torch, tokenizer, model, device = self._load()
        out = np.zeros(len(texts), dtype=np.float32)
        order = _length_order(texts)
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                batch = order[start:start + self.batch_size]
                inputs = tokenizer([query] * len(batch), [texts[i] for i in batch], padding=True,
                                   truncation=True, max_length=self.max_length, return_tensors="pt").to(device)
                out[batch] = model(**inputs).logits[:, 0].float().cpu().numpy()
                self.pairs_scored += len(batch)
        return out
