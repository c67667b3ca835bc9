"""Fit clinical-rules' decision model (:mod:`doclens.evaluators.rules.decision`) on labelled items:
what ``doclens judge-fit`` runs, and how the shipped ``decision_model.json`` was made.

Rows:

* **items** (:class:`~doclens.datasets.labelled.LabelledItem`): the labelled claims the model is
  fitted on and measured on (balanced accuracy, per group the labelled and judged supported rate);
* **guard items** (optional): more labelled claims the model is fitted on with a lower weight
  (``guard_weight``), never counted in the balanced accuracy; every ``kind`` of them must keep a
  cross-validated accuracy of at least ``kind_floor`` at the chosen threshold. The shipped model
  uses the perturbed clinician notes of ``benchmarks/judge_quality.py`` (paraphrases that must
  stay supported, swapped sides and numbers that must not) as guard items.

Each row is read by the judge's rules (:meth:`ClinicalRulesJudge.assess`); rows that a decisive
finding already rejects (:data:`~doclens.evaluators.rules.decision.DECISIVE`) are not fitted on,
but they count in every figure. Cross-validation is grouped: each item's ``fold_key`` (the
encounter for the shipped set; the group column for a user's file; else the item) lands in one of
``folds`` folds, assigned in sorted order, so no note is in a fold's training and test rows at once.
With ``alignment`` (``--alignment``) the model also weighs MiniLM's token alignment
(:mod:`doclens.evaluators.rules.alignment`), measured for the rows it fits on. The threshold is
the one of :data:`THRESHOLDS` with the best cross-validated balanced accuracy
(compared at 3 decimals, as printed; the smallest on a tie) among those that keep every guard kind
at ``kind_floor``. The final model is fitted on every row (not decided) at that threshold.

    >>> FitSettings().folds
    10
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from doclens.core.errors import InputError
from doclens.core.verdict_rates import rates
from doclens.evaluators.rules.decision import DECISIVE, DecisionModel, fit

#: The thresholds tried.
THRESHOLDS = tuple(round(0.2 + 0.05 * n, 2) for n in range(9))
#: fewest labelled items to fit on, and fewest of each class among the rows fitted on (below these
#: the cross-validated figures say nothing and the model is noise)
MIN_ITEMS = 30
MIN_PER_CLASS = 5
#: fewest fold groups: two folds would each train on half the notes
MIN_FOLD_GROUPS = 3


@dataclass(frozen=True)
class FitSettings:
    """The settings of a fit (recorded in the model's provenance)."""

    l2: float = 10.0
    guard_weight: float = 0.3
    kind_floor: float = 0.9
    folds: int = 10
    #: also weigh MiniLM's token alignment (``decision.OPTIONAL_FEATURES``; ``--alignment``)
    alignment: bool = False

    def __post_init__(self) -> None:
        if self.l2 < 0 or self.guard_weight <= 0 or not 0 <= self.kind_floor <= 1 or self.folds < 2:
            raise ValueError(f"fit settings out of range: {self}")


@dataclass(frozen=True)
class Row:
    """One item as the fit reads it."""

    label: bool
    group: str | None  # the item's group (figures per group) or, for a guard item, its kind
    fold: str
    guard: bool
    features: dict
    decided: bool  # a decisive finding rejects it: not fitted on, judged not supported
    claim: str = ""
    findings: str = ""

    @property
    def fold_key(self) -> str:
        return self.fold


@dataclass
class FitResult:
    """The fitted model (threshold chosen by cross-validation, provenance filled), the
    cross-validated figures and the items the cross-validated verdict gets wrong."""

    model: DecisionModel
    cross_validated: dict
    errors: list[dict] = field(default_factory=list)


def assess_rows(judge, items: Sequence, guard: bool = False) -> list[Row]:
    """Each item read by ``judge``'s rules (a :class:`ClinicalRulesJudge`; its decision is not used)."""
    rows = []
    for item in items:
        assessment = judge.assess(item.premise, item.claim)
        rows.append(Row(bool(item.label), item.kind if guard else item.group, item.fold_key, guard,
                        assessment.features, any((f.kind, f.conflict) in DECISIVE for f in assessment.findings),
                        item.claim, "; ".join(f.text for f in assessment.findings)))
    return rows


def fit_rows(rows: Sequence[Row], settings: FitSettings) -> DecisionModel:
    """The model fitted on ``rows`` that no decisive finding rejects (threshold 0.5)."""
    chosen = [r for r in rows if not r.decided]
    return fit([r.features for r in chosen], [r.label for r in chosen],
               [settings.guard_weight if r.guard else 1.0 for r in chosen], l2=settings.l2,
               alignment=settings.alignment)


def fold_of(rows: Sequence[Row], folds: int) -> dict[str, int]:
    """Each fold group's fold: groups in sorted order, dealt out in turn."""
    return {g: n % folds for n, g in enumerate(sorted({r.fold for r in rows}))}


def out_of_fold_scores(rows: Sequence[Row], settings: FitSettings) -> list[float | None]:
    """Each row's score from a model fitted without its fold; ``None`` for a decided row."""
    folds = min(settings.folds, len({r.fold for r in rows}))
    assigned = fold_of(rows, folds)
    scores: list[float | None] = [None] * len(rows)
    for fold in range(folds):
        try:
            model = fit_rows([r for r in rows if assigned[r.fold] != fold], settings)
        except ValueError as exc:
            raise InputError(f"cross-validation fold {fold + 1} of {folds} cannot be fitted ({exc}): give more "
                             "items of each class, spread over more groups") from None
        for n, r in enumerate(rows):
            if assigned[r.fold] == fold and not r.decided:
                scores[n] = model.score(r.features)
    return scores


def summarise(rows: Sequence[Row], scores: Sequence[float | None], threshold: float) -> dict:
    """At ``threshold``: the items' figures (:func:`doclens.stats.classification.rates`; decided
    rows count, as not supported), per group the labelled and judged supported rate, and each
    guard kind's accuracy."""
    verdicts = [s is not None and s >= threshold for s in scores]
    measured = [(r.label, v) for r, v in zip(rows, verdicts) if not r.guard]
    by_group: dict = defaultdict(list)
    kinds: dict = defaultdict(list)
    for r, v in zip(rows, verdicts):
        if r.guard:
            kinds[r.group].append((r.label, v))
        elif r.group is not None:
            by_group[r.group].append((r.label, v))
    figures = rates(measured)
    return {"threshold": threshold,
            "items": {"items": figures["n"], **{k: figures[k] for k in (
                "balanced_accuracy", "supported_accuracy", "unsupported_accuracy")},
                "per_group_labelled_vs_judged_supported_rate": {
                    g: [p["labelled_supported_rate"], p["judge_supported_rate"]]
                    for g, p in ((g, rates(pairs)) for g, pairs in sorted(by_group.items()))}},
            "guard_kinds": {str(k): round(sum(lab == v for lab, v in p) / len(p), 3) for k, p in sorted(kinds.items())}}


def choose_threshold(rows: Sequence[Row], scores: Sequence[float | None], settings: FitSettings) -> float:
    """The threshold of :data:`THRESHOLDS` with the best cross-validated balanced accuracy among
    those that keep every guard kind at ``settings.kind_floor`` (module docstring). The model is
    fitted with balanced classes on the rows no decisive finding rejects; those findings reject
    supported claims too, so 0.5 on the rest is not the balanced point of the whole."""
    best = None
    for threshold in THRESHOLDS:
        summary = summarise(rows, scores, threshold)
        if summary["guard_kinds"] and min(summary["guard_kinds"].values()) < settings.kind_floor:
            continue
        accuracy = summary["items"]["balanced_accuracy"]
        if best is None or accuracy > best[0]:
            best = (accuracy, threshold)
    if best is None:
        raise InputError(f"no threshold keeps every guard kind at {settings.kind_floor} or more "
                         "(lower --kind-floor, or check the guard items)")
    return best[1]


def errors_of(rows: Sequence[Row], scores: Sequence[float | None], threshold: float) -> list[dict]:
    """The items (not guard items) the cross-validated verdict gets wrong."""
    return [{"label": r.label, "group": r.group, "claim": r.claim, "score": None if s is None else round(s, 2),
             "findings": r.findings}
            for r, s in zip(rows, scores) if not r.guard and (s is not None and s >= threshold) != r.label]


def check_items(items: Sequence) -> None:
    """Refuse too few labelled items, one class, or too few fold groups (:class:`InputError`);
    ``items``: labelled items (checked before the rules read them) or :class:`Row` s."""
    if len(items) < MIN_ITEMS:
        raise InputError(f"judge-fit needs at least {MIN_ITEMS} labelled items, got {len(items)}")
    for label, name in ((True, "supported"), (False, "unsupported")):
        if not any(bool(item.label) == label for item in items):
            raise InputError(f"judge-fit needs both classes: no item is labelled {name}", field="label")
    groups = len({item.fold_key for item in items})
    if groups < MIN_FOLD_GROUPS:
        raise InputError(f"judge-fit's grouped cross-validation needs at least {MIN_FOLD_GROUPS} groups, got "
                         f"{groups}", field="group")


def check_enough(rows: Sequence[Row]) -> None:
    """Refuse to fit when fewer than :data:`MIN_PER_CLASS` items of a class are left once the
    contradictions have decided theirs (:class:`InputError`)."""
    fitted = [r for r in rows if not r.decided]
    for label, name in ((True, "supported"), (False, "unsupported")):
        count = sum(r.label == label for r in fitted)
        if count < MIN_PER_CLASS:
            raise InputError(f"judge-fit needs at least {MIN_PER_CLASS} {name} items that no contradiction already "
                             f"decides, got {count}", field="label")


def fit_decision_model(rows: Sequence[Row], settings: FitSettings = FitSettings(), *, sources: dict | None = None,
                       command: str = "") -> FitResult:
    """Cross-validate, choose the threshold, fit on every row and record the provenance
    (module docstring). ``rows`` from :func:`assess_rows`."""
    check_items([r for r in rows if not r.guard])
    check_enough(rows)
    scores = out_of_fold_scores(rows, settings)
    threshold = choose_threshold(rows, scores, settings)
    cross_validated = summarise(rows, scores, threshold)
    fitted = [r for r in rows if not r.decided]
    provenance = {
        "fitted_on": {"items": sum(not r.guard for r in fitted), "guard_items": sum(r.guard for r in fitted),
                      "left_to_decisive_findings": len(rows) - len(fitted)},
        "sources": sources or {}, "command": command, **asdict(settings), "cross_validated": cross_validated}
    model = fit_rows(rows, settings)
    model = DecisionModel(model.weights, model.bias, threshold, provenance)
    return FitResult(model, cross_validated, errors_of(rows, scores, threshold))
