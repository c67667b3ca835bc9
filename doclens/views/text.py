"""A report as plain text: the tables ``doclens score`` prints."""

from __future__ import annotations

from doclens.core.metrics import CLAIM_F1, MIN_SECTION_ITEMS
from doclens.core.tasks import SECTION_LABELS
from doclens.families import CLAIMS, FAMILIES, family_metrics, reported
from doclens.families.claims import OTHER_SECTION_BY_SECTION, OTHER_SECTION_COUNT
from doclens.views.labels import demo_banner
from doclens.views.visible import visible

#: how a warning of each level opens in a summary (doclens.core.errors.WARNING_LEVELS): a benign one is a note
LEVEL_WORDS = {"info": "note", "warning": "warning", "error": "error"}


def reported_metrics(scores: dict) -> list[str]:
    """The metrics a report's tables show, family by family: the DocLens metrics always, an
    opt-in family's where the report has its scores (:func:`doclens.families.reported`)."""
    return list(family_metrics(reported(scores)))


def summary_text(report, min_section_items: int = MIN_SECTION_ITEMS) -> str:
    """A plain-text table of a :class:`doclens.Report`: a banner first when a demo-quality or
    smoke-test judge made it (:func:`doclens.views.labels.demo_banner`), each metric pooled and
    macro with the counts behind it, per-section scores in their own table (each with its item
    count, those under ``min_section_items`` flagged), usage, the baselines
    side by side, the signature and the warnings."""

    banner = demo_banner(report.signature, report.config)
    lines = [f"*** {banner} ***"] if banner else []
    lines += [f"DocLens {'(PARTIAL) ' if report.partial else ''}— {report.size} instances",
              f"{'metric':<20}{'pooled':>8}{'macro':>8}{'items':>8}{'empty':>7}{'skipped':>9}"]
    for metric in reported_metrics(report.scores):
        c = report.counts.get(metric, {})
        lines.append(f"{metric:<20}{_fmt(report.scores.get(metric)):>8}{_fmt(report.scores.get(metric + '_macro')):>8}"
                     f"{c.get('items', 0):>8}{c.get('empty', 0):>7}{c.get('skipped', 0):>9}")
        if metric == "claim_precision" and CLAIM_F1 in report.scores:  # derived: no counts of its own
            lines.append(f"{CLAIM_F1:<20}{_fmt(report.scores.get(CLAIM_F1)):>8}"
                         f"{_fmt(report.scores.get(CLAIM_F1 + '_macro')):>8}")
    lines += not_applicable_lines(report.counts)
    lines += section_table(report.sections, _fmt, min_section_items)
    lines += placement_lines(report.counts)
    lines += review_lines(report.counts)
    lines += _run_lines(report)
    lines += _side_by_side_lines(report.side_by_side())
    lines.append(f"signature: {report.signature}")
    lines.extend(f"{LEVEL_WORDS[level]}: {message}" for level, message in report.levelled_warnings())
    return visible("\n".join(lines))  # sections, signature, warnings: drawn as they are (views/visible.py)


def _fmt(value: float | None) -> str:
    """A score ×100 in six characters, or ``n/a``."""
    return "   n/a" if value is None else f"{100 * value:6.2f}"


def _run_lines(report) -> list[str]:
    """The summary's lines on the run: citations found, unparsed replies, failed calls, usage."""
    lines = []
    citations = report.counts.get("citations") or {}
    if citations.get("statements"):
        lines.append(f"statements={citations['statements']} uncited={citations['uncited_statements']} "
                     f"inherited={citations['inherited_statements']} invalid ids={citations['invalid_ids']}")
    if any(report.unparsed.values()):
        lines.append("unparsed judge replies: " + ", ".join(f"{k}={v}" for k, v in report.unparsed.items() if v))
    if any(report.failed.values()):
        lines.append("failed calls (no verdict): " + ", ".join(f"{k}={v}" for k, v in report.failed.items() if v))
    if report.usage:
        u = report.usage
        lines.append(f"calls={u.get('calls', 0)} cached={u.get('cached_calls', 0)} retries={u.get('retries', 0)} "
                     f"failed={u.get('failed_calls', 0)} "
                     f"tokens={u.get('prompt_tokens', 0) + u.get('completion_tokens', 0)} "
                     f"cost=${u.get('cost_usd', 0):.4f} pairs={u.get('pairs', 0)}")
    return lines


def _side_by_side_lines(comparison: list[dict]) -> list[str]:
    """DocLens's claim recall beside the baselines' recalls (:meth:`doclens.Report.side_by_side`)."""
    if not comparison:
        return []
    columns = [c for c in comparison[0] if c != "part"]
    lines = ["side by side (DocLens claim recall, baseline recalls; baselines are per-instance means):",
             f"  {'part':<20}" + "".join(f"{c:>18}" for c in columns)]
    lines += [f"  {row['part']:<20}" + "".join(f"{_fmt(row[c]):>18}" for c in columns) for row in comparison]
    return lines


def review_lines(counts: dict) -> list[str]:
    """The review queue (``--review-below``): how many claim verdicts a person should read, of how
    many the judge gave a confidence for; nothing when no queue was asked."""
    review = counts.get("review")
    if not review:
        return []
    line = (f"to review: {review['claims']} of {review['rated']} claim verdicts have a confidence under "
            f"{review['below']:g} (marked 'review' in the JSON and on the report page)")
    if review.get("unrated"):
        line += f"; {review['unrated']} verdicts have no confidence (the judge gives none) and are not in the queue"
    return [line]


def placement_lines(counts: dict) -> list[str]:
    """Where the premise note states note claims, beyond their own section: the claims *stated in
    another section* (``premise_scope="note"``: supported, and the sentence that supports them lies
    outside their own section), overall and per section, and the section fallbacks (claims judged
    against the whole note, which lacks their section). Nothing when neither happened."""
    metrics = [m for m in CLAIMS.metrics if m in counts]
    lines = []
    other = {m: counts[m].get(OTHER_SECTION_COUNT) for m in metrics}
    if any(other.values()):
        lines.append("stated in another section (supported by a sentence outside their own section): "
                     + ", ".join(f"{m}={n}" for m, n in other.items() if n is not None))
        for m in metrics:
            by_section = {s: n for s, n in (counts[m].get(OTHER_SECTION_BY_SECTION) or {}).items() if n}
            if by_section:
                lines.append(f"  {m} by section: "
                             + ", ".join(f"{SECTION_LABELS.get(s, s)}={n}" for s, n in by_section.items()))
    fallbacks = {m: counts[m].get("section_fallbacks") for m in metrics}
    if any(fallbacks.values()):  # note claims judged against the whole note, which lacked their section
        lines.append("section fallbacks (claims judged against the whole note, which lacks their section): "
                     + ", ".join(f"{m}={n}" for m, n in fallbacks.items() if n is not None))
    return lines


def not_applicable_lines(counts: dict) -> list[str]:
    """``n/a: citation_recall, citation_precision for 40 instance(s) …``: the instances a family's
    metrics did not apply to (the citation family's uncited outputs), one line per count."""
    lines = []
    for family in FAMILIES:
        found: set[int] = {number for metric in family.metrics  # neither None nor 0
                           if (number := (counts.get(metric) or {}).get("not_applicable"))}
        for number in sorted(found):
            metrics = [m for m in family.metrics if (counts.get(m) or {}).get("not_applicable") == number]
            lines.append(f"n/a: {', '.join(metrics)} for {number} instance(s) {family.not_applicable_reason}")
    return lines


def section_table(sections: dict, fmt, min_section_items: int = MIN_SECTION_ITEMS) -> list[str]:
    """Per-section scores (``note_generation``) in a table of their own: one row per section (its
    human name), one column per metric that has a score in some section, each pooled over that
    section's items and shown with their count, ``(n=8)``; a score resting on fewer than
    ``min_section_items`` items is flagged ``*`` and the table says so below."""
    if not sections:
        return []
    shown = [m for m in family_metrics()
             if any((scores or {}).get(m) is not None for scores in sections.values())]
    if not shown:
        return []

    def cell(scores: dict, metric: str) -> str:
        items = scores.get(f"{metric}_items")
        if scores.get(metric) is None or items is None:
            return fmt(scores.get(metric)).strip()
        return f"{fmt(scores[metric]).strip()} (n={items})" + ("*" if items < min_section_items else "")

    widths = [max(22, len(m) + 2) for m in shown]  # a metric name never runs into the next one
    lines = ["per note section (pooled over the section's items; n = items):",
             f"  {'section':<24}" + "".join(f"{m:>{w}}" for m, w in zip(shown, widths))]
    flagged = False
    for section, scores in sections.items():
        cells = [cell(scores or {}, m) for m in shown]
        flagged = flagged or any(c.endswith("*") for c in cells)
        lines.append(f"  {SECTION_LABELS.get(section, section):<24}" + "".join(f"{c:>{w}}" for c, w in zip(cells, widths)))
    if flagged:
        lines.append(f"  * fewer than {min_section_items} items: too few to read much into "
                     "(--min-section-items sets the threshold)")
    return lines


def agreement_text(mode: str, results: list[dict], human: str, column=None) -> str:
    """The tables ``doclens agreement`` prints: per-instance correlations (``mode="instance"``,
    the human scores in ``column`` of ``human``) or pairwise agreement (``mode="pairwise"``)."""

    def fmt(value):
        return "   n/a" if value is None else f"{value:6.3f}"

    lines: list[str] = []
    if mode == "instance":
        lines.append(f"per-instance agreement with {human} column {column!r}")
        lines.append(f"{'metric':<20}{'n':>6}{'spearman':>10}{'kendall':>10}{'unrated':>9}{'no score':>10}")
        for r in results:
            lines.append(f"{r['metric']:<20}{r['n']:>6}{fmt(r['spearman_rho']):>10}{fmt(r['kendall_tau_b']):>10}"
                         f"{r['human_unrated'] + r['unrated_instances']:>9}{r['metric_undefined']:>10}"
                         + (f"  {r['note']}" if r["note"] else ""))
        lines.append("spearman = Spearman rho, kendall = Kendall tau-b; unrated: instances without a human score; "
                     "no score: rated instances where the metric is undefined (left out)")
    else:
        lines.append(f"pairwise agreement with {human}")
        lines.append(f"{'metric':<20}{'pairs':>7}{'agree':>7}{'disagree':>9}{'m-ties':>8}{'h-ties':>8}{'undef':>7}"
                     f"{'agreement':>11}")
        for r in results:
            lines.append(f"{r['metric']:<20}{r['comparisons']:>7}{r['agree']:>7}{r['disagree']:>9}{r['metric_ties']:>8}"
                         f"{r['human_ties']:>8}{r['undefined']:>7}{fmt(r['agreement']):>11}"
                         + (f"  {r['note']}" if r["note"] else ""))
        lines.append("agreement = agree / (agree + disagree + metric ties); human ties and undefined scores left out")
    return "\n".join(lines)
