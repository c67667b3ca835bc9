"""Building a :class:`doclens.Report` from one run's reduction (:mod:`doclens.scoring.aggregate`):
aggregate scores and counts, per-section scores, warnings, the signature, usage and the config. Rendering it as text is
:mod:`doclens.views.text`'s job."""

from __future__ import annotations

import os
import sys
import warnings
from types import FrameType

from doclens.core.errors import (
    DocLensWarning,
    FailedCallsWarning,
    InputWarning,
    JudgeWarning,
    NumberedSourcesWarning,
    warning_level,
)
from doclens.families import own_item_families
from doclens.reports.report import Report
from doclens.scoring.aggregate import Aggregator
from doclens.scoring.run import RunMeta
from doclens.scoring.signature import Signature, get_signature
from doclens.version import __version__

#: the scoring settings a report's ``config`` records, in the order it writes them (what it has
#: always recorded: ``source_units`` is in the signature, and the chunk size changes no score)
CONFIG_SETTINGS = ("task", "uncited", "uncited_outputs", "max_citations", "question_statements", "premise_scope",
                   "section_fallback", "on_unparsed")
#: warnings of a run: each with its category (filter by category, never by text) and its message
Warned = list[tuple[type[DocLensWarning], str]]


def build_report(scorer, run: RunMeta, aggregator: Aggregator, partial: bool = False,
                 error: str | None = None, texts: dict | None = None) -> Report:
    """The report of a run as scored by ``scorer`` (a :class:`doclens.DocLens`, read for its
    settings only): ``run`` holds what the run learned besides the results (tasks, extractor
    use, capped statements), ``aggregator`` the reduction of every result over the run's metric
    families (:class:`doclens.scoring.aggregate.Aggregator`; its kept results, when it keeps them,
    become ``Report.instances``). ``partial``: the run stopped early (``error`` says why);
    baselines are then not computed. ``texts``: id → (prediction, reference) for the baselines."""
    scores, counts = aggregator.scores_and_counts()
    unparsed, failed = dict(aggregator.unparsed), dict(aggregator.failed)
    for family in aggregator.families:
        for metric, field_name in family.item_fields.items():
            counts[metric]["unparsed"] = unparsed[field_name]  # items without a verdict, per metric
            counts[metric]["failed"] = failed[field_name]
    for family in aggregator.families:  # what each family counts besides its metrics
        family.add_counts(counts, aggregator.tallies[family.name], run)
    counts.update(_run_counts(scorer, run))
    own_fields = {name for family in own_item_families(scorer.families) for name in family.item_fields.values()}
    report_warnings = _warnings(scorer, run, sum(v for k, v in unparsed.items() if k not in own_fields),
                                sum(v for k, v in failed.items() if k not in own_fields))
    prompt_tags = list(scorer.evaluator.prompt_tags())
    if run.used_extractor:
        prompt_tags += scorer.extractor.prompt_tags()
    signature = run_signature(scorer, run)
    blocks = _family_blocks(scorer, run, aggregator, counts, report_warnings)
    for category, message in report_warnings:
        warnings.warn(message, category, stacklevel=_outside_doclens())
    report = Report(scores=scores, counts=counts, instances=list(aggregator.results), signature=signature,
                    config=_config(scorer, prompt_tags), usage=usage_of(scorer, run),
                    sections=aggregator.section_scores(), unparsed=unparsed, failed=failed,
                    warnings=[message for _, message in report_warnings], partial=partial, error=error,
                    warning_levels=[warning_level(category) for category, _ in report_warnings],
                    version=__version__, blocks=blocks)
    report.judged = aggregator.judged
    if not aggregator.keep_results:
        report.instance_counts = aggregator.counts_document()
    if scorer.baselines and len(aggregator) and not partial:
        _add_baselines(report, scorer, aggregator, texts or {})
    return report


def _add_baselines(report: Report, scorer, aggregator: Aggregator, texts: dict) -> None:
    """The run's baselines into ``report``; one that failed is an error-level warning."""
    from doclens.baselines import compute_baselines

    tasks = set(aggregator.tasks)
    # "record": a baseline whose model cannot load is marked failed; the judged work is kept
    report.baselines = compute_baselines(
        [texts[i][0] for i in aggregator.ids], [texts[i][1] for i in aggregator.ids], scorer.baselines,
        task=tasks.pop() if len(tasks) == 1 else "general", options=scorer.baseline_options, on_failure="record")
    for name, result in report.baselines.items():
        if result.get("failed"):
            report.warnings.append(f"baseline {name} FAILED (not in the report): {result['error']}")
            report.warning_levels.append("error")


def _run_counts(scorer, run: RunMeta) -> dict:
    """What the run counted beside the families: with task="auto", how many instances it scored as
    each task; with ``review_below``, the review queue (claim verdicts under the confidence asked)."""
    found: dict = {}
    if run.auto_tasks:
        found["auto_tasks"] = dict(sorted(run.auto_tasks.items()))
    if scorer.settings.review_below is not None:
        found["review"] = {"below": scorer.settings.review_below, "claims": run.review.get("claims", 0),
                           "rated": run.review.get("rated", 0), "unrated": run.review.get("unrated", 0)}
    return found


def _family_blocks(scorer, run: RunMeta, aggregator: Aggregator, counts: dict, found: Warned) -> dict[str, dict]:
    """Each family's report block (those it gives), in table order; its warnings go to ``found``."""
    blocks = {}
    for family in scorer.families:
        context = scorer.family_context(family)
        block = family.report_block(aggregator.tallies[family.name], context, run)
        if block:
            blocks[family.name] = block
        fields = dict.fromkeys(family.item_fields.values())
        found += family.run_warnings(counts, block, sum(aggregator.unparsed[f] for f in fields),
                                     sum(aggregator.failed[f] for f in fields), context, run)
    return blocks


#: packages whose frames a warning never points at: ``evaluate`` and the copy of DocLens's metric
#: module it loads (``evaluate_modules.…``), ``datasets``: the user's own call is the line to show
_WRAPPERS = frozenset({"evaluate", "evaluate_modules", "datasets"})


def _outside_doclens() -> int:
    """The ``stacklevel`` that points a warning at the first caller outside the doclens package
    and the libraries that wrap it (``DocLens.score`` and ``score_to`` reach this module through
    different depths; ``evaluate``'s ``compute`` through its own copy of the metric module), so a
    warning names the user's line, never a file inside a package or a cache."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame: FrameType | None = sys._getframe(2)
    level = 2  # 1: build_report, which calls warnings.warn
    while frame is not None and (os.path.abspath(frame.f_code.co_filename).startswith(package + os.sep)
                                 or str(frame.f_globals.get("__name__", "")).split(".")[0] in _WRAPPERS):
        frame, level = frame.f_back, level + 1
    return level


def settings_signature(scorer) -> Signature:
    """The signature of ``scorer``'s settings alone, before any input is read: judge, style,
    extractor (whether or not it will be used), prompts, decoding, citation, premise and counting
    options, the families' fields. A streamed output records it, and ``--resume`` refuses to
    continue a file written with other settings (the final signature also names the tasks met,
    which only the input tells)."""
    return run_signature(scorer)


def _family_fields(scorer) -> list:
    """The signature fields every metric family of ``scorer`` declares, in family order."""
    return [field for family in scorer.families for field in family.signature_fields(scorer.family_context(family))]


def _warnings(scorer, run: RunMeta, unparsed: int, failed: int) -> Warned:
    how = "scored as not entailed" if scorer.settings.on_unparsed == "zero" else "left out of the scores"
    found: Warned = []
    if unparsed:
        found.append((JudgeWarning,
                      f"{unparsed} judgement(s) could not be parsed from the judge's replies and were {how} "
                      f"(on_unparsed={scorer.settings.on_unparsed!r})"))
    if failed:
        found.append((FailedCallsWarning,
                      f"{failed} item(s) have no verdict because the model call failed for good; they were {how} "
                      f"(on_unparsed={scorer.settings.on_unparsed!r}). Failed calls are not cached: rerun to ask exactly "
                      "those again"))
    if run.untasked_notes:
        found.append((InputWarning,
                      f"{run.untasked_notes} instance(s) have no task and a reference with SOAP section headers: "
                      "they were scored as one 'general' block. task='auto' (the command line's default, --task "
                      "auto) or 'note_generation' scores them per section"))
    if run.numbered_sources:
        ways = ", ".join(f"{n} as {how}" for how, n in sorted(run.numbered_sources.items()))
        found.append((NumberedSourcesWarning,
                      f"{sum(run.numbered_sources.values())} source(s) without '[0]' markers were numbered by DocLens "
                      f"(source_units={scorer.settings.source_units!r}): {ways}; citations to them count by that numbering"))
    if run.capped_statements:
        found.append((InputWarning,
                      f"{run.capped_statements} statement(s) had more than max_citations={scorer.settings.max_citations} "
                      "citations; only the first were kept"))
    return found


def run_signature(scorer, run: RunMeta | None = None) -> Signature:
    """The signature of a run scored by ``scorer``: :func:`doclens.scoring.signature.get_signature`
    of its settings (``scorer.settings``, the one :class:`~doclens.core.settings.ScoringSettings`
    it scored under), its judge and extractor (those that scored: on Ray, as the workers reported
    them) and its metric families' fields. ``run``: what the run met (tasks, given or extracted
    claims); ``None``: the settings alone (:func:`settings_signature`)."""
    return get_signature(scorer.settings, scorer.evaluator, scorer.extractor, run, _family_fields(scorer))


def usage_of(scorer, run: RunMeta) -> dict:
    """The evaluator's calls, tokens and cost, plus the extractor's when it counts its own."""
    usage = scorer.evaluator.usage.to_dict() if hasattr(scorer.evaluator, "usage") else {}
    if run.used_extractor and hasattr(scorer.extractor, "usage"):
        extractor_usage = scorer.extractor.usage.to_dict()
        if scorer.extractor.usage is not getattr(scorer.evaluator, "usage", None):
            usage = {k: usage.get(k, 0) + extractor_usage.get(k, 0) for k in set(usage) | set(extractor_usage)}
    return usage


def _config(scorer, prompt_tags: list[str]) -> dict:
    return {
        "evaluator": scorer.evaluator.config(),
        "extractor": scorer.extractor.config() if scorer.extractor else None,
        "evaluator_keeps_data_local": scorer.evaluator.keeps_data_local,
        **{name: getattr(scorer.settings, name) for name in CONFIG_SETTINGS},
        "prompts": sorted(set(prompt_tags)),
        **({"metrics": list(scorer.settings.metrics)} if len(scorer.settings.metrics) > 1 else {}),  # an opt-in family on
        **({"review_below": scorer.settings.review_below} if scorer.settings.review_below is not None else {}),
    }
