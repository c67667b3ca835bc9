"""The figures of a judge's verdicts against labels (one set of items): accuracy, balanced
accuracy, accuracy per class, the labelled and judged supported rates and their gap. Used by the
decision model's fit (:mod:`doclens.evaluators.rules.fit`) and by ``doclens judge-check``
(:mod:`doclens.stats.classification` adds intervals and the paired test).

A verdict is ``True`` (supported), ``False`` (not supported) or ``None`` (no verdict: the reply
could not be parsed, or the call failed for good). A missing verdict is never dropped: it counts
as wrong for accuracy and as "not judged supported" for the judged supported rate, and it is
counted apart (``no_verdict``). Balanced accuracy is the mean of the accuracy on supported and on
unsupported items (scikit-learn's ``balanced_accuracy_score``); with one class it is ``None`` (n/a),
never that class's accuracy under another name (the missing class's accuracy is ``None`` too).
"""

from __future__ import annotations

from collections.abc import Sequence

#: one item: (label, verdict); verdict None = no verdict
Pair = tuple[bool, "bool | None"]


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def rates(pairs: Sequence[Pair]) -> dict:
    """The figures of one set of items, rounded to 3 decimals: ``n``, ``accuracy``,
    ``balanced_accuracy``, ``supported_accuracy`` (on items labelled supported),
    ``unsupported_accuracy``, ``labelled_supported_rate``, ``judge_supported_rate``,
    ``supported_rate_gap`` (judged minus labelled) and ``no_verdict``.

    >>> rates([(True, True), (True, False), (False, False), (False, None)])["balanced_accuracy"]
    0.5
    >>> rates([(True, True), (True, False)])["balanced_accuracy"] is None  # one class
    True
    """
    if not pairs:
        return {"n": 0, "accuracy": None, "balanced_accuracy": None, "supported_accuracy": None,
                "unsupported_accuracy": None, "labelled_supported_rate": None, "judge_supported_rate": None,
                "supported_rate_gap": None, "no_verdict": 0}
    pairs = [(bool(label), None if verdict is None else bool(verdict)) for label, verdict in pairs]
    positives = [verdict is True for label, verdict in pairs if label]
    negatives = [verdict is False for label, verdict in pairs if not label]
    on_pos = sum(positives) / len(positives) if positives else None
    on_neg = sum(negatives) / len(negatives) if negatives else None
    labelled = sum(label for label, _ in pairs) / len(pairs)
    judged = sum(verdict is True for _, verdict in pairs) / len(pairs)
    return {"n": len(pairs), "accuracy": _round(sum(label == verdict for label, verdict in pairs) / len(pairs)),
            "balanced_accuracy": None if on_pos is None or on_neg is None else _round((on_pos + on_neg) / 2),
            "supported_accuracy": _round(on_pos),
            "unsupported_accuracy": _round(on_neg), "labelled_supported_rate": _round(labelled),
            "judge_supported_rate": _round(judged), "supported_rate_gap": _round(judged - labelled),
            "no_verdict": sum(verdict is None for _, verdict in pairs)}
