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

import argparse
from collections.abc import Iterable
from pathlib import Path

from doclens.core.arguments import NON_NEGATIVE_INT, POSITIVE_INT
from doclens.core.errors import ConfigurationError, InputError
from doclens.core.settings import metric_selectors
from doclens.core.support import SUPPORT_LABELS, SupportJudgement, SupportVerdict
from doclens.core.types import EXTRACTION_FAILED, NO_VERDICT, STATUS_FAILED, Direction
from doclens.evaluators.base import ClaimRequest, Evaluator
from doclens.retrieval.config import RetrievalConfig
from doclens.scoring.signature import SignatureField, render_signature

NO_FACTS = "the source has no facts (no sentence or row with a letter or digit): nothing addresses the claim"


def check_metrics(metrics: None | str | Iterable[str]) -> tuple[str, ...]:
    """``"doclens,source_support"`` or a list → the families, checked as
    :class:`~doclens.core.settings.ScoringSettings` checks ``metrics=``
    (:func:`~doclens.core.settings.metric_selectors`). ``None``: ``("doclens",)``."""
    return ("doclens",) if metrics is None else metric_selectors(metrics)


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

    def __init__(self, retrieval: RetrievalConfig | None = None, *, budget_words: int | None = None,
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

    # ---- its command-line options (read by the family: doclens.families.MetricFamily.add_cli_options) ----
    #: ``(flag, argparse destination)`` of every option below
    CLI_OPTIONS = (("--top-n", "top_n"), ("--retrieval-encoder", "retrieval_encoder"), ("--reranker", "reranker"),
                   ("--always-retrieve", "always_retrieve"), ("--support-budget", "support_budget"),
                   ("--vector-store", "vector_store"))

    @staticmethod
    def add_cli_options(group) -> None:
        """``doclens score``'s source-support options (``cards/source-support.md``)."""
        group.add_argument("--top-n", type=POSITIVE_INT,
                           help="source support: facts retrieved per claim from a long source (default 50)")
        group.add_argument("--retrieval-encoder", metavar="MODEL",
                           help="source support: dense encoder, a sentence-transformers folder or hub id (default: "
                                "the shipped all-MiniLM-L6-v2, offline)")
        group.add_argument("--reranker", metavar="MODEL", help="source support: cross-encoder re-ranking the facts")
        group.add_argument("--always-retrieve", action="store_true",
                           help="source support: retrieve even for a source short enough to give whole")
        group.add_argument("--support-budget", type=NON_NEGATIVE_INT, metavar="WORDS",
                           help="source support: a source of at most WORDS words is given whole (default: the "
                                "judge's window)")
        group.add_argument("--vector-store", metavar="DIR",
                           help="source support: folder of the on-disk vector store (default: retrieval/ in the "
                                "DocLens cache folder, --cache-dir; --no-cache: kept in memory only)")

    @classmethod
    def cli_given(cls, args: argparse.Namespace) -> list[str]:
        """The source-support flags given in ``args``."""
        return [flag for flag, dest in cls.CLI_OPTIONS if getattr(args, dest, None) not in (None, False)]

    @classmethod
    def from_cli(cls, args: argparse.Namespace) -> SourceSupport:
        """The settings ``doclens score``'s options give (the vector store is a cache: ``--cache-dir``
        moves it, ``--no-cache`` and ``--refresh`` neither read nor write it)."""
        from doclens.retrieval import Retriever
        from doclens.retrieval.store import VectorStore

        config = RetrievalConfig(encoder=args.retrieval_encoder, top_n=args.top_n or 50, reranker=args.reranker,
                                 always_retrieve=args.always_retrieve)
        off = getattr(args, "no_cache", False) or getattr(args, "refresh", False)
        folder = args.vector_store or (Path(args.cache_dir) / "retrieval" if getattr(args, "cache_dir", None) else None)
        retriever = (Retriever(config, store=VectorStore(folder, persist=not off))
                     if folder is not None or off else None)
        return cls(config if retriever is None else None, budget_words=args.support_budget, retriever=retriever)

    # ---- a dry run ------------------------------------------------------------------------------------
    def planning(self) -> PlanningSourceSupport:
        """A dry run's stand-in for these settings (:class:`PlanningSourceSupport`)."""
        return PlanningSourceSupport(self)

    # ---- judging --------------------------------------------------------------------------------------
    @staticmethod
    def facts(instance) -> list:
        """The facts of ``instance``'s source (:func:`doclens.retrieval.facts.source_facts`); a
        source that cannot be read is an :class:`InputError` naming the instance and field."""
        from doclens.retrieval.facts import source_facts

        try:
            return source_facts(instance.source)
        except InputError as exc:
            raise InputError(f"instance {instance.id!r}: field 'source': {exc}", field="source") from exc

    def judge(self, works: list, evaluator: Evaluator) -> dict[int, list[SupportVerdict]]:
        """``{position in works: verdicts}`` for every work whose instance has a source (works
        without one are absent: the metric is skipped for them)."""
        budget = self.budget(evaluator)
        verdicts: dict[int, list[SupportVerdict]] = {}
        groups: _Groups = {}  # (task, premise) → (the claim's verdict, claim): one request each
        for i, work in enumerate(works):
            if work.instance.source is not None:
                verdicts[i] = self._with_evidence(work, budget, groups)
        _judge_groups(groups, evaluator)
        return {i: row + _failed_extractions(works[i]) for i, row in verdicts.items()}

    def _with_evidence(self, work, budget: int, groups: _Groups) -> list[SupportVerdict]:
        """The verdicts of ``work``'s prediction claims, their evidence found and each added to
        the ``groups`` of claims judged against the same premise (a source without facts: each
        ``not_addressed``, nothing to ask)."""
        facts = self.facts(work.instance)
        claims = [(section, claim) for section, items in work.pred_claims.items() for claim in items]
        if claims and not facts:
            return [SupportVerdict(text=claim, verdict="not_addressed", explanation=NO_FACTS, section=section,
                                   retrieved=False) for section, claim in claims]
        evidence = self.retriever.evidence(facts, [claim for _, claim in claims], budget) if claims else []
        row = []
        for (section, claim), hits in zip(claims, evidence):
            verdict = SupportVerdict(text=claim, verdict=None, section=section,
                                     retrieved=bool(hits) and hits[0].retrieved,
                                     evidence=[evidence_record(hit) for hit in hits])
            row.append(verdict)
            premise = "\n".join(hit.fact.premise_text for hit in hits)
            groups.setdefault((work.task, premise), []).append((verdict, claim))
        return row

    # ---- the report ---------------------------------------------------------------------------------
    def report_block(self, tally: dict, evaluator: Evaluator) -> dict:
        """The report's ``source_support`` block from the family's running tally
        (:meth:`doclens.families.source_support.SourceSupportFamily.tally`)."""
        block = {
            "verdicts": evaluator.support_verdicts,
            "judge": evaluator.class_name,
            "retrieval": render_signature(self.retrieval_fields()),
            "budget_words": self.budget(evaluator),
            "claims": {key: tally.get(key, 0) for key in (*SUPPORT_LABELS, *NO_VERDICT)},
            "retrieved_claims": tally.get("retrieved_claims", 0),
            "whole_source_claims": tally.get("whole_source_claims", 0),
            "instances_without_source": tally.get("instances_without_source", 0),
        }
        if evaluator.support_verdicts < 3:
            block["note"] = ("this judge gives entailment only: 'not entailed' is reported as not_addressed and "
                             "source_not_supported is 0 by construction")
        return block

    def retrieval_fields(self) -> list[SignatureField]:
        """The retrieval settings' signature fields (the encoder named ``default@not-installed`` on
        a core install, where every source is given whole and nothing is fingerprinted)."""
        from doclens.core.errors import MissingExtraError

        try:
            return self.config.signature_fields()
        except MissingExtraError:
            return self.config.signature_fields(encoder_installed=False)

    def signature_fields(self, evaluator: Evaluator) -> list[SignatureField]:
        """The signature fields this metric adds, as data."""
        from doclens.evaluators.llm.prompting import prompts_fingerprint

        tags = evaluator.support_prompt_tags()
        return [("metrics", "doclens+source_support"), ("support", f"{evaluator.support_verdicts}way"),
                ("support-prompts", prompts_fingerprint(tags) if tags else "none"),
                ("budget", str(self.budget(evaluator))), *self.retrieval_fields()]

    def signature(self, evaluator: Evaluator) -> str:
        """:meth:`signature_fields` rendered (the report signature's ``key:value|…`` format)."""
        return render_signature(self.signature_fields(evaluator))


class PlanningSourceSupport(SourceSupport):
    """Source support in a dry run's planning scorer: the family stays selected, so the planner
    accepts and refuses exactly the sources the real run does (a plain-text source without ``[0]``
    is read as facts, not refused as citable units). A source that fits the judge's window is
    given whole, as in the real step, whose requests the planning judge then counts; a longer one
    (or every one, with ``always_retrieve``) would need retrieval, which a dry run does not do (no
    encoder loaded): its claims are counted apart, not planned."""

    def __init__(self, real: SourceSupport):
        super().__init__(real.config, budget_words=real.budget_words)
        self.instances = self.claims = self.retrieved_claims = 0

    def judge(self, works: list, evaluator: Evaluator) -> dict:
        from doclens.retrieval.retriever import given_whole

        whole = []
        for work in works:
            if work.instance.source is None:
                continue
            facts = self.facts(work.instance)  # read, and refused, as the real step does
            claims = sum(len(items) for items in work.pred_claims.values())
            self.instances += 1
            self.claims += claims
            if given_whole(facts, self.budget(evaluator), self.config):
                whole.append(work)
            else:
                self.retrieved_claims += claims
        return super().judge(whole, evaluator)  # nothing retrieved: each source is given whole

    def plan(self) -> tuple[dict, list[str]]:
        """What a dry run says of source support: its block and its note."""
        return ({"instances": self.instances, "prediction_claims": self.claims,
                 "claims_needing_retrieval": self.retrieved_claims},
                ["source support is on: a source that fits the judge's window is given whole, and its "
                 "judgements are counted with the others (calls.judge_support, pairs); the claims of a "
                 "longer source need retrieval, which a dry run does not do: "
                 "source_support.claims_needing_retrieval counts them, and their judgements (one call "
                 "per group of claims sharing evidence in json_cot, one per claim in cot) are NOT in "
                 "the calls, pairs or cost"])


def evidence_record(hit) -> dict:
    """What the report keeps of one evidence fact: :meth:`doclens.retrieval.Hit.to_dict` without
    the scores a stage did not give (``None``) and without ``retrieved`` (the claim says it once).
    With 50 facts per claim the evidence is most of a report's size."""
    return {key: value for key, value in hit.to_dict().items() if value is not None and key != "retrieved"}


#: claims judged against the same premise: (task, premise) → (the claim's verdict, the claim)
_Groups = dict[tuple[str, str], list[tuple[SupportVerdict, str]]]


def _judge_groups(groups: _Groups, evaluator: Evaluator) -> None:
    """One support request per group (its premise and claims), its answers set on the verdicts."""
    requests = [ClaimRequest(premise, [claim for _, claim in members], task, Direction.SUPPORT)
                for (task, premise), members in groups.items()]
    answers = evaluator.judge_support_many(requests) if requests else []
    if len(answers) != len(requests) or any(len(a) != len(r.claims) for a, r in zip(answers, requests)):
        raise RuntimeError(f"{type(evaluator).__name__} returned the wrong number of source-support judgements")
    for members, row_answers in zip(groups.values(), answers):
        for (verdict, _), judgement in zip(members, row_answers):
            _apply(verdict, judgement)


def _failed_extractions(work) -> list[SupportVerdict]:
    """One item per section whose prediction claims could not be extracted (the claims are
    unknown: the item says so, scored per on_unparsed)."""
    return [SupportVerdict(text=EXTRACTION_FAILED, verdict=None, status=STATUS_FAILED, section=section,
                           explanation=f"claim extraction failed: {error}", retrieved=False)
            for (name, section), error in work.failed_extractions.items() if name == "prediction_claims"]


def _apply(verdict: SupportVerdict, judgement: SupportJudgement) -> None:
    if judgement.status not in NO_VERDICT and judgement.verdict not in SUPPORT_LABELS:
        raise RuntimeError(f"a source-support judge returned the verdict {judgement.verdict!r}; "
                           f"expected one of {SUPPORT_LABELS}")
    verdict.verdict = judgement.verdict if judgement.status not in NO_VERDICT else None
    verdict.explanation = judgement.explanation
    verdict.status = judgement.status
    verdict.raw = judgement.raw
