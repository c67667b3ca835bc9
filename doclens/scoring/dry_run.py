"""``--dry-run``: how many model calls, tokens and dollars a run would need, without calling.

:func:`dry_run_estimate` walks the scorer's pipeline (claims given or extracted, statements and
citations parsed, judge requests planned) with stand-ins for the extractor and the judge that
render every prompt exactly as the real ones would but send nothing. Prompt tokens are counted
as characters / 4; completion tokens are a per-call allowance (below). Calls whose answer is
already in the cache are counted apart: they cost nothing.

Prompt caching: the judge sends calls on one premise adjacently, and their prompts share the
instructions and the premise. Of each call's prompt, the part an endpoint with prompt caching
would serve from its cache is estimated as the longest prefix (characters / 4) shared with any
earlier call of the run, by OpenAI's rule: only prompts of at least
:data:`CACHE_MIN_TOKENS` tokens, in whole :data:`CACHE_BLOCK_TOKENS`-token blocks. The cost
estimate charges those tokens at the model's cached-prompt price.

Extraction output is unknown before the model runs, so texts that need extraction are stood in
for by their sentences (one claim per sentence): the judge-call counts downstream of extraction
are estimates, and the result says so.
"""

from __future__ import annotations

import bisect
import warnings
from collections.abc import Callable, Iterable

from doclens.core.support import NOT_ADDRESSED
from doclens.core.types import CitationJudgement, ClaimJudgement, Direction
from doclens.evaluators.base import CitationRequest, ClaimRequest, Evaluator
from doclens.evaluators.llm.chat import (
    ChatJudge,
    citation_prompt_name,
    claims_fence,
    one_call_per_claim,
    render_citation,
    render_claims,
)
from doclens.evaluators.llm.prompting import load_prompt
from doclens.evaluators.usage import estimate_tokens
from doclens.extraction.extractors import ExtractionRequest, Extractor, PromptedExtractor, SentenceExtractor

#: Completion tokens allowed per call (a rough allowance; replies vary).
COMPLETION_ALLOWANCE = {"extraction_per_claim": 15, "json_cot_per_claim": 45, "json_per_claim": 15,
                        "cot_per_call": 60, "citation_per_call": 50}


#: OpenAI's prompt caching: prompts of at least this many tokens, cached in blocks of this many.
CACHE_MIN_TOKENS = 1024
CACHE_BLOCK_TOKENS = 128


def _text(messages: list[dict]) -> str:
    return "".join(f"{m.get('role')}\n{m.get('content') or ''}\n" for m in messages)


def _common(a: str, b: str) -> int:
    """Length of the common prefix of two strings (bisection over C-level slice compares)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[low:middle] == b[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def cached_prefix_estimates(texts: list[str], prompt_tokens: list[int]) -> list[int]:
    """For each prompt in send order, the tokens a prompt-caching endpoint would serve from its
    cache: the longest prefix shared with any earlier prompt (characters / 4; the best match is a
    neighbour in sorted order), counted as OpenAI does (see the module docstring)."""
    seen: list[str] = []
    result = []
    for text, tokens in zip(texts, prompt_tokens):
        where = bisect.bisect_left(seen, text)
        shared = max([_common(text, seen[i]) for i in (where - 1, where) if 0 <= i < len(seen)], default=0)
        seen.insert(where, text)
        cached = min(shared // 4, tokens) // CACHE_BLOCK_TOKENS * CACHE_BLOCK_TOKENS
        result.append(cached if tokens >= CACHE_MIN_TOKENS and cached >= CACHE_MIN_TOKENS else 0)
    return result


class _Tally:
    def __init__(self, judge: ChatJudge):
        self.judge = judge
        self.calls = {"extraction": 0, "judge_claims": 0, "judge_citations": 0, "judge_support": 0}
        self.per_key: dict[str, tuple[int, int]] = {}  # distinct calls → (prompt, completion) tokens
        self.texts: dict[str, str] = {}  # distinct calls → their prompt text, in send order

    def add(self, kind: str, messages: list[dict], json_mode: bool, tag: str, completion: int) -> None:
        self.calls[kind] += 1
        key = self.judge.key_for(messages, json_mode, tag)
        self.per_key[key] = (estimate_tokens(messages), completion)
        self.texts.setdefault(key, _text(messages))


class _PlanningJudge(ChatJudge):
    """Renders the real judge's prompts and answers nothing (every verdict: not entailed)."""

    def __init__(self, judge: ChatJudge, tally: _Tally):
        super().__init__(judge.style, no_cache=True)
        self.name, self.model, self.tally = judge.name, judge.model, tally

    def judge_claims_many(self, requests: list[ClaimRequest], *,
                          on_done: Callable[[int], None] | None = None) -> list[list[ClaimJudgement]]:
        for r in requests:
            tag = load_prompt(self._prompt_name(r)).tag  # the support prompt's for source support
            kind = "judge_support" if r.direction == Direction.SUPPORT else "judge_claims"
            positions = range(len(r.claims))
            groups = [[i] for i in positions] if one_call_per_claim(self.style, r.task) else [list(positions)]
            for group in groups:  # numbered as the real judge numbers them: position + 1
                claims, ids = [r.claims[i] for i in group], [i + 1 for i in group]
                per_claim = COMPLETION_ALLOWANCE.get(f"{self.style}_per_claim")
                completion = per_claim * len(claims) if per_claim else COMPLETION_ALLOWANCE["cot_per_call"]
                messages = render_claims(self.style, r.task, r.direction, r.premise, claims, ids,
                                         fence=claims_fence(r.premise, r.claims))
                self.tally.add(kind, messages, self.style != "cot", tag, completion)
        return [[ClaimJudgement(entailed=False, label=NOT_ADDRESSED if r.direction == Direction.SUPPORT else None)
                 for _ in r.claims] for r in requests]

    def judge_citations_many(self, requests: list[CitationRequest], *,
                             on_done: Callable[[int], None] | None = None) -> list[CitationJudgement]:
        tag = load_prompt(citation_prompt_name(self.style)).tag
        for r in requests:
            if r.cited:
                self.tally.add("judge_citations", render_citation(self.style, r.statement, r.cited),
                               self.style != "cot", tag, COMPLETION_ALLOWANCE["citation_per_call"])
        return [CitationJudgement(entailed=False) for _ in requests]


class _PlanningExtractor(Extractor):
    """Renders the real extractor's prompts; answers with the text's sentences."""

    name = "dry-run"

    def __init__(self, extractor: PromptedExtractor, tally: _Tally):
        super().__init__()
        self.extractor, self.tally, self.sentences = extractor, tally, SentenceExtractor()

    def extract_many(self, requests: list[ExtractionRequest]) -> list[list[str]]:
        results = []
        for request in requests:
            claims = self.sentences.extract(request.text, request.task, request.section)
            if request.text.strip():
                self.tally.add("extraction", self.extractor.render(request), False, "extract",
                               COMPLETION_ALLOWANCE["extraction_per_claim"] * max(1, len(claims)))
            results.append(claims)
        return results


#: what a dry run says of premise_scope="note"
WHOLE_NOTE_NOTE = ("premise_scope='note': every note claim is judged against the whole premise note (one request per "
                   "section's claims, the whole note as premise); a supported claim found outside its own section is "
                   "asked once more against that section (placement: those calls depend on the verdicts and are not "
                   "counted here)")
#: what an LLM judge's dry run says of the placement step's calls
PLACEMENT_CALLS = ("premise_scope='note': a supported claim found outside its own section may be asked once more "
                   "against that section; those calls depend on the verdicts: at most "
                   "calls.judge_claims_placement_at_most more, not in the other counts, the tokens or the cost")


def _placement_bound(scorer, report, tally: _Tally) -> tuple[dict[str, int], list[str]]:
    """Under ``premise_scope="note"``, the placement step's calls at their most (each first-step
    request's claims asked again once, grouped as the first step groups them) and the note saying so
    (:data:`PLACEMENT_CALLS`); nothing otherwise."""
    if scorer.settings.premise_scope == "note" and any(r.task == "note_generation" for r in report.instances):
        return {"judge_claims_placement_at_most": tally.calls["judge_claims"]}, [PLACEMENT_CALLS]
    return {}, []


def _planner(scorer, judge: Evaluator, extractor: Extractor | None):
    """A scorer that asks what ``scorer`` would ask with ``judge`` and ``extractor`` (stand-ins):
    ``scorer``'s settings, but that an unanswered item never raises, and each family's settings
    as its :meth:`~doclens.families.MetricFamily.planning_options` give them."""
    from doclens.scoring.scorer import DocLens

    planning = {name: family.planning_options(scorer.family_options[name])
                for family in scorer.families for name in [family.name] if name in scorer.family_options}
    return DocLens(judge, extractor, settings=scorer.settings.replace(on_unparsed="zero"), family_options=planning)


def _family_plans(planner, result: dict) -> None:
    """What a dry run says of each family that plans (:meth:`~doclens.families.MetricFamily.plan`)."""
    for family in planner.families:
        said = family.plan(planner.family_options.get(family.name))
        if said is not None:
            result[family.name], notes = said
            result["notes"].extend(notes)


def dry_run_estimate(scorer, instances: Iterable, progress: bool = False) -> dict:
    """Calls, tokens and cost that ``scorer.score(instances)`` would need; nothing is sent.

    ``scorer`` is a :class:`doclens.DocLens`. For a :class:`ChatJudge` (an LLM judge, or the
    in-process ``local`` chat model) the calls, tokens and cost are estimated; any other judge is
    described by :func:`in_process_plan`. Returns a JSON-ready dict (see the module docstring
    for what is estimated)."""

    judge = scorer.evaluator
    if not isinstance(judge, ChatJudge):
        return in_process_plan(scorer, instances, progress)
    tally = _Tally(judge)
    extractor: Extractor | None = scorer.extractor
    if isinstance(extractor, PromptedExtractor):
        extractor = _PlanningExtractor(extractor, tally)
    planner = _planner(scorer, _PlanningJudge(judge, tally), extractor)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = planner.score(instances, progress=progress)
    extraction_estimated = tally.calls["extraction"] > 0
    placement_calls, placement_notes = _placement_bound(scorer, report, tally)
    notes: list[str] = list(placement_notes)
    unique = list(tally.per_key)
    found = judge.cache.get_many(unique) if unique else {}
    cached = len(found)
    total = sum(tally.calls.values())
    prompt_tokens = sum(p for p, _ in tally.per_key.values())
    completion_tokens = sum(c for _, c in tally.per_key.values())
    estimates = dict(zip(unique, cached_prefix_estimates([tally.texts[k] for k in unique],
                                                         [tally.per_key[k][0] for k in unique])))
    to_pay = [(*tally.per_key[k], estimates[k]) for k in unique if k not in found]
    price = judge.price_per_million()
    cost = None if price is None else round(sum((p - k) * price[0] + k * price[2] + c * price[1]
                                                for p, c, k in to_pay) / 1e6, 4)
    result = {
        "dry_run": True,
        "evaluator": judge.name,
        "extractor": describe_extractor(scorer.extractor),
        "model": judge.model,
        "endpoint": judge.cache_identity().get("endpoint"),
        "keeps_data_local": judge.keeps_data_local,
        "instances": len(report.instances),
        "calls": {**tally.calls, "total": total, "distinct": len(unique), "already_cached": cached,
                  "to_make": len(unique) - cached, **placement_calls},
        "tokens": {"prompt": prompt_tokens, "completion_estimate": completion_tokens,
                   "prompt_to_pay": sum(p for p, _, _ in to_pay),
                   "prompt_to_pay_cached_estimate": sum(k for _, _, k in to_pay),
                   "completion_to_pay_estimate": sum(c for _, c, _ in to_pay),
                   "method": "prompt: characters / 4; cached prompt: the prefix shared with an earlier call, "
                             f"prompts of >= {CACHE_MIN_TOKENS} tokens, in {CACHE_BLOCK_TOKENS}-token blocks; "
                             "completion: per-call allowance"},
        "cost_usd_estimate": cost,
        "price_per_1m_tokens": list(price) if price else None,
        "notes": notes,
    }
    notes.append("re-asks for unreadable replies and context-length splits are not included")
    if judge.loads_model_in_process:  # a chat model run in this process (the local judge)
        result["would_load"] = describe_model(judge)
    if extraction_estimated:
        notes.append("claims to be extracted were stood in for by sentences: extraction calls are exact, "
                               "but the judge calls that depend on the extracted claims are estimates")
    _family_plans(planner, result)
    if judge.loads_model_in_process:
        result["cost_usd_estimate"] = 0.0
        notes.append("the model runs in this process: 'calls' are forward passes here, nothing leaves the "
                               "machine and nothing is paid")
    elif price is None:
        notes.append(f"no price known for model {judge.model!r}: cost not estimated (give --price-table)")
    return result


class _CountingJudge(Evaluator):
    """Counts the ``(premise, hypothesis)`` pairs a pairwise judge would be asked and answers
    "entailed" to every citation pair, so that the leave-one-out rounds are counted at their
    most, and "not entailed" to every claim."""

    name = "dry-run"

    def __init__(self) -> None:
        super().__init__()
        self.pairs: set[tuple[str, str]] = set()

    def entail_batch(self, pairs: list[tuple[str, str]]) -> list[bool]:
        self.pairs.update(pairs)
        return [True] * len(pairs)

    def judge_claims_many(self, requests: list[ClaimRequest], *, on_done=None) -> list[list[ClaimJudgement]]:
        """Every claim counted, and answered "not entailed"."""
        answers = super().judge_claims_many(requests, on_done=on_done)
        return [[ClaimJudgement(entailed=False) for _ in found] for found in answers]


def describe_model(judge) -> dict:
    """What a judge would load, read from its settings without loading anything: its
    :meth:`~doclens.Evaluator.describe` (the evaluator contract)."""
    return judge.describe()


def describe_extractor(extractor: Extractor | None) -> str:
    """Which extractor a run would use, as its signature shows it (``none`` when claims must be given)."""
    if extractor is None:
        return "none (every instance must give its claims)"
    judge = getattr(extractor, "judge", None)  # a chat extractor runs on its judge's model
    in_process = getattr(judge, "loads_model_in_process", False) if judge is not None else extractor.keeps_data_local
    where = ("a model, in this process" if in_process else "a model on the configured endpoint"
             + (" (a local one: the data stays on this machine)" if extractor.keeps_data_local else ""))
    return f"{extractor.signature()} ({where})" if isinstance(extractor, PromptedExtractor) else \
        f"{extractor.signature()} (no model)"


def in_process_plan(scorer, instances: Iterable, progress: bool = False) -> dict:
    """``--dry-run`` for a judge that calls no chat model (NLI, ``clinical-rules``, ``overlap``, a
    custom pairwise judge): nothing is loaded and nothing judged. Says what would be loaded and
    where it would run, and how many distinct pairs it would judge — exact for claims and for each
    statement's whole citation group; the leave-one-out pairs are an upper bound (they are asked
    only for entailed groups of several citations). No calls leave the machine; the cost is 0."""

    judge = scorer.evaluator
    counter = _CountingJudge()
    extractor = scorer.extractor
    if isinstance(extractor, PromptedExtractor):  # a model-based extractor: count its texts, run nothing
        extractor = _CountingExtractor()
    planner = _planner(scorer, counter, extractor)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = planner.score(instances, progress=progress)
    result = {
        "dry_run": True,
        "evaluator": judge.name,
        "extractor": describe_extractor(scorer.extractor),
        "runs_in_process": True,
        "keeps_data_local": judge.keeps_data_local,
        "would_load": describe_model(judge),
        "instances": len(report.instances),
        "pairs": {"distinct_at_most": len(counter.pairs),
                  "claims": sum(len(r.reference_claims) + len(r.prediction_claims) for r in report.instances),
                  "cited_statements": sum(1 for r in report.instances for v in r.statements if v.valid)},
        "calls": {"total": 0, "to_make": 0},
        "cost_usd_estimate": 0.0,
        "notes": ["nothing was loaded or judged; pairs: claims exact, leave-one-out citation pairs counted at "
                  "their most (asked only for entailed groups of several citations)"],
    }
    if scorer.settings.premise_scope == "note" and any(r.task == "note_generation" for r in report.instances):
        result["notes"].append(WHOLE_NOTE_NOTE)
    _family_plans(planner, result)
    if isinstance(scorer.extractor, PromptedExtractor):
        result["extraction_texts"] = extractor.texts
        result["notes"].append("texts to extract claims from were stood in for by their sentences: claim counts "
                               "are estimates")
    return result


class _CountingExtractor(Extractor):
    """Stands in for a model-based extractor: counts the texts, answers with their sentences."""

    name = "dry-run"

    def __init__(self) -> None:
        super().__init__()
        self.texts, self.sentences = 0, SentenceExtractor()

    def extract_many(self, requests: list[ExtractionRequest]) -> list[list[str]]:
        self.texts += sum(1 for r in requests if r.text.strip())
        return [self.sentences.extract(r.text, r.task, r.section) for r in requests]
