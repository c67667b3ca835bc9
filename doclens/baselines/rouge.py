"""ROUGE-1, ROUGE-2, ROUGE-L and ROUGE-Lsum through ``rouge-score``, as the ecosystem computes them.

Each ROUGE type is reported as precision, recall and F1 (the DocLens paper sets ROUGE-L recall
beside claim recall). ``rouge-score`` does the counting; this module only chooses the text it
reads. The defaults are those of ``evaluate.load("rouge")`` (what ACI-BENCH and most published
tables used): no stemming, and ROUGE-Lsum reads the text's own line breaks as sentence breaks
(``rouge-score``'s convention). DocLens's sentence splitter
(:func:`doclens.parsing.statements.split_sentences`) stays an option for ROUGE-Lsum
(``sentence_splitter="doclens"``); ``config`` and ``config["signature"]`` say which was used.

ROUGE-L and ROUGE-Lsum are ``rouge-score``'s algorithm (its tokens, its LCS table, its
backtracking and union rule, its double-count guard) with the LCS table filled a row at a time
by numpy instead of a Python double loop: the same numbers (tested equal, float for float, on
real notes), several times faster on long notes (``cards/baselines.md`` gives the measurement).

**Bounded memory.** An LCS table has a cell per token pair: a megabyte-long prediction and
reference (170,000 tokens each) would ask for 48 GiB. ROUGE-L keeps two rows of its table (its
length is all it needs), and no pair whose table (ROUGE-L) or largest per-sentence table
(ROUGE-Lsum) would exceed :data:`MAX_LCS_CELLS` cells is computed: :class:`RougeTooLarge` names
the instance, and :func:`doclens.baselines.compute_baselines` records the baseline as failed
while the judged results are kept. ACI-BENCH notes are far below it (about 1,000 × 1,000 tokens).
"""

from __future__ import annotations

import collections
import logging

from doclens.baselines._util import package_version, progress_bar
from doclens.core.errors import ConfigurationError, require
from doclens.parsing.statements import split_sentences

logger = logging.getLogger(__name__)

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")

#: How ROUGE-Lsum finds sentences: ``"lines"`` (the text's own line breaks, as ``rouge-score``
#: and ``evaluate`` do) or ``"doclens"`` (:func:`split_sentences`: lines, then sentence ends).
SENTENCE_SPLITTERS = ("lines", "doclens")

#: The largest LCS table computed, in cells (token pairs): 5,000 × 5,000 tokens, 100 MB of int32
#: (ROUGE-Lsum's tables are int64: 200 MB). A pair above it raises :class:`RougeTooLarge`.
MAX_LCS_CELLS = 25_000_000


class RougeTooLarge(ValueError):
    """A pair's LCS table would exceed :data:`MAX_LCS_CELLS` cells (module docstring)."""


#: Metric keys of one instance, in order: ``rouge1_precision`` … ``rougeLsum_f1``.
METRIC_KEYS = tuple(f"{rouge_type}_{part}" for rouge_type in ROUGE_TYPES
                    for part in ("precision", "recall", "f1"))


def rouge_signature(config: dict) -> str:
    """A short string naming every ROUGE choice that changes a number (put it beside a score)."""
    return (f"rouge-score:{config['version']}|stem:{'yes' if config['use_stemmer'] else 'no'}"
            f"|lsum-sentences:{config['sentence_splitter']}|types:{','.join(config['rouge_types'])}")


def _check(use_stemmer, sentence_splitter, rouge_types) -> tuple[str, ...]:
    if not isinstance(use_stemmer, bool):
        raise ConfigurationError(f"rouge use_stemmer must be true or false, not {use_stemmer!r}")
    if sentence_splitter not in SENTENCE_SPLITTERS:
        raise ConfigurationError(f"rouge sentence_splitter must be one of {', '.join(SENTENCE_SPLITTERS)}, "
                                 f"not {sentence_splitter!r}")
    types = tuple(rouge_types)
    unknown = [name for name in types if name not in ROUGE_TYPES]
    if unknown or not types:
        raise ConfigurationError(f"rouge rouge_types must be a non-empty subset of {', '.join(ROUGE_TYPES)}, "
                                 f"not {list(types)!r}")
    return tuple(name for name in ROUGE_TYPES if name in types)


def _backtrack(table, reference: list[int], candidate: list[int], first: int = 0) -> list[int]:
    """``rouge-score``'s ``_backtrack_norec``: the reference positions of one LCS. ``table``: rows
    of Python ints (numpy element access is slow), this candidate's column 0 at ``first``."""
    i, j = len(reference), len(candidate)
    found = []
    while i > 0 and j > 0:
        if reference[i - 1] == candidate[j - 1]:
            found.append(i - 1)
            i, j = i - 1, j - 1
        elif table[i][first + j - 1] > table[i - 1][first + j]:
            j -= 1
        else:
            i -= 1
    return found[::-1]


def _score(scoring, hits: int, predicted: int, referenced: int):
    precision, recall = hits / predicted, hits / referenced
    return scoring.Score(precision=precision, recall=recall, fmeasure=scoring.fmeasure(precision, recall))


def _lcs_length(reference: list[int], candidate: list[int]) -> int:
    """The last cell of ``rouge-score``'s LCS table (``_lcs_table``), a row at a time with two
    rows in memory: row ``i`` is ``max.accumulate(where(ref[i-1] == can[j-1], row_above[j-1] + 1,
    row_above[j]))``, which equals the double loop's ``max(above, left)`` / ``diagonal + 1`` cell
    by cell, because a table row never grows by more than 1 from one column to the next."""
    import numpy as np

    can = np.asarray(candidate, dtype=np.int64)
    row = np.zeros(len(candidate) + 1, dtype=np.int32)
    for token in reference:
        row[1:] = np.maximum.accumulate(np.where(can == token, row[:-1] + 1, row[1:]))
    return int(row[-1])


def _rouge_l(scoring, reference: list[int], candidate: list[int]):
    """``rouge-score``'s ``_score_lcs`` on token ids."""
    if not reference or not candidate:
        return scoring.Score(precision=0, recall=0, fmeasure=0)
    return _score(scoring, _lcs_length(reference, candidate), len(candidate), len(reference))


def _check_size(rows: int, columns: int, what: str, where: str) -> None:
    if rows * columns > MAX_LCS_CELLS:
        raise RougeTooLarge(f"{where}: {what} over {rows:,} x {columns:,} tokens needs a table of {rows * columns:,} "
                            f"cells, above the limit of {MAX_LCS_CELLS:,} (doclens.baselines.rouge.MAX_LCS_CELLS); "
                            "ROUGE is not computed for such a pair")


def _candidate_layout(candidates: list[list[int]]):
    """All candidate sentences side by side for one table: each behind a column of its own that
    never matches (-1), which plays its table's column 0; and an offset per column that grows by
    more than any LCS length from one sentence to the next, so that one running maximum over the
    row restarts at every sentence. Returns ``(tokens, offsets, [(first column, sentence)], last
    column of each sentence)``."""
    import numpy as np

    tokens: list[int] = []
    offsets: list[int] = []
    spans: list[tuple[int, list[int]]] = []
    step = max(map(len, candidates)) + 1
    for index, sentence in enumerate(candidates):
        spans.append((len(tokens), sentence))
        tokens += [-1, *sentence]
        offsets += [index * step] * (len(sentence) + 1)
    last_columns = np.asarray([first + len(sentence) for first, sentence in spans])
    return np.asarray(tokens, dtype=np.int64), np.asarray(offsets, dtype=np.int64), spans, last_columns


def _union_lcs(sentence: list[int], layout) -> set[int]:
    """``rouge-score``'s ``_union_lcs``: the reference positions of the LCS of ``sentence`` with
    each candidate sentence (one table per candidate, as ``rouge-score`` builds it), united."""
    import numpy as np

    tokens, offsets, spans, last_columns = layout
    table = np.zeros((len(sentence) + 1, len(tokens)), dtype=np.int64)
    for i, token in enumerate(sentence, start=1):
        above = table[i - 1]
        running = np.where(tokens[1:] == token, above[:-1] + 1, above[1:]) + offsets[1:]
        table[i, 1:] = np.maximum.accumulate(running) - offsets[1:]
    union: set[int] = set()
    matched = np.flatnonzero(table[-1, last_columns] > 0)  # the others' LCS is empty
    if len(matched):
        rows = table.tolist()
        for index in matched:
            first, candidate = spans[index]
            union.update(_backtrack(rows, sentence, candidate, first))
    return union


def _rouge_lsum(scoring, references: list[list[int]], candidates: list[list[int]]):
    """``rouge-score``'s ``_summary_level_lcs`` on token ids: the union LCS of each reference
    sentence with every candidate sentence, each token counted at most as often as both sides have it."""
    referenced, predicted = sum(map(len, references)), sum(map(len, candidates))
    if not references or not candidates or not referenced or not predicted:
        return scoring.Score(precision=0, recall=0, fmeasure=0)
    reference_counts = collections.Counter(token for sentence in references for token in sentence)
    candidate_counts = collections.Counter(token for sentence in candidates for token in sentence)
    layout = _candidate_layout(candidates)
    hits = 0
    for sentence in references:
        for token in (sentence[i] for i in sorted(_union_lcs(sentence, layout))):
            if candidate_counts[token] > 0 and reference_counts[token] > 0:
                hits += 1
                candidate_counts[token] -= 1
                reference_counts[token] -= 1
    return _score(scoring, hits, predicted, referenced)


class _LcsScorer:
    """ROUGE-L and ROUGE-Lsum as ``rouge-score`` computes them (its tokenizer), with the fast table."""

    def __init__(self, tokenizer, scoring):
        self.tokenizer = tokenizer
        self.scoring = scoring
        self.ids: dict[str, int] = {}

    def _tokens(self, text: str) -> list[int]:
        return [self.ids.setdefault(token, len(self.ids)) for token in self.tokenizer.tokenize(text)]

    def score(self, reference: str, prediction: str, types, where: str = "a pair") -> dict:
        """ROUGE-L / ROUGE-Lsum of one pair; :class:`RougeTooLarge` naming ``where`` when a table
        would pass :data:`MAX_LCS_CELLS`."""
        scores = {}
        if "rougeL" in types:
            referenced, predicted = self._tokens(reference), self._tokens(prediction)
            _check_size(len(referenced), len(predicted), "ROUGE-L", where)
            scores["rougeL"] = _rouge_l(self.scoring, referenced, predicted)
        if "rougeLsum" in types:  # sentences are lines, empty ones dropped (rouge-score's get_sents)
            references = [self._tokens(line) for line in reference.split("\n") if line]
            candidates = [self._tokens(line) for line in prediction.split("\n") if line]
            # one table per reference sentence: its tokens x every candidate sentence's, side by side
            _check_size(max(map(len, references), default=0), sum(len(c) + 1 for c in candidates), "ROUGE-Lsum", where)
            scores["rougeLsum"] = _rouge_lsum(self.scoring, references, candidates)
        return scores


def rouge_per_instance(predictions: list[str], references: list[str], *, use_stemmer: bool = False,
                       sentence_splitter: str = "lines", rouge_types=ROUGE_TYPES,
                       progress: bool = False) -> tuple[list[dict[str, float]], dict]:
    """ROUGE precision, recall and F1 of each (prediction, reference) pair.

    For n-gram ROUGE-N, with ``overlap = Σ_g min(count_pred(g), count_ref(g))``::

        precision = overlap / #n-grams(prediction)
        recall    = overlap / #n-grams(reference)
        f1        = 2 · precision · recall / (precision + recall)

    ROUGE-L uses the longest common subsequence of the two token sequences in place of the
    overlap; ROUGE-Lsum the union LCS summed over reference sentences. Tokens are lower-cased
    alphanumeric runs (``rouge-score``'s tokenizer), Porter-stemmed when ``use_stemmer``.

    Edge cases: an empty (or token-less) prediction or reference scores 0.0 for precision,
    recall and F1 (``rouge-score``'s own convention); so does a pair of two empty texts.

    Parameters
    ----------
    predictions, references : list of str, same length.
    use_stemmer : bool, default False
        Porter-stem tokens (``rouge-score``'s ``use_stemmer``). Off by default, as in
        ``evaluate.load("rouge")`` and the published tables computed with it; stemming adds 1 to
        4 points on clinical notes.
    sentence_splitter : {"lines", "doclens"}, default "lines"
        ROUGE-Lsum's sentences: the text's own lines (``rouge-score`` and ``evaluate``), or
        DocLens's :func:`split_sentences`.
    rouge_types : iterable of str, default all of :data:`ROUGE_TYPES`
        Compute only these (ROUGE-L's LCS is the slow part on long texts).
    progress : bool, default False
        Show a progress bar.

    Returns
    -------
    per_instance : list of dict
        One dict per pair with the keys of the chosen types (all: :data:`METRIC_KEYS`), floats in [0, 1].
    config : dict
        What was computed: package, version, ``use_stemmer``, ``sentence_splitter``,
        ``rouge_types`` and ``signature`` (:func:`rouge_signature`).
    """
    types = _check(use_stemmer, sentence_splitter, rouge_types)
    rouge_scorer = require("rouge_score.rouge_scorer", "the ROUGE baseline", "baselines")
    scoring = require("rouge_score.scoring", "the ROUGE baseline", "baselines")
    # rouge-score's own default tokenizer, given explicitly: made by RougeScorer it is announced
    # through absl logging, whose first message installs a root log handler (logging.basicConfig)
    # that then prints every library's warnings, past `doclens -q`
    tokenizer = require("rouge_score.tokenizers", "the ROUGE baseline", "baselines").DefaultTokenizer(use_stemmer)
    ngram_types = [name for name in types if name in ("rouge1", "rouge2")]
    scorer = (rouge_scorer.RougeScorer(ngram_types, use_stemmer=use_stemmer, tokenizer=tokenizer)
              if ngram_types else None)
    lcs = _LcsScorer(tokenizer, scoring) if {"rougeL", "rougeLsum"} & set(types) else None
    pairs = progress_bar(zip(predictions, references), total=len(predictions), desc="ROUGE",
                         enabled=progress)
    per_instance = []
    for position, (prediction, reference) in enumerate(pairs):
        scores = _pair_scores(scorer, lcs, types, sentence_splitter, reference, prediction, f"instance {position}")
        per_instance.append({f"{rouge_type}_{part}": float(getattr(scores[rouge_type], attribute))
                             for rouge_type in types
                             for part, attribute in (("precision", "precision"), ("recall", "recall"),
                                                     ("f1", "fmeasure"))})
    logger.debug("ROUGE scored %d pairs", len(per_instance))
    config = {"package": "rouge-score", "version": package_version("rouge-score"), "use_stemmer": use_stemmer,
              "sentence_splitter": sentence_splitter, "rouge_types": list(types), "approximation": False}
    config["signature"] = rouge_signature(config)
    return per_instance, config


def _pair_scores(scorer, lcs: _LcsScorer | None, types, sentence_splitter: str, reference: str, prediction: str,
                 where: str) -> dict:
    """``{rouge type: rouge-score Score}`` of one pair: the n-gram types from ``scorer``
    (``rouge-score``'s), ROUGE-L and ROUGE-Lsum from ``lcs`` (ROUGE-Lsum on DocLens's sentences,
    one a line, when ``sentence_splitter`` is ``"doclens"``)."""
    scores = scorer.score(reference, prediction) if scorer else {}
    if lcs is None:
        return scores
    if "rougeL" in types:
        scores.update(lcs.score(reference, prediction, ("rougeL",), where))
    if "rougeLsum" in types:
        if sentence_splitter == "doclens":  # ROUGE-Lsum reads one sentence a line
            reference, prediction = "\n".join(split_sentences(reference)), "\n".join(split_sentences(prediction))
        scores.update(lcs.score(reference, prediction, ("rougeLsum",), where))
    return scores
