"""ROUGE-1, ROUGE-2, ROUGE-L and ROUGE-Lsum through ``rouge-score``, as the ecosystem computes them.

Each ROUGE type is reported as precision, recall and F1 (the DocLens paper sets ROUGE-L recall
beside claim recall). ``rouge-score`` does the counting; this module only chooses the text it
reads. The defaults are those of ``evaluate.load("rouge")`` (what ACI-BENCH and most published
tables used): no stemming, and ROUGE-Lsum reads the text's own line breaks as sentence breaks
(``rouge-score``'s convention). DocLens's sentence splitter
(:func:`doclens.parsing.statements.split_sentences`) stays an option for ROUGE-Lsum
(``sentence_splitter="doclens"``); ``config`` and ``config["signature"]`` say which was used.
"""

from __future__ import annotations

import logging

from doclens.baselines._util import package_version, progress_bar
from doclens.core.errors import ConfigurationError, require
from doclens.parsing.statements import split_sentences

logger = logging.getLogger(__name__)

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")

#: How ROUGE-Lsum finds sentences: ``"lines"`` (the text's own line breaks, as ``rouge-score``
#: and ``evaluate`` do) or ``"doclens"`` (:func:`split_sentences`: lines, then sentence ends).
SENTENCE_SPLITTERS = ("lines", "doclens")

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
    resplit = sentence_splitter == "doclens" and "rougeLsum" in types
    # with DocLens's splitter, ROUGE-Lsum alone reads the re-split text; the other types the text as given
    plain_types = [name for name in types if not (resplit and name == "rougeLsum")]
    scorer = rouge_scorer.RougeScorer(plain_types, use_stemmer=use_stemmer) if plain_types else None
    summary_scorer = rouge_scorer.RougeScorer(["rougeLsum"], use_stemmer=use_stemmer) if resplit else None
    pairs = progress_bar(zip(predictions, references), total=len(predictions), desc="ROUGE",
                         enabled=progress)
    per_instance = []
    for prediction, reference in pairs:
        scores = scorer.score(reference, prediction) if scorer else {}
        if summary_scorer:
            scores.update(summary_scorer.score("\n".join(split_sentences(reference)),
                                               "\n".join(split_sentences(prediction))))
        per_instance.append({f"{rouge_type}_{part}": float(getattr(scores[rouge_type], attribute))
                             for rouge_type in types
                             for part, attribute in (("precision", "precision"), ("recall", "recall"),
                                                     ("f1", "fmeasure"))})
    logger.debug("ROUGE scored %d pairs", len(per_instance))
    config = {"package": "rouge-score", "version": package_version("rouge-score"), "use_stemmer": use_stemmer,
              "sentence_splitter": sentence_splitter, "rouge_types": list(types), "approximation": False}
    config["signature"] = rouge_signature(config)
    return per_instance, config
