"""Chat-model judges, independent of where the model runs (``docs/design.md`` §2).

:class:`ChatJudge` renders the judge prompts (``prompts/judge/``), reads the replies
(:mod:`doclens.parsing.judge_replies`), matches verdicts back to the claims asked, re-asks once for what
is missing, and records a reply that stays unreadable as *unparsed* (raw text kept). It caches
every answer (:mod:`doclens.evaluators.cache`) as soon as it arrives (and forgets the replies that left
items unparsed, so a rerun asks those calls again), counts calls and tokens, and delegates
the model call to one method, :meth:`ChatJudge.complete_many`, which an endpoint class
(:class:`doclens.evaluators.llm.openai_chat.OpenAIChatJudge`) or an in-process model implements.

Every prompt numbers the claims it asks about and every reply names them: JSON items carry
``"id"``, ``cot`` replies a ``claim id:`` line. Verdicts are filed by that number, then by the
claim's exact (normalised) text, never by position (:mod:`doclens.parsing.judge_replies`). Instance text
(premise, claims, statements, source units) enters a prompt only inside a fence it cannot forge
(:class:`doclens.evaluators.llm.prompting.Fence`), and the prompts say that fenced text is data.

Prompt styles (paper Table 1 ablation):

==========  =====================================================================================
``json_cot``  one call per premise judges all its claims; reply: a JSON list of
              ``{claim, explanation, entailment_prediction}`` (the paper's GPT-4 setting)
``json``      as ``json_cot`` without the explanation field: no chain of thought
``cot``       one call per claim; reply ``claim: … explanation: … entailment prediction: 1|0`` (the
              paper's Mistral setting), the claim restated and checked against the asked one
==========  =====================================================================================

Citations are judged one call per statement in every style: the reply gives the entailment of
the statement by all its cited units and the ``provenance``, the ids that support it. A citation
is precise iff the statement is entailed and its id is in the provenance.

**Source support** (:meth:`ChatJudge.judge_support_many`) judges prediction claims against
evidence from the instance's source with 3 verdicts (Supported / Not Supported / Not
Addressed): the claims path with ``direction="support"`` and the ``prompts/judge/support.*``
prompts (``json_cot``; ``cot``; the ``json`` style uses the ``json_cot`` prompt, since a verdict
between silence and contradiction needs its reason), replies read by
:func:`doclens.parsing.judge_replies.read_support_verdicts` / ``parse_support_cot``, matched,
re-asked and recorded as unparsed exactly as claim replies are.

``question_summarization`` asks whether question A (the premise) is a specification of question
B (the claim). With the scorer's premises this is, for ``direction="recall"``, whether the
output question specifies the reference question, and for ``"precision"`` the converse
(``docs/design.md`` §4).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from doclens.core.support import SupportJudgement
from doclens.core.tasks import Task
from doclens.core.types import NO_VERDICT, CitationJudgement, ClaimJudgement, Direction
from doclens.evaluators.base import CitationRequest, ClaimRequest, Evaluator
from doclens.evaluators.cache import CachedAnswers, cache_key
from doclens.evaluators.llm.prompting import Fence, load_prompt, make_fence
from doclens.parsing.judge_replies import (
    Verdict,
    parse_citation_cot,
    parse_citation_json,
    parse_cot,
    parse_support_cot,
    read_claim_verdicts,
    read_support_verdicts,
)

logger = logging.getLogger("doclens")

STYLES = ("json_cot", "cot", "json")
DIRECTIONS = (Direction.RECALL, Direction.PRECISION)
#: The direction of a source-support request: claims of the prediction against source evidence.
SUPPORT = Direction.SUPPORT

#: Explanation recorded when the endpoint refuses a prompt as longer than the model's window
#: and it cannot be split further (one claim, or one statement): never truncated, never silent.
TOO_LONG = "the prompt exceeds the model's context window even for a single item (text is never truncated)"


#: What a call's reply must hold, passed to :meth:`ChatJudge.complete_for`: free text (subclaim
#: extraction), a verdict per claim, or a citation verdict with its provenance. Endpoint judges
#: ignore it (the prompt says it); in-process judges may force the answer format with it.
ANSWER_FREE = "free"
ANSWER_VERDICT = "verdict"
ANSWER_VERDICT_AND_PROVENANCE = "verdict+provenance"


@dataclass
class Completion:
    """One model reply: its text and token usage. ``context_overflow`` marks a prompt the
    endpoint refused as too long for the model (``text`` is then ``None``). ``error`` marks a
    call that failed for good (``text`` is then ``None``): it names why, without secrets; its
    items are recorded as ``failed`` and it is never cached."""

    text: str | None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    context_overflow: bool = False
    cached: bool = False
    error: str | None = None
    #: Of ``prompt_tokens``, those the model did not compute again: served from the endpoint's
    #: prompt cache (``usage.prompt_tokens_details.cached_tokens``); 0 in process.
    cached_tokens: int = 0

    @property
    def failed(self) -> bool:
        return self.error is not None


# ---- prompt rendering (public: reused by in-process chat judges) ----------------------------------
def check_style(style: str) -> str:
    if style not in STYLES:
        from doclens.core.errors import ConfigurationError

        raise ConfigurationError(f"unknown prompt style {style!r}; choose one of {', '.join(STYLES)}")
    return style


def claims_prompt_name(style: str, task: str) -> str:
    """``judge/claims.<style>``, or ``judge/question.<style>`` for question summarisation."""
    family = "question" if task == Task.QUESTION_SUMMARIZATION else "claims"
    return f"judge/{family}.{check_style(style)}"


def support_prompt_name(style: str) -> str:
    """``judge/support.json_cot`` (styles ``json_cot`` and ``json``) or ``judge/support.cot``."""
    return f"judge/support.{'cot' if check_style(style) == 'cot' else 'json_cot'}"


def citation_prompt_name(style: str) -> str:
    return f"judge/citation.{check_style(style)}"


def judge_prompt_tags(style: str) -> list[str]:
    """The tags (``name@vN#sha``) of every judge prompt a style can use."""
    names = [claims_prompt_name(style, "general"), claims_prompt_name(style, "question_summarization"),
             citation_prompt_name(style), "judge/reask"]
    return sorted(load_prompt(name).tag for name in names)


def claim_ids(claims: Sequence[str], ids: Sequence[int] | None = None) -> list[int]:
    """The numbers the claims are asked under: ``ids`` (checked: one distinct positive int per
    claim), default 1, 2, …. The judge numbers a request's claims by position + 1, so a claim keeps
    its number when a list is split or re-asked."""
    if ids is None:
        return list(range(1, len(claims) + 1))
    ids = list(ids)
    if len(ids) != len(claims) or len(set(ids)) != len(ids) or not all(
            isinstance(i, int) and not isinstance(i, bool) and i > 0 for i in ids):
        raise ValueError(f"ids must be {len(claims)} distinct positive integers, got {ids!r}")
    return ids


def format_claims(claims: Sequence[str], ids: Sequence[int] | None = None, fence: Fence | None = None) -> str:
    """``1. first claim`` lines; with a ``fence``, ``Claim 3: <<<DATA-…>>>text<<<END-…>>>`` lines
    (the number outside the fence, every byte of the claim inside it)."""
    numbers = claim_ids(claims, ids)
    if fence is None:
        return "\n".join(f"{i}. {claim}" for i, claim in zip(numbers, claims))
    return "\n".join(f"Claim {i}: {fence.wrap(claim)}" for i, claim in zip(numbers, claims))


def format_sources(cited: dict[int, str], fence: Fence | None = None) -> str:
    """``[i] unit`` lines in ascending id order; with a ``fence``, each unit inside it."""
    if fence is None:
        return "\n".join(f"[{i}] {cited[i]}" for i in sorted(cited))
    return "\n".join(f"[{i}] {fence.wrap(cited[i])}" for i in sorted(cited))


def claims_fence(premise: str, claims: Sequence[str]) -> Fence:
    """The fence of a claims request: derived from its premise and ALL its claims
    (:func:`make_fence`). Every call of the request uses it (one per claim in ``cot``, halves
    after a context-length split, the re-ask), so those calls share the instructions and the
    fenced premise as one identical prompt prefix."""
    return make_fence([premise, *claims])


def citation_fence(statement: str, cited: dict[int, str]) -> Fence:
    """The fence of a citation call: derived from its statement and cited units."""
    return make_fence([statement, *(cited[i] for i in sorted(cited))])


def one_call_per_claim(style: str, task: str) -> bool:
    """Whether the style judges each claim in its own call (``cot``, and question
    summarisation, whose one claim is the whole question)."""
    return check_style(style) == "cot" or task == Task.QUESTION_SUMMARIZATION


def render_claims(style: str, task: str, direction: str, premise: str, claims: Sequence[str],
                  ids: Sequence[int] | None = None, *, fence: Fence | None = None) -> list[dict]:
    """The chat messages judging ``claims`` against ``premise``, numbered by ``ids`` (default
    1, 2, …); the reply names these numbers. Styles that judge one claim per call
    (:func:`one_call_per_claim`) take exactly one claim. Premise and claims enter the prompt only
    inside ``fence``: pass the whole request's (:func:`claims_fence` of the premise and all its
    claims) when ``claims`` is a part of it; default, the fence of ``premise`` and ``claims``.
    A ``fence`` must come from :func:`make_fence` over texts that include these.

    The messages hold the template's fixed text (instructions, worked example) first, then the
    fenced premise, then the claims: calls on one premise share everything up to the claims."""
    if direction not in DIRECTIONS + (SUPPORT,):
        raise ValueError(f"direction must be one of {DIRECTIONS + (SUPPORT,)}, got {direction!r}")
    if direction == SUPPORT:
        task = "general"
    template = load_prompt(support_prompt_name(style) if direction == SUPPORT else claims_prompt_name(style, task))
    if one_call_per_claim(style, task) and len(claims) != 1:
        raise ValueError(f"style {style!r} / task {task!r} judges one claim per call, got {len(claims)}")
    numbers = claim_ids(claims, ids)
    if fence is None:
        fence = claims_fence(premise, claims)
    if task == Task.QUESTION_SUMMARIZATION:
        return template.render(question_a=fence.wrap(premise), question_b=fence.wrap(claims[0]),
                               claim_id=numbers[0], **fence.values())
    if style == "cot":
        return template.render(premise=fence.block(premise), claim=fence.wrap(claims[0]), claim_id=numbers[0],
                               **fence.values())
    return template.render(premise=fence.block(premise), claims=format_claims(claims, numbers, fence),
                           **fence.values())


def render_citation(style: str, statement: str, cited: dict[int, str]) -> list[dict]:
    """The chat messages judging ``statement`` against its cited units, each text inside the
    request's fence (:func:`citation_fence`)."""
    fence = citation_fence(statement, cited)
    return load_prompt(citation_prompt_name(style)).render(sources=format_sources(cited, fence),
                                                           statement=fence.wrap(statement), **fence.values())


def render_reask(conversation: list[dict], reply: str, missing: Sequence[str], ids: Sequence[int] | None = None,
                 *, fence: Fence | None = None, numbered: bool = True) -> list[dict]:
    """The follow-up conversation asking again, once, for the ``missing`` items: claims under
    their numbers ``ids`` (default 1, 2, …; pass the numbers of the first prompt), or with
    ``numbered=False`` the one sentence of a citation call. ``fence`` should be the first
    prompt's; by default one is derived from the whole conversation."""
    if fence is None:
        fence = make_fence([*missing, reply or "", *(m["content"] for m in conversation)])
    if numbered:
        listed = format_claims(missing, ids, fence)
    else:
        listed = "\n".join(f"Sentence: {fence.wrap(text)}" for text in missing)
    follow_up = load_prompt("judge/reask").render(missing=listed, **fence.values())
    return list(conversation) + [{"role": "assistant", "content": reply or ""}] + follow_up


T = TypeVar("T")


def run_sync(make_coroutine: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run ``make_coroutine()`` to completion from synchronous code. Inside a running event loop
    (Jupyter) it runs on a fresh loop in a worker thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make_coroutine())
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(lambda: asyncio.run(make_coroutine())).result()


# ---- the judge -----------------------------------------------------------------------------------------
@dataclass
class _Job:
    request: int
    items: list[int]  # claim positions in the request (claims) / [0] (citations)
    conversation: list[dict] | None = None  # set for re-asks; else rendered
    reasked: bool = False
    raws: list[str] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)  # cache keys of the calls asked for these items so far


class _Progress:
    """Counts each request's calls still to be read, and calls ``on_done(n)`` once per request
    ``n`` when none is left (requests without a call are done at once)."""

    def __init__(self, n_requests: int, job_requests: list[int], on_done: Callable[[int], None] | None):
        self.on_done = on_done
        self.pending = [0] * n_requests
        for n in job_requests:
            self.pending[n] += 1
        for n, count in enumerate(self.pending):
            if count == 0 and on_done is not None:
                on_done(n)

    def settled(self, n: int, new_jobs: list[int]) -> None:
        """One call of request ``n`` was read; ``new_jobs``: the requests of the calls it added."""
        for m in new_jobs:
            self.pending[m] += 1
        self.pending[n] -= 1
        if self.pending[n] == 0 and self.on_done is not None:
            self.on_done(n)


def _sound_answers(found: dict) -> dict:
    """The cached answers of the shape this judge stores (``{"text": str, token counts}``); one
    of another shape (a damaged or foreign cache entry) is a miss: the call is made again."""
    return {key: value for key, value in found.items()
            if isinstance(value, dict) and isinstance(value.get("text"), str)
            and all(type(value.get(n, 0)) is int for n in ("prompt_tokens", "completion_tokens"))}


class ChatJudge(CachedAnswers, Evaluator):
    """A judge that asks a chat model. Subclasses implement :meth:`complete_many`.

    Parameters
    ----------
    style : {"json_cot", "cot", "json"}
        Prompt style (see the module docstring).
    cache_dir, no_cache, refresh
        The answer cache (:func:`doclens.evaluators.cache.open_cache`).
    """

    name = "chat"
    keeps_data_local = False
    #: ``cot`` replies must restate the claim they answer (``claim: …``, which the CoT prompts ask
    #: for; :func:`doclens.parsing.judge_replies.parse_cot`). False only for a judge that writes
    #: the reply's format itself rather than the model (:class:`~doclens.evaluators.models.local_chat.LocalChatJudge`).
    cot_restates_claim = True

    def __init__(self, style: str = "json_cot", *, cache_dir=None, no_cache: bool = False, refresh: bool = False):
        super().__init__()
        self.style = check_style(style)
        self.use_cache(cache_dir, no_cache, refresh)

    # ---- what a subclass provides --------------------------------------------------------------
    def complete_many(self, conversations: list[list[dict]], *, json_mode: bool,
                      on_complete: Callable[[int, Completion], None] | None = None) -> list[Completion]:
        """One :class:`Completion` per conversation, same order. Call ``on_complete(i, c)`` as
        each answer arrives (the judge caches it at once, so a killed run loses nothing it paid
        for). A prompt too long for the model gives ``Completion(None, context_overflow=True)``;
        a request that fails for good gives ``Completion(None, error=why)`` (its items become
        ``failed``, the run goes on). Raise only to stop the whole run (e.g.
        :class:`doclens.core.errors.RunStoppedError`)."""
        raise NotImplementedError(f"{type(self).__name__} must implement complete_many()")

    def complete_for(self, answer: str, conversations: list[list[dict]], *, json_mode: bool,
                     on_complete: Callable[[int, Completion], None] | None = None) -> list[Completion]:
        """:meth:`complete_many` for calls whose replies must hold ``answer`` (:data:`ANSWER_FREE`,
        :data:`ANSWER_VERDICT` or :data:`ANSWER_VERDICT_AND_PROVENANCE`). The default ignores it;
        a judge that forces the answer format (the in-process ``local`` judge) overrides this."""
        return self.complete_many(conversations, json_mode=json_mode, on_complete=on_complete)

    def cache_identity(self) -> dict:
        """Everything about the model and endpoint that can change an answer (no secrets)."""
        return {"class": f"{type(self).__module__}.{type(self).__qualname__}", "model": self.model}

    def decoding(self) -> dict:
        """Decoding parameters, recorded in signatures and cache keys."""
        return {"T": 0}

    def cost_usd(self, completion: Completion) -> float:
        return 0.0

    def price_per_million(self) -> tuple[float, float, float] | None:
        """``(prompt, completion, cached prompt)`` USD per million tokens for this judge's model, or ``None``
        when no price is known (a model run here costs nothing to count)."""
        return None

    # ---- identity --------------------------------------------------------------------------------
    def prompt_tags(self) -> list[str]:
        return judge_prompt_tags(self.style)

    def config(self) -> dict:
        return {**super().config(), "style": self.style, "decoding": self.decoding(),
                "prompts": self.prompt_tags(), **{k: v for k, v in self.cache_identity().items() if k != "class"}}

    def make_extractor(self):
        """A subclaim extractor on the same model, client, cache and usage counters."""
        # imported here: the extractor module knows judges only by what they do, so this is its
        # one link to them (no import circle)
        from doclens.extraction.llm import ChatExtractor

        return ChatExtractor(self)

    def redact(self, text: str) -> str:
        """``text`` with every secret this judge knows of (its API key) masked."""
        return text

    # ---- cached calls --------------------------------------------------------------------------------
    def _forget_answers(self, keys: list[str]) -> None:
        """Drop the cached replies that left items unparsed, so that a rerun of the same command
        asks those calls again (a glitch's unreadable reply is not read back forever; ``--refresh``
        is not needed). A cache without ``forget`` (one set from outside) keeps them."""
        forget = getattr(self.cache, "forget", None)
        if forget is not None and keys:
            forget(keys)

    def key_for(self, conversation: list[dict], json_mode: bool, tag: str) -> str:
        return cache_key({**self.cache_identity(), "messages": conversation, "decoding": self.decoding(),
                          "prompt": tag, "json_mode": json_mode})

    def ask_many(self, conversations: list[list[dict]], *, json_mode: bool, tags: Sequence[str],
                 answer: str = ANSWER_FREE,
                 on_answer: Callable[[int, Completion], None] | None = None) -> list[Completion]:
        """Answers from the cache where it has them; the rest from :meth:`complete_for` (the
        ``answer`` they must hold), in the order given (callers list the calls on one premise
        together, so an endpoint with prefix caching sees them adjacently), each stored the
        moment it arrives. Identical conversations are asked once. A call that failed
        for good (``Completion.error``) is counted in ``usage.failed_calls`` and not cached, so a
        rerun asks it again. ``on_answer(i, completion)``, when given, is called once per
        conversation ``i`` as soon as its answer is known (cached ones first, the others as they
        arrive), so that callers can act before the whole batch is back."""
        keys = [self.key_for(c, json_mode, t) for c, t in zip(conversations, tags)]
        found = _sound_answers(self.cache.get_many(list(dict.fromkeys(keys))))
        results: list[Completion | None] = [None] * len(conversations)
        todo: dict[str, int] = {}
        for i, key in enumerate(keys):
            if key in found:
                value = found[key]
                results[i] = Completion(value.get("text"), value.get("prompt_tokens", 0),
                                        value.get("completion_tokens", 0), cached=True)
                self.usage.add(cached_calls=1)
            elif key not in todo:
                todo[key] = i
        order = list(todo.values())
        stored: set[int] = set()
        if on_answer is not None:
            for i, result in enumerate(results):
                if result is not None:
                    on_answer(i, result)
            waiting: dict[str, list[int]] = {}
            for i, key in enumerate(keys):
                if results[i] is None:
                    waiting.setdefault(key, []).append(i)

        def store(position: int, completion: Completion) -> None:
            if position in stored:
                return
            stored.add(position)
            if on_answer is not None:
                for i in waiting.get(keys[order[position]], ()):
                    on_answer(i, completion)
            if completion.failed:
                self.usage.add(failed_calls=1)
                return
            self.usage.add(calls=1, prompt_tokens=completion.prompt_tokens,
                           cached_prompt_tokens=completion.cached_tokens,
                           completion_tokens=completion.completion_tokens, cost_usd=self.cost_usd(completion))
            if completion.text is not None and not completion.context_overflow:
                self.cache.put(keys[order[position]], {"text": completion.text,
                                                       "prompt_tokens": completion.prompt_tokens,
                                                       "completion_tokens": completion.completion_tokens})

        by_key: dict[str, Completion] = {}
        if order:
            fresh = self.complete_for(answer, [conversations[i] for i in order], json_mode=json_mode,
                                      on_complete=store)
            if len(fresh) != len(order):
                raise RuntimeError(f"{type(self).__name__}.complete_many returned {len(fresh)} completions for "
                                   f"{len(order)} conversations")
            for position, completion in enumerate(fresh):
                store(position, completion)
                results[order[position]] = by_key[keys[order[position]]] = completion
        return [r if r is not None else by_key[keys[i]] for i, r in enumerate(results)]

    # ---- claims --------------------------------------------------------------------------------------------
    def _render_claim_job(self, request: ClaimRequest, job: _Job) -> list[dict]:
        if job.conversation is not None:
            return job.conversation
        return render_claims(self.style, request.task, request.direction, request.premise,
                             [request.claims[i] for i in job.items], [i + 1 for i in job.items],
                             fence=claims_fence(request.premise, request.claims))

    def _claim_jobs(self, requests: list[ClaimRequest]) -> tuple[list[_Job], list[int]]:
        """The first round's calls, and each request's premise group (the first request with its
        premise): one call per claim (one-call-per-claim styles) or per request, those on one
        premise adjacent, in request order (a stable sort), so that a server's prefix cache sees
        the shared instructions + premise back to back."""
        jobs: list[_Job] = []
        for n, request in enumerate(requests):
            if not request.claims:
                continue
            if one_call_per_claim(self.style, request.task):
                jobs += [_Job(n, [i]) for i in range(len(request.claims))]
            else:
                jobs.append(_Job(n, list(range(len(request.claims)))))
        first_seen: dict = {}
        group = [first_seen.setdefault((r.task, r.premise), n) for n, r in enumerate(requests)]
        jobs.sort(key=lambda job: group[job.request])
        return jobs, group

    def judge_claims_many(self, requests: list[ClaimRequest], *,
                          on_done: Callable[[int], None] | None = None) -> list[list[ClaimJudgement]]:
        """Every request's claims, asked in rounds of concurrent calls: a round's failed calls
        mark their claims ``failed``, a reply too long for the context window is split in halves,
        claims a reply leaves without a verdict are re-asked once and then recorded ``unparsed``.
        Every round reads and writes the same table of per-claim results and builds the next
        round's jobs from it (``settle``). Each reply is read as it arrives; ``on_done(n)``, when
        given, is called once per request ``n`` as soon as its last call is answered and read (a
        progress bar's step)."""
        results: list[list[ClaimJudgement | None]] = [[None] * len(r.claims) for r in requests]
        jobs, group = self._claim_jobs(requests)
        json_mode = self.style != "cot"
        progress = _Progress(len(requests), [job.request for job in jobs], on_done)
        while jobs:
            conversations = [self._render_claim_job(requests[j.request], j) for j in jobs]
            tags = [load_prompt(self._prompt_name(requests[j.request])).tag for j in jobs]
            next_jobs: list[_Job] = []

            def settle(job: _Job, conversation: list[dict], completion: Completion) -> None:
                """Read one reply into ``results``; what must be asked again goes to ``next_jobs``."""
                self._settle_claims(requests[job.request], results[job.request], next_jobs, job, conversation,
                                    completion)

            self._ask_round(jobs, conversations, settle, next_jobs, progress, json_mode=json_mode, tags=tags,
                            answer=ANSWER_VERDICT)
            jobs = sorted(next_jobs, key=lambda job: (group[job.request], job.request, job.items))
        return [[j if j is not None else ClaimJudgement.unparsed(None) for j in row] for row in results]

    def _settle_claims(self, request: ClaimRequest, row: list[ClaimJudgement | None], next_jobs: list[_Job],
                       job: _Job, conversation: list[dict], completion: Completion) -> None:
        """Read one reply to ``job`` into ``row`` (its request's per-claim results): a failed call
        marks its claims ``failed``, a reply too long is split in halves (``next_jobs``), claims the
        reply leaves without a verdict are asked once more, then recorded ``unparsed``."""
        if completion.failed:
            for position in job.items:
                row[position] = ClaimJudgement.failed(completion.error or "")
            return
        if completion.context_overflow:
            if len(job.items) > 1:
                half = len(job.items) // 2
                logger.info("context window exceeded for %d claims: splitting in halves", len(job.items))
                next_jobs.extend([_Job(job.request, job.items[:half], reasked=job.reasked, raws=list(job.raws),
                                       keys=list(job.keys)),
                                  _Job(job.request, job.items[half:], reasked=job.reasked, raws=list(job.raws),
                                       keys=list(job.keys))])
            else:
                row[job.items[0]] = ClaimJudgement.unparsed(None, explanation=TOO_LONG)
            return
        text = completion.text or ""
        missing = []
        for position, verdict in zip(job.items, self._claim_verdicts(request, job, text)):
            if verdict is None:
                missing.append(position)
            else:
                row[position] = ClaimJudgement(entailed=verdict.entailed, explanation=verdict.explanation,
                                               label=verdict.label)
        if not missing:
            return
        raws = job.raws + [text]
        if not job.reasked:
            logger.info("judge reply left %d of %d claim(s) without a verdict: asking once more",
                        len(missing), len(job.items))
            next_jobs.append(_Job(job.request, missing, render_reask(
                conversation, text, [request.claims[i] for i in missing], [i + 1 for i in missing],
                fence=claims_fence(request.premise, request.claims)), reasked=True, raws=raws,
                keys=list(job.keys)))
        else:
            raw = "\n\n--- re-ask ---\n\n".join(raws)
            for position in missing:
                row[position] = ClaimJudgement.unparsed(raw)
            self._forget_answers(job.keys)

    def _claim_verdicts(self, request: ClaimRequest, job: _Job, text: str) -> list[Verdict | None]:
        """The verdicts a reply gives ``job``'s claims, in order (``None``: none readable)."""
        claims = [request.claims[i] for i in job.items]
        ids = [i + 1 for i in job.items]
        support = request.direction == SUPPORT
        if one_call_per_claim(self.style, request.task) and self.style == "cot":
            return [(parse_support_cot if support else parse_cot)(
                text, claim_id=ids[0], claim=claims[0] if self.cot_restates_claim else None)]
        reading = (read_support_verdicts if support else read_claim_verdicts)(text, claims, ids)
        if reading.extra or reading.conflicting:
            logger.info("judge reply: %d item(s) naming no asked claim ignored, %d claim(s) with "
                        "conflicting verdicts left missing", reading.extra, reading.conflicting)
        return list(reading.verdicts)

    def _ask_round(self, jobs: list, conversations: list, settle: Callable, next_jobs: list, progress: _Progress,
                   **ask) -> None:
        """Ask one round of calls; each reply is read once by ``settle(job, conversation,
        completion)`` as it arrives (a reply not yet read when the round returns is read then), and
        ``progress`` learns which calls that reading added to ``next_jobs``."""
        settled: set[int] = set()

        def answered(k: int, completion: Completion) -> None:
            if k not in settled:
                settled.add(k)
                jobs[k].keys.append(self.key_for(conversations[k], ask["json_mode"], ask["tags"][k]))
                before = len(next_jobs)
                settle(jobs[k], conversations[k], completion)
                progress.settled(jobs[k].request, [j.request for j in next_jobs[before:]])

        completions = self.ask_many(conversations, on_answer=answered, **ask)
        for k, completion in enumerate(completions):
            answered(k, completion)

    def _prompt_name(self, request: ClaimRequest) -> str:
        if request.direction == SUPPORT:
            return support_prompt_name(self.style)
        return claims_prompt_name(self.style, request.task)

    # ---- source support ------------------------------------------------------------------------------------
    support_verdicts = 3
    #: evidence of up to this many words is given whole (a 4k-token window holds it with the prompt)
    support_window_words = 2000

    def judge_support_many(self, requests: list[ClaimRequest]) -> list[list[SupportJudgement]]:
        """3-way verdicts through the claims path with ``direction="support"`` (see the module
        docstring): batched, cached, split on context overflow, re-asked once, then unparsed."""
        if self.support_verdicts < 3:
            return super().judge_support_many(requests)
        asked = [ClaimRequest(r.premise, list(r.claims), "general", SUPPORT, r.section) for r in requests]
        results = []
        for row in self.judge_claims_many(asked):
            results.append([SupportJudgement(None, j.explanation, j.status, j.raw) if j.status in NO_VERDICT
                            else SupportJudgement(j.label, j.explanation, j.status, j.raw) for j in row])
        return results

    def support_prompt_tags(self) -> list[str]:
        if self.support_verdicts < 3:
            return self.prompt_tags()
        return sorted(load_prompt(name).tag for name in (support_prompt_name(self.style), "judge/reask"))

    # ---- citations ----------------------------------------------------------------------------------------
    def judge_citations_many(self, requests: list[CitationRequest], *,
                             on_done: Callable[[int], None] | None = None) -> list[CitationJudgement]:
        """One call per statement (re-asked once when unreadable), read as each reply arrives;
        ``on_done(n)`` as for :meth:`judge_claims_many`."""
        results: list[CitationJudgement | None] = [None] * len(requests)
        jobs = []
        for n, request in enumerate(requests):
            if request.cited:
                jobs.append(_Job(n, [0]))
            else:
                results[n] = CitationJudgement.uncited()
        parse = parse_citation_cot if self.style == "cot" else parse_citation_json
        tag = load_prompt(citation_prompt_name(self.style)).tag
        progress = _Progress(len(requests), [job.request for job in jobs], on_done)
        while jobs:
            conversations = [j.conversation or render_citation(self.style, requests[j.request].statement,
                                                               requests[j.request].cited) for j in jobs]
            next_jobs = []

            def settle(job: _Job, conversation: list[dict], completion: Completion) -> None:
                """Read one reply into ``results``; an unreadable first reply goes to ``next_jobs``."""
                request = requests[job.request]
                cited = sorted(request.cited)
                if completion.failed:
                    results[job.request] = CitationJudgement.failed(completion.error or "", cited)
                    return
                if completion.context_overflow:
                    results[job.request] = CitationJudgement.unparsed(None, cited, explanation=TOO_LONG)
                    return
                text = completion.text or ""
                verdict = parse(text)
                if verdict is not None:
                    provenance = list(verdict.provenance or [])
                    results[job.request] = CitationJudgement(
                        entailed=verdict.entailed, provenance=provenance, explanation=verdict.explanation,
                        precise={c: bool(verdict.entailed and c in provenance) for c in cited})
                elif not job.reasked:
                    next_jobs.append(_Job(job.request, [0], render_reask(
                        conversation, text, [request.statement], fence=citation_fence(request.statement, request.cited),
                        numbered=False), reasked=True, raws=[text], keys=list(job.keys)))
                else:
                    results[job.request] = CitationJudgement.unparsed(
                        "\n\n--- re-ask ---\n\n".join(job.raws + [text]), cited)
                    self._forget_answers(job.keys)

            self._ask_round(jobs, conversations, settle, next_jobs, progress, json_mode=self.style != "cot",
                            tags=[tag] * len(jobs), answer=ANSWER_VERDICT_AND_PROVENANCE)
            jobs = sorted(next_jobs, key=lambda job: job.request)
        return [r if r is not None else CitationJudgement.unparsed(None, sorted(q.cited))
                for r, q in zip(results, requests)]
