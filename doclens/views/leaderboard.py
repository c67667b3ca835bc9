"""Leaderboards: scores files grouped by signature, ranked with bootstrap intervals.

Results are only ranked against results with the *same* signature (:mod:`doclens.scoring.signature`): one
table per signature, never one table across signatures. Within a table, each system gets a
bootstrap interval per metric (:mod:`doclens.stats.bootstrap`); when a system was scored on the same
instances as the table's leader, a paired bootstrap says whether the two are distinguishable.
Below :data:`doclens.stats.bootstrap.MIN_INSTANCES` contributing instances there is no interval and no
verdict: the table says "not informative (n=2 < 10)" instead.

Memory: a scores file is loaded, reduced to its per-instance counts and dropped before the next
is read, so a leaderboard holds one full report at a time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from doclens.core.metrics import CLAIM_F1
from doclens.core.signature import Signature
from doclens.families import DOCLENS_METRICS, higher_is_better, selected, statistics
from doclens.stats.bootstrap import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    STATISTICS,
    Difference,
    Interval,
    align_by_id,
    bootstrap_intervals,
    paired_bootstrap,
    statistic_metrics,
)
from doclens.views.labels import demo_banner, judge_label
from doclens.views.visible import visible

#: what a leaderboard ranks by unless told: claim F1, the harmonic mean of claim recall and precision.
#: Recall alone rewards copying: ACI-BENCH's raw dialogue transcript states more of the reference's
#: facts than any system's note (recall 56.4) among far more that are no part of it (precision 21.7),
#: and ranked by recall it leads every system (cards/leaderboard.md, "Why claim F1")
DEFAULT_RANK_BY = CLAIM_F1
#: statistics that reward a copy of the source when ranked alone (the board says so beside them)
RECALL_ONLY = ("claim_recall", "claim_recall_macro")
RECALL_TRAP_NOTE = ("ranked by recall alone: an output that copies its source (a dialogue transcript) states many "
                    "reference facts among many that are no part of the reference and can lead; read the precision "
                    "beside it, or rank by claim_f1 (the default)")


@dataclass
class Entry:
    """One scored system on a leaderboard."""

    system: str
    path: str
    signature: Signature
    partial: bool
    intervals: dict[str, Interval]
    ids: list[str] = field(repr=False)
    counts: Sequence[dict] = field(repr=False)  # a list, or the columns scan_report reads (CountColumns)
    rank: int | None = None
    versus_leader: Difference | None = None  # paired B − A with A = the table's leader
    versus_leader_note: str = ""
    sections: dict = field(default_factory=dict, repr=False)  # notes: {section: scores}, for the section bars
    seconds: float | None = None  # how long scoring it took, when the board was made by the run that scored it

    @property
    def instances(self) -> int:
        return len(self.ids)


def system_name(config: dict | None, path: str) -> str:
    """``config["system"]`` when the report's config has one, else the file name without
    ``.json`` and ``.doclens``."""
    name = (config or {}).get("system")
    if name:
        return str(name)
    stem = Path(path).name
    for suffix in (".json", ".doclens"):
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
    return stem


def load_entry(path: str, n_resamples: int = DEFAULT_RESAMPLES, seed: int | None = DEFAULT_SEED,
               confidence: float = DEFAULT_CONFIDENCE) -> Entry:
    """Read one scores file, one instance at a time (:func:`doclens.reports.scores_files.scan_report`),
    and reduce it to what a leaderboard needs."""
    from doclens.reports.scores_files import scan_report

    header, ids, counts = scan_report(path)
    if "signature" not in header:
        raise ValueError(f"{path}: the scores file has no signature")
    return Entry(system=system_name(header.get("config"), path), path=str(path), signature=header["signature"],
                 partial=bool(header.get("partial")), intervals=bootstrap_intervals(counts, n_resamples, seed,
                                                                                    confidence),
                 ids=ids, counts=counts, sections=header.get("sections") or {})


def group_by_signature(entries: Sequence[Entry]) -> dict[Signature, list[Entry]]:
    """``{signature: entries}`` in first-seen order; entries keep their order within a group."""
    groups: dict[Signature, list[Entry]] = {}
    for entry in entries:
        groups.setdefault(entry.signature, []).append(entry)
    return groups


def rank_group(entries: Sequence[Entry], metric: str = DEFAULT_RANK_BY, n_resamples: int = DEFAULT_RESAMPLES,
               seed: int | None = DEFAULT_SEED, confidence: float = DEFAULT_CONFIDENCE) -> list[Entry]:
    """Entries of one signature sorted by ``metric`` (best first, as its family declares:
    :func:`doclens.families.higher_is_better`; undefined last), with ``rank`` set (1-based;
    partial reports are listed but not ranked) and, for every entry after the leader, the
    paired-bootstrap difference to the leader when both cover the same instances. ``metric``: any
    registered family's statistic (:func:`doclens.families.statistics`); one an entry has no
    interval for yet is resampled for it (same seed: the other intervals are unchanged)."""
    signatures = {e.signature for e in entries}
    if len(signatures) > 1:
        raise ValueError("rank_group got results with different signatures; they are never ranked together")
    known = statistics()
    if metric not in known:
        raise ValueError(f"unknown metric {metric!r}; rank by one of {', '.join(known)}")
    # the DocLens statistics are resampled together, as before; another family's on its own
    needed = DOCLENS_METRICS if metric in STATISTICS else statistic_metrics(metric)
    for entry in entries:
        if metric not in entry.intervals:
            entry.intervals.update(bootstrap_intervals(entry.counts, n_resamples, seed, confidence, metrics=needed))
    sign = -1.0 if higher_is_better(metric) else 1.0
    ordered = sorted(entries, key=lambda e: (e.partial, e.intervals[metric].point is None,
                                             sign * (e.intervals[metric].point or 0.0), e.system))
    rank = 0
    leader = None
    for entry in ordered:
        if entry.partial or entry.intervals[metric].point is None:
            entry.rank = None
            entry.versus_leader_note = "partial report: not ranked" if entry.partial else f"no {metric}: not ranked"
            continue
        rank += 1
        entry.rank = rank
        if leader is None:
            leader = entry
            continue
        if set(entry.ids) != set(leader.ids) or len(entry.ids) != len(leader.ids):
            entry.versus_leader_note = "different instances from #1: no paired comparison"
            continue
        a, b = align_by_id(leader.ids, leader.counts, entry.ids, entry.counts)
        entry.versus_leader = paired_bootstrap(a, b, n_resamples, seed, confidence, metrics=needed)[metric]
        difference = entry.versus_leader
        if difference.delta is not None and not difference.informative:
            entry.versus_leader_note = f"vs #1: {difference.verdict}"
        else:
            entry.versus_leader_note = ("distinguishable from #1" if difference.distinguishable
                                        else "not distinguishable from #1")
    return ordered


#: the leaderboard's columns, pooled with intervals: claim F1 beside its two sides
COLUMNS = tuple(name for family in selected() for name in (*family.metrics, *family.derived_scores({})))


def shown_columns(entries: Sequence[Entry], metric: str) -> tuple[list[str], list[str]]:
    """``(shown, hidden)``: :data:`COLUMNS` (and the ranking statistic, when it is not one of
    them) without those that are n/a for every entry; those are listed as hidden, never drawn as
    a column of n/a."""
    columns = list(COLUMNS) + ([metric] if metric not in COLUMNS else [])
    hidden = [m for m in columns if m != metric and all(e.intervals[m].point is None for e in entries)]
    return [m for m in columns if m not in hidden], hidden


def format_interval(interval: Interval) -> str:
    """``59.09 [55.10, 63.02]`` (×100), or ``n/a``."""
    if interval.point is None:
        return "n/a"
    if interval.low is None or interval.high is None:
        return f"{100 * interval.point:.2f}" + (f" (n={interval.instances}<{interval.min_instances}: no CI)"
                                                 if interval.note else "")
    return f"{100 * interval.point:.2f} [{100 * interval.low:.2f}, {100 * interval.high:.2f}]"


def leaderboard_text(groups: dict[Signature, list[Entry]], metric: str, bootstrap: str) -> str:
    """Plain-text tables, one per signature (entries already ranked). Names are written whole,
    never cut (two systems whose names share a long start stay two names); the column is as wide
    as the longest. A run's time per system is a column when the entries have one."""
    lines = []
    for number, (signature, entries) in enumerate(groups.items(), start=1):
        lines.append(f"table {number} of {len(groups)}: {judge_label(signature)} — ranked by {metric} — {bootstrap}")
        banner = demo_banner(signature)
        if banner:
            lines.append(f"*** {banner} ***")
        lines.append(f"signature: {signature}")
        shown, hidden = shown_columns(entries, metric)
        width = max([len("system"), *(len(visible(e.system)) for e in entries)]) + 2
        timed = any(e.seconds is not None for e in entries)
        lines.append(f"{'rank':<5}{'system':<{width}}{'n':>5}  " + "".join(f"{m:<26}" for m in shown)
                     + (f"{'time':>8}  " if timed else "") + "vs #1")
        for entry in entries:
            time = (f"{entry.seconds:>7.1f}s  " if entry.seconds is not None else f"{'':>8}  ") if timed else ""
            lines.append(f"{entry.rank if entry.rank else '-':<5}{visible(entry.system):<{width}}{entry.instances:>5}  "
                         + "".join(f"{format_interval(entry.intervals[m]):<26}" for m in shown)
                         + time + entry.versus_leader_note)
        if hidden:
            lines.append(f"hidden: {', '.join(hidden)} — n/a for every system (no instance has anything to score "
                         "for them: for citations, no output cites a source unit)")
        lines.append("")
    if metric in RECALL_ONLY:
        lines.append(RECALL_TRAP_NOTE)
    if any(entry.intervals[m].note for entries in groups.values() for entry in entries for m in COLUMNS):
        lines.append("no CI: fewer contributing instances than a bootstrap interval needs; not informative")
    if len(groups) > 1:
        lines.append(f"{len(groups)} different signatures: results in different tables are not comparable")
    return visible("\n".join(lines).rstrip())  # system names, signatures: drawn as they are (views/visible.py)


#: the format of :func:`leaderboard_document`
LEADERBOARD_FORMAT = "doclens-leaderboard/1"


def _interval_dict(interval: Interval) -> dict:
    return {"point": interval.point, "low": interval.low, "high": interval.high, "instances": interval.instances,
            "note": interval.note}


def leaderboard_document(groups: dict[Signature, list[Entry]], metric: str, bootstrap: str) -> dict:
    """The leaderboard as JSON-ready data (``leaderboard.json``): per signature, each system's
    rank, name, scores file, instances, time, every statistic with its interval and its paired
    difference to #1. The same numbers as the text and HTML tables."""
    tables = []
    for signature, entries in groups.items():
        shown, hidden = shown_columns(entries, metric)
        systems = []
        for entry in entries:
            difference = entry.versus_leader
            systems.append({
                "rank": entry.rank, "system": entry.system, "scores_file": entry.path, "instances": entry.instances,
                "partial": entry.partial, "seconds": entry.seconds,
                "scores": {name: _interval_dict(entry.intervals[name]) for name in shown},
                "versus_leader": None if difference is None else {
                    "delta": difference.delta, "low": difference.low, "high": difference.high,
                    "p_value": difference.p_value, "distinguishable": difference.distinguishable},
                "note": entry.versus_leader_note})
        tables.append({"signature": str(signature), "judge": judge_label(signature), "columns": shown,
                       "hidden": hidden, "systems": systems})
    return {"format": LEADERBOARD_FORMAT, "rank_by": metric, "bootstrap": bootstrap, "tables": tables}
