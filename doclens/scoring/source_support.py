"""The source-support metric family: every prediction claim judged against its instance's own
source (``cards/source-support.md``; the verdicts and counts are in :mod:`doclens.core.support`).

Opt in with ``DocLens(..., metrics=["doclens", "source_support"])`` (CLI: ``--metrics
doclens,source_support``). For each instance with a source and prediction claims:

1. the source (any shape :mod:`doclens.retrieval.facts` reads: numbered units, a long text,
   documents, table rows) is split into facts;
2. a source whose facts fit the judge's window (``budget_words``, default the judge's
   :attr:`~doclens.Evaluator.support_window_words`) is given whole to every claim, in source
   order; a longer one is indexed once (BM25 + the MiniLM encoder, fused by reciprocal rank,
   vectors kept on disk) and each claim gets its ``top_n`` facts (:class:`doclens.retrieval.Retriever`);
   ``RetrievalConfig(always_retrieve=True)`` retrieves for short sources too;
3. the judge gives each claim a 3-way verdict against that evidence
   (:meth:`doclens.Evaluator.judge_support_many`); claims that share the same evidence go in one
   request;
4. each claim's verdict, explanation and evidence (unit, fact, text, rank, every retrieval score)
   are kept in ``InstanceResult.source_support``.

The report adds ``source_supported``, ``source_not_supported``, ``source_not_addressed`` (pooled,
``_macro``, per note section), their counts, and a ``source_support`` block (judge kind, retrieval
signature, how many claims were retrieved for or given the whole source). The signature gains
``metrics:doclens+source_support``, the support judge's kind and prompts, the budget and every
retrieval setting with the encoder's fingerprint.
"""

from __future__ import annotations

from typing import Iterable, Optional, Union

from doclens.core.errors import ConfigurationError, InputError
from doclens.core.support import (SUPPORT_LABELS, SUPPORT_METRICS, SupportJudgement, SupportVerdict, aggregate_support,
                                  support_counts)
from doclens.core.tasks import SECTION_NAMES
from doclens.core.types import NO_VERDICT, STATUS_FAILED, InstanceResult
from doclens.evaluators.base import ClaimRequest, Evaluator
from doclens.retrieval.config import RetrievalConfig

#: The metric families ``metrics=`` names.
METRIC_FAMILIES = ("doclens", "source_support")
#: The text of the one item that stands for the unknown claims of a prediction whose extraction failed.
EXTRACTION_FAILED = "[claims not extracted: the extraction call failed]"
NO_FACTS = "the source has no facts (no sentence or row with a letter or digit): nothing addresses the claim"


def check_metrics(metrics: Union[None, str, Iterable[str]]) -> tuple[str, ...]:
    """``"doclens,source_support"`` or a list → the families, checked. ``None``: ``("doclens",)``.
    The DocLens metrics are always computed (source support judges their prediction claims)."""
    if metrics is None:
        return ("doclens",)
    names = [m.strip() for m in (metrics.split(",") if isinstance(metrics, str) else metrics)]
    names = [m for m in names if m]
    unknown = [m for m in names if m not in METRIC_FAMILIES]
    if unknown:
        raise ConfigurationError(f"unknown metric family {', '.join(map(repr, unknown))}; choose from "
                                 f"{', '.join(METRIC_FAMILIES)}")
    if "doclens" not in names:
        raise ConfigurationError("metrics must include 'doclens' (source_support judges the claims that the DocLens "
                                 "metrics extract): use 'doclens,source_support'")
    return tuple(dict.fromkeys(names))


class SourceSupport:
    """Settings and state of the source-support metric for one scorer.

    Parameters
    ----------
    retrieval : RetrievalConfig, optional
        How evidence is retrieved (``top_n`` default 50, encoder, re-ranker, ``always_retrieve``).
    budget_words : int, optional
        A source of at most this many white-space words is given whole; default the judge's
        ``support_window_words``.
    retriever : doclens.retrieval.Retriever, optional
        A ready retriever (its encoder loaded, its vector store chosen); default one built from
        ``retrieval`` on first need, with the default on-disk store.
    """

    def __init__(self, retrieval: Optional[RetrievalConfig] = None, *, budget_words: Optional[int] = None,
                 retriever=None):
        if retriever is not None and retrieval is not None and retriever.config != retrieval:
            raise ConfigurationError("give either retrieval= or a retriever=, not two different configurations")
        if budget_words is not None and (not isinstance(budget_words, int) or budget_words < 0):
            raise ConfigurationError(f"budget_words must be an integer >= 0, got {budget_words!r}")
        self.config = retriever.config if retriever is not None else (retrieval or RetrievalConfig())
        self.budget_words = budget_words
        self._retriever = retriever

    @property
    def retriever(self):
        if self._retriever is None:
            from doclens.retrieval.retriever import Retriever

            self._retriever = Retriever(self.config)
        return self._retriever

    def budget(self, evaluator: Evaluator) -> int:
        return self.budget_words if self.budget_words is not None else evaluator.support_window_words

    # ---- judging --------------------------------------------------------------------------------------
    def judge(self, works: list, evaluator: Evaluator) -> dict[int, list[SupportVerdict]]:
        """``{position in works: verdicts}`` for every work whose instance has a source (works
        without one are absent: the metric is skipped for them)."""
        from doclens.retrieval.facts import source_facts

        budget = self.budget(evaluator)
        verdicts: dict[int, list[Optional[SupportVerdict]]] = {}
        groups: dict[tuple[str, str], list[tuple[int, int, str]]] = {}  # (task, premise) → (work, slot, claim)
        for i, work in enumerate(works):
            instance = work.instance
            if instance.source is None:
                continue
            try:
                facts = source_facts(instance.source)
            except InputError as exc:
                raise InputError(f"instance {instance.id!r}: field 'source': {exc}", field="source") from exc
            claims = [(section, claim) for section, items in work.pred_claims.items() for claim in items]
            row: list[Optional[SupportVerdict]] = [None] * len(claims)
            verdicts[i] = row
            if claims and not facts:
                for slot, (section, claim) in enumerate(claims):
                    row[slot] = SupportVerdict(text=claim, verdict="not_addressed", explanation=NO_FACTS,
                                               section=section, retrieved=False)
                continue
            evidence = self.retriever.evidence(facts, [claim for _, claim in claims], budget) if claims else []
            for slot, ((section, claim), hits) in enumerate(zip(claims, evidence)):
                row[slot] = SupportVerdict(text=claim, verdict=None, section=section,
                                           retrieved=bool(hits) and hits[0].retrieved,
                                           evidence=[evidence_record(hit) for hit in hits])
                premise = "\n".join(hit.fact.premise_text for hit in hits)
                groups.setdefault((work.task, premise), []).append((i, slot, claim))
        requests = [ClaimRequest(premise, [claim for _, _, claim in members], task, "support")
                    for (task, premise), members in groups.items()]
        answers = evaluator.judge_support_many(requests) if requests else []
        if len(answers) != len(requests) or any(len(a) != len(r.claims) for a, r in zip(answers, requests)):
            raise RuntimeError(f"{type(evaluator).__name__} returned the wrong number of source-support judgements")
        for members, row_answers in zip(groups.values(), answers):
            for (i, slot, _), judgement in zip(members, row_answers):
                _apply(verdicts[i][slot], judgement)
        result: dict[int, list[SupportVerdict]] = {}
        for i, row in verdicts.items():
            items = [v for v in row if v is not None]
            for (name, section), error in works[i].failed_extractions.items():
                if name == "prediction_claims":  # the claims are unknown: one item says so, scored per on_unparsed
                    items.append(SupportVerdict(text=EXTRACTION_FAILED, verdict=None, status=STATUS_FAILED,
                                                section=section, explanation=f"claim extraction failed: {error}",
                                                retrieved=False))
            result[i] = items
        return result

    # ---- the report ---------------------------------------------------------------------------------
    def report_parts(self, results: list[InstanceResult], on_unparsed: str, evaluator: Evaluator) -> dict:
        """``{"scores", "counts", "sections", "block"}`` for the report (see the module docstring)."""
        scores, counts = aggregate_support([support_counts(r.source_support, on_unparsed) for r in results])
        verdicts = [v for r in results for v in (r.source_support or [])]
        for metric in SUPPORT_METRICS:
            counts[metric]["unparsed"] = sum(v.status == "unparsed" for v in verdicts)
            counts[metric]["failed"] = sum(v.status == "failed" for v in verdicts)
        notes = [r for r in results if r.task == "note_generation"]
        sections = {section: aggregate_support([support_counts(r.source_support, on_unparsed, section)
                                                for r in notes])[0] for section in SECTION_NAMES} if notes else {}
        block = {
            "verdicts": evaluator.support_verdicts,
            "judge": type(evaluator).__name__,
            "retrieval": self.signature(evaluator).split("|", 4)[4],
            "budget_words": self.budget(evaluator),
            "claims": {**{label: sum(v.verdict == label for v in verdicts) for label in SUPPORT_LABELS},
                       **{status: sum(v.status == status for v in verdicts) for status in NO_VERDICT}},
            "retrieved_claims": sum(v.retrieved for v in verdicts),
            "whole_source_claims": sum(not v.retrieved and v.status not in NO_VERDICT and bool(v.evidence)
                                       for v in verdicts),
            "instances_without_source": sum(r.source_support is None for r in results),
        }
        if evaluator.support_verdicts < 3:
            block["note"] = ("this judge gives entailment only: 'not entailed' is reported as not_addressed and "
                             "source_not_supported is 0 by construction")
        return {"scores": scores, "counts": counts, "sections": sections, "block": block}

    def signature(self, evaluator: Evaluator) -> str:
        """The signature fields this metric adds (the report signature's ``key:value|…`` format)."""
        from doclens.evaluators.prompting import prompts_fingerprint

        from doclens.core.errors import MissingExtraError

        tags = evaluator.support_prompt_tags()
        try:
            retrieval = self.config.signature()
        except MissingExtraError:  # core install, every source given whole: no encoder to fingerprint
            retrieval = self.config.with_options(dense=False).signature().replace(
                "retrieval:bm25", "retrieval:bm25+dense|encoder:default@not-installed", 1)
        parts = ["metrics:doclens+source_support", f"support:{evaluator.support_verdicts}way",
                 f"support-prompts:{prompts_fingerprint(tags) if tags else 'none'}",
                 f"budget:{self.budget(evaluator)}", retrieval]
        return "|".join(parts)


def evidence_record(hit) -> dict:
    """What the report keeps of one evidence fact: :meth:`doclens.retrieval.Hit.to_dict` without
    the scores a stage did not give (``None``) and without ``retrieved`` (the claim says it once).
    With 50 facts per claim the evidence is most of a report's size."""
    return {key: value for key, value in hit.to_dict().items() if value is not None and key != "retrieved"}


def _apply(verdict: SupportVerdict, judgement: SupportJudgement) -> None:
    if judgement.status not in NO_VERDICT and judgement.verdict not in SUPPORT_LABELS:
        raise RuntimeError(f"a source-support judge returned the verdict {judgement.verdict!r}; "
                           f"expected one of {SUPPORT_LABELS}")
    verdict.verdict = judgement.verdict if judgement.status not in NO_VERDICT else None
    verdict.explanation = judgement.explanation
    verdict.status = judgement.status
    verdict.raw = judgement.raw
