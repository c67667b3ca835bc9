"""Pictures of leaderboards, reports and agreement: matplotlib figures, and the same figures as
inline SVG sections of the HTML pages (``docs/design.md`` §6, "Pictures").

**Why matplotlib.** It is the maintained plotting library every scientific Python user already
has, draws without a browser or a JavaScript runtime, returns ``Figure`` objects that Jupyter
shows as they are (what scikit-learn's ``*Display`` objects return), and writes SVG, so the HTML
pages stay single files with no script added. It sits behind the ``plots`` extra; without it the
pages say how to get the plots and keep every table.

**Inline SVG under the pages' policy.** The pages allow no inline style but their own (by hash),
and matplotlib's SVG styles every element with a ``style`` attribute and one ``<style>``
element. :func:`svg_markup` rewrites each ``style="fill: #fff; stroke: none"`` into SVG
presentation attributes (``fill="#fff" stroke="none"``: not styles, so the policy does not
block them), moves the ``<style>`` element's two rules onto the root element, drops the metadata
(a creation date would make every page differ), drops the namespace declarations (the HTML
parser supplies them; the pages name no URL at all) and prefixes every id, so several figures share a
page without clashing. Text is drawn as paths (``svg.fonttype = "path"``): the page needs no font.

**Links and text alternatives.** Each instance dot of a report's distribution links to that
instance (``#inst-<position>``, the anchors of :mod:`doclens.views.html`); every figure has an
SVG ``<title>`` and ``<desc>`` (``aria-labelledby``) and its numbers in a table beside it.
Labels hold ids, system, metric and section names and numbers, never clinical text.

**Checkable marks.** Each ``<figure>`` carries ``data-axes``: per axes, its box in the SVG's user
units (y down) and its data limits, so a test can turn a mark's drawn position back into the
number it stands for (``tests/views/test_plots.py`` does, in Chromium).
"""

from __future__ import annotations

import importlib.util
import io
import json
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from html import escape

from doclens.core.metrics import CLAIM_F1
from doclens.families import DOCLENS_METRICS, FAMILIES, higher_is_better
from doclens.reports.plots import (
    DPI,
    PREMISE_WORDS,
    SECTION_METRICS,
    distribution_figure,
    new_figure,
    plain_label,
    section_figure,
    verdict_breakdown,
    verdict_figure,
)
from doclens.stats.bootstrap import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED, align_by_id, paired_bootstrap
from doclens.views.visible import NAME_CHARS, cut, html_text, visible

logger = logging.getLogger("doclens")

#: ``leaderboard_figure(kind=…)``
LEADERBOARD_KINDS = ("forest", "sections", "pairwise")
#: more systems than this in one signature: no pairwise matrix (k(k−1)/2 paired bootstraps, unreadable cells)
MAX_MATRIX_SYSTEMS = 30
#: the instances named in the distribution's text alternative (lowest scores first)
LOWEST_SHOWN = 5
MISSING_EXTRA = ('<p class="muted">Plots need matplotlib: <code>pip install \'doclens[plots]\'</code>; '
                 "the tables hold every number.</p>")


def plots_available() -> bool:
    """Whether matplotlib can be imported (the ``plots`` extra)."""
    return importlib.util.find_spec("matplotlib") is not None


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.2f}"


# ---- leaderboard figures ----------------------------------------------------------------------
def forest_figure(entries: Sequence, metric: str = CLAIM_F1):
    """Each system's ``metric`` (×100) with its bootstrap interval, in the order given (a ranked
    group: best on top), the leader's interval shaded. A system with no interval (too few
    instances) is a hollow dot; one with no score is left out. Marks: ``point-<i>`` and
    ``interval-<i>`` (``i`` = position in ``entries``), ``leader-band``."""
    shown = [(i, e) for i, e in enumerate(entries) if e.intervals[metric].point is not None]
    figure = new_figure(7.5, 0.32 * max(1, len(shown)) + 1.0, "the forest plot")
    ax = figure.subplots()
    leader = next((e for _, e in shown if e.rank == 1), None)
    if leader is not None and leader.intervals[metric].low is not None:
        band = ax.axvspan(100 * leader.intervals[metric].low, 100 * leader.intervals[metric].high,
                          color="#0072B2", alpha=0.12, linewidth=0)
        band.set_gid("leader-band")
    for row, (i, entry) in enumerate(shown):
        interval = entry.intervals[metric]
        if interval.low is not None:
            line, = ax.plot([100 * interval.low, 100 * interval.high], [row, row], color="#333333", linewidth=1.4)
            line.set_gid(f"interval-{i}")
        colour = "#0072B2" if entry.rank == 1 else "#333333" if entry.rank else "#999999"
        point, = ax.plot([100 * interval.point], [row], marker="o", markersize=6, linestyle="none",
                         markeredgecolor=colour, markerfacecolor=colour if interval.low is not None else "#ffffff")
        point.set_gid(f"point-{i}")
    ax.set_yticks(range(len(shown)), [plain_label(f"{e.rank or '-'}. {visible(e.system)}") for _, e in shown])
    ax.set_ylim(len(shown) - 0.5, -0.5)
    ax.set_xlabel(plain_label(f"{metric.replace('_', ' ')} ×100\n(dot: pooled score; line: bootstrap interval; "
                              "band: #1's interval)", limit=200), fontsize=8)
    better = "" if higher_is_better(metric) else " (lower is better)"
    ax.set_title(plain_label(f"{metric.replace('_', ' ')} by system{better}", limit=200), fontsize=9)
    ax.grid(axis="x", color="#dddddd", linewidth=0.6)
    return figure


def pairwise_differences(entries: Sequence, metric: str, n_resamples: int = DEFAULT_RESAMPLES,
                         seed: int | None = DEFAULT_SEED, confidence: float = DEFAULT_CONFIDENCE) -> list[list]:
    """``matrix[r][c]``: the paired-bootstrap :class:`~doclens.stats.bootstrap.Difference` of
    ``metric``, row system minus column system (``None`` on the diagonal, for a partial report
    or when the two were not scored on the same instances). Same draws as the leaderboard's
    "vs #1" column (same seed, the leader's instance order), so the leader's column (rows below
    it, entries ranked) equals that column; the cell above the diagonal is its mirror."""
    from dataclasses import replace

    from doclens.stats.bootstrap import statistic_metrics

    needed = statistic_metrics(metric)  # claim F1: both its sides, resampled together
    matrix: list[list] = [[None] * len(entries) for _ in entries]
    for r, row in enumerate(entries):
        for c, column in enumerate(entries[:r]):
            if row.partial or column.partial or len(row.ids) != len(column.ids) or set(row.ids) != set(column.ids):
                continue
            a, b = align_by_id(column.ids, column.counts, row.ids, row.counts)
            cell = matrix[r][c] = paired_bootstrap(a, b, n_resamples, seed, confidence, metrics=needed)[metric]
            # column − row from the same draws: every resampled difference negated (same p-value)
            matrix[c][r] = replace(cell, a=cell.b, b=cell.a, delta=None if cell.delta is None else -cell.delta,
                                   low=None if cell.high is None else -cell.high,
                                   high=None if cell.low is None else -cell.low)
    return matrix


def pairwise_figure(entries: Sequence, matrix: Sequence[Sequence], metric: str = CLAIM_F1):
    """The matrix of :func:`pairwise_differences` as coloured cells (colour = row − column ×100,
    blue when the row system scores higher), each cell's difference written in it, a ``*`` when
    the paired interval excludes 0 (distinguishable), none when it does not, ``–`` when there is
    no paired comparison. Cells: ``cell-<r>-<c>``."""
    import numpy as np
    from matplotlib import colormaps
    from matplotlib.colors import TwoSlopeNorm

    size = len(entries)
    values = np.full((size, size), np.nan)
    for r in range(size):
        for c in range(size):
            cell = matrix[r][c]
            if cell is not None and cell.delta is not None:
                values[r, c] = 100 * cell.delta
    limit = max(1.0, float(np.nanmax(np.abs(values))) if np.isfinite(values).any() else 1.0)
    figure = new_figure(min(10.0, 0.55 * size + 3.0), min(10.0, 0.5 * size + 1.6), "the pairwise matrix")
    ax = figure.subplots()
    # vector cells (pcolormesh), not an image: an embedded raster would be a data: URL the pages do not load
    edges = np.arange(size + 1) - 0.5
    image = ax.pcolormesh(edges, edges, np.ma.masked_invalid(values), cmap=colormaps["RdBu"],
                          norm=TwoSlopeNorm(0.0, -limit, limit))
    image.set_gid("matrix")
    ax.set_ylim(size - 0.5, -0.5)
    ax.set_aspect("equal")
    for r in range(size):
        for c in range(size):
            cell = matrix[r][c]
            if r == c:
                continue
            text = "–" if cell is None or cell.delta is None else f"{100 * cell.delta:+.1f}" + (
                "*" if cell.distinguishable else "")
            label = ax.text(c, r, text, ha="center", va="center", fontsize=7,
                            color="#ffffff" if np.isfinite(values[r, c]) and abs(values[r, c]) > 0.6 * limit
                            else "#000000")
            label.set_gid(f"cell-{r}-{c}")
    names = [plain_label(visible(e.system)) for e in entries]
    ax.set_xticks(range(size), names, rotation=45, ha="right", fontsize=8)
    ax.set_yticks(range(size), names, fontsize=8)
    colorbar = figure.colorbar(image, ax=ax, shrink=0.8)
    colorbar.solids.set_rasterized(False)  # matplotlib rasterizes many-coloured bars; keep it vector (above)
    colorbar.set_label(plain_label(f"row − column\n({metric.replace('_', ' ')} ×100)", limit=200), fontsize=8)
    ax.set_title(plain_label(f"{metric.replace('_', ' ')}: row − column, paired bootstrap\n"
                             "* = its interval excludes 0; – = no paired comparison", limit=200),
                 fontsize=8)
    return figure


def _premise(signature) -> str | None:
    """The ``premise`` field of a signature (text or :class:`~doclens.core.signature.Signature`)."""
    from doclens.core.signature import Signature

    return Signature.read(signature).get("premise")


def _judged(premise: str | None) -> str:
    """What a section's bar counts, in words (:data:`doclens.reports.plots.PREMISE_WORDS`)."""
    return PREMISE_WORDS.get(premise or "", "each section's claims")


def _unique_names(entries: Sequence) -> list[str]:
    names: list[str] = []
    seen: dict[str, int] = {}
    for entry in entries:
        seen[entry.system] = seen.get(entry.system, 0) + 1
        shown = visible(cut(entry.system, NAME_CHARS))  # bidi controls and invisible characters drawn, never active
        names.append(shown if seen[entry.system] == 1 else f"{shown} ({seen[entry.system]})")
    return names


def leaderboard_figure(scores: Sequence, kind: str = "forest", metric: str = CLAIM_F1,
                       n_resamples: int = DEFAULT_RESAMPLES, seed: int | None = DEFAULT_SEED,
                       confidence: float = DEFAULT_CONFIDENCE):
    """A leaderboard picture as a matplotlib ``Figure``, for a notebook: ``scores`` are scores
    files (paths) or :class:`~doclens.views.leaderboard.Entry` objects, all of one signature
    (systems with different signatures are never in one plot: a ``ValueError`` says so).
    ``kind``: ``forest``, ``sections`` (notes only) or ``pairwise``."""
    from doclens.views.leaderboard import group_by_signature, load_entry, rank_group

    if kind not in LEADERBOARD_KINDS:
        raise ValueError(f"unknown plot kind {kind!r}; choose one of {', '.join(LEADERBOARD_KINDS)}")
    entries = [e if hasattr(e, "intervals") else load_entry(str(e), n_resamples, seed, confidence) for e in scores]
    groups = group_by_signature(entries)
    if len(groups) != 1:
        raise ValueError(f"the results have {len(groups)} different signatures; they are never plotted together: "
                         "plot one signature's results at a time")
    ranked = rank_group(next(iter(groups.values())), metric, n_resamples, seed, confidence)
    if kind == "forest":
        return forest_figure(ranked, metric)
    if kind == "sections":
        series = {name: e.sections for name, e in zip(_unique_names(ranked), ranked) if e.sections}
        if not series:
            raise ValueError("none of these results has note sections (task note_generation)")
        return section_figure(series, SECTION_METRICS, "the section bars", premise=_premise(ranked[0].signature))
    return pairwise_figure(ranked, pairwise_differences(ranked, metric, n_resamples, seed, confidence), metric)


# ---- agreement --------------------------------------------------------------------------------
def agreement_figure(points: dict[str, list[tuple[float, float]]], results: Sequence[dict], human_column: str):
    """One scatter per metric: x = the human score, y = the instance's DocLens score (×100),
    titled with Spearman ρ, Kendall τ-b and n (``results``: :class:`~doclens.stats.agreement.
    InstanceAgreement` dicts, in ``points``' metric order). Points: ``agree-<panel>``."""
    figure = new_figure(3.4 * len(points) + 0.4, 3.4, "doclens agreement --plot")
    axes = figure.subplots(1, len(points), squeeze=False)[0]
    for p, (ax, (metric, pairs), result) in enumerate(zip(axes, points.items(), results)):
        dots = ax.scatter([h for h, _ in pairs], [100 * d for _, d in pairs], s=16, color="#0072B2", alpha=0.75,
                          linewidths=0)
        dots.set_gid(f"agree-{p}")
        rho, tau = result.get("spearman_rho"), result.get("kendall_tau_b")
        stats = (f"ρ={rho:.3f} τ={tau:.3f}" if rho is not None and tau is not None
                 else result.get("note") or "no correlation")
        ax.set_title(plain_label(f"{metric.replace('_', ' ')}\n{stats} n={result.get('n')}", limit=200), fontsize=9)
        ax.set_xlabel(plain_label(human_column))
        ax.set_ylabel("DocLens ×100")
        ax.grid(color="#eeeeee", linewidth=0.6)
    return figure


def save_figure(figure, path: str) -> None:
    """Save ``figure`` in the format ``path``'s extension names (``.svg``, ``.png``, ``.pdf``);
    SVG with text as paths and no date, so the same scores write the same file on any machine."""
    from matplotlib import rc_context

    svg = str(path).lower().endswith(".svg")
    with rc_context({"svg.fonttype": "path", "svg.hashsalt": "doclens"}):
        figure.savefig(path, metadata={"Date": None} if svg else None, dpi=None if svg else 2 * DPI)


def write_agreement_plot(path: str, points: dict, results: Sequence[dict], human_column: str) -> None:
    """Save :func:`agreement_figure` to ``path`` (:func:`save_figure`)."""
    save_figure(agreement_figure(points, results, human_column), path)


# ---- figures as inline SVG ----------------------------------------------------------------------
_STYLE_ATTRIBUTE = re.compile(r'\sstyle="([^"]*)"')
_ID = re.compile(r'\sid="([^"]+)"')
_REFERENCE = re.compile(r'(id="|href="#|url\(#)([^")]+)(?=[")])')


def _presentation_attributes(match: re.Match) -> str:
    pairs = [part.split(":", 1) for part in match.group(1).split(";") if ":" in part]
    return "".join(f' {name.strip()}="{escape(value.strip())}"' for name, value in pairs)


def svg_markup(figure, prefix: str, title: str, description: str = "") -> str:
    """``figure`` as an ``<svg>`` element to write inline into a page (module docstring): no
    ``style`` attribute or element, ids prefixed with ``prefix``, ``<title>`` and ``<desc>``."""
    from matplotlib import rc_context

    buffer = io.StringIO()
    with rc_context({"svg.fonttype": "path", "svg.hashsalt": prefix}):
        figure.savefig(buffer, format="svg", dpi=DPI, metadata={"Date": None})
    text = buffer.getvalue()
    text = text[text.index("<svg"):]
    text = re.sub(r"<metadata>.*?</metadata>\s*", "", text, flags=re.S)
    text = re.sub(r"<style[^>]*>.*?</style>\s*", "", text, flags=re.S)
    text = _STYLE_ATTRIBUTE.sub(_presentation_attributes, text)
    # inline in HTML the parser gives SVG its namespace; SVG 2's plain href needs no xlink
    text = re.sub(r'\sxmlns(:xlink)?="[^"]*"', "", text).replace("xlink:href=", "href=")
    text = text.replace(' target="_blank"', "")  # matplotlib's links open a new tab; ours jump within the page
    idents = set(_ID.findall(text))
    text = _REFERENCE.sub(lambda m: f"{m.group(1)}{prefix}-{m.group(2)}" if m.group(2) in idents else m.group(0), text)
    head = (f'<svg role="img" aria-labelledby="{prefix}-title {prefix}-desc" stroke-linejoin="round" '
            'stroke-linecap="butt"')
    text = head + text[len("<svg"):]
    close = text.index(">") + 1
    return (text[:close] + f'<title id="{prefix}-title">{escape(title)}</title>'
            f'<desc id="{prefix}-desc">{escape(description)}</desc>' + text[close:])


def axes_boxes(figure) -> list[dict]:
    """Per axes (in ``figure.axes`` order, colour bars included): its box in SVG user units, y
    down (``[left, top, right, bottom]``), and its data limits: read after the figure is drawn."""
    height = figure.get_figheight() * DPI
    boxes = []
    for ax in figure.axes:
        box = ax.get_window_extent()
        boxes.append({"box": [round(box.x0, 3), round(height - box.y1, 3), round(box.x1, 3), round(height - box.y0, 3)],
                      "xlim": [float(v) for v in ax.get_xlim()], "ylim": [float(v) for v in ax.get_ylim()]})
    return boxes


def figure_html(figure, prefix: str, kind: str, title: str, description: str, numbers: str = "") -> str:
    """A ``<figure>``: the inline SVG, a caption, ``data-axes`` (:func:`axes_boxes`) and the
    figure's numbers (``numbers``, an HTML table) in a ``<details>`` beside it."""
    svg = svg_markup(figure, prefix, title, description)
    boxes = axes_boxes(figure)
    details = f"<details><summary>the numbers of this plot</summary>{numbers}</details>" if numbers else ""
    return (f'<figure class="plot" id="{escape(prefix)}" data-plot="{escape(kind)}" '
            f'data-axes="{escape(json.dumps(boxes))}">{svg}<figcaption>{escape(title)}</figcaption>{details}'
            "</figure>\n")


#: a table cell: a name or a number, escaped when written, or ``(html,)``: markup written as it is
Cell = str | int | float | tuple[str]


def _table(head: Sequence[str], rows: Sequence[Sequence[Cell]]) -> str:
    """A plain table; cells are escaped here, except those already given as markup (``(html,)``)."""
    def cell(value: Cell) -> str:  # names and numbers: a name is cut (visible.cut)
        return value[0] if isinstance(value, tuple) else escape(cut(value, NAME_CHARS))
    return ("<table><thead><tr>" + "".join(f"<th>{escape(h)}</th>" for h in head) + "</tr></thead><tbody>"
            + "".join("<tr>" + "".join(f"<td>{cell(v)}</td>" for v in row) + "</tr>" for row in rows)
            + "</tbody></table>")


# ---- the pages' plot sections -----------------------------------------------------------------
def drawn(what: str, make: Callable[[], str]) -> str:
    """``make()``'s figure markup, or, when drawing fails, a line on the page saying so: a plot
    that fails never takes the page's tables with it (the error is logged, without data)."""
    try:
        return make()
    except Exception as exc:  # matplotlib's errors are many and undocumented; the page must stand
        logger.warning("%s could not be drawn (%s: %s); the page keeps its tables", what, type(exc).__name__,
                       str(exc)[:200])
        return (f'<p class="muted">{escape(what)} could not be drawn ({escape(type(exc).__name__)}); '
                "the numbers are in the tables.</p>")


def leaderboard_plots_html(entries: Sequence, metric: str, number: int, n_resamples: int = DEFAULT_RESAMPLES,
                           seed: int | None = DEFAULT_SEED, confidence: float = DEFAULT_CONFIDENCE) -> str:
    """The plots of one leaderboard table (one signature; ``entries`` ranked): the forest plot,
    the section bars (when the results have note sections) and the pairwise matrix."""
    if not plots_available():
        return MISSING_EXTRA
    prefix = f"board{number}"
    names = _unique_names(entries)
    parts = [f'<h3>Plots of table {number}</h3>', _forest_html(entries, metric, number, prefix),
             _board_sections_html(entries, names, number, prefix)]
    if 2 <= len(entries) <= MAX_MATRIX_SYSTEMS:
        parts.append(_pairwise_html(entries, names, metric, number, prefix, (n_resamples, seed, confidence)))
    elif len(entries) > MAX_MATRIX_SYSTEMS:
        parts.append(f'<p class="muted">{len(entries)} systems: no pairwise matrix above '
                     f"{MAX_MATRIX_SYSTEMS}.</p>")
    return "".join(parts)


def _forest_html(entries: Sequence, metric: str, number: int, prefix: str) -> str:
    """A leaderboard table's forest plot, or ``""`` when no entry has a score."""
    shown = [e for e in entries if e.intervals[metric].point is not None]
    if not shown:
        return ""
    description = "; ".join(f"{e.rank or '-'}. {visible(cut(e.system, NAME_CHARS))}: "
                            f"{_interval_text(e.intervals[metric])}" for e in shown)
    return drawn("the forest plot", lambda: figure_html(
        forest_figure(entries, metric), f"{prefix}-forest", "forest",
        f"Table {number}: {metric} with bootstrap intervals (×100)", description))


def _board_sections_html(entries: Sequence, names: list[str], number: int, prefix: str) -> str:
    """A leaderboard table's section bars, or ``""`` when no entry has note sections."""
    series = {name: e.sections for name, e in zip(names, entries) if e.sections}
    if not series:
        return ""
    sections = list(dict.fromkeys(s for per in series.values() for s in per))
    rows = [[name, section] + [_percent((per.get(section) or {}).get(m)) for m in SECTION_METRICS]
            for name, per in series.items() for section in sections]
    premise = _premise(entries[0].signature)
    return drawn("the section bars", lambda: figure_html(
        section_figure(series, SECTION_METRICS, "the section bars", premise=premise), f"{prefix}-sections",
        "sections", f"Table {number}: claim recall and precision per note section (×100): {_judged(premise)}",
        f"{len(series)} systems × {len(sections)} sections; numbers in the table below",
        _table(["system", "section", *SECTION_METRICS], rows)))


def _pairwise_html(entries: Sequence, names: list[str], metric: str, number: int, prefix: str,
                   bootstrap: tuple[int, int | None, float]) -> str:
    """A leaderboard table's pairwise matrix (``bootstrap``: resamples, seed, confidence)."""
    matrix = pairwise_differences(entries, metric, *bootstrap)
    rows = [[names[r]] + ["—" if cell is None or cell.delta is None else
                          f"{100 * cell.delta:+.2f}" + ("*" if cell.distinguishable else "") for cell in row]
            for r, row in enumerate(matrix)]
    return drawn("the pairwise matrix", lambda: figure_html(
        pairwise_figure(entries, matrix, metric), f"{prefix}-pairwise", "pairwise",
        f"Table {number}: paired-bootstrap differences of {metric}, row − column (×100)",
        "* marks a difference whose interval excludes 0; numbers in the table below",
        _table(["row − column", *names], rows)))


def _interval_text(interval) -> str:
    if interval.point is None:
        return "n/a"
    if interval.low is None:
        return f"{100 * interval.point:.2f} (no interval: {interval.note})"
    return f"{100 * interval.point:.2f} [{100 * interval.low:.2f}, {100 * interval.high:.2f}]"


def instance_scores(counts: Sequence[dict], metrics: Sequence[str] = DOCLENS_METRICS) -> dict[str, list[float | None]]:
    """``{metric: per-instance score or None}`` from per-instance ``{metric: (hits, items)}``
    (what :func:`doclens.reports.scores_files.scan_report` returns): a report page's distribution."""
    return {m: [c[m][0] / c[m][1] if m in c and c[m][1] else None for c in counts] for m in metrics}


def report_plots_html(header: dict, ids: Sequence[str], scores: Mapping[str, Sequence[float | None]]) -> str:
    """The plots of a report page: per-section bars (notes), the distribution of per-instance
    scores (each dot links to its instance) and the verdict breakdown, each with its numbers."""
    if not plots_available():
        return MISSING_EXTRA
    parts = ["<h2>Plots</h2>", _report_sections_html(header)]
    if ids and any(v is not None for values in scores.values() for v in values):
        parts.append(drawn("the score distribution", lambda: _distribution_html(header, ids, scores)))
    parts.append(_verdicts_html(header))
    return "".join(parts)


def _report_sections_html(header: dict) -> str:
    """A report page's per-section bars, or ``""`` when the report has no note sections."""
    sections = header.get("sections") or {}
    if not sections:
        return ""
    rows = [[cut(section, NAME_CHARS)] + [_percent(values.get(m)) for m in DOCLENS_METRICS]
            for section, values in sections.items()]
    premise = _premise(header.get("signature"))
    return drawn("the section bars", lambda: figure_html(
        section_figure({"report": sections}, SECTION_METRICS, "the section bars", premise=premise),
        "report-sections", "sections", f"Claim recall and precision per note section (×100): {_judged(premise)}",
        "; ".join(f"{r[0]}: recall {r[1]}, precision {r[2]}" for r in rows),
        _table(["section", *DOCLENS_METRICS], rows)))


def _verdicts_html(header: dict) -> str:
    """A report page's verdict breakdown, or ``""`` when nothing was judged."""
    breakdown = verdict_breakdown(header.get("counts") or {}, header.get("unparsed") or {},
                                  header.get("failed") or {}, header.get("config"), _family_blocks(header))
    if not any(sum(v.values()) for v in breakdown.values()):
        return ""
    verdicts = list(dict.fromkeys(v for per in breakdown.values() for v in per))
    rows: list[list[Cell]] = [[kind, *(per.get(v, "") for v in verdicts)] for kind, per in breakdown.items()]
    return drawn("the verdict breakdown", lambda: figure_html(
        verdict_figure(breakdown), "report-verdicts", "verdicts",
        "Verdicts: how many items the judge supported, did not, or could not judge",
        "; ".join(f"{kind}: " + ", ".join(f"{v} {n}" for v, n in per.items()) for kind, per in breakdown.items()),
        _table(["items", *verdicts], rows)))


def _family_blocks(header: dict) -> dict:
    """``{family name: its block}`` of a report's header (the verdict plot reads them)."""
    return {family.name: header.get(family.name) for family in FAMILIES}


def _distribution_html(header: dict, ids: Sequence[str], scores: Mapping) -> str:
    pooled = header.get("scores") or {}
    figure = distribution_figure(scores, {m: pooled.get(m) for m in scores})
    plotted = [m for m in scores if any(v is not None for v in scores[m])]
    dots = {c.get_gid(): c for c in figure.axes[0].collections}
    for row, metric in enumerate(plotted):
        if f"dots-{row}" in dots:  # a dot per instance (not a histogram): each links to its instance
            dots[f"dots-{row}"].set_urls([f"#inst-{i}" for i, v in enumerate(scores[metric]) if v is not None])
    rows, lines = [], []
    for metric in plotted:
        ranked = sorted((v, i) for i, v in enumerate(scores[metric]) if v is not None)
        values = [v for v, _ in ranked]
        median = values[len(values) // 2] if len(values) % 2 else (values[len(values) // 2 - 1]
                                                                    + values[len(values) // 2]) / 2
        lowest = ", ".join(f'<a href="#inst-{i}">{html_text(ids[i], NAME_CHARS)}</a> {_percent(v)}'
                           for v, i in ranked[:LOWEST_SHOWN])
        rows.append([metric, len(values), _percent(pooled.get(metric)), _percent(median), (lowest,)])
        lines.append(f"{metric}: {len(values)} instances, pooled {_percent(pooled.get(metric))}, "
                     f"median {_percent(median)}, lowest {_percent(values[0])}")
    return figure_html(figure, "report-distribution", "distribution",
                       "Per-instance scores (×100): each dot an instance (click: go to it), bar = pooled score",
                       "; ".join(lines), _table(["metric", "instances", "pooled", "median",
                                                 f"lowest {LOWEST_SHOWN} (click: go to the instance)"], rows))
