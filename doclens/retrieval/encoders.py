"""Dense encoders (bi-encoder for the index, cross-encoder for re-ranking), loaded with
``transformers`` from a local folder.

The bi-encoder is the package's one sentence encoder,
:class:`doclens.evaluators.models.sentence_encoder.Encoder` (``clinical-rules`` encodes with it
too); this module names the ``[retrieval]`` extra when torch is missing and adds the
cross-encoder re-ranker.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np

from doclens.core.errors import ConfigurationError, require
from doclens.evaluators.models.sentence_encoder import Encoder, length_order, resolve_model

__all__ = ["EXTRA", "CrossEncoder", "Encoder", "import_torch", "resolve_model"]

logger = logging.getLogger(__name__)

EXTRA = "retrieval"


def import_torch(feature: str):
    """``(torch, transformers)``, or a :class:`~doclens.core.errors.MissingExtraError` naming ``[retrieval]``."""
    return require("torch", feature, EXTRA), require("transformers", feature, EXTRA)


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
        self._loaded: tuple[Any, Any, Any, str] | None = None  # torch, the tokenizer, the model, the device

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
        order = length_order(texts)
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                batch = order[start:start + self.batch_size]
                inputs = tokenizer([query] * len(batch), [texts[i] for i in batch], padding=True,
                                   truncation=True, max_length=self.max_length, return_tensors="pt").to(device)
                out[batch] = model(**inputs).logits[:, 0].float().cpu().numpy()
                self.pairs_scored += len(batch)
        return out
