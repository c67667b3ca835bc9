"""Agreement of DocLens scores with human judgements (the paper's Table 2 and Figure 7).

Two CSV formats (UTF-8, a header row, comma-separated):

**Per-instance human scores** — one row per instance::

    id,completeness,conciseness
    D2N088,4,5
    D2N089,2.5,

``id`` names a scored instance; the score column (``--human-column``) holds a number. An empty
cell means "not rated": the row is left out and counted. Any other non-number is an error that
names the line and column.

**Pairwise preferences** — one row per human comparison of two systems on one instance::

    id,system_a,system_b,preferred
    D2N088,gpt4,mistral,gpt4
    D2N089,gpt4,mistral,tie

``system_a`` / ``system_b`` name systems whose scores files are given (``NAME=scores.json``);
``preferred`` is one of the two names or ``tie``.

Statistics: Spearman's ρ is Pearson's r on average ranks (ties get the mean of their ranks);
Kendall's τ is τ-b, ``(C − D) / sqrt((n₀ − n₁)(n₀ − n₂))`` with ``n₀ = n(n−1)/2`` and
``n₁``, ``n₂`` the tied pairs in each variable — computed by ``scipy.stats.spearmanr`` and
``scipy.stats.kendalltau`` (``variant="b"``). Where scipy would return NaN (fewer than two pairs,
or a constant variable) these return ``None``.

**A minimum n.** Below :data:`MIN_PAIRS` (10) paired instances, :func:`instance_agreement`
reports no correlation (``None``) and says "not informative (n=2 < 10)": two points always give
ρ = ±1, and below ten pairs only near-perfect correlations are distinguishable from none (the
two-sided 5 % critical value of Spearman's ρ is 1.0 at n = 5 and still 0.65 at n = 10). Likewise
:func:`pairwise_agreement` gives no agreement share from fewer than 10 judged comparisons.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from doclens.core.errors import InputError
from doclens.inputs.csv_rows import open_csv

#: fewest pairs (instances, or judged comparisons) for a correlation or an agreement share
MIN_PAIRS = 10


def not_informative(n: int, minimum: int = MIN_PAIRS) -> str:
    return f"not informative (n={n} < {minimum})"


def _paired(x: Sequence[float], y: Sequence[float]) -> tuple[np.ndarray, np.ndarray] | None:
    """The two variables as arrays, or ``None`` where a rank correlation is undefined (fewer than
    2 pairs, or a constant variable: scipy would warn and return NaN)."""
    if len(x) != len(y):
        raise ValueError(f"x and y differ in length ({len(x)} and {len(y)})")
    xs, ys = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if len(xs) < 2 or np.all(xs == xs[0]) or np.all(ys == ys[0]):
        return None
    return xs, ys


def _statistic(value: float) -> float | None:
    value = float(value)
    return None if math.isnan(value) else max(-1.0, min(1.0, value))


def spearman_rho(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's rank correlation (``scipy.stats.spearmanr``: Pearson's r on average ranks);
    ``None`` with fewer than 2 pairs or a constant variable.

    >>> round(spearman_rho([1, 2, 3, 4], [1, 3, 2, 4]), 3)
    0.8
    >>> spearman_rho([1, 2, 3], [5, 5, 5]) is None
    True
    """
    from scipy import stats  # imported on use: only the agreement statistics need scipy

    paired = _paired(x, y)
    return None if paired is None else _statistic(stats.spearmanr(*paired).statistic)


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Kendall's τ-b (``scipy.stats.kendalltau``, variant ``"b"``, O(n log n));
    ``None`` with fewer than 2 pairs or a constant variable.

    >>> round(kendall_tau_b([1, 2, 3, 4], [1, 3, 2, 4]), 3)
    0.667
    """
    from scipy import stats

    paired = _paired(x, y)
    return None if paired is None else _statistic(stats.kendalltau(*paired, variant="b").statistic)


def read_human_scores(path: str, column: str, id_column: str = "id") -> tuple[dict[str, float], int]:
    """``({id: score}, rows left empty)`` from a per-instance CSV (module docstring). Raises
    :class:`InputError` naming the line for a non-number, a non-finite number or a repeated id."""
    handle, reader = open_csv(path, [id_column, column])
    scores: dict[str, float] = {}
    lines: dict[str, int] = {}
    empty = 0
    with handle:
        for row in reader:
            line = reader.line_num
            ident, cell = (row.get(id_column) or "").strip(), (row.get(column) or "").strip()
            if not ident:
                raise InputError(f"{path} line {line}: empty {id_column!r}", field=id_column, line=line)
            if ident in lines:
                raise InputError(f"{path} line {line}: id {ident!r} repeats line {lines[ident]}", field=id_column,
                                 line=line)
            lines[ident] = line
            if not cell:
                empty += 1
                continue
            try:
                value = float(cell)
            except ValueError:
                raise InputError(f"{path} line {line}: column {column!r} is not a number", field=column,
                                 line=line) from None
            if not math.isfinite(value):
                raise InputError(f"{path} line {line}: column {column!r} is not finite", field=column, line=line)
            scores[ident] = value
    return scores, empty


@dataclass
class InstanceAgreement:
    """Correlation of one DocLens metric with one human score column, over instances."""

    metric: str
    human_column: str
    n: int  # instances with both a DocLens score and a human score
    spearman_rho: float | None
    kendall_tau_b: float | None
    human_unrated: int  # CSV rows with an empty score cell
    metric_undefined: int  # rated instances whose DocLens metric is undefined (nothing to score)
    unrated_instances: int  # scored instances the CSV does not rate
    note: str = ""  # "not informative (n=… < …)" when n is below the minimum: no correlation given

    def to_dict(self) -> dict:
        return {**asdict(self), "informative": not self.note}


def _unknown_ids(ids, known, what: str, path: str) -> None:
    unknown = [i for i in ids if i not in known]
    if unknown:
        shown = ", ".join(repr(i) for i in unknown[:10]) + (f" … and {len(unknown) - 10} more"
                                                             if len(unknown) > 10 else "")
        raise InputError(f"{path}: {len(unknown)} id(s) not in {what}: {shown}", field="id")


def instance_agreement(metric_scores: dict[str, float | None], human_scores: dict[str, float],
                       metric: str, human_column: str, human_unrated: int = 0,
                       source: str = "human scores", min_pairs: int = MIN_PAIRS) -> InstanceAgreement:
    """Spearman ρ and Kendall τ-b between ``metric_scores`` (``{id: score or None}``, per
    instance) and ``human_scores`` over the ids both have. A human-rated id unknown to
    ``metric_scores`` is an error (a wrong file is likelier than a partial one); instances whose
    metric is ``None`` are left out and counted. Below ``min_pairs`` pairs no correlation is
    given (``note`` says so; module docstring)."""
    _unknown_ids(human_scores, metric_scores, "the scores file", source)
    paired = [(score, human_scores[i]) for i in human_scores if (score := metric_scores[i]) is not None]
    xs = [a for a, _ in paired]
    ys = [b for _, b in paired]
    enough = len(paired) >= min_pairs
    return InstanceAgreement(metric=metric, human_column=human_column, n=len(paired),
                             spearman_rho=spearman_rho(xs, ys) if enough else None,
                             kendall_tau_b=kendall_tau_b(xs, ys) if enough else None,
                             note="" if enough else not_informative(len(paired), min_pairs),
                             human_unrated=human_unrated,
                             metric_undefined=sum(metric_scores[i] is None for i in human_scores),
                             unrated_instances=sum(i not in human_scores for i in metric_scores))


@dataclass(frozen=True)
class Preference:
    id: str
    system_a: str
    system_b: str
    preferred: str  # system_a, system_b or "tie"
    line: int


def read_preferences(path: str) -> list[Preference]:
    """Rows of a pairwise-preference CSV (module docstring); :class:`InputError` names the line of
    a row whose ``preferred`` is neither system nor ``tie`` or whose two systems are the same."""
    handle, reader = open_csv(path, ["id", "system_a", "system_b", "preferred"])
    rows = []
    with handle:
        for row in reader:
            line = reader.line_num
            ident, a, b, preferred = (str(row.get(k) or "").strip() for k in ("id", "system_a", "system_b",
                                                                                 "preferred"))
            if not ident or not a or not b:
                raise InputError(f"{path} line {line}: id, system_a and system_b must all be given", line=line)
            if a == b:
                raise InputError(f"{path} line {line}: system_a and system_b are both {a!r}", field="system_b",
                                 line=line)
            if preferred not in (a, b, "tie"):
                raise InputError(f"{path} line {line}: preferred must be {a!r}, {b!r} or 'tie', got {preferred!r}",
                                 field="preferred", line=line)
            rows.append(Preference(ident, a, b, preferred, line))
    return rows


@dataclass
class PairwiseAgreement:
    """How often a DocLens metric prefers the system the human preferred.

    ``agreement = agree / (agree + disagree + metric_ties)`` over comparisons where the human
    preferred one system and both systems have the metric on that instance: a metric tie is
    counted as not agreeing. Human ties (``human_ties``) and comparisons where a system's metric
    is undefined (``undefined``) are left out and counted.
    """

    metric: str
    comparisons: int
    agree: int
    disagree: int
    metric_ties: int
    human_ties: int
    undefined: int
    agreement: float | None
    note: str = ""  # "not informative (n=… < …)" below the minimum of judged comparisons

    def to_dict(self) -> dict:
        return {**asdict(self), "informative": not self.note}


def pairwise_agreement(system_scores: dict[str, dict[str, float | None]], preferences: Sequence[Preference],
                       metric: str, source: str = "preferences", min_pairs: int = MIN_PAIRS) -> PairwiseAgreement:
    """See :class:`PairwiseAgreement`. ``system_scores``: ``{system: {id: metric or None}}``.
    Raises :class:`InputError` naming the line of a row with an unknown system or instance."""
    agree = disagree = metric_ties = human_ties = undefined = 0
    for pref in preferences:
        for system in (pref.system_a, pref.system_b):
            if system not in system_scores:
                raise InputError(f"{source} line {pref.line}: no scores file for system {system!r} (given: "
                                 f"{', '.join(sorted(system_scores))})", field="system_a", line=pref.line)
            if pref.id not in system_scores[system]:
                raise InputError(f"{source} line {pref.line}: instance {pref.id!r} is not in the scores of "
                                 f"{system!r}", field="id", line=pref.line)
        if pref.preferred == "tie":
            human_ties += 1
            continue
        score_a, score_b = system_scores[pref.system_a][pref.id], system_scores[pref.system_b][pref.id]
        if score_a is None or score_b is None:
            undefined += 1
            continue
        if score_a == score_b:
            metric_ties += 1
            continue
        metric_prefers = pref.system_a if score_a > score_b else pref.system_b
        if metric_prefers == pref.preferred:
            agree += 1
        else:
            disagree += 1
    judged = agree + disagree + metric_ties
    enough = judged >= min_pairs
    return PairwiseAgreement(metric=metric, comparisons=len(preferences), agree=agree, disagree=disagree,
                             metric_ties=metric_ties, human_ties=human_ties, undefined=undefined,
                             agreement=agree / judged if judged and enough else None,
                             note="" if enough else not_informative(judged, min_pairs))


def report_metric_scores(report, metric: str) -> dict[str, float | None]:
    """``{id: per-instance score}`` of one metric (``claim_recall`` …) from a :class:`doclens.Report`."""
    from doclens.families import DOCLENS_METRICS

    if metric not in DOCLENS_METRICS:
        raise InputError(f"unknown metric {metric!r}; choose one of {', '.join(DOCLENS_METRICS)}", field="metric")
    return {r.id: r.scores.get(metric) for r in report.instances}
