"""The DocLens scorer: instances in, report out (DESIGN §3).

    instances ─► claims (given, or extracted per task/section) ─┐
                 statements + citations (parsed from the prediction) ─┤
                                                                      ▼
                     evaluator (batched) ─► verdicts ─► aggregation ─► Report

Instances are processed in chunks: each chunk's extraction and judging go to the extractor and
the evaluator as one batch (so in-process models batch and LLM clients run concurrently), and
a failure — bad input further down the file, an endpoint that stays down, Ctrl-C — keeps every
chunk finished before it: the exception carries ``partial_report``.
"""

from __future__ import annotations

import logging
import warnings
from typing import Iterable, Optional, Union

from doclens.core.errors import ConfigurationError, InputError, UnparsedJudgementError
from doclens.version import __version__
from doclens.evaluators.base import CitationRequest, ClaimRequest, Evaluator
from doclens.evaluators.extractors import ExtractionRequest, Extractor, FailedExtraction
from doclens.core.metrics import METRICS, ON_UNPARSED, aggregate, ratio
from doclens.scoring.report import Report
from doclens.parsing.sections import SECTION_NAMES, note_section_spans, segments
from doclens.scoring.signature import component_signature, make_signature
from doclens.parsing.source_units import parse_source_units
from doclens.parsing.statements import inherit_citations, parse_statements, strip_citations, whole_statement
from doclens.core.tasks import check_task
from doclens.core.types import (NO_VERDICT, STATUS_FAILED, STATUS_UNPARSED, CitationJudgement, CitationVerdict,
                           ClaimJudgement, ClaimVerdict, Instance, InstanceResult, Statement)

logger = logging.getLogger("doclens")

UNCITED = ("zero", "inherit", "inherit-across-sections")
QUESTION_STATEMENTS = ("whole", "sentences")
#: Explanations of items decided without asking the judge.
EMPTY_PREMISE = "empty premise: nothing to entail the claim"
NO_CITATION = "no citation"
#: The text of the one item that stands for the unknown claims of a text whose extraction failed.
EXTRACTION_FAILED = "[claims not extracted: the extraction call failed]"
INVALID_IDS = "invalid citation id(s)"
#: A run whose unparsed share of judged items is above this is reported as incomplete.
UNPARSED_SHARE_LIMIT = 0.5


def incomplete_reasons(report: Report) -> list[str]:
    """Why a finished report is not a complete result (empty when it is): items whose call failed
    for good, or most judge replies unreadable. The CLI exits with ``EXIT_INCOMPLETE`` for these."""
    reasons = []
    failed = sum((report.failed or {}).values())
    failed_calls = (report.usage or {}).get("failed_calls", 0)
    if failed or failed_calls:
        reasons.append(f"{failed_calls} model call(s) failed for good; {failed} item(s) are marked 'failed' "
                       f"(scored per on_unparsed). Rerun the same command to ask exactly those again: every "
                       "answer received is cached")
    judged = sum(1 for r in report.instances for v in r.reference_claims + r.prediction_claims + r.statements
                 if v.status in NO_VERDICT or not (v.explanation in (EMPTY_PREMISE, NO_CITATION)
                                                   or v.explanation.startswith(INVALID_IDS)))
    unparsed = sum((report.unparsed or {}).values())
    if judged and unparsed / judged > UNPARSED_SHARE_LIMIT:
        reasons.append(f"most judge replies could not be read: {unparsed} of {judged} judged item(s) are "
                       f"'unparsed' ({100 * unparsed / judged:.0f} %); the scores say little about the texts. "
                       "Check the model, the prompt style (--evaluator) and the endpoint")
    return reasons


class _Work:
    """What one instance needs judged; filled in stages."""

    def __init__(self, instance: Instance, task: str):
        self.instance = instance
        self.task = task
        self.ref_claims: dict[Optional[str], list[str]] = {}
        self.pred_claims: dict[Optional[str], list[str]] = {}
        self.statements: Optional[list[Statement]] = None
        self.n_units = 0
        self.units: dict[int, str] = {}
        self.extracted = False
        self.failed_extractions: dict[tuple[str, Optional[str]], str] = {}  # (field, section) → error


class DocLens:
    """Score generated medical text against references, fact by fact.

    Parameters
    ----------
    evaluator : Evaluator
        The judge (``doclens.load_evaluator("…")`` or your own subclass).
    extractor : Extractor, optional
        Produces claims for instances without ``reference_claims`` / ``prediction_claims``.
        Without one, such an instance raises :class:`InputError` naming it.
    task : str, optional
        Default task for instances without a ``task`` field (``general`` if unset).
    uncited : {"zero", "inherit", "inherit-across-sections"}
        ``zero``: an uncited statement has citation recall 0 (the paper). ``inherit``: it borrows
        the citations of the next cited statement of the same note section (the original DocLens
        scripts, which split each section on its own; outside ``note_generation`` the whole
        prediction is one section). ``inherit-across-sections``: it borrows from the next cited
        statement wherever it is — not what the original scripts did, kept as an explicit option.
    max_citations : int, optional
        Keep at most this many citations per statement (the first ones, in order of appearance).
        ``None``: no cap. As in the original scripts, ids are checked for validity *before* the
        cap: a statement citing any id the source does not have is a miss with all its ids
        counted (none capped away). Every capped statement is counted and warned about — never
        silent.
    question_statements : {"whole", "sentences"}
        For ``question_summarization``: ``whole`` (default, the original scripts) judges the whole
        prediction as one statement citing every id in it; ``sentences`` splits it into
        sentences like any other prediction.
    on_unparsed : {"zero", "exclude", "raise"}
        How a judgement the judge never gave in readable form counts (see :mod:`doclens.core.metrics`).
    chunk_size : int
        Instances per batch sent to the extractor and the evaluator.
    baselines : list of str, optional
        Also compute these baselines (``rouge``, ``bertscore``, ``medcon``) on the same instances.
    baseline_options : dict, optional
        Per-baseline settings passed to :func:`doclens.baselines.compute_baselines`.
    """

    def __init__(self, evaluator: Evaluator, extractor: Optional[Extractor] = None, *, task: Optional[str] = None,
                 uncited: str = "zero", max_citations: Optional[int] = None, on_unparsed: str = "zero",
                 chunk_size: int = 32, baselines: Optional[list[str]] = None,
                 baseline_options: Optional[dict] = None, question_statements: str = "whole"):
        if not isinstance(evaluator, Evaluator):
            raise ConfigurationError(f"evaluator must be a doclens.Evaluator, got {type(evaluator).__name__}")
        if extractor is not None and not isinstance(extractor, Extractor):
            raise ConfigurationError(f"extractor must be a doclens.Extractor, got {type(extractor).__name__}")
        if uncited not in UNCITED:
            raise ConfigurationError(f"uncited must be one of {UNCITED}, got {uncited!r}")
        if question_statements not in QUESTION_STATEMENTS:
            raise ConfigurationError(f"question_statements must be one of {QUESTION_STATEMENTS}, "
                                     f"got {question_statements!r}")
        if on_unparsed not in ON_UNPARSED:
            raise ConfigurationError(f"on_unparsed must be one of {ON_UNPARSED}, got {on_unparsed!r}")
        if max_citations is not None and (not isinstance(max_citations, int) or max_citations < 1):
            raise ConfigurationError(f"max_citations must be a positive integer or None, got {max_citations!r}")
        if chunk_size < 1:
            raise ConfigurationError("chunk_size must be at least 1")
        self.evaluator = evaluator
        self.extractor = extractor
        self.task = check_task(task) if task else None
        self.uncited = uncited
        self.max_citations = max_citations
        self.question_statements = question_statements
        self.on_unparsed = on_unparsed
        self.chunk_size = chunk_size
        self.baselines = list(baselines or [])
        self.baseline_options = dict(baseline_options or {})

    # ------------------------------------------------------------------------------------------
    def score(self, instances: Iterable[Union[dict, Instance]], progress: bool = True) -> Report:
        """Score ``instances`` (dicts or :class:`Instance`) and return a :class:`Report`.

        Raises :class:`InputError` for bad input (naming the instance and field), and
        :class:`UnparsedJudgementError` with ``on_unparsed="raise"``; any exception raised
        mid-run carries ``partial_report``, the report of every chunk finished before it.
        """
        from tqdm.auto import tqdm

        total = len(instances) if hasattr(instances, "__len__") else None
        self._stats = {"capped_statements": 0, "used_extractor": False, "used_given": False, "tasks": set()}
        self._texts: dict[str, tuple[str, str]] = {}
        results: list[InstanceResult] = []
        seen: set[str] = set()
        iterator = iter(instances)
        position = 0
        bar = tqdm(total=total, disable=not progress, unit="instance", desc="DocLens", leave=False)
        try:
            while True:
                chunk: list[Instance] = []
                pending: Optional[BaseException] = None
                try:
                    while len(chunk) < self.chunk_size:
                        item = next(iterator)
                        instance = item if isinstance(item, Instance) else Instance.from_dict(item, position)
                        if instance.id in seen:
                            raise InputError(f"instance {instance.id!r}: id seen twice", field="id")
                        seen.add(instance.id)
                        if self.baselines:
                            self._texts[instance.id] = (strip_citations(instance.prediction), instance.reference)
                        chunk.append(instance)
                        position += 1
                except StopIteration:
                    pass
                except InputError as exc:
                    pending = exc
                if chunk:
                    results.extend(self._score_chunk(chunk))
                    bar.update(len(chunk))
                if pending is not None:
                    raise pending
                if len(chunk) < self.chunk_size:
                    break
        except BaseException as exc:
            error = f"{type(exc).__name__}: {exc}"
            for holder in (self.evaluator, self.extractor):  # an endpoint may have echoed the key
                error = getattr(holder, "redact", lambda text: text)(error)
            exc.partial_report = self._build_report(results, partial=True, error=error)
            raise
        finally:
            bar.close()
        return self._build_report(results)

    # ------------------------------------------------------------------------------------------
    def _score_chunk(self, chunk: list[Instance]) -> list[InstanceResult]:
        works = [self._prepare(instance) for instance in chunk]
        self._extract(works)
        claim_requests, claim_slots = self._claim_requests(works)
        citation_requests, citation_slots = self._citation_requests(works)
        claim_answers = self.evaluator.judge_claims_many(claim_requests) if claim_requests else []
        citation_answers = self.evaluator.judge_citations_many(citation_requests) if citation_requests else []
        if len(claim_answers) != len(claim_requests) or any(
                len(a) != len(r.claims) for a, r in zip(claim_answers, claim_requests)):
            raise RuntimeError(f"{type(self.evaluator).__name__} returned the wrong number of claim judgements")
        if len(citation_answers) != len(citation_requests):
            raise RuntimeError(f"{type(self.evaluator).__name__} returned the wrong number of citation judgements")
        claim_lookup = {slot: answers for slot, answers in zip(claim_slots, claim_answers)}
        citation_lookup = {slot: answer for slot, answer in zip(citation_slots, citation_answers)}
        results = [self._result(i, work, claim_lookup, citation_lookup) for i, work in enumerate(works)]
        if self.on_unparsed == "raise":
            bad = [r.id for r in results if any(v.status in NO_VERDICT for v in
                                                 r.reference_claims + r.prediction_claims + r.statements)]
            if bad:
                raise UnparsedJudgementError(f"judge replies could not be parsed, or the call failed, for instance(s) "
                                             f"{', '.join(bad)} (on_unparsed='raise')")
        return results

    def _prepare(self, instance: Instance) -> _Work:
        where = f"instance {instance.id!r}: "
        task = check_task(instance.task or self.task, where)
        self._stats["tasks"].add(task)
        work = _Work(instance, task)
        if task == "question_summarization":
            # The whole question is one claim (DESIGN §4).
            work.ref_claims = {None: [instance.reference.strip()] if instance.reference.strip() else []}
            prediction = strip_citations(instance.prediction)
            work.pred_claims = {None: [prediction] if prediction else []}
        else:
            for field_name, target in (("reference_claims", work.ref_claims), ("prediction_claims", work.pred_claims)):
                given = getattr(instance, field_name)
                if given is None:
                    continue
                self._stats["used_given"] = True
                if isinstance(given, dict):
                    if task != "note_generation":
                        raise InputError(f"{where}field '{field_name}' is a section mapping, which only the "
                                         f"note_generation task takes (task is {task!r})", field=field_name)
                    unknown = sorted(set(given) - set(SECTION_NAMES))
                    if unknown:
                        raise InputError(f"{where}field '{field_name}' has unknown section(s) {unknown}; sections are "
                                         f"{', '.join(SECTION_NAMES)}", field=field_name)
                    target.update({section: list(given.get(section, [])) for section in SECTION_NAMES})
                else:
                    target[None] = list(given)
        if instance.source is not None:
            try:
                units = parse_source_units(instance.source)
            except ValueError as exc:  # InputError, or e.g. an unit number too long to convert
                raise InputError(f"{where}field 'source': {exc}", field="source") from exc
            work.n_units = len(units)
            work.units = {u.index: u.premise_text for u in units}
            work.statements = self._statements(instance.prediction, task, set(work.units))
        return work

    def _statements(self, prediction: str, task: str, units: set[int]) -> list[Statement]:
        if task == "note_generation":
            statements: list[Statement] = []
            for section, start, end in note_section_spans(prediction):
                statements += parse_statements(prediction[start:end], section=section, start_index=len(statements))
        elif task == "question_summarization" and self.question_statements == "whole":
            statements = whole_statement(prediction)
        else:
            statements = parse_statements(prediction)
        if self.uncited != "zero":
            statements = inherit_citations(statements, within_section=self.uncited == "inherit")
        if self.max_citations:
            for statement in statements:
                # validity first (the original scripts' order): a statement citing an id the
                # source lacks is a miss with every id it cites counted, so nothing is capped away
                if len(statement.citations) > self.max_citations and all(c in units for c in statement.citations):
                    statement.citations = statement.citations[: self.max_citations]
                    self._stats["capped_statements"] += 1
        return statements

    def _extract(self, works: list[_Work]) -> None:
        requests: list[ExtractionRequest] = []
        targets: list[tuple[_Work, str, dict, Optional[str]]] = []
        for work in works:
            for claims, text, field_name in ((work.ref_claims, work.instance.reference, "reference_claims"),
                                             (work.pred_claims, strip_citations(work.instance.prediction),
                                              "prediction_claims")):
                if claims or work.task == "question_summarization":
                    continue
                if self.extractor is None:
                    raise InputError(f"instance {work.instance.id!r}: no '{field_name}' given and no extractor "
                                     "configured; pass claims or an extractor", field=field_name)
                self._stats["used_extractor"] = True
                for section, segment in segments(work.task, text).items():
                    claims[section] = []
                    if segment.strip():
                        requests.append(ExtractionRequest(segment, work.task, section))
                        targets.append((work, field_name, claims, section))
        if requests:
            extracted = self.extractor.extract_many(requests)
            if len(extracted) != len(requests):
                raise RuntimeError(f"{type(self.extractor).__name__} returned {len(extracted)} claim lists for "
                                   f"{len(requests)} texts")
            for (work, field_name, claims, section), found in zip(targets, extracted):
                claims[section] = list(found)
                if isinstance(found, FailedExtraction):
                    work.failed_extractions[(field_name, section)] = found.error

    def _claim_requests(self, works: list[_Work]):
        requests, slots = [], []
        for i, work in enumerate(works):
            for direction, claims_by_section, premise_text in (
                    ("recall", work.ref_claims, strip_citations(work.instance.prediction)),
                    ("precision", work.pred_claims, work.instance.reference)):
                premises = segments(work.task, premise_text)
                for section, claims in claims_by_section.items():
                    premise = premise_text if section is None else premises[section]
                    if claims and premise.strip():
                        requests.append(ClaimRequest(premise.strip(), claims, work.task, direction, section))
                        slots.append((i, direction, section))
        return requests, slots

    def _citation_requests(self, works: list[_Work]):
        requests, slots = [], []
        for i, work in enumerate(works):
            for statement in work.statements or []:
                cited = statement.citations
                if cited and all(c in work.units for c in cited):
                    requests.append(CitationRequest(statement.text, {c: work.units[c] for c in cited}, work.task))
                    slots.append((i, statement.index))
        return requests, slots

    def _result(self, i: int, work: _Work, claim_lookup: dict, citation_lookup: dict) -> InstanceResult:
        result = InstanceResult(id=work.instance.id, task=work.task, has_source=work.statements is not None)
        for direction, claims_by_section, target in (("recall", work.ref_claims, result.reference_claims),
                                                    ("precision", work.pred_claims, result.prediction_claims)):
            for section, claims in claims_by_section.items():
                answers = claim_lookup.get((i, direction, section))
                for k, claim in enumerate(claims):
                    judgement = answers[k] if answers else ClaimJudgement(
                        entailed=False, explanation=EMPTY_PREMISE)
                    target.append(ClaimVerdict(text=claim, entailed=judgement.entailed,
                                               explanation=judgement.explanation, status=judgement.status,
                                               section=section, raw=judgement.raw))
                field_name = "reference_claims" if direction == "recall" else "prediction_claims"
                error = work.failed_extractions.get((field_name, section))
                if error is not None:  # the claims are unknown: one item says so, scored per on_unparsed
                    target.append(ClaimVerdict(text=EXTRACTION_FAILED, entailed=None, status=STATUS_FAILED,
                                               section=section, explanation=f"claim extraction failed: {error}"))
        for statement in work.statements or []:
            valid = [c for c in statement.citations if c in work.units]
            invalid = [c for c in statement.citations if c not in work.units]
            judgement: Optional[CitationJudgement] = citation_lookup.get((i, statement.index))
            if judgement is None:
                reason = (NO_CITATION if not statement.citations else
                          f"{INVALID_IDS} {invalid}: the source has {work.n_units} units")
                judgement = CitationJudgement(entailed=False, explanation=reason)
            precise = [c for c in valid if judgement.precise.get(c)] if judgement.entailed else []
            result.statements.append(CitationVerdict(
                index=statement.index, text=statement.text, cited=list(statement.citations), valid=valid,
                invalid=invalid, precise=precise, entailed=judgement.entailed, section=statement.section,
                inherited=statement.inherited, status=judgement.status, explanation=judgement.explanation,
                provenance=judgement.provenance, raw=judgement.raw))
        counts = result.counts(self.on_unparsed)
        result.scores = {metric: ratio(*counts[metric]) if metric in counts else None for metric in METRICS}
        return result

    # ------------------------------------------------------------------------------------------
    def _build_report(self, results: list[InstanceResult], partial: bool = False,
                      error: Optional[str] = None) -> Report:
        stats = self._stats
        per_instance = [r.counts(self.on_unparsed) for r in results]
        scores, counts = aggregate(per_instance)
        sections = {}
        if any(r.task == "note_generation" for r in results):
            for section in SECTION_NAMES:
                notes = [r for r in results if r.task == "note_generation"]
                section_counts = [r.counts(self.on_unparsed, section) for r in notes]
                sections[section] = aggregate(section_counts)[0]
        unparsed, failed = ({
            "reference_claims": sum(c.status == status for r in results for c in r.reference_claims),
            "prediction_claims": sum(c.status == status for r in results for c in r.prediction_claims),
            "statements": sum(s.status == status for r in results for s in r.statements),
        } for status in (STATUS_UNPARSED, STATUS_FAILED))
        for metric, field_name in (("claim_recall", "reference_claims"), ("claim_precision", "prediction_claims"),
                                   ("citation_recall", "statements"), ("citation_precision", "statements")):
            counts[metric]["unparsed"] = unparsed[field_name]  # items without a verdict, per metric
            counts[metric]["failed"] = failed[field_name]
        statements = [s for r in results if r.has_source for s in r.statements]
        counts["citations"] = {
            "statements": len(statements),
            "uncited_statements": sum(not s.cited for s in statements),
            "inherited_statements": sum(s.inherited for s in statements),
            "statements_with_invalid_ids": sum(bool(s.invalid) for s in statements),
            "invalid_ids": sum(len(s.invalid) for s in statements),
            "capped_statements": stats["capped_statements"],
        }
        report_warnings = []
        if sum(unparsed.values()):
            how = "scored as not entailed" if self.on_unparsed == "zero" else "left out of the scores"
            report_warnings.append(f"{sum(unparsed.values())} judgement(s) could not be parsed from the judge's "
                                   f"replies and were {how} (on_unparsed={self.on_unparsed!r})")
        if sum(failed.values()):
            how = "scored as not entailed" if self.on_unparsed == "zero" else "left out of the scores"
            report_warnings.append(f"{sum(failed.values())} item(s) have no verdict because the model call failed "
                                   f"for good; they were {how} (on_unparsed={self.on_unparsed!r}). Failed calls are "
                                   "not cached: rerun to ask exactly those again")
        if stats["capped_statements"]:
            report_warnings.append(f"{stats['capped_statements']} statement(s) had more than max_citations="
                                   f"{self.max_citations} citations; only the first were kept")
        for message in report_warnings:
            warnings.warn(message, stacklevel=3)
        extract_parts = []
        if stats["used_given"]:
            extract_parts.append("given")
        if stats["used_extractor"]:
            extract_parts.append(component_signature(self.extractor))
        prompt_tags = list(getattr(self.evaluator, "prompt_tags", lambda: [])())
        if stats["used_extractor"]:
            prompt_tags += self.extractor.prompt_tags()
        decoding = getattr(self.evaluator, "decoding", lambda: {})()
        extract_decoding = {}
        if stats["used_extractor"] and callable(getattr(self.extractor, "decoding", None)):
            extract_decoding = {k: v for k, v in self.extractor.decoding().items() if decoding.get(k) != v}
        signature = make_signature(version=__version__, tasks=sorted(stats["tasks"]),
                                   judge=component_signature(self.evaluator),
                                   style=getattr(self.evaluator, "style", None),
                                   extract="+".join(extract_parts) or "none",
                                   prompt_tags=prompt_tags, decoding=decoding, uncited=self.uncited,
                                   max_citations=self.max_citations, on_unparsed=self.on_unparsed,
                                   extract_decoding=extract_decoding,
                                   question_statements=(self.question_statements
                                                        if "question_summarization" in stats["tasks"] else "whole"))
        usage = self.evaluator.usage.to_dict() if hasattr(self.evaluator, "usage") else {}
        if stats["used_extractor"] and hasattr(self.extractor, "usage"):
            extractor_usage = self.extractor.usage.to_dict()
            if self.extractor.usage is not getattr(self.evaluator, "usage", None):
                usage = {k: usage.get(k, 0) + extractor_usage.get(k, 0) for k in set(usage) | set(extractor_usage)}
        config = {
            "evaluator": self.evaluator.config(),
            "extractor": self.extractor.config() if self.extractor else None,
            "evaluator_keeps_data_local": self.evaluator.keeps_data_local,
            "task": self.task,
            "uncited": self.uncited,
            "max_citations": self.max_citations,
            "question_statements": self.question_statements,
            "on_unparsed": self.on_unparsed,
            "prompts": sorted(set(prompt_tags)),
        }
        report = Report(scores=scores, counts=counts, instances=results, signature=signature, config=config,
                        usage=usage, sections=sections, unparsed=unparsed, failed=failed, warnings=report_warnings,
                        partial=partial, error=error, version=__version__)
        if self.baselines and results and not partial:
            from doclens.baselines import compute_baselines

            tasks = {r.task for r in results}
            report.baselines = compute_baselines(
                [self._texts[r.id][0] for r in results], [self._texts[r.id][1] for r in results], self.baselines,
                task=tasks.pop() if len(tasks) == 1 else "general", options=self.baseline_options)
        return report
