"""ROUGE-1, ROUGE-2, ROUGE-L and ROUGE-Lsum with Porter stemming, through ``rouge-score``.

Each ROUGE type is reported as precision, recall and F1 (the DocLens paper sets ROUGE-L recall
beside claim recall). ``rouge-score`` does the counting; this module only prepares the text:
ROUGE-Lsum needs one sentence a line, and ``rouge-score``'s own splitter needs an NLTK download,
so sentences are split by DocLens's own splitter (:func:`doclens.parsing.statements.split_sentences`, the
rules that split predictions into statements, with nothing removed) and joined with newlines.
"""

from __future__ import annotations

import logging

from doclens.baselines._util import package_version, progress_bar
from doclens.core.errors import require
from doclens.parsing.statements import split_sentences

logger = logging.getLogger(__name__)

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")

#: Metric keys of one instance, in order: ``rouge1_precision`` … ``rougeLsum_f1``.
METRIC_KEYS = tuple(f"{rouge_type}_{part}" for rouge_type in ROUGE_TYPES
                    for part in ("precision", "recall", "f1"))

def rouge_per_instance(predictions: list[str], references: list[str], *, use_stemmer: bool = True,
                       progress: bool = False) -> tuple[list[dict[str, float]], dict]:
    """ROUGE precision, recall and F1 of each (prediction, reference) pair.

    For n-gram ROUGE-N, with ``overlap = Σ_g min(count_pred(g), count_ref(g))``::

        precision = overlap / #n-grams(prediction)
        recall    = overlap / #n-grams(reference)
        f1        = 2 · precision · recall / (precision + recall)

    ROUGE-L uses the longest common subsequence of the two token sequences in place of the
    overlap; ROUGE-Lsum the union LCS summed over reference sentences (:func:`split_sentences`
    gives the sentences). Tokens are lower-cased alphanumeric runs (``rouge-score``'s tokenizer),
    Porter-stemmed when ``use_stemmer``.

    Edge cases: an empty (or token-less) prediction or reference scores 0.0 for precision,
    recall and F1 (``rouge-score``'s own convention); so does a pair of two empty texts.

    Parameters
    ----------
    predictions, references : list of str, same length.
    use_stemmer : bool, default True
        Porter-stem tokens (``rouge-score``'s ``use_stemmer``).
    progress : bool, default False
        Show a progress bar.

    Returns
    -------
    per_instance : list of dict
        One dict per pair with the keys :data:`METRIC_KEYS`, floats in [0, 1].
    config : dict
        What was computed: package, version, ``use_stemmer``, ``sentence_splitter``.
    """
    rouge_scorer = require("rouge_score.rouge_scorer", "the ROUGE baseline", "baselines")
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=use_stemmer)
    # ROUGE-Lsum reads sentences from newlines, so it is scored on sentence-split text.
    summary_scorer = rouge_scorer.RougeScorer(["rougeLsum"], use_stemmer=use_stemmer)
    pairs = progress_bar(zip(predictions, references), total=len(predictions), desc="ROUGE",
                         enabled=progress)
    per_instance = []
    for prediction, reference in pairs:
        scores = scorer.score(reference, prediction)
        scores.update(summary_scorer.score("\n".join(split_sentences(reference)),
                                           "\n".join(split_sentences(prediction))))
        row = {}
        for rouge_type in ROUGE_TYPES:
            score = scores[rouge_type]
            row[f"{rouge_type}_precision"] = float(score.precision)
            row[f"{rouge_type}_recall"] = float(score.recall)
            row[f"{rouge_type}_f1"] = float(score.fmeasure)
        per_instance.append(row)
    logger.debug("ROUGE scored %d pairs", len(per_instance))
    config = {
        "package": "rouge-score",
        "version": package_version("rouge-score"),
        "use_stemmer": use_stemmer,
        "sentence_splitter": "doclens.parsing.statements.split_sentences (rougeLsum only)",
        "approximation": False,
    }
    return per_instance, config

