"""Building a :class:`doclens.Report` from one run's reduction (:mod:`doclens.scoring.aggregate`):
aggregate scores and counts, per-section scores, warnings, the signature, usage and the config. Rendering it as text is
:mod:`doclens.views.text`'s job."""

from __future__ import annotations

import os
import sys
import warnings
from typing import Optional

from doclens.core.metrics import ITEM_FIELDS
from doclens.scoring.aggregate import Aggregator
from doclens.scoring.report import Report
from doclens.scoring.run import RunMeta
from doclens.scoring.signature import component_signature, make_signature
from doclens.version import __version__


def build_report(scorer, run: RunMeta, aggregator: Aggregator, partial: bool = False,
                 error: Optional[str] = None, texts: Optional[dict] = None) -> Report:
    """The report of a run as scored by ``scorer`` (a :class:`doclens.DocLens`, read for its
    settings only): ``run`` holds what the run learned besides the results (tasks, extractor
    use, capped statements), ``aggregator`` the reduction of every result
    (:class:`doclens.scoring.aggregate.Aggregator`; its kept results, when it keeps them, become
    ``Report.instances``). ``partial``: the run stopped early (``error`` says why); baselines are
    then not computed. ``texts``: id → (prediction, reference) for the baselines."""
    scores, counts = aggregator.scores_and_counts()
    unparsed, failed = dict(aggregator.unparsed), dict(aggregator.failed)
    for metric, field_name in ITEM_FIELDS.items():
        counts[metric]["unparsed"] = unparsed[field_name]  # items without a verdict, per metric
        counts[metric]["failed"] = failed[field_name]
    counts["citations"] = {**aggregator.citations, "capped_statements": run.capped_statements}
    if "note_generation" in run.tasks:  # claims judged against the whole note, which lacked their section
        for metric, direction in (("claim_recall", "recall"), ("claim_precision", "precision")):
            if metric in counts:
                counts[metric]["section_fallbacks"] = run.section_fallbacks.get(direction, 0)
    report_warnings = _warnings(scorer, run, sum(unparsed.values()), sum(failed.values()))
    for message in report_warnings:
        warnings.warn(message, stacklevel=_outside_doclens())
    prompt_tags = list(getattr(scorer.evaluator, "prompt_tags", lambda: [])())
    if run.used_extractor:
        prompt_tags += scorer.extractor.prompt_tags()
    signature = _signature(scorer, run, prompt_tags)
    support = getattr(scorer, "source_support", None)
    if support is not None:  # the source-support metric family (doclens/scoring/source_support.py)
        results = aggregator.support_results()
        parts = support.report_parts(results, scorer.on_unparsed, scorer.evaluator)
        scores.update(parts["scores"])
        counts.update(parts["counts"])
        signature += "|" + support.signature(scorer.evaluator)
        for status, found in (("unparsed", unparsed), ("failed", failed)):
            found["source_support"] = sum(v.status == status for r in results for v in (r.source_support or []))
        support_warnings = []
        if unparsed["source_support"] or failed["source_support"]:
            support_warnings.append(f"source support: {unparsed['source_support']} claim(s) unparsed and "
                                    f"{failed['source_support']} failed; they have no verdict and count per "
                                    f"on_unparsed={scorer.on_unparsed!r}")
        if parts["block"].get("note"):
            support_warnings.append(f"source support: {parts['block']['note']}")
        if run.uncitable:
            support_warnings.append(f"{len(run.uncitable)} instance(s) have a source that is a plain text without "
                                    f"numbered units ([0] …), e.g. {run.uncitable[0]!r}: it has no citable units, so "
                                    "citation recall and precision are skipped for them (source support uses it)")
        for message in support_warnings:
            warnings.warn(message, stacklevel=_outside_doclens())
        report_warnings += support_warnings
    report = Report(scores=scores, counts=counts, instances=list(aggregator.results), signature=signature,
                    config=_config(scorer, prompt_tags), usage=usage_of(scorer, run),
                    sections=aggregator.section_scores(), unparsed=unparsed, failed=failed,
                    warnings=report_warnings, partial=partial, error=error, version=__version__)
    report.judged = aggregator.judged
    if not aggregator.keep_results:
        report.instance_counts = aggregator.counts_document()
    if support is not None:
        for section, section_scores in parts["sections"].items():
            report.sections.setdefault(section, {}).update(section_scores)
        report.source_support = {**parts["block"], "uncitable_instances": len(run.uncitable)}
    if scorer.baselines and len(aggregator) and not partial:
        from doclens.baselines import compute_baselines

        tasks = set(aggregator.tasks)
        texts = texts or {}
        report.baselines = compute_baselines(
            [texts[i][0] for i in aggregator.ids], [texts[i][1] for i in aggregator.ids], scorer.baselines,
            task=tasks.pop() if len(tasks) == 1 else "general", options=scorer.baseline_options)
    return report


def _outside_doclens() -> int:
    """The ``stacklevel`` that points a warning at the first caller outside the doclens package
    (``DocLens.score`` and ``score_to`` reach this module through different depths)."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame, level = sys._getframe(2), 2  # 1: build_report, which calls warnings.warn
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package + os.sep):
        frame, level = frame.f_back, level + 1
    return level


def settings_signature(scorer) -> str:
    """The signature of ``scorer``'s settings alone, before any input is read: judge, style,
    extractor (whether or not it will be used), prompts, decoding, citation and counting options.
    A streamed output records it, and ``--resume`` refuses to continue a file written with other
    settings (the final signature also names the tasks met, which only the input tells)."""
    prompt_tags = list(getattr(scorer.evaluator, "prompt_tags", lambda: [])())
    extract = "none"
    extract_decoding = {}
    decoding = getattr(scorer.evaluator, "decoding", lambda: {})()
    if scorer.extractor is not None:
        prompt_tags += scorer.extractor.prompt_tags()
        extract = component_signature(scorer.extractor)
        if callable(getattr(scorer.extractor, "decoding", None)):
            extract_decoding = {k: v for k, v in scorer.extractor.decoding().items() if decoding.get(k) != v}
    signature = make_signature(version=__version__, tasks=["*"], judge=component_signature(scorer.evaluator),
                               style=getattr(scorer.evaluator, "style", None), extract=extract,
                               prompt_tags=prompt_tags, decoding=decoding, uncited=scorer.uncited,
                               max_citations=scorer.max_citations, on_unparsed=scorer.on_unparsed,
                               extract_decoding=extract_decoding, question_statements=scorer.question_statements)
    support = getattr(scorer, "source_support", None)
    if support is not None:  # a resumed run must not mix source-support settings either
        signature += "|" + support.signature(scorer.evaluator)
    return signature


def _warnings(scorer, run: RunMeta, unparsed: int, failed: int) -> list[str]:
    how = "scored as not entailed" if scorer.on_unparsed == "zero" else "left out of the scores"
    found = []
    if unparsed:
        found.append(f"{unparsed} judgement(s) could not be parsed from the judge's replies and were {how} "
                     f"(on_unparsed={scorer.on_unparsed!r})")
    if failed:
        found.append(f"{failed} item(s) have no verdict because the model call failed for good; they were {how} "
                     f"(on_unparsed={scorer.on_unparsed!r}). Failed calls are not cached: rerun to ask exactly "
                     "those again")
    if run.capped_statements:
        found.append(f"{run.capped_statements} statement(s) had more than max_citations={scorer.max_citations} "
                     "citations; only the first were kept")
    return found


def _signature(scorer, run: RunMeta, prompt_tags: list[str]) -> str:
    extract_parts = (["given"] if run.used_given else []) + (
        [component_signature(scorer.extractor)] if run.used_extractor else [])
    decoding = getattr(scorer.evaluator, "decoding", lambda: {})()
    extract_decoding = {}
    if run.used_extractor and callable(getattr(scorer.extractor, "decoding", None)):
        extract_decoding = {k: v for k, v in scorer.extractor.decoding().items() if decoding.get(k) != v}
    return make_signature(version=__version__, tasks=sorted(run.tasks), judge=component_signature(scorer.evaluator),
                          style=getattr(scorer.evaluator, "style", None), extract="+".join(extract_parts) or "none",
                          prompt_tags=prompt_tags, decoding=decoding, uncited=scorer.uncited,
                          max_citations=scorer.max_citations, on_unparsed=scorer.on_unparsed,
                          extract_decoding=extract_decoding,
                          question_statements=(scorer.question_statements
                                               if "question_summarization" in run.tasks else "whole"),
                          section_fallback=(getattr(scorer, "section_fallback", "note")
                                            if "note_generation" in run.tasks else None))


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
        "task": scorer.task,
        "uncited": scorer.uncited,
        "max_citations": scorer.max_citations,
        "question_statements": scorer.question_statements,
        "on_unparsed": scorer.on_unparsed,
        "prompts": sorted(set(prompt_tags)),
        **({"metrics": list(scorer.metrics)} if getattr(scorer, "source_support", None) is not None else {}),
    }
