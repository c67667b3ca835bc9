"""Ways of fitting clinical-rules' confidence map, measured against the shipped one (round 14, issue 46
point 4); print a table. None of them is shipped: cards/clinical-rules.md, "Confidence", gives the
figures and why.

Each variant fits ``P(supported)`` from labelled verdicts (decision score, or the kinds of the finding
that decided) on some of the halves the map may be fitted on (``dev``, ``held-out``, ``calibration``),
and is measured **out of fold** there (five folds of encounters; each encounter's probabilities from
a map fitted without it) by half: accuracy of the most confident 50 / 80 / 90 % of verdicts, expected
calibration error and Brier score. A variant fitted on the calibration half alone is measured on
``dev`` and ``held-out`` as they are (it never saw them). ``--unread`` also applies each variant, fitted
on all its halves, to the unread halves ``fresh`` and ``fresh-2`` and prints their aggregate figures
only (never an item); the ``sealed`` half is never read. Choosing among variants by those figures
would be tuning on the unread halves: choose by the out-of-fold figures, then read the unread ones for
the few chosen (``--only``).

The variants (what the issue's point 4 suggested, and what the round-13 map left open):

* ``shipped``: the shipped way (``benchmarks/fit_calibration.py``), on the calibration half;
* ``pooled``: the same on dev + held-out + calibration ("calibrated on the dev halves");
* ``pooled-family``: pooled, a decisive kind's share shrunk towards its family's (every
  ``…/contradiction``, every ``…/unstated``) and the family's towards all decided claims';
* ``pooled-shift``: pooled, then one shift of the log-odds fitted on the calibration half (shape from
  all, level from notes no rule was written from);
* ``pooled-family-platt``: pooled-family, then a logistic map of its log-odds fitted on the
  calibration half;
* ``pooled-family-side``: pooled-family, a scored claim's logistic map fitted apart on each side of
  the decision threshold;
* ``pooled-family-isotonic``: pooled-family, isotonic steps on the score;
* ``kinds-pooled``: decided claims ranked by pooled family-shrunk kinds, their level shifted to the
  calibration half's; scored claims the shipped logistic map (calibration half);
* ``kinds-pooled-scored-pooled``: the same, the logistic map fitted on all three halves;
* ``family``: the shipped way with family shrinkage, calibration half;
* ``family-side``: family, a logistic map on each side of the threshold, calibration half;
* ``several``: the shipped way, a claim that several decisive kinds decided given the share of such
  claims instead of its kinds' lowest.

    python -m benchmarks.calibration_variants                      # out of fold, fittable halves
    python -m benchmarks.calibration_variants --unread --only shipped,family
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from doclens.evaluators.rules.calibration import (  # noqa: E402
    SHRINKAGE,
    _log_odds,
    _score_logistic,
    accuracy_at_coverage,
    expected_calibration_error,
    fit_calibration,
)

POOL = ("dev", "held-out", "calibration")
UNREAD = ("fresh", "fresh-2")
#: the decision model's threshold (lr-9179f7bc; the same since lr-7504c10e), where a scored verdict turns supported
THRESHOLD = 0.30
Fitter = Callable[[list[dict]], Callable[[dict], float]]


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


def _logit(p: float) -> float:
    return _log_odds(p)


def _logistic(rows: list[dict]) -> Callable[[float], float]:
    terms = dict(_score_logistic([r["score"] for r in rows], [r["label"] for r in rows], [{}] * len(rows), ()))
    return lambda score: _sigmoid(terms["intercept"] + terms["log_odds"] * _log_odds(score))


def family_shares(kinds: list[tuple[str, ...]], labels: list[bool], shrinkage: float = SHRINKAGE) -> dict[str, float]:
    """``P(supported)`` of a decided claim per decisive kind, shrunk towards its family's share (``…/contradiction``
    or ``…/unstated``), itself shrunk towards the share over all decided claims ((hits + 1) / (items + 2));
    the key ``""`` holds that common share and each family's under its own name.

    >>> found = family_shares([("a/unstated",), ("b/unstated",), ("c/contradiction",)] * 2, [False, False, True] * 2, 2)
    >>> found["c/contradiction"] > found["contradiction"] > found[""] > found["unstated"] > found["a/unstated"]
    True
    """
    common = (sum(labels) + 1) / (len(labels) + 2)
    counts: dict[str, list[int]] = {}
    for found, label in zip(kinds, labels):
        for key in {k for kind in found for k in (kind, kind.split("/")[-1])}:
            counts.setdefault(key, [0, 0])
            counts[key][0] += 1
            counts[key][1] += bool(label)
    shares = {"": common}
    shares.update({k: (h + shrinkage * common) / (n + shrinkage) for k, (n, h) in counts.items() if "/" not in k})
    shares.update({k: (h + shrinkage * shares[k.split("/")[-1]]) / (n + shrinkage) for k, (n, h) in counts.items()
                   if "/" in k})
    return shares


def _decided_by(shares: dict[str, float]) -> Callable[[dict], float]:
    return lambda r: min((shares.get(k, shares.get(k.split("/")[-1], shares[""])) for k in r["kinds"]), default=shares[""])


def shipped_way(rows: list[dict]) -> Callable[[dict], float]:
    found = fit_calibration([r["score"] for r in rows], [r["label"] for r in rows], "", kinds=[r["kinds"] for r in rows],
                            scored="logistic")
    return lambda r: found.probability(r["score"], r["kinds"])


def family_way(rows: list[dict], scored: str = "logistic") -> Callable[[dict], float]:
    decided = [r for r in rows if r["score"] is None]
    by_kind = _decided_by(family_shares([r["kinds"] for r in decided], [r["label"] for r in decided]))
    kept = [r for r in rows if r["score"] is not None]
    if scored == "isotonic":
        steps = fit_calibration([r["score"] for r in kept], [r["label"] for r in kept], "")
        weigh = steps.probability
    elif scored == "side":
        above = _logistic([r for r in kept if r["score"] >= THRESHOLD])
        below = _logistic([r for r in kept if r["score"] < THRESHOLD])
        weigh = lambda s: above(s) if s >= THRESHOLD else below(s)  # noqa: E731
    else:
        weigh = _logistic(kept)
    return lambda r: by_kind(r) if r["score"] is None else weigh(r["score"])


def _shift(values: list[float], labels: list[bool]) -> float:
    """The one shift of the log-odds ``values`` that makes their mean probability the labels' share (Newton)."""
    shift = 0.0
    for _ in range(50):
        p = [_sigmoid(v + shift) for v in values]
        slope = sum(q * (1 - q) for q in p)
        shift -= (sum(p) - sum(labels)) / max(slope, 1e-9)
    return shift


def on_calibration(inner: Fitter, how: str) -> Fitter:
    """``inner`` fitted on all its rows, its log-odds then shifted (``how="shift"``) or mapped by a logistic
    map (``"platt"``) fitted on the calibration half's rows among them."""
    def fit(rows: list[dict]) -> Callable[[dict], float]:
        found = inner(rows)
        calibration = [r for r in rows if r["half"] == "calibration"]
        values = [_logit(found(r)) for r in calibration]
        if how == "shift":
            shift = _shift(values, [r["label"] for r in calibration])
            return lambda r: _sigmoid(_logit(found(r)) + shift)
        platt = _logistic([{"score": _sigmoid(v), "label": r["label"]} for v, r in zip(values, calibration)])
        return lambda r: platt(_sigmoid(_logit(found(r))))
    return fit


def kinds_pooled(scored_on: tuple[str, ...]) -> Fitter:
    """Decided claims ranked by pooled family-shrunk kinds, shifted to the calibration half's level; scored claims
    a logistic map fitted on ``scored_on``."""
    def fit(rows: list[dict]) -> Callable[[dict], float]:
        decided = [r for r in rows if r["score"] is None]
        by_kind = _decided_by(family_shares([r["kinds"] for r in decided], [r["label"] for r in decided]))
        calibration = [r for r in decided if r["half"] == "calibration"]
        shift = _shift([_logit(by_kind(r)) for r in calibration], [r["label"] for r in calibration])
        weigh = _logistic([r for r in rows if r["score"] is not None and r["half"] in scored_on])
        return lambda r: _sigmoid(_logit(by_kind(r)) + shift) if r["score"] is None else weigh(r["score"])
    return fit


def several(inner: Fitter) -> Fitter:
    """``inner`` with a claim that several decisive kinds decided read as one kind of its own."""
    def one(r: dict) -> dict:
        return {**r, "kinds": ("several/decided",)} if r["score"] is None and len(r["kinds"]) > 1 else r

    def fit(rows: list[dict]) -> Callable[[dict], float]:
        found = inner([one(r) for r in rows])
        return lambda r: found(one(r))
    return fit


#: name: (the halves it is fitted on, how)
VARIANTS: dict[str, tuple[tuple[str, ...], Fitter]] = {
    "shipped": (("calibration",), shipped_way),
    "pooled": (POOL, shipped_way),
    "pooled-family": (POOL, family_way),
    "pooled-shift": (POOL, on_calibration(shipped_way, "shift")),
    "pooled-family-platt": (POOL, on_calibration(family_way, "platt")),
    "pooled-family-side": (POOL, lambda rows: family_way(rows, "side")),
    "pooled-family-isotonic": (POOL, lambda rows: family_way(rows, "isotonic")),
    "kinds-pooled": (POOL, kinds_pooled(("calibration",))),
    "kinds-pooled-scored-pooled": (POOL, kinds_pooled(POOL)),
    "family": (("calibration",), family_way),
    "family-side": (("calibration",), lambda rows: family_way(rows, "side")),
    "several": (("calibration",), several(shipped_way)),
}


def figures(rows: list[dict], probabilities: list[float]) -> dict:
    """Accuracy at 50 / 80 / 90 % coverage (the most confident verdicts first), ECE and Brier score."""
    confidences = [p if r["supported"] else 1.0 - p for p, r in zip(probabilities, rows)]
    at = accuracy_at_coverage(confidences, [r["supported"] == r["label"] for r in rows], (0.5, 0.8, 0.9))
    return {"items": len(rows), **{f"acc@{c}": at[c]["accuracy"] for c in ("0.5", "0.8", "0.9")},
            "ece": expected_calibration_error(probabilities, [r["label"] for r in rows])["ece"],
            "brier": round(sum((p - r["label"]) ** 2 for p, r in zip(probabilities, rows)) / len(rows), 4)}


def out_of_fold(fit: Fitter, rows: list[dict], folds: int = 5) -> list[float]:
    """Each row's probability from ``fit`` on the rows of the other folds of encounters (``group``)."""
    dealt = {g: n % folds for n, g in enumerate(sorted({r["group"] for r in rows}))}
    found = [0.0] * len(rows)
    for fold in range(folds):
        fitted = fit([r for r in rows if dealt[r["group"]] != fold])
        for n, r in enumerate(rows):
            if dealt[r["group"]] == fold:
                found[n] = fitted(r)
    return found


def measure(name: str, rows: list[dict], unread: bool) -> list[tuple[str, str, dict]]:
    """A variant's figures: out of fold on each half it is fitted on and over them all, as they are on a
    read half it never saw, and (``unread``) on the unread halves, each and together."""
    halves, fit = VARIANTS[name]
    fitted_on = [r for r in rows if r["half"] in halves]
    p = out_of_fold(fit, fitted_on)
    found = [("out of fold", h, figures([r for r in fitted_on if r["half"] == h],
                                        [q for q, r in zip(p, fitted_on) if r["half"] == h])) for h in halves]
    found += [("out of fold", "all", figures(fitted_on, p))] if len(halves) > 1 else []
    whole = fit(fitted_on)
    for half in [h for h in POOL if h not in halves] + (list(UNREAD) + ["fresh + fresh-2"] if unread else []):
        chosen = [r for r in rows if r["half"] in half.split(" + ")]
        found.append(("not fitted on", half, figures(chosen, [whole(r) for r in chosen])))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="", help=f"comma-separated variants (default all: {', '.join(VARIANTS)})")
    parser.add_argument("--unread", action="store_true", help="also the unread halves' aggregate figures")
    parser.add_argument("--aci-bench-dir", default=None, help="ACI-BENCH system outputs (default ../shared/data/…)")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.only.split(",") if n.strip()] or list(VARIANTS)
    if set(names) - set(VARIANTS):
        parser.error(f"--only takes variants from {', '.join(VARIANTS)}, got {args.only!r}")
    from benchmarks.fit_calibration import judged_rows

    rows = judged_rows(args.aci_bench_dir, POOL + (UNREAD if args.unread else ()))
    print("| variant | measured | half | items | acc@50 | acc@80 | acc@90 | ECE | Brier |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name in names:
        for how, half, f in measure(name, rows, args.unread):
            print(f"| {name} | {how} | {half} | {f['items']} | {f['acc@0.5']:.3f} | {f['acc@0.8']:.3f} | "
                  f"{f['acc@0.9']:.3f} | {f['ece']:.3f} | {f['brier']:.4f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
