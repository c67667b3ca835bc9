"""A judge measured on labelled items (``doclens judge-check``): its verdicts, and how far they
agree with the labels, overall, per side and per group, with bootstrap intervals; two judges
compared on the same items with McNemar's exact test.

Items are asked the way ``doclens score`` asks a judge: the claims that share a premise (and a
side) go in one :class:`~doclens.evaluators.base.ClaimRequest` (direction = the item's side,
``recall`` when it has none). A claim the judge gave no verdict on (a reply that stayed
unparseable, a call that failed for good) keeps its status: it is counted, shown, and counts as
wrong (:mod:`doclens.core.verdict_rates`), never dropped.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from doclens.core.types import STATUS_FAILED, STATUS_OK, STATUS_UNPARSED
from doclens.core.verdict_rates import rates
from doclens.stats.bootstrap import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED
from doclens.stats.classification import (
    balanced_accuracy_interval,
    mcnemar_exact,
    paired_balanced_accuracy_difference,
)


@dataclass(frozen=True)
class ItemVerdict:
    """A judge's answer on one item: ``supported`` is ``None`` when there is no verdict
    (``status`` unparsed or failed)."""

    supported: bool | None
    status: str = STATUS_OK
    explanation: str = ""
    #: the judge's calibrated ``P(supported)``, when it gives one
    probability: float | None = None


def judge_items(evaluator, items: Sequence, progress: bool = False) -> tuple[list[ItemVerdict], float]:
    """``(verdicts in item order, seconds)``: every item judged by ``evaluator`` (module docstring);
    ``progress``: a bar on stderr, one step per premise."""
    from tqdm import tqdm

    from doclens.evaluators.base import ClaimRequest

    requests: dict[tuple[str, str], list[int]] = {}
    for n, item in enumerate(items):
        requests.setdefault((item.premise, item.side or "recall"), []).append(n)
    keys = list(requests)
    started = time.perf_counter()
    with tqdm(total=len(keys), unit="premise", disable=not progress, leave=False) as bar:
        answers = evaluator.judge_claims_many(
            [ClaimRequest(premise, [items[n].claim for n in requests[(premise, side)]], "general", side)
             for premise, side in keys], on_done=(lambda n: bar.update(1)) if progress else None)
    seconds = time.perf_counter() - started
    verdicts: list[ItemVerdict | None] = [None] * len(items)
    for key, judgements in zip(keys, answers):
        for n, judgement in zip(requests[key], judgements):
            supported = None if judgement.status in (STATUS_UNPARSED, STATUS_FAILED) else bool(judgement.entailed)
            verdicts[n] = ItemVerdict(supported, judgement.status, judgement.explanation or "", judgement.probability)
    missing = [n for n, v in enumerate(verdicts) if v is None]
    if missing:  # a judge that returned fewer verdicts than claims: a bug in the judge, said plainly
        raise RuntimeError(f"{type(evaluator).__name__} returned no verdict for {len(missing)} item(s)")
    return [v for v in verdicts if v is not None], seconds


def _figures(pairs, resamples: int, seed: int | None, confidence: float) -> dict:
    interval = balanced_accuracy_interval(pairs, resamples, seed, confidence)
    return {**rates(pairs), "balanced_accuracy_interval": [interval.low, interval.high], "interval_note": interval.note}


def _confusion(items: Sequence, verdicts: Sequence[ItemVerdict]) -> dict:
    table = {label: {"judged_supported": 0, "judged_unsupported": 0, "no_verdict": 0}
             for label in ("supported", "unsupported")}
    for item, verdict in zip(items, verdicts):
        cell = "no_verdict" if verdict.supported is None else (
            "judged_supported" if verdict.supported else "judged_unsupported")
        table["supported" if item.label else "unsupported"][cell] += 1
    return table


def summarise(items: Sequence, verdicts: Sequence[ItemVerdict], *, resamples: int = DEFAULT_RESAMPLES,
              seed: int | None = DEFAULT_SEED, confidence: float = DEFAULT_CONFIDENCE) -> dict:
    """The check's figures: overall, ``per_side`` and ``per_group`` (:func:`~doclens.core.verdict_rates.rates`
    with the balanced accuracy's bootstrap interval), the confusion table, the verdicts missing by
    status, and the items judged wrongly (no-verdict items included)."""
    pairs = [(item.label, verdict.supported) for item, verdict in zip(items, verdicts)]
    sides: dict = defaultdict(list)
    groups: dict = defaultdict(list)
    for item, pair in zip(items, pairs):
        if item.side:
            sides[item.side].append(pair)
        if item.group is not None:
            groups[item.group].append(pair)
    statuses = [v.status for v in verdicts]
    return {
        "items": len(items),
        "overall": _figures(pairs, resamples, seed, confidence),
        "per_side": {side: _figures(p, resamples, seed, confidence) for side, p in sorted(sides.items())},
        "per_group": {group: _figures(p, resamples, seed, confidence) for group, p in sorted(groups.items())},
        "confusion": _confusion(items, verdicts),
        "no_verdict": {STATUS_UNPARSED: statuses.count(STATUS_UNPARSED), STATUS_FAILED: statuses.count(STATUS_FAILED)},
        "wrong": [{"id": item.id, "group": item.group, "side": item.side, "label": item.label, **asdict(verdict),
                   "claim": item.claim}
                  for item, verdict in zip(items, verdicts) if verdict.supported != item.label],
        "calibration": calibration(items, verdicts),
    }


#: the coverages ``judge-check`` gives accuracy at: the most confident verdicts first (issue 46)
COVERAGES = (0.5, 0.8, 0.9, 1.0)


def calibration(items: Sequence, verdicts: Sequence[ItemVerdict]) -> dict | None:
    """How well the judge's probabilities mean what they say, when it gives them for every verdict:
    the expected calibration error and the reliability diagram's bins
    (:func:`~doclens.evaluators.rules.calibration.expected_calibration_error`), and the accuracy of the
    most confident verdicts at each of :data:`COVERAGES` (confidence: the probability of the verdict
    given), beside what the probabilities would read were they perfectly calibrated on these items
    (:func:`if_calibrated`). ``None`` when any
    verdict has no probability."""
    from doclens.evaluators.rules.calibration import accuracy_at_coverage, expected_calibration_error

    if not verdicts or any(v.probability is None or v.supported is None for v in verdicts):
        return None
    probabilities = [float(v.probability) for v in verdicts]  # type: ignore[arg-type]
    labels = [item.label for item in items]
    confidences = [p if v.supported else 1.0 - p for p, v in zip(probabilities, verdicts)]
    correct = [v.supported == label for v, label in zip(verdicts, labels)]
    return {**expected_calibration_error(probabilities, labels),
            "accuracy_at_coverage": accuracy_at_coverage(confidences, correct, COVERAGES),
            "if_calibrated": if_calibrated(probabilities, confidences, COVERAGES[:-1])}


#: Draws of labels behind :func:`if_calibrated`'s reference ECE, and their seed (fixed: the same items
#: read the same reference every time).
REFERENCE_DRAWS, REFERENCE_SEED = 1000, 46


def if_calibrated(probabilities: list[float], confidences: list[float],
                  coverages: tuple[float, ...] = (0.5, 0.8, 0.9), bins: int = 10) -> dict:
    """What these probabilities would read if they were perfectly calibrated, on these many items: the
    accuracy they promise at each coverage (the mean confidence of the most confident ``ceil(c · n)``
    verdicts, ordered as :func:`~doclens.evaluators.rules.calibration.accuracy_at_coverage` orders them)
    and the expected calibration error a calibrated map shows by chance, over the same ``bins`` (labels
    drawn :data:`REFERENCE_DRAWS` times from the probabilities themselves, :data:`REFERENCE_SEED`): its
    median and 90th percentile. A half's ECE near that median is as good as any map can read there;
    accuracy at a coverage above the promised one needs verdicts ranked better, not a new map
    (cards/clinical-rules.md, "Confidence").

    >>> found = if_calibrated([0.9, 0.8, 0.3, 0.1], [0.9, 0.8, 0.7, 0.9], (0.5,))
    >>> found["accuracy_at_coverage"]["0.5"], found["ece"]["median"] > 0
    (0.9, True)
    """
    import numpy as np

    p = np.asarray(probabilities, dtype=float)
    order = sorted(range(len(confidences)), key=lambda k: -confidences[k])
    promised = {f"{c:g}": round(float(np.mean([confidences[k] for k in order[:max(1, math.ceil(c * len(order)))]])), 4)
                for c in coverages} if order else {}
    if not len(p):
        return {"accuracy_at_coverage": promised, "ece": None}
    labels = np.random.default_rng(REFERENCE_SEED).random((REFERENCE_DRAWS, len(p))) < p
    gaps = np.zeros(REFERENCE_DRAWS)
    for b in range(bins):  # the bins of expected_calibration_error, edges included
        inside = ((b / bins <= p) & (p < (b + 1) / bins)) | ((b == bins - 1) & (p == 1.0))
        gaps += np.abs(p[inside].sum() - labels[:, inside].sum(axis=1))
    eces = gaps / len(p)
    return {"accuracy_at_coverage": promised, "ece": {"median": round(float(np.median(eces)), 4),
                                                       "p90": round(float(np.quantile(eces, 0.9)), 4),
                                                       "draws": REFERENCE_DRAWS}}


def compare(items: Sequence, verdicts_a: Sequence[ItemVerdict], verdicts_b: Sequence[ItemVerdict], *,
            resamples: int = DEFAULT_RESAMPLES, seed: int | None = DEFAULT_SEED,
            confidence: float = DEFAULT_CONFIDENCE) -> dict:
    """Judge B against judge A on the same items: McNemar's exact test on the items exactly one
    gets right, and ``B − A`` in balanced accuracy with its paired bootstrap interval."""
    labels = [item.label for item in items]
    right_a = [v.supported == label for v, label in zip(verdicts_a, labels)]
    right_b = [v.supported == label for v, label in zip(verdicts_b, labels)]
    difference = paired_balanced_accuracy_difference(labels, [v.supported for v in verdicts_a],
                                                     [v.supported for v in verdicts_b], resamples, seed, confidence)
    return {"mcnemar": mcnemar_exact(right_a, right_b), "balanced_accuracy_difference_b_minus_a": difference,
            "disagree": sum(a.supported != b.supported for a, b in zip(verdicts_a, verdicts_b))}
