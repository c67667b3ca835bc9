"""Static HTML views of scores: a per-instance report and a leaderboard.

Both pages are single self-contained files (inline CSS and JS, no CDN, no network): open them
offline. Every value written into a page (ids, predictions, claims, explanations, source units,
system names, signatures, warnings, and numbers and citation ids too) goes through
:func:`html.escape`, quotes included. The Content-Security-Policy (:func:`content_security_policy`)
loads nothing from anywhere and runs no inline script or style except the page's own, allowed by
its SHA-256 hash: no ``'unsafe-inline'``; ``base-uri 'none'`` and ``form-action 'none'``.

Pages are written to the file as they are produced, instance by instance, so memory does not grow
with the page. Anchors: the instance at position ``n`` (0-based, report order) is ``#inst-n``
and its source unit ``k`` is ``#src-n-k`` (positions, not ids, so any id makes a valid anchor).

Statement colours (citation verdicts): **supported** (its citations entail it and every citation
is precise), **partial** (entailed, some citation imprecise), **unsupported** (not entailed, no
citation, or an invalid id), **unparsed** (no verdict: the judge's reply could not be read, or
the call failed); uncoloured where the citation family does not apply (no source, or, by default,
an output that cites nothing: :mod:`doclens.families.citations`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape
from typing import IO

from doclens.core.metrics import METRICS
from doclens.core.types import NO_VERDICT, CitationVerdict, ClaimVerdict, InstanceResult
from doclens.families import APPLIES, CITATIONS, CountingRule
from doclens.inputs.jsonl import SourceIndex
from doclens.reports.files import write_atomically
from doclens.stats.bootstrap import Interval
from doclens.views.labels import demo_banner, judge_label
from doclens.views.text import not_applicable_lines, reported_metrics
from doclens.views.visible import html_attribute, html_text, visible

_STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:1100px;padding:1em;color:#1b1b1b}
h1{font-size:1.4em}h2{font-size:1.15em;margin:.2em 0}h3{font-size:1em;margin:.8em 0 .3em}
code,.sig{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px;word-break:break-all}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:3px 7px;text-align:left;vertical-align:top}
th.sortable{cursor:pointer;background:#f3f3f3}th.sortable:after{content:" \\2195";color:#999}
.instance{border:1px solid #ccc;border-radius:6px;padding:.6em 1em;margin:1em 0}
.only-failures .instance[data-failures="0"]{display:none}
.stmt{padding:1px 2px;border-radius:3px}
.stmt.supported{background:#d9f2d9}.stmt.partial{background:#fff0c2}.stmt.unsupported{background:#f9d0d0}
.stmt.unparsed{background:#e2e2e2}.stmt.nocheck{background:none}
.cite{font-size:.85em;text-decoration:none;margin-left:1px}.cite.imprecise{color:#b35c00}.cite.invalid{color:#b00020;text-decoration:line-through}
.section-label{display:block;font-weight:600;margin-top:.4em;color:#555;font-size:.85em;text-transform:uppercase}
ul.claims{list-style:none;padding-left:.2em}ul.claims li{margin:.15em 0}
.mark{display:inline-block;width:1.3em;font-weight:700}.supported>.mark{color:#1a7f37}.unsupported>.mark{color:#b00020}
.unparsed>.mark{color:#666}.why{color:#555;font-size:.9em;margin-left:1.3em}
ol.source{padding-left:3em}ol.source li{margin:.1em 0;border-radius:3px}
ol.source li:target,ol.source li.highlight{background:#ffe08a;outline:2px solid #e0a800}
.legend span{margin-right:.8em}.muted{color:#666}.warn{color:#b00020}
"""

_REPORT_SCRIPT = """
(function(){
  var box=document.getElementById('only-failures');
  if(box){box.addEventListener('change',function(){document.body.classList.toggle('only-failures',box.checked);});}
  document.addEventListener('click',function(ev){
    var link=ev.target.closest?ev.target.closest('a.cite'):null;
    if(!link)return;
    var old=document.querySelectorAll('li.highlight');
    for(var i=0;i<old.length;i++){old[i].classList.remove('highlight');}
    var target=document.getElementById(link.getAttribute('href').slice(1));
    if(target){target.classList.add('highlight');}
  });
})();
"""

_SORT_SCRIPT = """
(function(){
  var heads=document.querySelectorAll('th.sortable');
  for(var i=0;i<heads.length;i++){heads[i].addEventListener('click',sortBy);}
  function value(row,col){var cell=row.cells[col];var v=cell.getAttribute('data-value');
    if(v===null)return cell.textContent;if(v==='')return null;var n=parseFloat(v);return isNaN(n)?v:n;}
  function sortBy(ev){
    var th=ev.currentTarget,table=th.closest('table'),body=table.tBodies[0],col=th.cellIndex;
    var asc=th.getAttribute('data-dir')!=='asc';th.setAttribute('data-dir',asc?'asc':'desc');
    var rows=Array.prototype.slice.call(body.rows);
    rows.sort(function(a,b){var x=value(a,col),y=value(b,col);
      if(x===null&&y===null)return 0;if(x===null)return 1;if(y===null)return -1;
      if(x<y)return asc?-1:1;if(x>y)return asc?1:-1;return 0;});
    for(var j=0;j<rows.length;j++){body.appendChild(rows[j]);}
  }
})();
"""


def _source_hash(text: str) -> str:
    """A CSP hash source (``'sha256-…'``) of an inline ``<script>`` or ``<style>`` body."""
    import base64
    import hashlib

    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def content_security_policy(script: str) -> str:
    """The page's policy: nothing may load from anywhere (``default-src 'none'``); the only
    script that runs is the page's own inline ``script``, and the only style its own ``<style>``,
    both allowed by their SHA-256 hash (never ``'unsafe-inline'``, so an injected ``<script>`` or
    ``onerror=`` attribute would not run even if it escaped escaping); no ``<base>`` may re-point
    links and no form may submit anywhere. (No ``"``, ``<`` or ``&`` in it: it goes into an
    attribute as is.)"""
    return (f"default-src 'none'; script-src {_source_hash(script)}; style-src {_source_hash(_STYLE)}; "
            "base-uri 'none'; form-action 'none'")


def _head(handle: IO[str], title: str, script: str) -> None:
    handle.write('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
                 '<meta name="viewport" content="width=device-width, initial-scale=1">'
                 f'<meta http-equiv="Content-Security-Policy" content="{content_security_policy(script)}">'
                 f"<title>{escape(title)}</title><style>{_STYLE}</style></head>\n<body>\n")


def _e(value) -> str:
    """Any value as HTML text or attribute content: ``str`` then :func:`html.escape` (quotes too)."""
    return escape(str(value))


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.2f}"


def _interval_cell(interval: Interval | None, point: float | None = None) -> str:
    """A ``<td>`` with the point (×100) and its interval; ``data-value`` for sorting."""
    if interval is None:
        return f'<td data-value="{"" if point is None else _e(point)}">{_percent(point)}</td>'
    if interval.point is None:
        return '<td data-value="">n/a</td>'
    bounds = f' <span class="muted">{escape(interval.note)}</span>' if interval.low is None else (
        f' <span class="muted">[{100 * interval.low:.2f}, {100 * interval.high:.2f}]</span>')
    return f'<td data-value="{_e(repr(interval.point))}">{100 * interval.point:.2f}{bounds}</td>'


# ---- the per-instance report -------------------------------------------------------------------
def statement_verdict(statement: CitationVerdict) -> str:
    """``supported``, ``partial``, ``unsupported`` or ``unparsed`` (see the module docstring)."""
    if statement.status in NO_VERDICT:  # unparsed, or failed (the explanation says which)
        return "unparsed"
    if not statement.recall_hit:
        return "unsupported"
    return "supported" if len(statement.precise) == len(statement.cited) else "partial"


def claim_verdict(claim: ClaimVerdict) -> str:
    if claim.status in NO_VERDICT:
        return "unparsed"
    return "supported" if claim.entailed else "unsupported"


def instance_failures(result: InstanceResult, rule: CountingRule | None = None) -> int:
    """Unsupported or unparsed claims, statements that fail citation recall and imprecise
    citations: what the report's failure filter counts. Statements count only where the citation
    family applies under ``rule`` (not for an output that cites nothing, by default)."""
    claims = sum(claim_verdict(c) != "supported" for c in result.reference_claims + result.prediction_claims)
    if CITATIONS.applicability(result, CountingRule.of(rule)) != APPLIES:
        return claims
    return claims + sum(not s.recall_hit for s in result.statements) + sum(
        len(s.cited) - len(s.precise) for s in result.statements)


def _claims_html(claims: Sequence[ClaimVerdict], label: str) -> str:
    if not claims:
        return f'<h3>{escape(label)}</h3><p class="muted">no claims</p>'
    parts = [f"<h3>{escape(label)}</h3><ul class=\"claims\">"]
    section = object()
    for claim in claims:
        if claim.section != section and claim.section:
            parts.append(f'<li class="section-label">{html_text(claim.section)}</li>')
        section = claim.section
        verdict = claim_verdict(claim)
        mark = {"supported": "&#10003;", "unsupported": "&#10007;", "unparsed": "?"}[verdict]
        why = f'<div class="why">{html_text(claim.explanation)}</div>' if claim.explanation else ""
        parts.append(f'<li class="claim {verdict}" data-verdict="{verdict}"><span class="mark" '
                     f'title="{verdict}">{mark}</span>{html_text(claim.text)}{why}</li>')
    parts.append("</ul>")
    return "".join(parts)


# ---- source support (its own section of the page) ---------------------------------------------
#: verdict → (css class of the claim list, mark)
_SUPPORT_MARKS = {"supported": ("supported", "&#10003;"), "not_supported": ("unsupported", "&#10007;"),
                  "not_addressed": ("unparsed", "&#8709;"), None: ("unparsed", "?")}
#: evidence facts shown per claim (the report JSON keeps all of them)
SUPPORT_EVIDENCE_SHOWN = 5


def _metric_table_html(scores: dict, counts: dict, intervals: dict | None) -> str:
    """The one metric table: every metric of every family the report has (pooled and macro, with
    intervals when given), then the families' ``n/a`` lines."""
    parts = ['<table><thead><tr><th>metric</th><th>pooled</th><th>macro</th></tr></thead><tbody>']
    for metric in reported_metrics(scores):
        pooled = intervals.get(metric) if intervals else None
        macro = intervals.get(f"{metric}_macro") if intervals else None
        parts.append(f"<tr><td>{escape(metric)}</td>{_interval_cell(pooled, scores.get(metric))}"
                     f"{_interval_cell(macro, scores.get(metric + '_macro'))}</tr>")
    parts.append("</tbody></table>")
    parts += [f'<p class="muted">{escape(line)}</p>' for line in not_applicable_lines(counts)]
    return "".join(parts)


def _support_block_html(block: dict) -> str:
    """What the source-support family reports beyond its rates (which are in the metric table)."""
    parts = [f'<p class="muted">source support: {_e(block.get("verdicts"))}-way judge; claims: '
             + escape(", ".join(f"{k} {v}" for k, v in (block.get("claims") or {}).items()))
             + f'; retrieved for {_e(block.get("retrieved_claims", 0))}, whole source for '
             f'{_e(block.get("whole_source_claims", 0))}</p>']
    if block.get("note"):
        parts.append(f'<p class="warn">{escape(str(block["note"]))}</p>')
    return "".join(parts)


def _support_html(verdicts, position: int) -> str:
    """Each prediction claim with its source-support verdict, explanation and best evidence."""
    if not verdicts:
        return '<h3>Source support</h3><p class="muted">no prediction claims</p>'
    parts = ['<h3>Source support (is each prediction claim in the source?)</h3><ul class="claims">']
    section = object()
    for verdict in verdicts:
        if verdict.section != section and verdict.section:
            parts.append(f'<li class="section-label">{html_text(verdict.section)}</li>')
        section = verdict.section
        css, mark = _SUPPORT_MARKS.get(verdict.verdict if verdict.status == "ok" else None, _SUPPORT_MARKS[None])
        label = (verdict.verdict or verdict.status).replace("_", " ")
        why = f'<div class="why">{escape(label)}: {html_text(verdict.explanation)}</div>'
        shown = verdict.evidence[:SUPPORT_EVIDENCE_SHOWN]
        evidence = "".join(
            f'<li><a class="cite" href="#src-{_e(position)}-{_e(item.get("unit"))}">[{_e(item.get("unit"))}]</a> '
            f'{html_text(item.get("text", ""))}'
            + (f' <span class="muted">rank {_e(item.get("rank"))}, score {_e(round(item["score"], 4))}</span>'
               if item.get("score") is not None else "") + "</li>" for item in shown)
        how = "retrieved" if verdict.retrieved else "whole source"
        details = (f'<details class="why"><summary>evidence ({how}, {_e(len(shown))} of {_e(len(verdict.evidence))} '
                   f'shown)</summary><ol>{evidence}</ol></details>' if verdict.evidence else "")
        parts.append(f'<li class="claim {css}" data-verdict="{_e(verdict.verdict)}"><span class="mark" '
                     f'title="{escape(label)}">{mark}</span>{html_text(verdict.text)}{why}{details}</li>')
    parts.append("</ul>")
    return "".join(parts)


def _statements_html(result: InstanceResult, position: int, rule: CountingRule | None = None) -> str:
    checked = CITATIONS.applicability(result, CountingRule.of(rule)) == APPLIES
    parts = []
    section = object()
    for statement in result.statements:
        if statement.section != section and statement.section:
            parts.append(f'<span class="section-label">{html_text(statement.section)}</span>')
        section = statement.section
        verdict = statement_verdict(statement) if checked else "nocheck"
        title = verdict + (" (citations inherited)" if statement.inherited else "") + (
            f": {statement.explanation}" if statement.explanation else "")
        cites = []
        for cited in statement.cited:
            if cited in statement.invalid:
                cites.append(f'<span class="cite invalid" title="no source unit {_e(cited)}">[{_e(cited)}]</span>')
            else:
                precision = "precise" if cited in statement.precise else "imprecise"
                cites.append(f'<a class="cite {precision}" href="#src-{_e(position)}-{_e(cited)}" '
                             f'title="{precision} citation of source unit {_e(cited)}">[{_e(cited)}]</a>')
        parts.append(f'<span class="stmt {verdict}" data-verdict="{verdict}" title="{html_attribute(title)}">'
                     f'{html_text(statement.text)}</span>{"".join(cites)} ')
    return "".join(parts)


def _instance_html(result: InstanceResult, position: int, source: dict | None,
                   rule: CountingRule | None = None) -> str:
    from doclens.parsing.source_units import parse_source_units

    failures = instance_failures(result, rule)
    scores = " ".join(f"{m.replace('_', ' ')} {_percent(result.scores.get(m))}" for m in METRICS
                      if m in result.scores)
    parts = [f'<section class="instance" id="inst-{_e(position)}" data-failures="{_e(failures)}">',
             f'<h2>{html_text(result.id)} <span class="muted">{html_text(result.task)} · {_e(failures)} '
             'failure(s)</span></h2>',
             f'<div class="muted">{escape(scores)}</div><h3>Prediction</h3><p class="prediction">']
    units = None
    if source is not None and source.get("source") is not None:
        try:
            units = parse_source_units(source["source"])
        except ValueError:
            units = None
    if result.statements:
        parts.append(_statements_html(result, position, rule))
    elif source is not None:
        parts.append(html_text(source.get("prediction", "")))
    else:
        parts.append('<span class="muted">(no statements in the scores file; pass --input to show the text)</span>')
    parts.append("</p>")
    parts.append(_claims_html(result.reference_claims, "Reference claims (claim recall: is each in the prediction?)"))
    parts.append(_claims_html(result.prediction_claims,
                              "Prediction claims (claim precision: is each in the reference?)"))
    if result.source_support is not None:
        parts.append(_support_html(result.source_support, position))
    if units is not None:
        parts.append('<h3>Source</h3><ol class="source" start="0">')
        for unit in units:
            parts.append(f'<li id="src-{_e(position)}-{_e(unit.index)}" value="{_e(unit.index)}">'
                         f'{html_text(unit.premise_text)}</li>')
        parts.append("</ol>")
    elif result.has_source:
        parts.append('<p class="muted">Source units are not stored in the scores file; pass --input to show them '
                     "(citation links then jump to them).</p>")
    parts.append("</section>\n")
    return "".join(parts)


def write_report_html(header: dict, instances: Iterable[InstanceResult], handle: IO[str],
                      intervals: dict[str, Interval] | None = None, sources: SourceIndex | None = None,
                      bootstrap: str = "", count: int | None = None, title: str | None = None,
                      positions: Sequence[int] | None = None, note: str | None = None,
                      plots: str = "") -> int:
    """Write the per-instance page to ``handle``, one instance at a time; returns the instances
    written. ``header``: the report's top-level fields (``scores``, ``signature``, ``warnings``,
    ``partial``, ``error``), e.g. ``report.to_dict()``; ``instances``: its instances in order
    (a :func:`doclens.reports.scores_files.iter_instance_results` generator keeps memory bounded),
    or a selection of them with their ``positions`` in the file and a ``note`` saying what is
    shown (``doclens report --max-instances``: failures first); ``sources`` (the scored JSONL)
    adds source units and raw predictions; ``plots``: the plot section's markup
    (:func:`doclens.views.plots.report_plots_html`), written above the instances."""
    scores = header.get("scores") or {}
    rule = CountingRule.from_config(header.get("config"))
    title = title or ("DocLens report" + (f" — {count} instances" if count is not None else ""))
    _head(handle, title, _REPORT_SCRIPT)
    handle.write(f"<h1>{escape(title)}</h1>\n")
    banner = demo_banner(header.get("signature"), header.get("config"))
    if banner:
        handle.write(f'<p class="warn banner" role="alert"><b>{escape(banner)}</b></p>\n')
    if header.get("partial"):
        handle.write(f'<p class="warn">PARTIAL report: {html_text(header.get("error"))}</p>')
    handle.write(_metric_table_html(scores, header.get("counts") or {}, intervals))
    if bootstrap:
        handle.write(f'<p class="muted">intervals: {escape(bootstrap)} over instances</p>')
    if header.get("source_support"):
        handle.write(_support_block_html(header["source_support"]))
    handle.write(f'<p>signature: <code class="sig">{html_text(header.get("signature"))}</code></p>')
    for warning in header.get("warnings") or []:
        handle.write(f'<p class="warn">warning: {html_text(warning)}</p>')
    handle.write(plots)
    handle.write('<p class="legend">statements: <span class="stmt supported">supported</span>'
                 '<span class="stmt partial">entailed, a citation imprecise</span>'
                 '<span class="stmt unsupported">unsupported / uncited / invalid id</span>'
                 '<span class="stmt unparsed">unparsed</span></p>'
                 '<p><label><input type="checkbox" id="only-failures"> show only instances with failures</label></p>\n')
    if note:
        handle.write(f'<p class="warn" role="note">{escape(note)}</p>\n')
    written = 0
    for position, result in zip(positions, instances) if positions is not None else enumerate(instances):
        source = sources.get(result.id) if sources is not None else None
        handle.write(_instance_html(result, position, source, rule))
        written += 1
    handle.write(f"<script>{_REPORT_SCRIPT}</script>\n</body></html>\n")
    return written


# ---- the leaderboard ---------------------------------------------------------------------------
def write_leaderboard_html(groups: dict, handle: IO[str], metric: str, bootstrap: str,
                           title: str = "DocLens leaderboard", plots: dict[str, str] | None = None) -> None:
    """One sortable table per signature (``groups``: ``{signature: ranked entries}`` from
    :func:`doclens.views.leaderboard.rank_group`), each followed by its plots' markup when
    ``plots`` (``{signature: markup}``, :func:`doclens.views.plots.leaderboard_plots_html`) has it."""
    _head(handle, title, _SORT_SCRIPT)
    handle.write(f"<h1>{escape(title)}</h1>\n<p>Ranked by <b>{escape(metric)}</b> (pooled). Scores ×100 with "
                 f"{escape(bootstrap)} percentile intervals over instances. Results are ranked only against "
                 "results with the same signature: each table is one signature. Click a header to sort.</p>\n")
    if len(groups) > 1:
        handle.write(f'<p class="warn">{len(groups)} different signatures: numbers in different tables are '
                     "not comparable.</p>\n")
    banners = [b for b in dict.fromkeys(demo_banner(signature) for signature in groups) if b]
    for banner in banners:
        handle.write(f'<p class="warn banner" role="alert"><b>{escape(banner)}</b></p>\n')
    for number, (signature, entries) in enumerate(groups.items(), start=1):
        banner = demo_banner(signature)
        handle.write(f'<h2>Table {number}: {escape(visible(judge_label(signature)))}</h2>'
                     + (f'<p class="warn"><b>{escape(banner)}</b></p>' if banner else "")
                     + f'<p>signature: <code class="sig">{html_text(signature)}</code></p>'
                     '<table class="board"><thead><tr><th class="sortable">rank</th><th class="sortable">system</th>'
                     '<th class="sortable">instances</th>')
        for m in METRICS:
            handle.write(f'<th class="sortable">{escape(m)}</th>')
        handle.write('<th class="sortable">&Delta; vs #1</th><th>note</th></tr></thead><tbody>')
        for entry in entries:
            delta = entry.versus_leader
            if delta is None or delta.delta is None:
                delta_cell = '<td data-value="">&mdash;</td>'
            else:
                bounds = (escape(delta.verdict) if delta.low is None else
                          f"[{100 * delta.low:+.2f}, {100 * delta.high:+.2f}]")
                delta_cell = (f'<td data-value="{_e(repr(delta.delta))}">{100 * delta.delta:+.2f} '
                              f'<span class="muted">{bounds}</span></td>')
            handle.write(f'<tr><td data-value="{_e(entry.rank or "")}">{_e(entry.rank or "-")}</td>'
                         f'<td title="{html_attribute(entry.path)}">{html_text(entry.system)}</td>'
                         f'<td data-value="{_e(entry.instances)}">{_e(entry.instances)}</td>'
                         + "".join(_interval_cell(entry.intervals[m]) for m in METRICS)
                         + delta_cell + f"<td>{escape(entry.versus_leader_note)}</td></tr>")
        handle.write("</tbody></table>\n")
        handle.write((plots or {}).get(signature, ""))
    handle.write(f"<script>{_SORT_SCRIPT}</script>\n</body></html>\n")


def write_page(path: str, write) -> None:
    """Write an HTML page atomically (:func:`doclens.reports.files.write_atomically`); a lone surrogate
    read from a scores file shows as ``\\udc00``, never an error."""
    write_atomically(path, write, errors="backslashreplace")

