"""How sure ``clinical-rules`` is of a verdict: its decision read as a calibrated probability (issue 46).

A verdict is decided either by a finding (a contradiction, or an absence that decides: the
decision module's ``DECISIVE``) or by the logistic decision model's score. Neither is a
probability that means what it says: the model's score is fitted to rank claims, on the half it was
fitted on, and a decided claim has no score at all. A :class:`Calibration` maps both to
``P(supported)``:

* a claim a finding decided gets the share of claims decided by the same **kind** of finding
  (:func:`decisive_kinds`: "assertion/contradiction", "number/unstated" …) labelled supported,
  shrunk towards the share over all decided claims by :data:`SHRINKAGE` pseudo-items since some
  kinds are rare (that common share has one of each class added, so it is never 0 or 1); a claim
  several decisive findings reject gets the lowest of their shares. By kind orders the verdicts
  better: a negation found on the claim's own concept is a false alarm far more often than a number
  the note does not state. A calibration fitted ``one-share`` (v8–v12's) gives every decided claim
  the common share;
* a claim the model scored gets, in the shipped calibration (round 13), a **logistic** function of
  the score's log-odds (Platt's scaling; its weight kept positive, so the map is monotone in the
  score), to which decision features (:data:`~doclens.evaluators.rules.decision.FEATURES`, the
  ``inputs`` of a fit) may add their weights, penalised; or, fitted ``isotonic`` (v8–v12's), the
  isotonic regression of the labels on the score (``scipy.optimize.isotonic_regression``), each step
  shrunk a little towards 1/2 and kept monotone, read between its fitted points. The isotonic steps
  follow the noise of the ~180 scored claims they are fitted on (a step of coin flips at scores
  0.3–0.6 on the calibration half); the two-parameter curve does not (cards/clinical-rules.md,
  "Confidence").

Either way only the probability depends on it: the verdict is the decision model's (its score
against its threshold). The shipped calibration is fitted (:func:`fit_calibration`,
``benchmarks/fit_calibration.py``) on the real-output set's ``calibration`` half, notes no rule was
written from (v8–v11 fitted it on the **read** halves, ``dev`` and ``held-out``, where the rules
were tuned, and it was too sure elsewhere); its own figures there are estimated out of fold
(:func:`out_of_fold`: each encounter's probabilities come from a calibration fitted without it);
the fit never reads an unread half. It applies only to the decision model it was fitted
with (its fingerprint): a refitted model (``doclens judge-fit``) gets no probability until it is
calibrated too. The verdict's *confidence* is the probability for a supported verdict and one minus
it otherwise (:attr:`doclens.core.types.ClaimVerdict.confidence`); ``doclens judge-check`` measures
how well it is calibrated on any half, and ``doclens score --review-below P`` lists the verdicts
under ``P``.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from types import MappingProxyType

CALIBRATION_FILE = "calibration.json"
#: The terms of a ``logistic`` map that are not decision features: its intercept and the weight of
#: the decision score's log-odds (positive: the map is monotone in the score).
LOGISTIC_TERMS = ("intercept", "log_odds")
#: The score's log-odds are read with the score kept this far from 0 and 1.
SCORE_EDGE = 1e-4
#: The L2 penalty on a logistic map's feature weights (standardised features; neither the intercept nor
#: the score's weight is penalised).
LOGISTIC_L2 = 1.0
#: Inputs a ``logistic`` map may weigh beside the decision features (round 16, issue 46): what the
#: verdict rests on, each read from the score and the decision features (:func:`map_inputs`).
#: A verdict the model reached over a finding it weighed (a rewording: v3's checks did not all pass)
#: rests on less than the same score on a claim every check passed; and a claim of one or two content
#: words carries little evidence (every word may occur in the note while it says something else). The
#: ``log_odds_*`` inputs multiply the score's log-odds: a weight below 0 draws those verdicts'
#: probability towards the intercept (less confident both ways), which a feature alone (a shift of
#: P(supported)) cannot. Measured out of fold (cards/clinical-rules.md, "Confidence"), the weighed
#: verdicts' slope and the forgiven word help on the calibration half and on the read halves; the short
#: claim's inputs do not (the Brier score worsens on the calibration half), and are not shipped.
DERIVED = MappingProxyType({
    "few_words": "1 when the claim has at most two content words",
    "log_odds_few_words": "the score's log-odds on a claim of at most two content words (0 otherwise)",
    "log_odds_weighed": "the score's log-odds on a claim whose checks found something the model weighed (0 when "
                        "every check passed)",
    "log_odds_per_word": "the score's log-odds divided by the claim's content words",
})
#: The :data:`DERIVED` inputs that multiply the score's log-odds (each scales it by a factor in [0, 1]): a
#: map stays monotone in the score while its weight plus theirs, the negative ones, stays positive.
_SLOPES = ("log_odds_few_words", "log_odds_weighed", "log_odds_per_word")
#: How few content words make a claim short (:data:`DERIVED`'s ``few_words``).
FEW_WORDS = 2
#: How a scored claim's probability may be fitted (:func:`fit_calibration`'s ``scored``).
SCORED = ("isotonic", "logistic")
#: Pseudo-items by which a decisive kind's share of supported claims is drawn towards the share over
#: every decided claim: a kind seen 10 times is half its own share, half the common one.
SHRINKAGE = 10.0


def decisive_kinds(findings) -> tuple[str, ...]:
    """The kinds of the findings that decide a verdict (the decision module's ``DECISIVE``), each as
    ``kind/contradiction`` (something the note states otherwise) or ``kind/unstated`` (an absence
    that decides), once each, sorted.

    >>> from doclens.evaluators.rules.findings import Finding, FindingKind
    >>> decisive_kinds([Finding(FindingKind.NUMBER, "note does not state 20"), Finding(FindingKind.MISSING, "x")])
    ('number/unstated',)
    """
    from doclens.evaluators.rules.decision import DECISIVE

    return tuple(sorted({f"{f.kind}/{'contradiction' if f.conflict else 'unstated'}"
                         for f in findings if (f.kind, f.conflict) in DECISIVE}))


@dataclass(frozen=True)
class Calibration:
    """``decided``: ``P(supported)`` of a claim a finding decided, whatever its kind; ``points``: the
    isotonic fit of ``P(supported)`` on the model's score, as (score, probability) points in
    increasing score; ``decision_model``: the fingerprint of the decision model it calibrates;
    ``kinds``: ``P(supported)`` of a claim decided by each kind of :func:`decisive_kinds` (a kind
    not in it reads ``decided``); ``logistic`` (round 13): a scored claim's ``P(supported)`` as a logistic
    function of the score's log-odds and, optionally, decision features (:data:`LOGISTIC_TERMS` then
    feature names, each with its weight); when given it is read instead of ``points``."""

    decided: float
    points: tuple[tuple[float, float], ...]
    decision_model: str
    provenance: dict = field(default_factory=dict, compare=False)
    kinds: tuple[tuple[str, float], ...] = ()
    logistic: tuple[tuple[str, float], ...] = ()

    def probability(self, score: float | None, kinds: tuple[str, ...] | list[str] = (),
                    features: dict[str, float] | None = None) -> float:
        """``P(supported)`` of a verdict: ``score`` is the decision model's, ``None`` when a finding
        decided; then ``kinds`` are the deciding findings' kinds (:func:`decisive_kinds`): the lowest of
        their probabilities. A scored claim's ``features`` (the decision model's,
        :data:`~doclens.evaluators.rules.decision.FEATURES`) are read by a ``logistic`` map that
        weighs them (one that is missing reads 0).

        >>> Calibration(0.05, ((0.2, 0.1), (0.8, 0.9)), "x").probability(0.5)
        0.5
        >>> Calibration(0.05, ((0.2, 0.1), (0.8, 0.9)), "x").probability(None)
        0.05
        >>> Calibration(0.05, ((0.2, 0.1),), "x", kinds=(("a/contradiction", 0.2),)).probability(None, ["a/contradiction"])
        0.2
        >>> Calibration(0.05, (), "x", logistic=(("intercept", 0.0), ("log_odds", 1.0))).probability(0.8)
        0.8
        """
        if score is None:
            known = dict(self.kinds)
            return min((known.get(k, self.decided) for k in kinds), default=self.decided)
        if self.logistic:
            return _logistic_probability(dict(self.logistic), score, features or {})
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
        parts: list = [self.decided, list(self.points), self.decision_model]
        parts += [list(map(list, self.kinds))] if self.kinds or self.logistic else []
        text = json.dumps(parts + [list(map(list, self.logistic))] if self.logistic else parts)
        return hashlib.sha256(text.encode()).hexdigest()[:8]

    def to_json(self) -> dict:
        return {"decided": self.decided, "kinds": dict(self.kinds), "points": [list(p) for p in self.points],
                **({"logistic": dict(self.logistic)} if self.logistic else {}),
                "decision_model": self.decision_model, "provenance": self.provenance}

    @classmethod
    def from_json(cls, data: dict) -> Calibration:
        try:
            points = tuple((float(x), float(y)) for x, y in data["points"])
            kinds = tuple(sorted((str(k), float(v)) for k, v in (data.get("kinds") or {}).items()))
            logistic = tuple((str(k), float(v)) for k, v in (data.get("logistic") or {}).items())
            found = cls(float(data["decided"]), points, str(data["decision_model"]), dict(data.get("provenance") or {}),
                        kinds, logistic)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"calibration: not written by Calibration.to_json ({type(exc).__name__}: {exc})") from exc
        if (not (points or logistic) or not all(0 <= y <= 1 for _, y in points) or not 0 < found.decided < 1
                or not all(0 < v < 1 for _, v in kinds)):
            raise ValueError("calibration: probabilities must lie in [0, 1] and there must be points or a logistic map")
        if logistic:
            _check_logistic(dict(logistic))
        return found


def _check_logistic(terms: dict[str, float]) -> None:
    """A logistic map's terms as :meth:`Calibration.from_json` accepts them: finite, with
    :data:`LOGISTIC_TERMS`, and the score's weight positive with the negative weights of the inputs that
    multiply it (:data:`_SLOPES`), so the map is monotone in the score whatever the claim."""
    if (set(LOGISTIC_TERMS) - set(terms) or not all(map(math.isfinite, terms.values()))
            or terms["log_odds"] + sum(min(0.0, w) for k, w in terms.items() if k in _SLOPES) <= 0):
        raise ValueError(f"calibration: a logistic map needs finite {' and '.join(LOGISTIC_TERMS)}, the score's "
                         "weight positive with every input that multiplies it (monotone in the score)")


def _score_points(scores: list[float], labels: list[bool]) -> tuple[tuple[float, float], ...]:
    """The isotonic fit of ``labels`` on ``scores`` as points: items with one score pooled, one point
    at each end of each step, each step's share shrunk towards 1/2 ((hits + 1/2) / (items + 1), so no
    verdict is certain) and the shrunk steps made monotone again (a small step shrinks more than a
    large one: v10's shipped map gave its highest scores 0.875, below the step under them)."""
    import numpy as np
    from scipy.optimize import isotonic_regression

    pooled: dict[float, list[int]] = {}
    for score, label in zip(scores, labels):
        pooled.setdefault(round(float(score), 4), [0, 0])
        pooled[round(float(score), 4)][0] += 1
        pooled[round(float(score), 4)][1] += bool(label)
    xs = sorted(pooled)
    sizes = np.array([pooled[x][0] for x in xs], dtype=float)
    fitted = isotonic_regression(np.array([pooled[x][1] for x in xs]) / sizes, weights=sizes).x
    steps: list[tuple[int, int]] = []  # [start, end) of each constant run
    for n in range(len(xs)):
        if n == 0 or fitted[n] != fitted[n - 1]:
            steps.append((n, n + 1))
        else:
            steps[-1] = (steps[-1][0], n + 1)
    size = np.array([sizes[a:b].sum() for a, b in steps])
    shrunk = np.array([(fitted[a] * size[k] + 0.5) / (size[k] + 1) for k, (a, _) in enumerate(steps)])
    monotone = isotonic_regression(shrunk, weights=size).x
    points = {}
    for (a, b), p in zip(steps, monotone):
        points[xs[a]] = points[xs[b - 1]] = round(float(p), 4)
    return tuple(sorted(points.items()))


def _log_odds(score: float) -> float:
    score = min(max(float(score), SCORE_EDGE), 1.0 - SCORE_EDGE)
    return math.log(score / (1.0 - score))


def map_inputs(score: float, features: dict[str, float]) -> dict[str, float]:
    """A scored claim's decision ``features`` and the :data:`DERIVED` inputs read from them and its
    ``score`` (a feature that is missing reads 0).

    >>> map_inputs(0.5, {"content_words": 2.0, "rules_pass": 1.0})["few_words"]
    1.0
    """
    odds = _log_odds(score)
    words = float(features.get("content_words", 0.0))
    few = 1.0 if words <= FEW_WORDS else 0.0
    return {**features, "few_words": few, "log_odds_few_words": odds * few,
            "log_odds_weighed": odds * (1.0 - float(features.get("rules_pass", 0.0))),
            "log_odds_per_word": odds / max(words, 1.0)}


def _logistic_probability(terms: dict[str, float], score: float, features: dict[str, float]) -> float:
    given = map_inputs(score, features) if set(terms) & set(DERIVED) else features
    z = terms["intercept"] + terms["log_odds"] * _log_odds(score) + sum(
        w * float(given.get(name, 0.0)) for name, w in terms.items() if name not in LOGISTIC_TERMS)
    return round(1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z)))), 6)


def _score_logistic(scores: list[float], labels: list[bool], features: list[dict[str, float]],
                    inputs: tuple[str, ...]) -> tuple[tuple[str, float], ...]:
    """A logistic map of ``labels`` on the scores' log-odds and the ``inputs`` among ``features`` (round 13,
    Platt's scaling with more inputs): maximum likelihood with the inputs standardised and their weights
    penalised by :data:`LOGISTIC_L2`, the score's weight kept positive (monotone in the score); the
    weights returned on the inputs' own scale."""
    import numpy as np
    from scipy.optimize import minimize

    given = [map_inputs(s, f) for s, f in zip(scores, features)]
    x = np.array([[_log_odds(s)] + [float(f.get(name, 0.0)) for name in inputs] for s, f in zip(scores, given)])
    y = np.array(labels, dtype=float)
    mean, scale = x.mean(axis=0), x.std(axis=0)
    mean[0], scale[0] = 0.0, 1.0  # the score's log-odds as they are
    scale[scale == 0] = 1.0
    xs = np.hstack([np.ones((len(y), 1)), (x - mean) / scale])
    penalty = np.array([0.0, 0.0] + [LOGISTIC_L2] * len(inputs))

    def loss(theta):
        p = 1.0 / (1.0 + np.exp(-np.clip(xs @ theta, -60, 60)))
        value = -(y * np.log(p + 1e-12) + (1 - y) * np.log(1 - p + 1e-12)).sum() + (penalty * theta ** 2).sum() / 2
        return value, xs.T @ (p - y) + penalty * theta

    bounds = [(None, None), (1e-3, None)] + [(None, None)] * len(inputs)
    theta = minimize(loss, np.r_[0.0, 1.0, np.zeros(len(inputs))], jac=True, method="L-BFGS-B", bounds=bounds).x
    raw = theta[1:] / scale
    intercept = float(theta[0] - (raw * mean).sum())
    slope = raw[0] + sum(min(0.0, float(w)) for name, w in zip(inputs, raw[1:]) if name in _SLOPES)
    if slope <= 0:
        raise ValueError("calibration: the fitted map falls with the score where an input multiplies it; fit it "
                         "without " + ", ".join(name for name in inputs if name in _SLOPES))
    return (("intercept", round(intercept, 6)), *zip(("log_odds", *inputs), (round(float(w), 6) for w in raw)))


def _kind_shares(kinds: list[tuple[str, ...]], labels: list[bool], shrinkage: float) -> tuple[float, dict[str, float]]:
    """``P(supported)`` of a decided claim, over all ((hits + 1) / (items + 2)), and per decisive kind,
    shrunk towards it: (hits + shrinkage · all) / (items + shrinkage)."""
    common = (sum(labels) + 1) / (len(labels) + 2)
    seen: dict[str, list[int]] = {}
    for found, label in zip(kinds, labels):
        for kind in set(found):
            counts = seen.setdefault(kind, [0, 0])
            counts[0] += 1
            counts[1] += bool(label)
    return common, {k: (hits + shrinkage * common) / (items + shrinkage) for k, (items, hits) in seen.items()}


def _check_scored(scored: str, inputs: tuple[str, ...], features: list[dict[str, float]] | None) -> None:
    if scored not in SCORED:
        raise ValueError(f"calibration: scored must be one of {', '.join(SCORED)}, got {scored!r}")
    if inputs and (scored != "logistic" or features is None):
        raise ValueError("calibration: inputs are read by a logistic map, from each item's features")


def fit_calibration(scores: list[float | None], labels: list[bool], decision_model: str,
                    provenance: dict | None = None, kinds: list[tuple[str, ...]] | None = None,
                    shrinkage: float = SHRINKAGE, scored: str = "isotonic",
                    features: list[dict[str, float]] | None = None, inputs: tuple[str, ...] = ()) -> Calibration:
    """Fit a :class:`Calibration` from the verdicts of labelled items: each item's decision model
    score (``None`` when a finding decided), its label and, for a decided item, the kinds of the
    findings that decided it (:func:`decisive_kinds`; none given: one share for every decided claim).
    ``scored``: a scored claim's map, ``"isotonic"`` (monotone steps on the score) or ``"logistic"``
    (round 13: on the score's log-odds and the ``inputs`` among each item's decision ``features``).

    >>> fit_calibration([None, None, 0.2, 0.4, 0.6, 0.9], [False, False, False, True, False, True], "x").decided
    0.25
    >>> found = fit_calibration([None] * 4 + [0.2, 0.9], [True, False, False, False, False, True], "x",
    ...                         kinds=[("a/contradiction",), ("a/contradiction",), ("b/unstated",), ("b/unstated",), (), ()],
    ...                         shrinkage=2)
    >>> found.probability(None, ["a/contradiction"]) > found.decided > found.probability(None, ["b/unstated"])
    True
    """
    _check_scored(scored, inputs, features)
    given = kinds if kinds is not None else [()] * len(labels)
    rows = features if features is not None else [{}] * len(labels)
    decided = [(label, found) for score, label, found in zip(scores, labels, given) if score is None]
    kept = [n for n, score in enumerate(scores) if score is not None]
    if len(kept) < 2:
        raise ValueError("calibration needs at least two items the decision model scored")
    common, shares = _kind_shares([found for _, found in decided], [label for label, _ in decided], shrinkage)
    xs: list[float] = [float(scores[n]) for n in kept]  # type: ignore[arg-type]
    ys = [labels[n] for n in kept]
    points, logistic = (((), _score_logistic(xs, ys, [rows[n] for n in kept], tuple(inputs))) if scored == "logistic"
                        else (_score_points(xs, ys), ()))
    return Calibration(round(common, 4), points, decision_model,
                       {**(provenance or {}), "decided_items": len(decided), "scored_items": len(kept),
                        **({"shrinkage": shrinkage} if kinds is not None else {})},
                       tuple(sorted((k, round(v, 4)) for k, v in shares.items())), logistic)


def out_of_fold(scores: list[float | None], labels: list[bool], kinds: list[tuple[str, ...]], groups: list[str],
                folds: int = 5, shrinkage: float = SHRINKAGE, scored: str = "isotonic",
                features: list[dict[str, float]] | None = None, inputs: tuple[str, ...] = ()) -> list[float]:
    """Each item's ``P(supported)`` from a calibration fitted without its group's fold: groups (an
    encounter, so no note is on both sides) in sorted order, dealt out in turn to ``folds`` folds.
    What the calibration's figures are on the items it is fitted on, estimated honestly
    (``scored``, ``features``, ``inputs``: as :func:`fit_calibration`'s).

    >>> p = out_of_fold([0.1, 0.9, 0.2, 0.8, None, None], [False, True] * 3, [()] * 4 + [("a/unstated",)] * 2,
    ...                 ["a", "a", "b", "b", "c", "c"], folds=3)
    >>> len(p) == 6 and all(0 < x < 1 for x in p)
    True
    """
    dealt = {g: n % folds for n, g in enumerate(sorted(set(groups)))}
    rows = features if features is not None else [{}] * len(labels)
    found = [0.0] * len(labels)
    for fold in range(folds):
        train = [n for n, g in enumerate(groups) if dealt[g] != fold]
        calibration = fit_calibration([scores[n] for n in train], [labels[n] for n in train], "",
                                      kinds=[kinds[n] for n in train], shrinkage=shrinkage, scored=scored,
                                      features=[rows[n] for n in train] if features is not None else None,
                                      inputs=inputs)
        for n, g in enumerate(groups):
            if dealt[g] == fold:
                found[n] = calibration.probability(scores[n], kinds[n], rows[n])
    return found


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
