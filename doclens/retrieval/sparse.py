"""BM25 over facts, with ``bm25s`` (Lucene's BM25 on sparse matrices).

Tokens: lower-cased runs of letters and digits (single characters kept: ``5 mg``, ``b 12``),
English stop words (``bm25s``'s list) left out, and each token reduced by Harman's "S" stemmer
(``-ies`` → ``-y``, ``-es`` → ``-e``, ``-s`` dropped, never after ``-us``/``-ss``/``-is``), so
``coughs`` finds ``cough`` without a stemming library: :func:`doclens.parsing.tokens.content_tokens`,
the tokeniser the ``overlap`` judge shares. A BM25 index of 10,000 facts builds in
well under a second, so it is rebuilt in memory rather than stored.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from doclens.core.errors import require
from doclens.parsing.tokens import content_tokens, s_stem

__all__ = ["SparseIndex", "s_stem", "tokenize"]


def _stopwords() -> frozenset:
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN)


def tokenize(text: str, stopwords: frozenset) -> list[str]:
    return content_tokens(text, stopwords, s_stem)


class SparseIndex:
    """BM25 over a list of texts; :meth:`rank` gives the ids of texts sharing a term with the
    query, best first."""

    def __init__(self, texts: Sequence[str], k1: float = 1.5, b: float = 0.75):
        bm25s = require("bm25s", "BM25 retrieval", "retrieval")
        self._stopwords = _stopwords()
        self.size = len(texts)
        corpus = [tokenize(text, self._stopwords) for text in texts]
        self._bm25 = None
        if any(corpus):  # bm25s cannot index a corpus without a single term; nothing would match
            self._bm25 = bm25s.BM25(k1=k1, b=b, method="lucene")
            self._bm25.index(corpus, show_progress=False)

    def scores(self, query: str) -> np.ndarray:
        if self._bm25 is None:
            return np.zeros(self.size, dtype=np.float32)
        tokens = tokenize(query, self._stopwords)
        ids = self._bm25.get_tokens_ids(tokens)
        if not ids:
            return np.zeros(self.size, dtype=np.float32)
        return np.asarray(self._bm25.get_scores_from_ids(ids), dtype=np.float32)

    def rank(self, query: str, depth: int) -> tuple[list[int], list[float]]:
        """Up to ``depth`` ids with a positive score, best first (ties: lower id first)."""
        scores = self.scores(query)
        positive = np.flatnonzero(scores > 0)
        if positive.size > depth:
            positive = positive[np.argpartition(-scores[positive], depth - 1)[:depth]]
        order = sorted(positive.tolist(), key=lambda i: (-float(scores[i]), i))
        return order, [float(scores[i]) for i in order]
