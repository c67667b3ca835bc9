"""How sure ``clinical-rules`` is of a verdict: its decision read as a calibrated probability (issue 46).

A verdict is decided either by a finding (a contradiction, or an absence that decides: the
decision module's ``DECISIVE``) or by the logistic decision model's score. Neither is a
probability that means what it says: the model's score is fitted to rank claims, on the half it was
fitted on, and a decided claim has no score at all. A :class:`Calibration` maps both to
``P(supported)``:

* a claim a finding decided gets the share of such claims labelled supported (with one of each
  class added, so it is never 0 or 1);
* a claim the model scored gets the isotonic regression of the labels on the model's score
  (``scipy.optimize.isotonic_regression``: monotone in the score), read between its fitted points.

It is fitted (:func:`fit_calibration`, ``benchmarks/fit_calibration.py``) on labelled items the
decision model was **not** fitted on — the real-output set's read held-out half — and applies only
to the decision model it was fitted with (its fingerprint): a refitted model
(``doclens judge-fit``) gets no probability until it is calibrated too. The verdict's
*confidence* is the probability for a supported verdict and one minus it otherwise
(:attr:`doclens.core.types.ClaimVerdict.confidence`); ``doclens judge-check`` measures how well it
is calibrated on any half, and ``doclens score --review-below P`` lists the verdicts under ``P``.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

CALIBRATION_FILE = "calibration.json"


@dataclass(frozen=True)
class Calibration:
    """``decided``: ``P(supported)`` of a claim a finding decided; ``points``: the isotonic fit of
    ``P(supported)`` on the model's score, as (score, probability) points in increasing score;
    ``decision_model``: the fingerprint of the decision model it calibrates."""

    decided: float
    points: tuple[tuple[float, float], ...]
    decision_model: str
    provenance: dict = field(default_factory=dict, compare=False)

    def probability(self, score: float | None) -> float:
        """``P(supported)`` of a verdict: ``score`` is the decision model's, ``None`` when a finding decided.

        >>> Calibration(0.05, ((0.2, 0.1), (0.8, 0.9)), "x").probability(0.5)
        0.5
        >>> Calibration(0.05, ((0.2, 0.1), (0.8, 0.9)), "x").probability(None)
        0.05
        """
        if score is None:
            return self.decided
        xs = [x for x, _ in self.points]
        ys = [y for _, y in self.points]
        if score <= xs[0]:
            return ys[0]
        if score >= xs[-1]:
            return ys[-1]
        k = next(n for n, x in enumerate(xs) if x >= score)
        x0, x1, y0, y1 = xs[k - 1], xs[k], ys[k - 1], ys[k]
        return round(y0 + (y1 - y0) * (score - x0) / (x1 - x0) if x1 > x0 else y1, 6)

    @property
    def fingerprint(self) -> str:
        text = json.dumps([self.decided, list(self.points), self.decision_model])
        return hashlib.sha256(text.encode()).hexdigest()[:8]

    def to_json(self) -> dict:
        return {"decided": self.decided, "points": [list(p) for p in self.points],
                "decision_model": self.decision_model, "provenance": self.provenance}

    @classmethod
    def from_json(cls, data: dict) -> Calibration:
        try:
            points = tuple((float(x), float(y)) for x, y in data["points"])
            found = cls(float(data["decided"]), points, str(data["decision_model"]), dict(data.get("provenance") or {}))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"calibration: not written by Calibration.to_json ({type(exc).__name__}: {exc})") from exc
        if not points or not all(0 <= y <= 1 for _, y in points) or not 0 < found.decided < 1:
            raise ValueError("calibration: probabilities must lie in [0, 1] and there must be points")
        return found


def fit_calibration(scores: list[float | None], labels: list[bool], decision_model: str,
                    provenance: dict | None = None) -> Calibration:
    """Fit a :class:`Calibration` from the verdicts of labelled items: each item's decision model
    score (``None`` when a finding decided) and its label.

    >>> fit_calibration([None, None, 0.2, 0.4, 0.6, 0.9], [False, False, False, True, False, True], "x").decided
    0.25
    """
    import numpy as np
    from scipy.optimize import isotonic_regression

    decided = [label for score, label in zip(scores, labels) if score is None]
    scored = sorted((score, label) for score, label in zip(scores, labels) if score is not None)
    if len(scored) < 2:
        raise ValueError("calibration needs at least two items the decision model scored")
    xs = np.array([s for s, _ in scored], dtype=float)
    fitted = isotonic_regression(np.array([float(label) for _, label in scored])).x
    # one point per step of the fit (its first and last score), shrunk a little towards 1/2 so that
    # no verdict is certain: (hits + 1/2) / (items + 1) within each step
    points: list[tuple[float, float]] = []
    start = 0
    for end in range(1, len(xs) + 1):
        if end == len(xs) or fitted[end] != fitted[start]:
            size = end - start
            p = round((fitted[start] * size + 0.5) / (size + 1), 4)
            points += [(round(float(xs[start]), 4), p), (round(float(xs[end - 1]), 4), p)]
            start = end
    kept = sorted(dict(points).items())
    return Calibration(round((sum(decided) + 1) / (len(decided) + 2), 4), tuple(kept), decision_model,
                       {**(provenance or {}), "decided_items": len(decided), "scored_items": len(scored)})


def load_calibration(path: str | os.PathLike | None = None) -> Calibration:
    """The calibration in ``path``, or the one shipped beside the decision model."""
    source = resources.files("doclens.evaluators.rules").joinpath(CALIBRATION_FILE) if path is None else Path(path)
    return Calibration.from_json(json.loads(source.read_text(encoding="utf-8")))


def expected_calibration_error(probabilities: list[float], labels: list[bool], bins: int = 10) -> dict:
    """Expected calibration error of ``P(supported)`` against the labels, over ``bins`` equal-width
    bins of the probability, with the reliability diagram's rows: per bin the items, the mean
    probability and the share labelled supported. ECE = Σ (items / n) · |mean probability − share|.

    >>> expected_calibration_error([0.1, 0.1, 0.9, 0.9], [False, False, True, True])["ece"]
    0.1
    """
    rows = []
    total = 0.0
    n = len(probabilities)
    for b in range(bins):
        low, high = b / bins, (b + 1) / bins
        inside = [(p, y) for p, y in zip(probabilities, labels) if low <= p < high or (b == bins - 1 and p == 1.0)]
        if not inside:
            continue
        mean = sum(p for p, _ in inside) / len(inside)
        share = sum(y for _, y in inside) / len(inside)
        total += len(inside) / n * abs(mean - share)
        rows.append({"bin": [round(low, 2), round(high, 2)], "items": len(inside), "mean_probability": round(mean, 4),
                     "supported_share": round(share, 4)})
    return {"ece": round(total, 4) if n else None, "bins": rows, "items": n}


def accuracy_at_coverage(confidences: list[float], correct: list[bool],
                         coverages: tuple[float, ...] = (0.5, 0.8, 0.9, 1.0)) -> dict:
    """Accuracy of the most confident verdicts: for each coverage ``c``, the first ``ceil(c · n)`` verdicts
    by confidence (ties kept in the given order), and the confidence of the last one taken.

    >>> accuracy_at_coverage([0.9, 0.8, 0.6, 0.55], [True, True, False, True], (0.5, 1.0))["0.5"]["accuracy"]
    1.0
    """
    import math

    order = sorted(range(len(confidences)), key=lambda k: -confidences[k])
    found = {}
    for c in coverages:
        taken = order[:max(1, math.ceil(c * len(order)))] if order else []
        found[f"{c:g}"] = {"items": len(taken), "accuracy": round(sum(correct[k] for k in taken) / len(taken), 4)
                           if taken else None,
                           "least_confidence": round(confidences[taken[-1]], 4) if taken else None}
    return found
