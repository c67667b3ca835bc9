"""What ``doclens judge-check`` shows: a plain-text summary, and a self-contained HTML page with
the confusion matrix, per-group bars and the items judged wrongly.

Claims, explanations, ids and group names come from the user's file or the judge: untrusted. In
the terminal they go through :func:`~doclens.views.visible.visible` (control and bidi characters
written as ``⟨U+XXXX⟩``); on the page through the templates' autoescape and ``<bdi>``
(:mod:`doclens.views.html`); in pictures through :func:`~doclens.reports.plots.plain_label` (no
mathtext), and the pictures' text alternatives are escaped (:func:`~doclens.views.plots.svg_markup`).
"""

from __future__ import annotations

from doclens.reports.plots import new_figure, plain_label
from doclens.views.visible import visible

#: columns of the confusion matrix, in order
VERDICT_COLUMNS = ("judged_supported", "judged_unsupported", "no_verdict")
#: the supported-rate gap a group may have before it is flagged (the issue's "within 10 points")
GAP_FLAG = 0.10
_SHOWN_CLAIM = 110


def _number(value) -> str:
    return "  n/a" if value is None else f"{value:.3f}"


def _interval(figures: dict) -> str:
    low, high = figures["balanced_accuracy_interval"]
    return f"[{low:.3f}, {high:.3f}]" if low is not None else (figures.get("interval_note") or "")


def _row(name: str, figures: dict) -> str:
    gap = figures["supported_rate_gap"]
    flag = " *" if gap is not None and abs(gap) > GAP_FLAG else ""
    return (f"  {visible(name)[:22]:<22}{figures['n']:>6}  {_number(figures['balanced_accuracy'])} "
            f"{_interval(figures):<28}{_number(figures['supported_accuracy']):>8}{_number(figures['unsupported_accuracy']):>8}"
            f"{_number(figures['labelled_supported_rate']):>8}{_number(figures['judge_supported_rate']):>8}"
            f"{'n/a' if gap is None else f'{gap:+.3f}':>8}{flag}{figures['no_verdict']:>6}")


def judge_text(judge: dict, show_wrong: int) -> list[str]:
    """One judge's block of :func:`check_text`."""
    lines = [f"judge: {visible(judge['name'])}   signature: {visible(judge['signature'])}",
             f"  built in {judge['seconds']['load']:.1f} s, judged in {judge['seconds']['judge']:.1f} s (a model "
             "loaded on first use loads while judging)",
             f"  {'':<22}{'items':>6}  {'bal.acc':<6} {'interval':<28}{'sup.acc':>8}{'uns.acc':>8}"
             f"{'lab.sup':>8}{'jud.sup':>8}{'gap':>8}{'no v.':>6}",
             _row("all", judge["overall"])]
    lines += [_row(f"side {side}", figures) for side, figures in judge["per_side"].items()]
    lines += [_row(group, figures) for group, figures in judge["per_group"].items()]
    missing = judge["no_verdict"]
    lines.append(f"  no verdict (counted as wrong): unparsed={missing['unparsed']} failed={missing['failed']}")
    confusion = judge["confusion"]
    lines.append("  confusion: " + "; ".join(f"labelled {label}: " + ", ".join(
        f"{column.replace('_', ' ')} {confusion[label][column]}" for column in VERDICT_COLUMNS)
        for label in ("supported", "unsupported")))
    lines += calibration_lines(judge.get("calibration"))
    wrong = judge["wrong"]
    lines.append(f"  judged wrongly: {len(wrong)} item(s)" + (f", first {show_wrong}:" if len(wrong) > show_wrong else ":"
                                                             if wrong else ""))
    for item in wrong[:show_wrong]:
        verdict = {True: "supported", False: "unsupported", None: item["status"]}[item["supported"]]
        claim = visible(item["claim"])
        lines.append(f"    [{visible(item['id'])}] labelled {'supported' if item['label'] else 'unsupported'}, "
                     f"judged {verdict}: {claim[:_SHOWN_CLAIM]}{'…' if len(claim) > _SHOWN_CLAIM else ''}")
    return lines


def calibration_lines(found: dict | None) -> list[str]:
    """The calibration block of :func:`judge_text`: expected calibration error, the reliability
    diagram as rows, accuracy by coverage, and what a calibrated map would read on these items (its
    ECE by chance, the accuracy it promises); one line when the judge gives no probabilities."""
    if found is None:
        return ["  calibration: n/a (the judge gives no probability for every verdict)"]
    lines = [f"  calibration: expected calibration error {found['ece']:.3f} over {found['items']} items "
             "(|mean probability - share labelled supported| per bin, weighted)",
             "  reliability: " + ", ".join(f"[{b['bin'][0]:.1f},{b['bin'][1]:.1f}) n={b['items']} "
                                          f"p={b['mean_probability']:.2f} sup={b['supported_share']:.2f}"
                                          for b in found["bins"])]
    coverage = found["accuracy_at_coverage"]
    lines.append("  accuracy of the most confident verdicts: " + ", ".join(
        f"{float(c):.0%} coverage {v['accuracy']:.3f} (n={v['items']}, confidence >= {v['least_confidence']:.2f})"
        for c, v in coverage.items()))
    reference = found.get("if_calibrated")
    if reference and reference["ece"]:
        lines.append(f"  were it calibrated: ECE {reference['ece']['median']:.3f} by chance on these items (median of "
                     f"{reference['ece']['draws']} draws of labels from the probabilities; 90% under "
                     f"{reference['ece']['p90']:.3f}); accuracy promised at " + ", ".join(
                         f"{float(c):.0%} coverage {a:.3f}" for c, a in reference["accuracy_at_coverage"].items()))
    in_sample = found.get("fitted_on_these_items")
    if in_sample:
        estimate = in_sample.get("out_of_fold")
        lines.append(f"  in-sample: the calibration was fitted on the {in_sample['half']} half"
                     + (f"; out of fold there it reads ECE {estimate['ece']:.3f}, accuracy at 80% coverage "
                        f"{estimate['accuracy_at_80']:.3f}" if estimate else ""))
    return lines


def side_by_side(judges: list[dict]) -> list[str]:
    """Two judges' balanced accuracy and supported-rate gap, row by row (all, sides, groups)."""
    first, second = judges
    names = [visible(j["name"])[:16] for j in judges]
    lines = [f"side by side: {'':<18}{'bal.acc ' + names[0]:>26}{'bal.acc ' + names[1]:>26}"
             f"{'gap ' + names[0]:>22}{'gap ' + names[1]:>22}"]
    rows = [("all", first["overall"], second["overall"])]
    rows += [(f"side {k}", v, second["per_side"].get(k)) for k, v in first["per_side"].items()]
    rows += [(k, v, second["per_group"].get(k)) for k, v in first["per_group"].items()]
    for name, a, b in rows:
        def cell(figures, key, signed=False):
            value = None if figures is None else figures[key]
            return "n/a" if value is None else (f"{value:+.3f}" if signed else f"{value:.3f}")
        lines.append(f"  {visible(name)[:30]:<30}{cell(a, 'balanced_accuracy'):>26}{cell(b, 'balanced_accuracy'):>26}"
                     f"{cell(a, 'supported_rate_gap', True):>22}{cell(b, 'supported_rate_gap', True):>22}")
    return lines


def check_text(result: dict, show_wrong: int = 20) -> str:
    """The summary ``doclens judge-check`` prints (``result``: what its ``--json`` writes)."""
    lines = [f"judge-check on {visible(result['set'])}: {result['items']} items "
             f"({result['undecided_left_out']} undecided left out); balanced accuracy with {result['bootstrap']} "
             "intervals over items; gap = judged minus labelled supported rate (* beyond "
             f"{GAP_FLAG:.2f})"]
    lines += [f"warning: {note}" for note in result.get("warnings", [])]
    for judge in result["judges"]:
        lines += [""] + judge_text(judge, show_wrong)
    paired = result.get("paired")
    if paired:
        lines += [""] + side_by_side(result["judges"])
        a, b = (visible(j["name"]) for j in result["judges"])
        test, difference = paired["mcnemar"], paired["balanced_accuracy_difference_b_minus_a"]
        low, high = difference["low"], difference["high"]
        delta = "n/a" if difference["delta"] is None else f"{difference['delta']:+.3f}"
        lines += ["", f"{b} against {a} (B - A): balanced accuracy {delta} "
                      + (f"[{low:+.3f}, {high:+.3f}]" if low is not None else difference["note"])
                      + f"; verdicts differ on {paired['disagree']} items; McNemar exact: only {a} right on "
                        f"{test['a_only']}, only {b} right on {test['b_only']}, p = {test['p_value']:.4g}"]
    return "\n".join(lines)


# ---- pictures ---------------------------------------------------------------------------------
def confusion_figure(judges: list[dict]):
    """One panel per judge: rows = labelled supported / unsupported, columns = judged supported,
    judged unsupported, no verdict; each cell a vector square (``pcolormesh``, never an embedded
    image, which the page's policy would not load) shaded by its share of its row, with its count
    and that share written in it. Cells: ``confusion-<judge>-<row>-<column>``."""
    import numpy as np
    from matplotlib import colormaps

    figure = new_figure(3.9 * len(judges) + 0.4, 2.9, "the judge-check page's confusion matrix")
    for j, (ax, judge) in enumerate(zip(figure.subplots(1, len(judges), squeeze=False)[0], judges)):
        table = judge["confusion"]
        counts = np.array([[table[label][column] for column in VERDICT_COLUMNS] for label in ("supported", "unsupported")],
                          dtype=float)
        shares = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)
        mesh = ax.pcolormesh(np.arange(4) - 0.5, np.arange(3) - 0.5, shares, cmap=colormaps["Blues"], vmin=0, vmax=1,
                             edgecolors="#ffffff", linewidth=2)
        mesh.set_gid(f"confusion-{j}")
        for r in range(2):
            for c in range(3):
                label = ax.text(c, r, f"{int(counts[r, c])}\n{100 * shares[r, c]:.0f}% of row", ha="center",
                                va="center", fontsize=9, color="#ffffff" if shares[r, c] > 0.55 else "#1b1b1b")
                label.set_gid(f"confusion-{j}-{r}-{c}")
        ax.set_xlim(-0.5, 2.5)
        ax.set_ylim(1.5, -0.5)
        ax.set_xticks(range(3), ["judged\nsupported", "judged\nunsupported", "no\nverdict"], fontsize=8)
        ax.set_yticks(range(2), ["labelled\nsupported", "labelled\nunsupported"], fontsize=8)
        ax.tick_params(length=0)
        for spine in ax.spines.values():
            spine.set_visible(False)
        ax.set_title(plain_label(f"{judge['name']}\nitems by label (rows) and verdict (columns)", limit=200),
                     fontsize=9)
    return figure


def _judge_bars(judge: dict, groups: list[str]) -> tuple[list[float], list[list[float]], list[float]]:
    """One judge's bars over ``groups`` ("all": its overall row): balanced accuracy (0 where
    undefined), its interval as (below, above) error lengths, and the supported-rate gap."""
    rows = [judge["overall"] if g == "all" else judge["per_group"].get(g) for g in groups]
    values = [r["balanced_accuracy"] if r and r["balanced_accuracy"] is not None else 0 for r in rows]
    errors = [[max(0.0, v - (r["balanced_accuracy_interval"][0] if r and r["balanced_accuracy_interval"][0]
                             is not None else v)) for v, r in zip(values, rows)],
              [max(0.0, (r["balanced_accuracy_interval"][1] if r and r["balanced_accuracy_interval"][1]
                         is not None else v) - v) for v, r in zip(values, rows)]]
    return values, errors, [r["supported_rate_gap"] or 0 if r else 0 for r in rows]


def group_figure(judges: list[dict]):
    """Per group (and overall): balanced accuracy with its interval, and the supported-rate gap
    (dashed lines at ±:data:`GAP_FLAG`); one bar per judge."""
    groups = ["all", *dict.fromkeys(g for judge in judges for g in judge["per_group"])]
    figure = new_figure(9.0, 0.38 * len(groups) * len(judges) + 1.4, "the judge-check page's group bars")
    accuracy, gap = figure.subplots(1, 2, sharey=True)
    height = 0.8 / len(judges)
    colours = ("#0072B2", "#E69F00")
    for j, judge in enumerate(judges):
        positions = [n + (j - (len(judges) - 1) / 2) * height for n in range(len(groups))]
        values, errors, gaps = _judge_bars(judge, groups)
        accuracy.barh(positions, values, height=height, xerr=errors, color=colours[j % 2],
                      label=plain_label(judge["name"]), error_kw={"elinewidth": 0.8, "capsize": 2})
        gap.barh(positions, gaps, height=height, color=colours[j % 2])
    accuracy.set_yticks(range(len(groups)), [plain_label(g) for g in groups], fontsize=8)
    accuracy.set_ylim(len(groups) - 0.5, -0.5)
    accuracy.set_xlim(0, 1)
    accuracy.axvline(0.5, color="#999999", linewidth=0.6, linestyle=":")
    accuracy.set_xlabel("balanced accuracy (bootstrap interval)")
    accuracy.set_title("Balanced accuracy per group\n(bar: point; line: interval; dotted: chance, 0.5)", fontsize=9)
    for x in (-GAP_FLAG, GAP_FLAG):
        gap.axvline(x, color="#b00020", linewidth=0.7, linestyle="--")
    gap.axvline(0, color="#333333", linewidth=0.6)
    gap.set_xlabel("supported-rate gap (judged - labelled)")
    gap.set_title(f"Supported-rate gap per group\n(dashed: ±{GAP_FLAG:.2f}, beyond it flagged)", fontsize=9)
    if len(judges) > 1:
        figure.legend(loc="outside lower center", ncols=2, fontsize=8, frameon=False)
    return figure


def _plots_html(result: dict) -> str:
    from doclens.views.plots import MISSING_EXTRA, figure_html, plots_available

    if not plots_available():
        return MISSING_EXTRA
    judges = result["judges"]
    names = " and ".join(visible(j["name"]) for j in judges)
    confusion = "; ".join(f"{visible(j['name'])}: " + ", ".join(
        f"labelled {label} {column.replace('_', ' ')} {j['confusion'][label][column]}"
        for label in ("supported", "unsupported") for column in VERDICT_COLUMNS) for j in judges)
    groups = "; ".join(f"{visible(j['name'])} {visible(g)}: balanced accuracy {f['balanced_accuracy']}, gap "
                       f"{f['supported_rate_gap']}" for j in judges for g, f in [("all", j["overall"]),
                                                                                 *j["per_group"].items()])
    return (figure_html(confusion_figure(judges), "check-confusion", "confusion", f"Confusion matrix: {names}",
                        confusion)
            + figure_html(group_figure(judges), "check-groups", "groups",
                          "Balanced accuracy and supported-rate gap per group", groups))


def write_check_html(path: str, result: dict) -> None:
    """The judge-check page (``result``: what ``--json`` writes), written atomically."""
    from doclens.views.html import write_judge_check_html, write_page

    plots = _plots_html(result)
    write_page(path, lambda handle: write_judge_check_html(result, handle, VERDICT_COLUMNS, GAP_FLAG, plots))
