"""Static HTML views of scores: a per-instance report and a leaderboard.

Both pages are single self-contained files (inline CSS and JS, no CDN, no network): open them
offline. Their markup is in Jinja2 templates (``doclens/views/templates``, shipped as package
data) rendered with autoescape on and ``StrictUndefined``: every value written into a page (ids,
predictions, claims, explanations, source units, system names, signatures, warnings, and numbers
and citation ids too) is escaped, quotes included, in :func:`html.escape`'s spelling; only the
package's own markup (the style, the script, the policy, the plots' SVG) is passed as ``Markup``.
The Content-Security-Policy (:func:`content_security_policy`) loads nothing from anywhere and runs
no inline script or style except the page's own, allowed by its SHA-256 hash: no
``'unsafe-inline'``; ``base-uri 'none'`` and ``form-action 'none'``.

Pages are written to the file as they are produced (``Template.generate``), instance by instance,
so memory does not grow with the page. Anchors: the instance at position ``n`` (0-based, report order) is ``#inst-n``
and its source unit ``k`` is ``#src-n-k`` (positions, not ids, so any id makes a valid anchor).

Statement colours (citation verdicts): **supported** (its citations entail it and every citation
is precise), **partial** (entailed, some citation imprecise), **unsupported** (not entailed, no
citation, or an invalid id), **unparsed** (no verdict: the judge's reply could not be read, or
the call failed); uncoloured where the citation family does not apply (no source, or, by default,
an output that cites nothing: :mod:`doclens.families.citations`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache
from html import escape
from typing import IO

import jinja2
from markupsafe import Markup

from doclens.core.signature import Signature
from doclens.core.types import NO_VERDICT, CitationVerdict, ClaimVerdict, InstanceResult
from doclens.families import APPLIES, CITATIONS, FAMILIES, CountingRule, MetricFamily, family_metrics
from doclens.inputs.jsonl import SourceIndex
from doclens.reports.files import write_atomically
from doclens.reports.report import levelled_warnings
from doclens.stats.bootstrap import Interval
from doclens.views.labels import demo_banner, judge_label
from doclens.views.leaderboard import RECALL_ONLY, RECALL_TRAP_NOTE, shown_columns
from doclens.views.text import LEVEL_WORDS, not_applicable_lines, placement_lines, reported_metrics, review_lines
from doclens.views.visible import NAME_CHARS, cut, html_text, visible

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
.legend span{margin-right:.8em}.muted{color:#666}.warn{color:#b00020}.info{color:#555}
.caution{color:#7a4300;background:#fff4e0;border-left:3px solid #e0a800;padding:2px 6px}
.review{background:#fff0c2;border:1px solid #e0a800;border-radius:3px;padding:0 .3em;font-size:.85em}
.review-count{background:#fff8e1;padding:.2em .4em;border-left:3px solid #e0a800}
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


#: a warning's CSS class by its level (doclens.core.errors.WARNING_LEVELS): only an error is red
LEVEL_CLASSES = {"info": "info", "warning": "caution", "error": "warn"}


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


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.2f}"


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


# ---- source support (its own section of the page) ---------------------------------------------
#: verdict → (css class of the claim list, mark)
_SUPPORT_MARKS = {"supported": ("supported", Markup("&#10003;")), "not_supported": ("unsupported", Markup("&#10007;")),
                  "not_addressed": ("unparsed", Markup("&#8709;")), None: ("unparsed", Markup("?"))}
#: evidence facts shown per claim (the report JSON keeps all of them)
SUPPORT_EVIDENCE_SHOWN = 5


def _support_mark(verdict) -> tuple[str, Markup]:
    return _SUPPORT_MARKS.get(verdict.verdict if verdict.status == "ok" else None, _SUPPORT_MARKS[None])


# ---- the templates -----------------------------------------------------------------------------
class _Escaped:
    """Text already escaped, by the HTML protocol (``__html__``) that autoescape honours: one
    object where a ``Markup`` would be made twice (by :func:`_escaped`, then by autoescape)."""

    __slots__ = ("html",)

    def __init__(self, html: str):
        self.html = html

    def __html__(self) -> str:
        return self.html


def _escaped(value):
    """Jinja2's ``finalize``: each ``{{ value }}`` escaped by :func:`html.escape` (quotes as
    ``&quot;`` and ``&#x27;``, the spelling these pages have always had; MarkupSafe's own would
    write ``&#34;`` and ``&#39;``, the same text to a browser); markup (``Markup``, a macro's
    output) is left as it is, as autoescape would."""
    return value if hasattr(value, "__html__") else _Escaped(escape(str(value)))


#: the verdict names as markup (they are the program's words): a page writes each a few times per
#: claim, and markup needs no escaping
_VERDICT_MARKUP = {name: Markup(name) for name in ("supported", "partial", "unsupported", "unparsed")}


def _sectioned(items: Sequence) -> Iterator[tuple[str | None, object]]:
    """``(label, item)`` for claims or statements in order: ``label`` is the item's section where
    it differs from the one before (and is not empty), else ``None``."""
    section = object()
    for item in items:
        yield (item.section if item.section != section and item.section else None), item
        section = item.section


def _score_line(result: InstanceResult) -> str:
    shown = family_metrics([family for family in FAMILIES if family.on_instance_line])
    return " ".join(f"{m.replace('_', ' ')} {_percent(result.scores.get(m))}" for m in shown if m in result.scores)


def _family_blocks(header: dict) -> list[tuple[MetricFamily, dict]]:
    """``(family, block)`` of each registered family whose block the report holds, in table
    order (:attr:`doclens.Report.blocks`); the page draws each with the family's
    :attr:`~doclens.families.MetricFamily.block_view` (``templates/family_views.html``)."""
    return [(family, header[family.name]) for family in FAMILIES
            if isinstance(header.get(family.name), dict) and header[family.name]]


def _family_items(result: InstanceResult) -> list[tuple[MetricFamily, list]]:
    """``(family, its items)`` of each registered family that lists its items under an instance
    (:attr:`~doclens.families.MetricFamily.items_view`) and judged ``result``."""
    return [(family, items) for family in FAMILIES
            if family.items_view is not None and (items := family.items(result)) is not None]


def _source_units(source: dict | None):
    """The source units of an input row (``None`` when it has no source or one that does not parse)."""
    from doclens.parsing.source_units import parse_source_units

    if source is None or source.get("source") is None:
        return None
    try:  # numbered as when scored (the signature's units: field, doclens.inputs.sources)
        return parse_source_units(source["source"], source.get("source_units") or "given")
    except ValueError:
        return None


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    """The templates (``doclens/views/templates``, package data): every ``{{ value }}`` escaped
    (autoescape, quotes too), an undefined name an error (StrictUndefined), whitespace trimmed
    around block tags so the markup keeps the layout the pages always had."""
    environment = jinja2.Environment(loader=jinja2.PackageLoader("doclens.views", "templates"), autoescape=True,
                                     undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                                     keep_trailing_newline=True, auto_reload=False,
                                     finalize=_escaped)
    environment.filters.update(
        text=lambda value: Markup(html_text(value)), name=lambda value: Markup(html_text(value, NAME_CHARS)),
        visible=lambda value: visible(cut(value)), sectioned=_sectioned,
        claim_verdict=lambda claim: _VERDICT_MARKUP[claim_verdict(claim)],
        statement_verdict=lambda statement: _VERDICT_MARKUP[statement_verdict(statement)], failures=instance_failures,
        support_mark=_support_mark, source_units=_source_units, score_line=_score_line)
    environment.globals.update(
        percent=_percent, reported_metrics=reported_metrics, not_applicable_lines=not_applicable_lines,
        placement_lines=placement_lines,
        review_lines=review_lines,
        counted=lambda counts: ", ".join(f"{k} {v}" for k, v in counts.items()),
        citations_apply=lambda result, rule: CITATIONS.applicability(result, CountingRule.of(rule)) == APPLIES,
        evidence_shown=SUPPORT_EVIDENCE_SHOWN, demo_banner=demo_banner, judge_label=judge_label,
        shown_columns=shown_columns, family_blocks=_family_blocks, family_items=_family_items,
        precise=Markup("precise"), imprecise=Markup("imprecise"), nocheck=Markup("nocheck"),
        levelled_warnings=levelled_warnings, level_words=LEVEL_WORDS, level_class=LEVEL_CLASSES)
    return environment


def _stream(handle: IO[str] | _CountingWriter, name: str, script: str, title: str, **context) -> None:
    """Render template ``name`` into ``handle`` piece by piece (``Template.generate``): the page is
    never whole in memory. The style, script and policy are the package's own text (``Markup``:
    written as they are, so that their hashes hold)."""
    template = _environment().get_template(name)
    handle.writelines(template.generate(style=Markup(_STYLE), script=Markup(script), title=title,
                                        csp=Markup(content_security_policy(script)), **context))


# ---- the per-instance page ---------------------------------------------------------------------
class _CountingWriter:
    """A text handle that counts the characters written through it (a page's size so far)."""

    def __init__(self, handle: IO[str]):
        self.handle, self.chars = handle, 0

    def writelines(self, pieces: Iterable[str]) -> None:
        for piece in pieces:
            self.chars += len(piece)
            self.handle.write(piece)


def write_report_html(header: dict, instances: Iterable[InstanceResult], handle: IO[str],
                      intervals: dict[str, Interval] | None = None, sources: SourceIndex | None = None,
                      bootstrap: str = "", count: int | None = None, title: str | None = None,
                      positions: Sequence[int] | None = None, note: str | None = None,
                      plots: str = "", max_chars: int | None = None) -> int:
    """Write the per-instance page to ``handle``, one instance at a time; returns the instances
    written. ``header``: the report's top-level fields (``scores``, ``signature``, ``warnings``,
    ``partial``, ``error``), e.g. ``report.to_dict()``; ``instances``: its instances in order
    (a :func:`doclens.reports.scores_files.iter_instance_results` generator keeps memory bounded),
    or a selection of them with their ``positions`` in the file and a ``note`` saying what is
    shown (``doclens report --max-instances``: failures first); ``sources`` (the scored JSONL)
    adds source units and raw predictions; ``plots``: the plot section's markup
    (:func:`doclens.views.plots.report_plots_html`), written above the instances.
    ``max_chars``: the page's size budget in characters: once the page has grown past it, no
    further instance is written, and the page ends saying how many were left out (the scores
    file holds them); every single text is cut already (:func:`doclens.views.visible.cut`)."""
    written = 0
    left_out = 0
    counted = _CountingWriter(handle)

    def shown():  # (position, result, input row) as the template reaches each instance
        nonlocal written, left_out
        for position, result in zip(positions, instances) if positions is not None else enumerate(instances):
            if max_chars is not None and counted.chars > max_chars:
                left_out += 1
                continue
            written += 1
            yield Markup(int(position)), result, sources.get(result.id) if sources is not None else None

    def dropped() -> str:  # read after the instances: how many the budget left out
        if not left_out:
            return ""
        return (f"{left_out:,} more instances are not shown: the page reached its size budget of "
                f"{(max_chars or 0) / 1e6:g} million characters (--max-page-mb); the scores file holds every "
                "instance's evidence.")

    title = title or ("DocLens report" + (f" — {count} instances" if count is not None else ""))
    _stream(counted, "report.html", _REPORT_SCRIPT, title, header=header, scores=header.get("scores") or {},
            rule=CountingRule.from_config(header.get("config")), intervals=intervals, bootstrap=bootstrap,
            banner=demo_banner(header.get("signature"), header.get("config")), note=note, plots=Markup(plots),
            instances=shown(), dropped=dropped)
    return written


# ---- the leaderboard ---------------------------------------------------------------------------
def write_leaderboard_html(groups: dict, handle: IO[str], metric: str, bootstrap: str,
                           title: str = "DocLens leaderboard", plots: dict[Signature, str] | None = None) -> None:
    """One sortable table per signature (``groups``: ``{signature: ranked entries}`` from
    :func:`doclens.views.leaderboard.rank_group`), each followed by its plots' markup when
    ``plots`` (``{signature: markup}``, :func:`doclens.views.plots.leaderboard_plots_html`) has it."""
    banners = [b for b in dict.fromkeys(demo_banner(signature) for signature in groups) if b]
    _stream(handle, "leaderboard.html", _SORT_SCRIPT, title, groups=groups, metric=metric, bootstrap=bootstrap,
            banners=banners, recall_trap=RECALL_TRAP_NOTE if metric in RECALL_ONLY else "",
            plots={signature: Markup(markup) for signature, markup in (plots or {}).items()})


# ---- the judge-check page ----------------------------------------------------------------------
def write_judge_check_html(result: dict, handle: IO[str], columns: Sequence[str], gap_flag: float,
                           plots: str = "") -> None:
    """The ``doclens judge-check`` page (``result``: what its ``--json`` writes; ``columns``: the
    confusion matrix's verdict columns; ``gap_flag``: the supported-rate gap flagged; ``plots``: the
    pictures' markup; all from :mod:`doclens.views.judge_check`)."""
    _stream(handle, "judge_check.html", "", f"DocLens judge-check — {result['set']}", result=result,
            columns=columns, gap_flag=gap_flag, plots=Markup(plots))


def write_page(path: str, write) -> None:
    """Write an HTML page atomically (:func:`doclens.reports.files.write_atomically`); a lone surrogate
    read from a scores file shows as ``\\udc00``, never an error."""
    write_atomically(path, write, errors="backslashreplace")

