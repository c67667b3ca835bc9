"""A report's pictures as matplotlib figures: per-section bars, per-instance score distributions
and verdict breakdowns (``docs/design.md`` §6, "Pictures").

Data in, :class:`matplotlib.figure.Figure` out, nothing else: :meth:`doclens.Report.plot` draws
from a report, ``doclens report`` (:mod:`doclens.views.plots`) from a scores file read in bounded
memory, and both get the same figure from the same numbers. Figures are made without
``pyplot`` (no global figure registry to leak, no GUI backend chosen behind the user's back);
Jupyter shows a returned ``Figure`` as it shows any other.

Labels carry metric names, section names, system names and instance *ids* only, never clinical
text. A score that is ``None`` (nothing to score, or the metric does not apply) draws no bar and
is written "n/a".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from doclens.core.errors import require
from doclens.core.metrics import MIN_SECTION_ITEMS
from doclens.core.tasks import SECTION_LABELS
from doclens.families import CLAIMS, DOCLENS_METRICS

#: the metrics the section bars show by default (issue 30: recall and precision per SOAP section)
SECTION_METRICS = CLAIMS.metrics
#: one colour per metric / verdict, colour-blind safe (Okabe–Ito)
METRIC_COLOURS = {"claim_recall": "#0072B2", "claim_precision": "#E69F00", "citation_recall": "#009E73",
                  "citation_precision": "#CC79A7"}
VERDICT_COLOURS = {"supported": "#009E73", "not supported": "#D55E00", "contradicted": "#D55E00",
                   "not addressed": "#999999", "unparsed": "#BBBBBB", "failed": "#000000"}
#: more scored instances than this in a metric: its distribution is a histogram, not a dot each
MAX_DOTS = 1000
#: ``Report.plot(kind=…)``
REPORT_KINDS = ("sections", "distribution", "verdicts")
#: the figures' resolution: SVG user units are points, so at 72 dpi a display pixel is one unit
#: of the SVG's viewBox (what :mod:`doclens.views.plots` relies on for links and tests)
DPI = 72


def new_figure(width: float, height: float, what: str):
    """A bare ``Figure`` (no pyplot) of ``width`` × ``height`` inches at :data:`DPI`."""
    require("matplotlib", what, "plots")
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=DPI, layout="constrained")


#: the longest name (section, system, column) drawn in a plot, in characters: a longer one is
#: cut with "…" (the page's tables and the JSON hold it whole)
LABEL_CHARS = 60


def _label(name: str) -> str:
    """A metric or section name as a label: underscores as spaces, drawn as written (:func:`plain_label`)."""
    return plain_label(str(name).replace("_", " "))


def plain_label(text: str, limit: int = LABEL_CHARS) -> str:
    """``text`` drawn as written, every label that comes from the input passes here: matplotlib
    reads ``$…$`` as mathematics (a bad formula in a section or system name would fail the plot,
    and a good one would draw something else), so each ``$`` is escaped; it hides legend labels
    that start with ``_``; and a name longer than ``limit`` characters is cut in its middle with
    "…", keeping its start and its end (a 100 KB system name would push the legend off the figure;
    cutting the end would make ``…_taskB_test2_full`` and ``…_taskB_test2_division_combined`` one name).

    >>> plain_label("BioBART_clinicalnlp_taskC_test2_division_combined", 30)
    'BioBART_clinica…ision_combined'
    """
    text = str(text)
    if len(text) > limit:
        head = limit // 2
        text = text[:head] + "…" + text[len(text) - (limit - 1 - head):]
    text = text.replace("$", r"\$")
    return "\u200b" + text if text.startswith("_") else text


#: what a section's bar holds, by the signature's ``premise`` field (``docs/design.md`` §4)
PREMISE_WORDS = {"note": "each section's claims, judged against the whole other note (premise:note)",
                 "section": "each section's claims, judged against the same section of the other note "
                            "(premise:section)"}


def section_figure(series: dict[str, dict[str, dict]], metrics: Sequence[str] = SECTION_METRICS,
                   what: str = "section bars", min_items: int = MIN_SECTION_ITEMS, premise: str | None = None):
    """Grouped bars, one panel per metric: x = note section (its human name), one bar per series
    (a system, or the one report), height = the section's score (×100), the items it rests on
    written above it (``n=8``; from the section's ``<metric>_items``) and the bar hatched when
    they are fewer than ``min_items``: a precision of 75 on 8 claims is not the tallest finding
    on the page. ``series``: ``{name: {section: {metric: score or None, metric_items: n}}}``.
    ``premise``: the signature's ``premise`` field, said in the title (under ``note`` a section's
    bar counts that section's claims, each judged against the whole note: per-section counts of
    whole-note judgements). The legend sits below the panels, clear of the titles. Bars have
    ``gid`` ``bar-<panel>-<series>-<section>`` (positions)."""
    sections = list(dict.fromkeys(s for per in series.values() for s in per))
    names = list(series)
    # at most 10 inches (960 CSS pixels, legend included): the pages are 1100 pixels wide
    figure = new_figure(min(10.0, max(6.0, 1.1 * len(sections) * max(1, len(names)) ** 0.5 + 2)),
                        2.8 * len(metrics) + 0.6, what)
    axes = figure.subplots(len(metrics), 1, squeeze=False)[:, 0]
    width = 0.8 / max(1, len(names))
    colours = _series_colours(len(names))
    few = False
    for p, (ax, metric) in enumerate(zip(axes, metrics)):
        labelled = set()
        top = _upper_limit(series, metric)
        for s, name in enumerate(names):
            for x, section in enumerate(sections):
                scores = series[name].get(section) or {}
                value, items = scores.get(metric), scores.get(f"{metric}_items")
                centre = x - 0.4 + width * (s + 0.5)
                if value is None:  # nothing to score: no bar, and "n/a" where it would stand (0 is a bar of 0)
                    ax.text(centre, 0, "n/a", rotation=90, fontsize=6, ha="center", va="bottom", color="#777777")
                    continue
                thin = isinstance(items, int) and items < min_items
                few = few or thin
                bar = ax.bar(centre, 100 * value, width, color=colours[s], hatch="////" if thin else None,
                             edgecolor="#ffffff" if thin else None, alpha=0.55 if thin else 1.0,
                             label=None if name in labelled else plain_label(name))
                labelled.add(name)
                bar.patches[0].set_gid(f"bar-{p}-{s}-{x}")
                if isinstance(items, int):
                    ax.text(centre, min(100 * value, top) + top * 0.01, f"n={items}", fontsize=6, ha="center",
                            va="bottom", rotation=90 if len(names) > 2 else 0, color="#333333")
        ax.set_xticks(range(len(sections)), [plain_label(SECTION_LABELS.get(s, s.replace("_", " "))) for s in sections])
        ax.set_ylim(0, top)
        ax.set_ylabel(f"{_label(metric)} ×100")
        ax.set_title(f"{_label(metric)} per note section: {SECTION_READING.get(metric, metric)}", fontsize=9)
        ax.grid(axis="y", color="#dddddd", linewidth=0.6)
        ax.set_axisbelow(True)
    judged = PREMISE_WORDS.get(premise or "", "each section's claims")
    figure.suptitle(f"Scores per note section\n{judged}\n(n = items behind each bar"
                    + (f"; hatched: fewer than {min_items} items, too few to read much into)" if few else ")"),
                    fontsize=9)
    if len(names) > 1:
        handles, labels = axes[0].get_legend_handles_labels()
        unique = dict(zip(labels, handles))
        figure.legend(list(unique.values()), list(unique), loc="outside lower center", fontsize=8, frameon=False,
                      ncols=min(4, len(unique)))
    return figure


#: what one section's score of each metric counts (a panel's title)
SECTION_READING = {"claim_recall": "the section's reference claims stated by the output",
                   "claim_precision": "the section's output claims the reference supports"}


def _upper_limit(series: dict[str, dict[str, dict]], metric: str) -> float:
    """The y axis's top (×100): the highest bar plus a margin, rounded up to ten, at most 100 —
    bars still start at 0, but low scores are not flattened against a 0–100 axis."""
    values = [float(v[metric]) for per in series.values() for v in per.values() if v and v.get(metric) is not None]
    top = 100 * max(values, default=1.0) * 1.2  # room for the item counts above the bars
    return float(min(110, max(10, 10 * -(-top // 10))))


def _series_colours(count: int) -> list[str | tuple[float, float, float, float]]:
    """A colour per series: the colour-blind-safe palette's hex strings, or matplotlib's RGBA
    tuples of ``tab20`` past eight series."""
    palette: list[str | tuple[float, float, float, float]] = [
        "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"]
    if count <= len(palette):
        return palette[:count]
    from matplotlib import colormaps

    cmap = colormaps["tab20"]
    return [cmap(i % 20) for i in range(count)]


def distribution_figure(scores: Mapping[str, Sequence[float | None]], means: dict | None = None,
                        what: str = "score distribution"):
    """One strip per metric: each instance a dot at its score (×100, jittered vertically by its
    position, deterministically), the pooled score as a vertical line; above :data:`MAX_DOTS`
    instances a histogram instead (a dot each would make a page of megabytes). ``scores``: ``{metric:
    per-instance scores in report order}`` (``None`` = not scored, no dot). The dots of metric
    row ``r`` are one collection with ``gid`` ``dots-<r>``; :mod:`doclens.views.plots` links each
    to its instance."""
    metrics = [m for m in scores if any(v is not None for v in scores[m])]
    figure = new_figure(7.5, 0.75 * max(1, len(metrics)) + 0.9, what)
    ax = figure.subplots()
    for row, metric in enumerate(metrics):
        xs, ys = [], []
        for position, value in enumerate(scores[metric]):
            if value is not None:
                xs.append(100 * value)
                ys.append(row + jitter(position))
        colour = METRIC_COLOURS.get(metric, "#0072B2")
        if len(xs) > MAX_DOTS:
            _histogram_row(ax, xs, row, colour)
        else:
            dots = ax.scatter(xs, ys, s=14, color=colour, alpha=0.75, linewidths=0)
            dots.set_gid(f"dots-{row}")
        mean = (means or {}).get(metric)
        if mean is not None:
            ax.plot([100 * mean] * 2, [row - 0.4, row + 0.4], color="#000000", linewidth=1.5)
    ax.set_yticks(range(len(metrics)), [_label(m) for m in metrics])
    ax.set_ylim(len(metrics) - 0.5, -0.5)
    ax.set_xlim(-2, 102)
    ax.set_xlabel("per-instance score ×100 (dot = instance, bar = pooled score)")
    ax.set_title("Per-instance scores", fontsize=9)
    ax.grid(axis="x", color="#dddddd", linewidth=0.6)
    return figure


def _histogram_row(ax, xs: list[float], row: int, colour: str) -> None:
    """Too many instances for a dot each: 50 bins of 2 points, the tallest bin filling 0.8 of the
    row (bins: ``hist-<row>-<bin>``)."""
    import numpy as np

    counts, edges = np.histogram(xs, bins=50, range=(0, 100))
    scale = 0.8 / max(1, counts.max())
    for b, count in enumerate(counts):
        if count:
            bar = ax.bar(edges[b], count * scale, width=edges[b + 1] - edges[b], bottom=row + 0.4 - count * scale,
                         align="edge", color=colour, alpha=0.75, linewidth=0)
            bar.patches[0].set_gid(f"hist-{row}-{b}")


def jitter(position: int) -> float:
    """A dot's vertical offset in [-0.3, 0.3): a fixed function of its position (golden-ratio
    sequence), so a page and a notebook draw the same dots."""
    return ((position * 0.6180339887498949) % 1.0 - 0.5) * 0.6


def verdict_figure(breakdown: dict[str, dict[str, int]], what: str = "verdict breakdown"):
    """Horizontal stacked bars, one per item kind (reference claims, prediction claims,
    statements, source support): each segment a verdict with its count written on it.
    ``breakdown``: ``{kind: {verdict: count}}`` (:func:`verdict_breakdown`). Segments have
    ``gid`` ``verdict-<row>-<verdict>``."""
    kinds = [k for k in breakdown if sum(breakdown[k].values())]
    figure = new_figure(7.5, 0.6 * max(1, len(kinds)) + 1.1, what)
    ax = figure.subplots()
    seen = set()
    for row, kind in enumerate(kinds):
        left = 0
        for verdict, count in breakdown[kind].items():
            if not count:
                continue
            bar = ax.barh(row, count, left=left, color=VERDICT_COLOURS.get(verdict, "#777777"), height=0.6,
                          label=None if verdict in seen else plain_label(verdict))
            bar.patches[0].set_gid(f"verdict-{row}-{verdict.replace(' ', '_')}")
            seen.add(verdict)
            if count / max(1, sum(breakdown[kind].values())) > 0.04:
                ax.text(left + count / 2, row, str(count), ha="center", va="center", fontsize=8,
                        color="#ffffff" if verdict in ("supported", "not supported", "contradicted", "failed")
                        else "#000000")
            left += count
    ax.set_yticks(range(len(kinds)), [plain_label(k) for k in kinds])
    ax.set_ylim(len(kinds) - 0.5, -0.5)
    ax.set_xlabel("items")
    ax.set_title("Verdicts by item kind", fontsize=9)
    figure.legend(loc="outside lower center", ncols=5, fontsize=8, frameon=False)
    return figure


def verdict_breakdown(counts: dict, unparsed: dict, failed: dict, config: dict | None,
                      blocks: dict | None = None) -> dict[str, dict[str, int]]:
    """``{kind: {verdict: count}}`` from a report's header: ``counts`` (per metric hits and
    items), ``unparsed`` / ``failed`` (per item field), ``config`` (its ``on_unparsed`` rule:
    with ``zero`` an unparsed or failed item is among the items, with ``exclude`` it is not)
    and the families' ``blocks`` (``{family name: block}``; each family says what its block adds:
    :meth:`doclens.families.MetricFamily.verdict_counts`)."""
    from doclens.core.metrics import counting_rule
    from doclens.families import FAMILIES

    rule = counting_rule(config)
    result = {}
    for metric, field, kind in (("claim_recall", "reference_claims", "reference claims"),
                                ("claim_precision", "prediction_claims", "prediction claims"),
                                ("citation_recall", "statements", "statements (citation recall)")):
        block = counts.get(metric) or {}
        hits, items = int(block.get("hits", 0)), int(block.get("items", 0))
        bad, broken = int((unparsed or {}).get(field, 0)), int((failed or {}).get(field, 0))
        missing = bad + broken if rule == "zero" else 0
        result[kind] = {"supported": hits, "not supported": max(0, items - hits - missing),
                        "unparsed": bad, "failed": broken}
    for family in FAMILIES:
        result.update(family.verdict_counts((blocks or {}).get(family.name) or {}))
    return result


def report_figure(report, kind: str = "sections", metrics: Sequence[str] | None = None):
    """The figure :meth:`doclens.Report.plot` returns (module docstring)."""
    if kind == "sections":
        if not report.sections:
            raise ValueError("this report has no note sections (sections are scored for task note_generation)")
        return section_figure({"report": report.sections}, metrics or SECTION_METRICS,
                              premise=report.signature.get("premise") if report.signature else None)
    if kind == "distribution":
        if not report.instances:
            raise ValueError("this report holds no instances (a streamed summary): load its scores file "
                             "with Report.load to plot the distribution")
        chosen = metrics or DOCLENS_METRICS
        return distribution_figure({m: [r.scores.get(m) for r in report.instances] for m in chosen},
                                   {m: report.scores.get(m) for m in chosen})
    if kind == "verdicts":
        return verdict_figure(verdict_breakdown(report.counts, report.unparsed, report.failed, report.config,
                                                report.blocks))
    raise ValueError(f"unknown plot kind {kind!r}; choose one of {', '.join(REPORT_KINDS)}")
