"""Evidence retrieval from a source of any length, for checking claims against it.

A source (numbered units, a long text, a list of documents, table rows) becomes *facts*
(:mod:`doclens.retrieval.facts`); for each claim the best ``top_n`` facts are found by BM25
(``bm25s``) and a dense encoder (the shipped all-MiniLM-L6-v2 by default), fused by reciprocal
rank (:mod:`doclens.retrieval.fusion`) and optionally re-ranked by a cross-encoder
(:mod:`doclens.retrieval.retriever`). A source's vectors are kept in a FAISS store on disk
(:mod:`doclens.retrieval.store`), so a record is encoded once for every system scored against it.
``RetrievalConfig.signature()`` pins the settings and the encoder's fingerprint.

Torch, transformers, faiss and bm25s come with the ``[retrieval]`` extra and are imported
only when an index is built; without them a :class:`~doclens.core.errors.MissingExtraError` names the
extra. The card ``cards/source-support.md`` describes the design and its measured figures.
"""

from doclens.retrieval.config import RetrievalConfig, default_encoder_path
from doclens.retrieval.facts import Fact, facts_hash, record_units, row_text, source_facts, split_facts
from doclens.retrieval.fusion import RRF_K, reciprocal_rank_fusion
from doclens.retrieval.retriever import FactIndex, Hit, Retriever, word_count

__all__ = [
    "RetrievalConfig", "default_encoder_path", "Fact", "facts_hash", "record_units", "row_text", "source_facts",
    "split_facts", "RRF_K", "reciprocal_rank_fusion", "FactIndex", "Hit", "Retriever", "word_count",
]
