"""The evaluator contract (``docs/design.md`` §2).

An evaluator answers entailment questions. The smallest custom evaluator implements only
:meth:`Evaluator.entail_batch`; the base class derives claim verdicts and citation verdicts
(the leave-one-out rule) from it. LLM evaluators override the higher-level
:meth:`Evaluator.judge_claims` and :meth:`Evaluator.judge_citation` (or their ``_many``
forms, to run requests concurrently).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from doclens.core.support import NOT_ADDRESSED, SUPPORTED, SupportJudgement
from doclens.core.types import NO_VERDICT, CitationJudgement, ClaimJudgement, Direction
from doclens.evaluators.usage import Component


@dataclass
class ClaimRequest:
    """Judge each of ``claims`` against ``premise``.

    ``direction`` (:class:`~doclens.core.types.Direction`) is ``"recall"`` (reference claims
    against the prediction), ``"precision"`` (prediction claims against the reference) or
    ``"support"`` (source support: a prediction claim against evidence from the source, three
    verdicts); prompt families that are not symmetric (question summarisation: "is one question a
    specification of the other") use it.
    """

    premise: str
    claims: list[str]
    task: str = "general"
    direction: str = Direction.RECALL
    section: str | None = None


@dataclass
class CitationRequest:
    """Judge ``statement`` against the source units it cites: ``cited`` maps id → unit text."""

    statement: str
    cited: dict[int, str] = field(default_factory=dict)
    task: str = "general"


def join_units(units: dict[int, str], ids: Sequence[int]) -> str:
    """The premise made of the units ``ids`` in ascending order, one per line."""
    return "\n".join(units[i] for i in sorted(ids))


#: a progress callback: called with each request's index once it is judged
OnDone = Callable[[int], None]
#: a batch method's request and answer types (:func:`_with_on_done`)
_Request = TypeVar("_Request")
_Answer = TypeVar("_Answer")


def _takes_on_done(method: Callable[..., object]) -> bool:
    try:
        parameters = inspect.signature(method).parameters
    except (TypeError, ValueError):
        return False
    return "on_done" in parameters or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())


def _with_on_done(method: Callable[[Evaluator, list[_Request]], _Answer]) -> Callable[..., _Answer]:
    @functools.wraps(method)
    def batch(self: Evaluator, requests: list[_Request], *, on_done: OnDone | None = None) -> _Answer:
        answers = method(self, requests)
        if on_done is not None:
            for n in range(len(requests)):
                on_done(n)
        return answers

    return batch


def _citation_judgement(request: CitationRequest, entailed: bool,
                        memo: dict[tuple[str, str], bool]) -> CitationJudgement:
    """A cited statement's judgement from the leave-one-out rounds' answers (``memo``): when the
    cited units together entail it, each citation is precise when its unit alone entails the
    statement or the other units without it do not (a single citation: precise)."""
    precise = {}
    for c in request.cited:
        if not entailed:
            precise[c] = False
        elif len(request.cited) == 1:
            precise[c] = True
        else:
            rest = join_units(request.cited, [o for o in request.cited if o != c])
            precise[c] = memo[(request.cited[c], request.statement)] or not memo[(rest, request.statement)]
    return CitationJudgement(entailed=entailed, precise=precise)


class Evaluator(Component):
    """Base class of every evaluator.

    Subclasses set :attr:`name` and implement :meth:`entail_batch`, or override
    :meth:`judge_claims` / :meth:`judge_citation`. :attr:`keeps_data_local` says whether
    instance text stays on this machine (documented per evaluator in ``cards/``).
    """


    #: Source support: 3 when the judge tells "Not Supported" (the evidence says otherwise) from
    #: "Not Addressed" (the evidence is silent); 2 for entailment-only judges, whose "not
    #: entailed" is reported as Not Addressed (see :meth:`judge_support_many`).
    support_verdicts: int = 2
    #: Source support: a source of at most this many white-space words is given whole to the
    #: judge instead of being retrieved from (the judge's window, in words, with room to spare).
    support_window_words: int = 350

    @property
    def class_name(self) -> str:
        """The judge's class name as reports show it (a judge that Ray's workers held is reported
        under theirs: :mod:`doclens.engines.ray`)."""
        return type(self).__name__

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Progress callbacks are part of the contract: a subclass that overrides a batch method
        without the ``on_done`` keyword gets it, called for every request when the batch returns
        (its instances then step together), so callers never inspect a judge's signature."""
        super().__init_subclass__(**kwargs)
        for name in ("judge_claims_many", "judge_citations_many"):
            method = cls.__dict__.get(name)
            if method is not None and not _takes_on_done(method):
                setattr(cls, name, _with_on_done(method))

    # ---- the smallest contract -------------------------------------------------------------
    def entail_batch(self, pairs: list[tuple[str, str]]) -> list[bool]:
        """Whether each ``(premise, hypothesis)`` pair is an entailment. Same length and order."""
        raise NotImplementedError(
            f"{type(self).__name__} must implement entail_batch(pairs) or judge_claims/judge_citation")

    def prepare(self, premises: Sequence[str], claims: Sequence[str]) -> None:
        """Texts this judge will meet again and again (a training run's references, met at every
        step that samples their prompt: :class:`doclens.rewards.DocLensReward` calls this once per
        reference): a judge that keeps work per text may do it now, once, so that later calls
        spend their time on the new text only. Verdicts never depend on it. The base does nothing."""

    # ---- higher-level judgements -------------------------------------------------------------
    def judge_claims(self, premise: str, claims: list[str], task: str = "general",
                     direction: str = Direction.RECALL) -> list[ClaimJudgement]:
        """One :class:`ClaimJudgement` per claim, in order."""
        return self.judge_claims_many([ClaimRequest(premise, list(claims), task, direction)])[0]

    def judge_citation(self, statement: str, cited: dict[int, str], task: str = "general") -> CitationJudgement:
        """Entailment of ``statement`` by all its cited units, and which citations are precise."""
        return self.judge_citations_many([CitationRequest(statement, dict(cited), task)])[0]

    def _overrides(self, method: str) -> bool:
        return getattr(type(self), method) is not getattr(Evaluator, method)

    def judge_claims_many(self, requests: list[ClaimRequest], *,
                          on_done: OnDone | None = None) -> list[list[ClaimJudgement]]:
        """Judge many requests. The base sends every pair of every request to
        :meth:`entail_batch` in one call, each distinct pair once. With ``on_done`` (a progress
        bar's step, called once per request index when it is judged) the requests go in groups
        of at least :meth:`progress_pairs` pairs, one call each, no pair asked twice: the same
        verdicts and counts, with progress between the groups."""
        if self._overrides("judge_claims"):
            results = []
            for n, r in enumerate(requests):
                results.append(self.judge_claims(r.premise, r.claims, r.task, r.direction))
                if on_done is not None:
                    on_done(n)
            return results
        memo: dict[tuple[str, str], bool] = {}
        results = []
        for group in self._progress_groups([len(r.claims) for r in requests], on_done):
            pairs = [(requests[n].premise, claim) for n in group for claim in requests[n].claims]
            todo = list(dict.fromkeys(p for p in pairs if p not in memo))
            memo.update(zip(todo, self._entail_unique(todo)))
            for n in group:
                results.append([ClaimJudgement(entailed=memo[(requests[n].premise, c)]) for c in requests[n].claims])
                if on_done is not None:
                    on_done(n)
        return results

    def progress_pairs(self) -> int:
        """With progress reporting, the fewest pairs sent to :meth:`entail_batch` at once: four
        of the judge's batches (its ``batch_size``, else 8), so batching stays efficient."""
        return 4 * (getattr(self, "batch_size", None) or 8)

    def _progress_groups(self, sizes: list[int], on_done: OnDone | None) -> list[list[int]]:
        """Request indices in order, in one group (no progress wanted) or in groups of at least
        :meth:`progress_pairs` pairs."""
        if on_done is None:
            return [list(range(len(sizes)))]
        groups, current, pairs = [], [], 0
        for n, size in enumerate(sizes):
            current.append(n)
            pairs += size
            if pairs >= self.progress_pairs():
                groups.append(current)
                current, pairs = [], 0
        return groups + ([current] if current else [])

    def judge_citations_many(self, requests: list[CitationRequest], *,
                             on_done: OnDone | None = None) -> list[CitationJudgement]:
        """Judge many statements with the leave-one-out rule, in three rounds of batched calls.

        1. ``C ⇒ s`` for every statement;
        2. ``c ⇒ s`` for each citation of a statement that is entailed and has several citations;
        3. ``C∖{c} ⇒ s`` only where ``c`` alone does not entail.

        A citation ``c`` is precise iff ``C ⇒ s`` and (``c ⇒ s`` or ``C∖{c} ⇏ s``). With one
        citation no further call is made: precision equals recall. Pairs repeated across rounds
        and statements (``C∖{c}`` of a two-citation group is the other citation alone) are judged
        once. With ``on_done`` (see :meth:`judge_claims_many`) the statements go in groups, the
        three rounds per group, sharing what earlier groups asked.
        """
        if self._overrides("judge_citation"):
            results = []
            for n, r in enumerate(requests):
                results.append(self.judge_citation(r.statement, r.cited, r.task))
                if on_done is not None:
                    on_done(n)
            return results
        memo: dict[tuple[str, str], bool] = {}
        results = []
        for group in self._progress_groups([max(1, len(r.cited)) for r in requests], on_done):
            results += self._leave_one_out([requests[n] for n in group], memo)
            for n in group:
                if on_done is not None:
                    on_done(n)
        return results

    def _leave_one_out(self, requests: list[CitationRequest],
                       memo: dict[tuple[str, str], bool]) -> list[CitationJudgement]:
        """The three rounds of :meth:`judge_citations_many` for ``requests``; ``memo`` holds the
        pairs already judged (and receives the new ones)."""

        def ask(pairs: list[tuple[str, str]]) -> None:
            todo = list(dict.fromkeys(p for p in pairs if p not in memo))
            if todo:
                memo.update(zip(todo, self._entail_unique(todo)))

        whole = [(join_units(r.cited, list(r.cited)), r.statement) for r in requests]
        ask([pair for pair, r in zip(whole, requests) if r.cited])
        multi = [r for pair, r in zip(whole, requests) if r.cited and len(r.cited) > 1 and memo[pair]]
        ask([(r.cited[c], r.statement) for r in multi for c in r.cited])
        ask([(join_units(r.cited, [o for o in r.cited if o != c]), r.statement)
             for r in multi for c in r.cited if not memo[(r.cited[c], r.statement)]])

        return [_citation_judgement(request, memo[pair], memo) if request.cited else CitationJudgement.uncited()
                for pair, request in zip(whole, requests)]

    def _entail_unique(self, pairs: list[tuple[str, str]]) -> list[bool]:
        """Call :meth:`entail_batch` once per distinct pair and spread the answers back."""
        unique = list(dict.fromkeys(pairs))
        if not unique:
            return []
        answers = self.entail_batch(unique)
        if len(answers) != len(unique):
            raise RuntimeError(f"{type(self).__name__}.entail_batch returned {len(answers)} verdicts "
                               f"for {len(unique)} pairs")
        self.usage.pairs += len(unique)
        lookup = {pair: bool(answer) for pair, answer in zip(unique, answers)}
        return [lookup[pair] for pair in pairs]

    # ---- source support ------------------------------------------------------------------------
    def judge_support_many(self, requests: list[ClaimRequest]) -> list[list[SupportJudgement]]:
        """A 3-way source-support verdict (:mod:`doclens.core.support`) for each claim of each
        request, whose ``premise`` is the evidence (facts, one per line).

        The base class asks :meth:`judge_claims_many` and maps entailed → ``supported`` and not
        entailed → ``not_addressed``: an entailment-only judge cannot tell a contradiction from
        silence (:attr:`support_verdicts` is 2, and the report says so). Judges that can
        (NLI classifiers, LLM judges, ``overlap``, ``clinical-rules``) override this."""
        answers = self.judge_claims_many([ClaimRequest(r.premise, list(r.claims), r.task, Direction.RECALL, r.section)
                                          for r in requests])
        return [[support_from_entailment(j) for j in row] for row in answers]

    def support_prompt_tags(self) -> list[str]:
        """Prompt versions used by :meth:`judge_support_many` (for the signature); none by default."""
        return []


def support_from_entailment(judgement: ClaimJudgement) -> SupportJudgement:
    """The 2-way reading of an entailment verdict: entailed → supported, else not addressed."""
    if judgement.status in NO_VERDICT:
        return SupportJudgement(None, judgement.explanation, judgement.status, judgement.raw)
    return SupportJudgement(SUPPORTED if judgement.entailed else NOT_ADDRESSED, judgement.explanation,
                            judgement.status, judgement.raw)
