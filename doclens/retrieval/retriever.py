"""Hybrid retrieval of a source's facts for each claim: BM25 and dense search, fused by
reciprocal rank, optionally re-ranked by a cross-encoder.

Typical use, one record shared by several systems' claims::

    retriever = Retriever(RetrievalConfig(top_n=50))
    index = retriever.index(source_facts(record))      # encoded once; later a store hit
    hits = index.search("Patient denies chest pain.")  # list[Hit], best first

or :meth:`Retriever.evidence`, which also gives a short source whole (see ``budget``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from doclens.retrieval.config import RetrievalConfig
from doclens.retrieval.facts import Fact, facts_hash
from doclens.retrieval.fusion import reciprocal_rank_fusion

if TYPE_CHECKING:  # numpy, the encoders, BM25 and the store come with the [retrieval] extra: imported
    # where an index is built or searched, so a short source given whole needs none of them
    from doclens.retrieval.encoders import CrossEncoder, Encoder
    from doclens.retrieval.sparse import SparseIndex
    from doclens.retrieval.store import VectorStore

logger = logging.getLogger(__name__)


@dataclass
class Hit:
    """One retrieved fact with how each stage ranked it (ranks from 1; ``None``: the stage did
    not rank it, or did not run). ``score`` is what the final order follows: the re-ranker's
    logit for the facts it re-scored (the fused top ``rerank_depth``, which come first), else the
    fused RRF score; ``None`` when the source was given whole."""

    fact: Fact
    rank: int
    score: float | None
    rrf_score: float | None = None
    sparse_rank: int | None = None
    sparse_score: float | None = None
    dense_rank: int | None = None
    dense_score: float | None = None
    rerank_score: float | None = None
    retrieved: bool = True  # False: the whole source fit the budget and was given in source order

    def to_dict(self) -> dict:
        """The evidence record a report keeps: the fact's place in the record and every score."""
        return {"unit": self.fact.unit, "position": self.fact.position, "fact": self.fact.index,
                "start": self.fact.start, "end": self.fact.end, "text": self.fact.premise_text,
                "kind": self.fact.kind, "rank": self.rank, "score": self.score, "rrf_score": self.rrf_score,
                "sparse_rank": self.sparse_rank, "sparse_score": self.sparse_score,
                "dense_rank": self.dense_rank, "dense_score": self.dense_score,
                "rerank_score": self.rerank_score, "retrieved": self.retrieved}


def word_count(facts: Sequence[Fact]) -> int:
    """White-space words of the facts as a judge would read them."""
    return sum(len(fact.premise_text.split()) for fact in facts)


def given_whole(facts: Sequence[Fact], budget: int | None, config: RetrievalConfig) -> bool:
    """Whether a source's facts are given to the judge whole, unranked, instead of retrieved: a
    ``budget`` (white-space words of the judge's window) they fit, and no ``always_retrieve``."""
    return budget is not None and not config.always_retrieve and word_count(facts) <= budget


class FactIndex:
    """The searchable index of one source's facts."""

    def __init__(self, facts: Sequence[Fact], config: RetrievalConfig, sparse: SparseIndex | None,
                 dense, encoder: Encoder | None, reranker: CrossEncoder | None, key: str | None,
                 cache_hit: bool, build_seconds: float):
        self.facts = list(facts)
        self.config = config
        self.sparse = sparse
        self.dense = dense
        self.encoder = encoder
        self.reranker = reranker
        self.key = key
        self.cache_hit = cache_hit  # the dense vectors came from the store, nothing was encoded
        self.build_seconds = build_seconds

    def __len__(self) -> int:
        return len(self.facts)

    def search(self, query: str, top_n: int | None = None) -> list[Hit]:
        return self.search_many([query], top_n)[0]

    def search_many(self, queries: Sequence[str], top_n: int | None = None) -> list[list[Hit]]:
        """The ``top_n`` (default: the config's) best facts for each query, best first."""
        import numpy as np

        top_n = top_n or self.config.top_n
        if not self.facts:
            return [[] for _ in queries]
        depth = min(max(self.config.candidates, top_n), len(self.facts))
        dense_rankings: list[tuple[list[int], list[float]]] = []
        if self.dense is not None and queries:
            assert self.encoder is not None  # a dense index is made with its encoder (Retriever.index)
            vectors = self.encoder.encode(list(queries))
            scores, ids = self.dense.search(np.ascontiguousarray(vectors), depth)
            for row_scores, row_ids in zip(scores, ids):
                keep = row_ids >= 0
                dense_rankings.append((row_ids[keep].tolist(), row_scores[keep].tolist()))
        return [self._hits(query, dense_rankings[q] if dense_rankings else ([], []), depth, top_n)
                for q, query in enumerate(queries)]

    def _hits(self, query: str, dense_ranking: tuple[list[int], list[float]], depth: int, top_n: int) -> list[Hit]:
        """One query's ``top_n`` hits, best first: BM25's and the dense ranking (``dense_ranking``:
        fact ids and scores, best first) fused, the fused top re-ranked when there is a re-ranker."""
        rankings = []
        sparse_ids, sparse_scores = self.sparse.rank(query, depth) if self.sparse is not None else ([], [])
        if self.sparse is not None:
            rankings.append(sparse_ids)
        dense_ids, dense_scores = dense_ranking
        if self.dense is not None:
            rankings.append(dense_ids)
        fused = reciprocal_rank_fusion(rankings, k=self.config.rrf_k)
        sparse_at = {i: (r, s) for r, (i, s) in enumerate(zip(sparse_ids, sparse_scores), start=1)}
        dense_at = {i: (r, s) for r, (i, s) in enumerate(zip(dense_ids, dense_scores), start=1)}
        hits = []
        for fact_id, rrf in fused:
            sparse_rank, sparse_score = sparse_at.get(fact_id, (None, None))
            dense_rank, dense_score = dense_at.get(fact_id, (None, None))
            hits.append(Hit(fact=self.facts[fact_id], rank=0, score=rrf, rrf_score=rrf,
                            sparse_rank=sparse_rank, sparse_score=sparse_score,
                            dense_rank=dense_rank, dense_score=dense_score))
        if self.reranker is not None and hits:
            head, tail = hits[: self.config.rerank_depth], hits[self.config.rerank_depth:]
            logits = self.reranker.score(query, [hit.fact.premise_text for hit in head])
            hits = _reranked(head, logits, [rrf for _, rrf in fused]) + tail  # past rerank_depth: fused order
        hits = hits[:top_n]
        for rank, hit in enumerate(hits, start=1):
            hit.rank = rank
        return hits


def _reranked(head: list[Hit], logits, fused_scores: list[float]) -> list[Hit]:
    """``head`` (the fused top, in fused order; ``fused_scores`` their RRF scores, in that order)
    re-scored by the cross-encoder's ``logits`` and sorted by them, ties by the fused score, then
    by the fact's position."""
    keyed = []
    for hit, logit, rrf in zip(head, logits, fused_scores):
        score = float(logit)
        hit.rerank_score = hit.score = score
        keyed.append(((-score, -rrf, hit.fact.index), hit))
    keyed.sort(key=lambda pair: pair[0])
    return [hit for _, hit in keyed]


class Retriever:
    """Builds (or loads) the index of a source's facts, with the encoders loaded once and shared
    by every source. ``store=None`` uses the default on-disk store (see
    :func:`doclens.retrieval.store.default_store_dir`); pass a :class:`VectorStore` to choose
    its folder."""

    def __init__(self, config: RetrievalConfig | None = None, *, store: VectorStore | None = None,
                 encoder: Encoder | None = None, reranker: CrossEncoder | None = None):
        self.config = config or RetrievalConfig()
        self._store = store
        self._encoder = encoder
        self._reranker = reranker

    @property
    def store(self) -> VectorStore:
        """The vector store (the default on-disk one, made on first use)."""
        if self._store is None:
            from doclens.retrieval.store import VectorStore

            self._store = VectorStore()
        return self._store

    @property
    def encoder(self) -> Encoder | None:
        if self._encoder is None and self.config.dense:
            from doclens.retrieval.encoders import Encoder

            self._encoder = Encoder(self.config.encoder, device=self.config.device,
                                    batch_size=self.config.batch_size, max_length=self.config.max_length)
        return self._encoder

    @property
    def reranker(self) -> CrossEncoder | None:
        if self._reranker is None and self.config.reranker:
            from doclens.retrieval.encoders import CrossEncoder

            self._reranker = CrossEncoder(self.config.reranker, device=self.config.device,
                                          max_length=self.config.max_length)
        return self._reranker

    def signature(self) -> str:
        return self.config.signature()

    def index(self, facts: Sequence[Fact]) -> FactIndex:
        """The index of ``facts``: BM25 built in memory; dense vectors loaded from the store
        when this record was encoded before with the same encoder, else encoded and stored."""
        from doclens.core.errors import require

        require("numpy", "retrieval from a source longer than the judge's budget", "retrieval")
        from doclens.retrieval.sparse import SparseIndex
        from doclens.retrieval.store import store_key

        started = time.perf_counter()
        facts = list(facts)
        texts = [fact.premise_text for fact in facts]
        # BM25 reads the fact without its speaker: "patient" in a claim ("The patient denies …")
        # would otherwise match every patient turn. The dense encoder reads the speaker too.
        sparse = (SparseIndex([fact.text for fact in facts], self.config.bm25_k1, self.config.bm25_b)
                  if self.config.sparse and facts else None)
        dense, key, cache_hit = None, None, False
        if self.config.dense and facts:
            encoder = self.encoder
            assert encoder is not None  # config.dense: the encoder property makes one
            key = store_key(facts_hash(facts), encoder.fingerprint, encoder.pooling, encoder.max_length)
            dense = self.store.load(key, len(facts))
            cache_hit = dense is not None
            if dense is None:
                vectors = encoder.encode(texts)
                dense = self.store.save(key, vectors, {"encoder": encoder.model, "fingerprint": encoder.fingerprint,
                                                       "pooling": encoder.pooling, "max_length": encoder.max_length})
        return FactIndex(facts, self.config, sparse, dense, self.encoder if self.config.dense else None,
                         self.reranker, key, cache_hit, time.perf_counter() - started)

    def evidence(self, facts: Sequence[Fact], claims: Sequence[str], budget: int | None = None) -> list[list[Hit]]:
        """Evidence for each claim. When ``budget`` (in white-space words, as the caller reckons
        its judge's window) is given and the whole source fits it, every claim gets every fact in
        source order, unranked (``retrieved=False``) and nothing is indexed — unless the config
        says ``always_retrieve``."""
        facts = list(facts)
        if given_whole(facts, budget, self.config):
            whole = [Hit(fact=fact, rank=i, score=None, retrieved=False) for i, fact in enumerate(facts, start=1)]
            return [[Hit(**vars(hit)) for hit in whole] for _ in claims]
        return self.index(facts).search_many(list(claims))
