"""How ``clinical-rules`` turns what its rules found into a verdict (v4): a logistic model.

The rules (:mod:`doclens.evaluators.rules.clinical_rules`) read a claim against a note and return
*findings* — words the note does not use, a number or side it does not state, a word it gives with
another assertion status — and a few measurements of how much of the claim the note holds. Real
system notes reword: a claim can be fully supported while some of its words are missing, and
unsupported while every word occurs somewhere. So v4 does not require every check to pass:

* a finding that **contradicts** the note — another number or side for the same concept, a drug the
  note does not name, an opposite it states ("abnormal" for "normal"), another assertion status on
  the aligned concept, numbers and sides no one sentence holds together — rejects the claim
  outright (:data:`DECISIVE`);
* otherwise the claim is supported when a logistic model over :data:`FEATURES` gives
  ``P(supported) >= threshold``:

      P = 1 / (1 + exp(-(bias + Σ weight_f · feature_f)))

The weights are fitted by :mod:`doclens.evaluators.rules.fit` (``doclens judge-fit``;
``benchmarks/fit_decision.py`` runs the same fit) on the development halves of two labelled sets —
the real-output set (claims of real system notes, labelled by reading,
``doclens/datasets/real_outputs``) and, as guard items, the perturbed clinician notes of
``benchmarks/judge_quality.py`` — and shipped as ``decision_model.json`` with where they came from;
never on a held-out half. A model fitted on a user's own items loads with
``--decision-model PATH`` (:func:`load_model`). A fit is a pure function of its rows
(:func:`fit`: L2-regularised logistic regression, classes weighted to balance, solved by L-BFGS),
so the same rows give the same weights.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from doclens.evaluators.rules.alignment import FEATURES as ALIGNMENT_FEATURES
from doclens.evaluators.rules.findings import FindingKind

#: What the model reads, as :meth:`ClinicalRulesJudge.assess` measures it. Shares are in [0, 1],
#: flags 0 or 1, counts as they are.
FEATURES = (
    "content_words",       # the claim's content words (its section key left out)
    "missing_words",       # of those, how many the note does not use (lemma, stem or abbreviation)
    "missing_share",       # missing_words / content_words
    "soft_coverage",       # found words count 1, a missing one its MiniLM cosine with the note's closest word
    "softest_word",        # the lowest of those cosines (1 when nothing is missing)
    "one_sentence_share",  # the largest share of the claim's words that one note sentence holds
    "weakest_part",        # the lowest share of words found among the claim's parts (cut at , ; and)
    "rules_pass",          # every check passed (v3's verdict)
    "forgiven",            # v3's rewording tolerance forgave the missing words
    "polar_missing",       # a polar word or qualifier (normal, mild, new …) the note does not say
    "claim_negated",       # the claim negates something
    "claim_has_number",    # the claim states a number
    # v7: what no longer decides, weighed instead
    "status_elsewhere",    # a claim word the note gives only with another status, where it speaks of something else
    "word_swapped",        # a verb or modifier of the claim the aligned note sentence replaces by a related word
)
#: Optional (``doclens judge-fit --alignment``): MiniLM's token alignment of the claim with its
#: closest note sentences (:mod:`doclens.evaluators.rules.alignment`). Measured, it does not improve
#: the shipped model (``cards/clinical-rules.md``), so the shipped model does not read it.
OPTIONAL_FEATURES = ALIGNMENT_FEATURES

#: Findings that reject a claim whatever the model says: (kind, conflict). **Every contradiction**
#: (``conflict=True``, of any kind) decides — v8's invariant (issue 46): a finding that names what the
#: note states otherwise is never weighed away, so a supported verdict's explanation never names a
#: contradiction (:data:`~doclens.evaluators.rules.findings.CONTRADICTION_PHRASING`, which only a
#: contradiction may use); and these absences decide too: a drug the note does not name, numbers and
#: sides no sentence holds together, a claim with nothing to check, a number or side the note does not
#: state, a site it never names, a stop or a dose change it never states; v8: a finding the claim denies
#: that the note gives and never denies, a frequency the note never gives the drug; v11: what a claim adds
#: that the note never gives (a reason, purpose or basis; "other" things: rules/additions.py); v12: the
#: claim's head clinical concept the note never names, nor an equivalent (rules/concepts.py).
DECISIVE = frozenset({(kind, True) for kind in FindingKind} | {
    (FindingKind.DRUG, False), (FindingKind.TOGETHER, False), (FindingKind.EMPTY, False), (FindingKind.NUMBER, False),
    (FindingKind.SIDE, False), (FindingKind.SITE, False), (FindingKind.DIRECTION, False), (FindingKind.DENIAL, False),
    (FindingKind.FREQUENCY, False), (FindingKind.ADDITION, False), (FindingKind.CONCEPT, False)})

MODEL_FILE = "decision_model.json"


@dataclass(frozen=True)
class DecisionModel:
    """A fitted logistic model over :data:`FEATURES`; ``provenance`` says what it was fitted on."""

    weights: dict[str, float]
    bias: float
    threshold: float = 0.5
    provenance: dict = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        unknown = set(self.weights) - set(FEATURES) - set(OPTIONAL_FEATURES)
        if unknown:
            raise ValueError(f"decision model: unknown features {sorted(unknown)}")

    def score(self, features: dict[str, float]) -> float:
        """``P(supported)`` for one claim's features (a missing feature reads as 0)."""
        z = self.bias + sum(w * features.get(name, 0.0) for name, w in self.weights.items())
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))

    @property
    def reads_alignment(self) -> bool:
        """Whether the model weighs the token alignment (:mod:`doclens.evaluators.rules.alignment`)."""
        return any(self.weights.get(name, 0.0) for name in ALIGNMENT_FEATURES)

    @property
    def fingerprint(self) -> str:
        """Eight hex digits of the weights, bias and threshold (part of the judge's signature)."""
        text = json.dumps([sorted(self.weights.items()), self.bias, self.threshold])
        return hashlib.sha256(text.encode()).hexdigest()[:8]

    def to_json(self) -> dict:
        names = [*FEATURES, *(f for f in OPTIONAL_FEATURES if f in self.weights)]
        return {"features": names, "weights": {f: self.weights.get(f, 0.0) for f in names},
                "bias": self.bias, "threshold": self.threshold, "provenance": self.provenance}

    @classmethod
    def from_json(cls, data: dict) -> DecisionModel:
        """The model :meth:`to_json` wrote; ``ValueError`` naming what is missing or not a number."""
        try:
            weights = {str(k): float(v) for k, v in data["weights"].items()}
            model = cls(weights, float(data["bias"]), float(data.get("threshold", 0.5)),
                        dict(data.get("provenance") or {}))
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise ValueError(f"decision model: not a model written by DecisionModel.to_json ({type(exc).__name__}: {exc})"
                             ) from exc
        if not all(math.isfinite(v) for v in [*weights.values(), model.bias]) or not 0 < model.threshold < 1:
            raise ValueError("decision model: weights and bias must be finite and the threshold in (0, 1)")
        return model


def load_model(path: str | os.PathLike | None = None) -> DecisionModel:
    """The model in ``path`` (a file ``doclens judge-fit`` wrote), or the one shipped with the
    package (``doclens/evaluators/rules/decision_model.json``); a missing or damaged file is a
    :class:`~doclens.core.errors.ConfigurationError` naming it."""
    from doclens.core.errors import ConfigurationError

    source = resources.files("doclens.evaluators.rules").joinpath(MODEL_FILE) if path is None else Path(path)
    try:
        return DecisionModel.from_json(json.loads(source.read_text(encoding="utf-8")))
    except (OSError, ValueError) as exc:  # json's errors are ValueErrors
        fix = ("reinstall DocLens or pass --evaluator-arg decision=rules" if path is None
               else "give a file written by 'doclens judge-fit'")
        raise ConfigurationError(f"clinical-rules' decision model {source} cannot be read: {exc}; {fix}") from exc


def fit(rows: list[dict[str, float]], labels: list[bool], weights: list[float] | None = None, *,
        l2: float = 1.0, threshold: float = 0.5, provenance: dict | None = None,
        alignment: bool = False) -> DecisionModel:
    """Fit :class:`DecisionModel` on ``rows`` (features) and ``labels`` (supported or not), over
    :data:`FEATURES` and, with ``alignment``, :data:`OPTIONAL_FEATURES` too.

    Features are standardised for the fit (so ``l2`` weighs them alike) and the weights returned on
    their raw scale. Each class's total weight is made equal (``class_weight='balanced'``), then
    multiplied by ``weights`` (per row, e.g. to count one labelled set less). The loss is the
    weighted mean log-loss plus ``l2 / (2 n)`` times the squared weights (not the bias).

    >>> model = fit([{"missing_share": 0.0}, {"missing_share": 1.0}] * 5, [True, False] * 5)
    >>> model.score({"missing_share": 0.0}) > 0.5 > model.score({"missing_share": 1.0})
    True
    """
    import numpy as np
    from scipy.optimize import minimize

    if not rows or len(rows) != len(labels):
        raise ValueError("fit needs as many labels as rows, and at least one")
    names = (*FEATURES, *OPTIONAL_FEATURES) if alignment else FEATURES
    x = np.array([[row.get(f, 0.0) for f in names] for row in rows], dtype=float)
    y = np.array(labels, dtype=float)
    if y.min() == y.max():
        raise ValueError("fit needs both supported and unsupported rows")
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    xs = (x - mean) / scale
    w = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=float)
    for value in (0.0, 1.0):  # balance the classes
        w[y == value] *= len(y) / (2.0 * max(w[y == value].sum(), 1e-12))
    n = len(y)

    def loss(theta):
        z = xs @ theta[1:] + theta[0]
        p = 1.0 / (1.0 + np.exp(-z))
        value = -(w * (y * np.log(p + 1e-12) + (1 - y) * np.log(1 - p + 1e-12))).sum() / n
        value += l2 / (2 * n) * (theta[1:] ** 2).sum()
        grad = np.concatenate([[(w * (p - y)).sum()], xs.T @ (w * (p - y))]) / n
        grad[1:] += l2 / n * theta[1:]
        return value, grad

    theta = minimize(loss, np.zeros(len(names) + 1), jac=True, method="L-BFGS-B").x
    raw = theta[1:] / scale
    bias = float(theta[0] - (raw * mean).sum())
    return DecisionModel({f: round(float(v), 6) for f, v in zip(names, raw)}, round(bias, 6), threshold,
                         provenance or {})
