"""Reciprocal rank fusion (Cormack, Clarke and Büttcher, SIGIR 2009).

Each ranking lists item ids best first. An item's fused score is the sum, over the rankings
that hold it, of ``1 / (k + rank)`` with ``rank`` counted from 1; an item missing from a ranking
gets nothing from it. ``k = 60`` is the paper's value and the default here: it damps the weight
of the very first ranks, so one retriever's top hit cannot outvote an item that both retrievers
rank well. Only ranks are used, never the retrievers' raw scores, so BM25 scores (unbounded) and
cosine similarities need no calibration against each other.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

#: an item id of a ranking (a fact's index, a document name …)
Item = TypeVar("Item", bound=Hashable)

#: The default ``k`` of reciprocal rank fusion.
RRF_K = 60


def reciprocal_rank_fusion(rankings: Sequence[Sequence[Item]], k: int = RRF_K) -> list[tuple[Item, float]]:
    """Fuse ``rankings`` (each a sequence of ids, best first, no repeats within one) into
    ``[(id, score), …]``, best first. Ties are broken by the best single rank the item reached,
    then by the order items were first seen (rankings in order, each best first), so the result
    is deterministic."""
    if k < 0:
        raise ValueError(f"reciprocal rank fusion needs k >= 0, got {k}")
    scores: dict[Item, float] = {}
    best: dict[Item, int] = {}
    for ranking in rankings:
        seen = set()
        for rank, item in enumerate(ranking, start=1):
            if item in seen:
                raise ValueError(f"item {item!r} appears twice in one ranking")
            seen.add(item)
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
            best[item] = min(best.get(item, rank), rank)
    order = {item: i for i, item in enumerate(scores)}
    return sorted(scores.items(), key=lambda pair: (-pair[1], best[pair[0]], order[pair[0]]))
