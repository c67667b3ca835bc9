"""DocLens as a reward function for TRL's online trainers (GRPO, RLOO …).

TRL calls each entry of ``reward_funcs`` as ``func(prompts=…, completions=…, completion_ids=…,
**columns)``: ``columns`` are the dataset's other columns, one value per completion, plus
``trainer_state``, ``log_metric`` and ``log_extra``; it wants one float per completion back.
:class:`DocLensReward` is such a callable::

    from trl import GRPOConfig, GRPOTrainer
    from doclens.rewards import DocLensReward

    reward = DocLensReward(task="note_generation")        # the offline default judge
    trainer = GRPOTrainer(model=…, reward_funcs=reward, train_dataset=dataset, args=GRPOConfig(…))

``dataset`` has a ``prompt`` column and a ``reference`` column, and optionally ``source``
(numbered units, for the citation scores and source support), ``reference_claims``
(precomputed, used as given) and ``task``; the column names are options.

What a step can meet (``docs/design.md`` §7, "Training loops"):

* **a completion the judge could not score** (a reply it could not read after retries, a call that
  failed for good, an extraction that failed: any item of the components the reward is made of
  without a verdict) gets ``None``, never an invented 0. TRL (1.16, ``GRPOTrainer``) turns
  ``None`` into NaN: a completion for which every reward function gave NaN is left out of its
  group's mean and standard deviation, its advantage is set to 0 and it is left out of the logged
  reward means. A step with more unscored completions than ``max_unscored_share`` allows, or with
  none scored, raises :class:`RewardScoringFailed` (the training stops); so does a judge that
  stopped the run (its circuit breaker or deadline, :class:`doclens.core.errors.RunStoppedError`);
* **text no encoder accepts** (a lone surrogate): replaced with U+FFFD, counted (``repaired``);
* **a very long completion**: cut to ``max_chars`` characters (:data:`DEFAULT_MAX_CHARS`) before
  any analysis, counted (``capped``) and reported once; the judges' text analysis grows faster
  than the text, and a degenerate completion (one word repeated for a megabyte) would stall a step;
* **a slow step**: with ``budget_s``, completions are scored ``budget_chunk_size`` at a time and no
  new chunk starts once the budget has passed; the completions left get ``None`` (counted,
  ``over_budget``). A step then takes at most the budget plus one chunk's scoring.

Each step's counts are in :attr:`DocLensReward.last_step` and logged through TRL's ``log_metric``
(``doclens/unscored``, ``doclens/unparsed``, ``doclens/failed``, ``doclens/over_budget``,
``doclens/capped``, ``doclens/repaired``).
"""

from __future__ import annotations

import logging
import time
import warnings
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from doclens.core.errors import (
    ConfigurationError,
    InputError,
    RewardBudgetWarning,
    RunStoppedError,
)
from doclens.core.settings import ScoringSettings
from doclens.core.tasks import AUTO_TASK, check_task
from doclens.core.types import NO_VERDICT, Instance, InstanceResult
from doclens.evaluators import load_evaluator, load_extractor
from doclens.evaluators.base import Evaluator
from doclens.extraction.extractors import Extractor
from doclens.inputs.unicode import replace_lone_surrogates
from doclens.parsing.sections import detect_task
from doclens.rewards.claims_cache import ReferenceClaimsCache
from doclens.rewards.settings import DEFAULT_MAX_CHARS, DEFAULT_MAX_UNSCORED_SHARE, RewardSettings
from doclens.rewards.values import combine, components, selectors_for, verdicts_of
from doclens.scoring.scorer import DocLens

if TYPE_CHECKING:  # the trainer's types (the [train] extra), for the callback's signature
    from transformers import TrainerControl, TrainerState, TrainingArguments

logger = logging.getLogger("doclens")
#: the reward or Trainer metric itself (``with ... as reward:``)
_Closer = TypeVar("_Closer", bound="ClosesItsJudge")



def _claim_texts(claims: Any) -> list[str]:
    """The claim strings of a reference's claims (a list, or a section mapping of lists; ``None``: none)."""
    lists = claims.values() if isinstance(claims, Mapping) else [claims] if claims else []
    return [claim for items in lists if isinstance(items, (list, tuple)) for claim in items if isinstance(claim, str)]


class RewardScoringFailed(RuntimeError):
    """The judge could not score a step's completions: none of them, more than
    ``max_unscored_share`` of them, or it stopped the run (circuit breaker, deadline)."""


class RewardBudgetExceeded(RuntimeError):
    """Scoring one step took longer than the reward's ``budget_s`` (with ``on_over_budget="raise"``)."""


@dataclass
class StepCounts:
    """What one reward call met: ``completions`` given, ``scored`` (a float reward), ``unscored``
    (``None``: the judge could not score them), ``over_budget`` (``None``: not scored, the budget
    had passed); items without a verdict (``unparsed``, ``failed``, over the scored and unscored
    completions); completions ``capped`` to ``max_chars`` and ``repaired`` (lone surrogates)."""

    completions: int = 0
    scored: int = 0
    unscored: int = 0
    over_budget: int = 0
    unparsed: int = 0
    failed: int = 0
    capped: int = 0
    repaired: int = 0

    def logged(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in ("unscored", "unparsed", "failed", "over_budget", "capped",
                                                       "repaired")}


def completion_text(completion: Any, where: str) -> str:
    """The text of one completion as TRL gives it: a string, or (conversational) a list of
    messages whose assistant contents are joined; a content may be a string, ``None`` (a message
    of tool calls only: no text) or a list of parts, of which plain strings and the
    ``{"type": "text", "text": …}`` ones count (images and other parts carry no text). Anything
    else is an :class:`InputError` naming ``where`` (the completion) and the part."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Mapping):
        completion = [completion]
    if isinstance(completion, (list, tuple)) and all(isinstance(m, Mapping) for m in completion):
        texts = []
        for message in completion:
            if message.get("role", "assistant") != "assistant":
                continue
            content = message.get("content")
            if isinstance(content, (list, tuple)):
                content = "".join(_part_text(part, f"{where}: content part #{k}") for k, part in enumerate(content))
            elif content is None:
                content = ""
            if not isinstance(content, str):
                raise InputError(f"{where}: a message's content must be a string or a list of text parts, "
                                 f"got {type(content).__name__}", field="completions")
            texts.append(content)
        return "\n".join(texts)
    raise InputError(f"{where}: a completion must be a string or a list of chat messages, got "
                     f"{type(completion).__name__}", field="completions")


def _part_text(part: Any, where: str) -> str:
    if isinstance(part, str):
        return part
    if not isinstance(part, Mapping):
        raise InputError(f"{where} must be a string or a mapping such as {{'type': 'text', 'text': …}}, got "
                         f"{type(part).__name__}", field="completions")
    if part.get("type", "text") != "text":
        return ""
    text = part.get("text", "")
    if not isinstance(text, str):
        raise InputError(f"{where} (type 'text'): its 'text' must be a string, got {type(text).__name__}",
                         field="completions")
    return text


def make_scorer(evaluator: str | Evaluator = "clinical-rules", extractor: str | Extractor | None = "auto", *,
                task: str | None = None, evaluator_options: dict | None = None,
                settings: ScoringSettings | None = None, **scorer_options: Any) -> DocLens:
    """The :class:`doclens.DocLens` that a reward or a Trainer metric keeps for a whole run: the
    judge loaded once (a preset name with ``evaluator_options``, or an object), an extractor
    (``"auto"``: the judge's own ``make_extractor()``; completions always need one), and every
    instance of a step in one chunk. ``settings`` (a :class:`~doclens.core.settings.ScoringSettings`)
    and ``task`` and the scoring keywords of ``scorer_options`` go to :class:`doclens.DocLens`,
    which builds or changes the settings and checks them; without ``settings`` the chunk size is
    1024 unless given."""
    judge = load_evaluator(evaluator, **(evaluator_options or {})) if isinstance(evaluator, str) else evaluator
    if settings is None:
        scorer_options.setdefault("chunk_size", 1024)
    return DocLens(judge, _extractor_for(judge, extractor), settings=settings, task=task, **scorer_options)


def _extractor_for(judge: Evaluator, extractor: str | Extractor | None) -> Extractor:
    """The extractor ``extractor`` names for ``judge`` (:func:`make_scorer`)."""
    if extractor == "auto":
        make = getattr(judge, "make_extractor", None)
        if not callable(make):
            raise ConfigurationError(f"{type(judge).__name__} has no extractor of its own; completions need one: "
                                     "pass extractor= ('sentences', 'clauses', 'llm' … or a doclens.Extractor)")
        made: Extractor = make()
        return made
    if isinstance(extractor, str):
        return load_extractor(extractor)
    if not isinstance(extractor, Extractor):
        raise ConfigurationError(f"extractor must be 'auto', a preset name or a doclens.Extractor, "
                                 f"got {type(extractor).__name__}")
    return extractor


def reference_claims_cache(scorer: DocLens) -> ReferenceClaimsCache:
    """The reference-claims cache of a scorer :func:`make_scorer` made (which always has an extractor)."""
    if scorer.extractor is None:
        raise ConfigurationError("a reward or Trainer metric needs an extractor for the completions' claims")
    return ReferenceClaimsCache(scorer.extractor)


class ClosesItsJudge:
    """What the reward and the Trainer metric share about their judge's life: they load it once and
    keep it for the run, so they close it (:meth:`doclens.DocLens.close`: the offline judge writes
    its new Porter stems and pending readings, ``JudgeResources.close``; an LLM judge closes its
    client and answer cache) — on :meth:`close`, on leaving a ``with`` block, at the end of training
    or at each checkpoint (:meth:`callback`, a ``transformers.TrainerCallback`` to pass to the
    trainer), and when the object is garbage collected or the interpreter exits. Closing is safe
    twice and the judge's files reopen on use, so a closed reward can still score."""

    scorer: DocLens

    def _close_when_collected(self) -> None:
        # the finalizer holds the scorer, never self: the object can still be collected
        self._finalizer = weakref.finalize(self, self.scorer.close)

    def close(self) -> None:
        """Close the judge and the extractor (class docstring); safe to call twice."""
        self.scorer.close()

    def __enter__(self: _Closer) -> _Closer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def callback(self) -> Any:
        """A ``transformers.TrainerCallback`` that closes this object when training ends and at
        each checkpoint save (``GRPOTrainer(..., reward_funcs=reward, callbacks=[reward.callback()])``):
        what the judge learnt (the offline judge's stems and readings) is on disk with the checkpoint."""
        from transformers import TrainerCallback

        owner = self

        class CloseJudge(TrainerCallback):
            def on_save(self, args: TrainingArguments, state: TrainerState, control: TrainerControl,
                        **kwargs: Any) -> None:
                owner.close()

            def on_train_end(self, args: TrainingArguments, state: TrainerState, control: TrainerControl,
                             **kwargs: Any) -> None:
                owner.close()

        return CloseJudge()


def _with_threads(evaluator: str | Evaluator, options: dict | None, threads: int | None) -> dict | None:
    """``options`` with the preset judge's ``threads`` (:mod:`doclens.core.threads`) when given."""
    if threads is None:
        return options
    if not isinstance(evaluator, str):
        raise ConfigurationError("threads= sets a preset judge's CPU threads; give your judge object its own")
    return {**(options or {}), "threads": threads}


def _reward_settings(base: RewardSettings | None, given: dict[str, Any]) -> RewardSettings:
    """The reward's own settings (:class:`RewardSettings`, checked there once): ``given`` (its
    keywords) over ``base``; with ``base``, a keyword left at its default leaves ``base``'s value."""
    if base is None:
        return RewardSettings(**given)
    defaults = RewardSettings()
    return RewardSettings.from_kwargs(base, **{option: value for option, value in given.items()
                                              if value is not None and value != getattr(defaults, option)})


class DocLensReward(ClosesItsJudge):
    """One DocLens score per completion, as a TRL reward function (module docstring).

    Parameters
    ----------
    evaluator : str or Evaluator
        The judge: a preset name (default ``"clinical-rules"``, the offline default) or an
        :class:`doclens.Evaluator`. Loaded once, here, and kept warm for every step.
    extractor : "auto", str or Extractor
        Extracts the claims of completions and (once per reference, :class:`ReferenceClaimsCache`)
        of references. ``"auto"``: the judge's own (``make_extractor()``; clause extraction for
        ``clinical-rules``); a judge without one needs an extractor named here.
    score : str or mapping
        The reward: ``"claim_f1"`` (default), any component of :data:`doclens.rewards.values.COMPONENTS`
        (``claim_recall``, ``citation_recall``, ``source_supported`` …), or ``{component: weight}``
        for a weighted mean (:func:`doclens.rewards.values.combine`).
    empty_value : float
        The reward of a completion for which no component has a value (e.g. an empty completion
        against an empty reference, or a citation score without a source). Default 0; must be
        finite.
    task : str, optional
        The task of rows without a ``task`` column; unset (or ``"auto"``), each row's task is
        detected from its reference as ``doclens score`` does (``note_generation``, section by
        section, for a reference with SOAP section headers; ``general`` otherwise), so the reward
        equals the command line's score.
    budget_s : float, optional
        A latency budget per call (one training step), which bounds it: completions are scored
        ``budget_chunk_size`` at a time (default 8) and no chunk starts after the budget has
        passed; the completions left get ``None`` (counted, ``over_budget``). A step over the
        budget is reported once (a :class:`RewardBudgetWarning` and a log record with the measured
        time), or raises :class:`RewardBudgetExceeded` with ``on_over_budget="raise"``.
    max_chars : int
        Completions are cut to this many characters before any analysis (counted, ``capped``;
        reported once). A reference or source (a string) longer than this is refused
        (:class:`InputError` naming the completion and column): the dataset's text is not cut.
        Default :data:`DEFAULT_MAX_CHARS` (32,000).
    max_unscored_share : float
        The share (0 to 1) of a step's completions that may get ``None`` because the judge could
        not score them; more raises :class:`RewardScoringFailed`, and so does a step of which no
        completion was scored. Default 0.5.
    reference_column, source_column, reference_claims_column, task_column : str
        The dataset columns read (TRL passes them as keywords).
    name : str, optional
        The name TRL logs the reward under (``rewards/<name>/mean``); default ``doclens_<score>``.
    evaluator_options : dict, optional
        Constructor options for a preset judge.
    threads : int, optional
        The CPU threads the preset judge computes with (``clinical-rules``: default
        ``$OMP_NUM_THREADS`` when set, else 1, so a reward beside a trainer that keeps every core
        busy does not spin (N > 1: MiniLM runs N whole batches at once); set for the judge's
        calls only, the trainer's torch threads stay as they are: :mod:`doclens.core.threads`).
    reward_settings : RewardSettings, optional
        The options above that are the reward's own (``score`` … ``name``, ``threads``) as one
        :class:`doclens.rewards.settings.RewardSettings`, checked there; a keyword of the same
        name that is not left at its default changes it (``RewardSettings.from_kwargs``).
    settings : ScoringSettings, optional
        The scoring settings (:class:`doclens.core.settings.ScoringSettings`), as
        :class:`doclens.DocLens` takes them; ``task`` and ``scorer_options`` change them.
    scorer_options
        Other :class:`doclens.DocLens` keywords: the scoring settings one by one (``premise_scope``:
        ``"note"``, the default, judges a note claim against the whole premise note, ``"section"``
        against its own section only, as ``doclens score --premise-scope`` does;
        ``section_fallback``, ``uncited``, ``max_citations``, ``on_unparsed``,
        ``question_statements``, ``chunk_size`` …) and a metric family's own settings by its name
        (``family_options``). A component of an opt-in family in ``score`` (source support's
        ``source_supported`` …) turns that family on.

    Each call scores its completions as :meth:`doclens.DocLens.score` does (one judge batch when
    they fit in ``chunk_size``, 1024 by default, or ``budget_chunk_size`` with a budget) and, when
    TRL passes ``log_metric``, logs the step's mean of every component (``doclens/claim_recall``
    …), its counts (:class:`StepCounts`: ``doclens/unscored`` …) and its wall time
    (``doclens/step_s``); with ``log_extra``, the per-completion components go to TRL's
    completions table (``None`` for a completion not scored).

    The judge is loaded once and closed by the reward (:class:`ClosesItsJudge`): ``reward.close()``,
    ``with DocLensReward(...) as reward:``, ``callbacks=[reward.callback()]`` (at the end of training
    and at each checkpoint), or when the reward is collected; until then the offline judge keeps its
    new stems and readings in memory.
    """

    def __init__(self, evaluator: str | Evaluator = "clinical-rules",
                 extractor: str | Extractor | None = "auto", *, score: str | Mapping[str, float] = "claim_f1",
                 empty_value: float = 0.0, task: str | None = None, budget_s: float | None = None,
                 on_over_budget: str = "warn", budget_chunk_size: int = 8, max_chars: int = DEFAULT_MAX_CHARS,
                 max_unscored_share: float = DEFAULT_MAX_UNSCORED_SHARE, reference_column: str = "reference",
                 source_column: str = "source", reference_claims_column: str = "reference_claims",
                 task_column: str = "task", name: str | None = None, evaluator_options: dict | None = None,
                 settings: ScoringSettings | None = None, threads: int | None = None,
                 reward_settings: RewardSettings | None = None, **scorer_options: Any) -> None:
        given = {"score": score, "empty_value": empty_value, "budget_s": budget_s, "on_over_budget": on_over_budget,
                 "budget_chunk_size": budget_chunk_size, "max_chars": max_chars,
                 "max_unscored_share": max_unscored_share, "reference_column": reference_column,
                 "source_column": source_column, "reference_claims_column": reference_claims_column,
                 "task_column": task_column, "name": name, "threads": threads}
        self.reward_settings = own = _reward_settings(reward_settings, given)
        evaluator_options = _with_threads(evaluator, evaluator_options, own.threads)
        self.weights = own.weights
        if selectors_for(self.weights):  # a component of an opt-in family turns that family on
            scorer_options.setdefault("metrics", selectors_for(self.weights))
        self.scorer = make_scorer(evaluator, extractor, task=task, evaluator_options=evaluator_options,
                                  settings=settings, **scorer_options)
        self._close_when_collected()
        self.claims = reference_claims_cache(self.scorer)
        self.empty_value = float(own.empty_value)
        self.budget_s = own.budget_s
        self.on_over_budget, self.budget_chunk_size = own.on_over_budget, own.budget_chunk_size
        self.max_chars, self.max_unscored_share = own.max_chars, float(own.max_unscored_share)
        self.columns = own.columns
        self.score_name = own.score if isinstance(own.score, str) else "mix"
        #: TRL names a reward by ``__name__`` (``rewards/<name>/mean`` in its logs)
        self.__name__ = own.name or f"doclens_{self.score_name}"
        #: the verdict lists a completion's reward depends on: an item of one without a verdict
        #: leaves the completion unscored
        self.verdict_lists = tuple(dict.fromkeys(field for name_, weight in self.weights.items() if weight
                                                 for field in verdicts_of(name_)))
        self.steps = 0
        #: the references whose texts the judge has prepared (:meth:`_prepare_references`)
        self._prepared: set[str] = set()
        self.last_step_s: float | None = None
        self.last_step = StepCounts()
        self.over_budget_steps = 0
        self.capped_total = 0

    # ------------------------------------------------------------------------------------------
    def __call__(self, prompts: Sequence | None = None, completions: Sequence | None = None,
                 log_metric: Callable[[str, float], None] | None = None,
                 log_extra: Callable[[str, list], None] | None = None, **columns: Any) -> list[float | None]:
        """One reward per completion (TRL's ``reward_funcs`` contract; ``prompts`` is not read):
        a float, or ``None`` for a completion not scored (module docstring)."""
        if completions is None:
            raise InputError("DocLensReward: no completions given (TRL passes completions=…)", field="completions")
        started = time.perf_counter()
        counts = StepCounts(completions=len(completions))
        values = self._score(completions, columns, counts, started)
        rewards = [None if v is None else combine(v, self.weights, self.empty_value) for v in values]
        elapsed = time.perf_counter() - started
        self.steps += 1
        self.last_step_s, self.last_step = elapsed, counts
        self._log(values, counts, elapsed, log_metric, log_extra)
        self._check_scored(counts)
        self._check_budget(elapsed, counts)
        return rewards

    def score_components(self, completions: Sequence,
                         **columns: Any) -> list[dict[str, float | None] | None]:
        """Every component (:func:`doclens.rewards.values.components`) of every completion, in
        order (``None`` for a completion not scored: module docstring); ``columns`` as TRL passes
        them. The counts are in :attr:`last_step`."""
        counts = StepCounts(completions=len(completions))
        values = self._score(completions, columns, counts, time.perf_counter())
        self.last_step = counts
        return values

    def _score(self, completions: Sequence, columns: dict, counts: StepCounts,
               started: float) -> list[dict[str, float | None] | None]:
        instances = self._instances(completions, columns, counts)
        size = self.budget_chunk_size if self.budget_s is not None else self.scorer.chunk_size
        values: list[dict[str, float | None] | None] = []
        # score_chunk builds no report, so it issues none of the report's warnings (the n/a of
        # completions that cite nothing among them): a step is quiet with no filter here
        for start in range(0, len(instances), size):
            if start and self.budget_s is not None and time.perf_counter() - started > self.budget_s:
                counts.over_budget = len(instances) - start
                values += [None] * counts.over_budget
                break
            chunk = instances[start:start + size]
            try:
                results, _ = self.scorer.score_chunk(chunk)
            except RunStoppedError as exc:
                raise RewardScoringFailed(f"DocLensReward: the judge stopped the step: {exc}") from exc
            if len(results) != len(chunk):
                raise RuntimeError(f"DocLens scored {len(results)} of {len(chunk)} completions")
            values += [self._components(result, counts) for result in results]
        return values

    def _components(self, result: InstanceResult, counts: StepCounts) -> dict[str, float | None] | None:
        """The completion's components, or ``None`` when an item they depend on has no verdict."""
        statuses = [item.status for field in self.verdict_lists for item in (result.items_of(field) or [])]
        unparsed, failed = statuses.count("unparsed"), statuses.count("failed")
        counts.unparsed += unparsed
        counts.failed += failed
        if any(status in NO_VERDICT for status in statuses):
            counts.unscored += 1
            return None
        counts.scored += 1
        return components(result.scores)

    def _column(self, columns: dict, field: str, count: int, required: bool = False) -> list | None:
        name = self.columns[field]
        values = columns.get(name)
        if values is None:
            if required:
                given = ", ".join(sorted(k for k in columns if k not in ("trainer_state", "completion_ids")))
                raise InputError(f"DocLensReward: no '{name}' column among the columns passed ({given or 'none'}); "
                                 f"name the reference column with reference_column=", field=name)
            return None
        if len(values) != count:
            raise InputError(f"DocLensReward: column '{name}' has {len(values)} values for {count} completions",
                             field=name)
        return list(values)

    def _text(self, text: Any, counts: StepCounts, cap: bool = False) -> tuple[Any, int]:
        """``text`` with lone surrogates replaced (counted once per completion) and, for a
        completion (``cap``), cut to ``max_chars``."""
        text, repaired = replace_lone_surrogates(text)
        if cap and len(text) > self.max_chars:
            counts.capped += 1
            text = text[:self.max_chars]
        return text, repaired

    def _instances(self, completions: Sequence, columns: dict, counts: StepCounts) -> list[Instance]:
        count = len(completions)
        references = self._column(columns, "reference", count, required=True) or []
        sources = self._column(columns, "source", count)
        if sources is None and all(name.startswith("citation_") for name in self.weights):
            raise InputError(f"DocLensReward: score {self.score_name!r} needs sources, and no "
                             f"'{self.columns['source']}' column was passed; name it with source_column=",
                             field=self.columns["source"])
        given_claims = self._column(columns, "reference_claims", count)
        tasks = self._column(columns, "task", count)
        rows = [self._row(i, completion, references[i], sources[i] if sources is not None else None,
                          given_claims[i] if given_claims is not None else None, tasks[i] if tasks else None, counts)
                for i, completion in enumerate(completions)]
        self._report_capped(counts)
        todo = [i for i, row in enumerate(rows) if "reference_claims" not in row]
        for i, claims in zip(todo, self.claims.claims_for([(rows[i]["task"], rows[i]["reference"]) for i in todo])):
            if claims is not None:
                rows[i]["reference_claims"] = claims
        self._prepare_references(rows)
        return [Instance.from_dict(row, i) for i, row in enumerate(rows)]

    def _prepare_references(self, rows: list[dict[str, Any]]) -> None:
        """The judge's per-text work on each reference met for the first time, and on its claims
        (:meth:`doclens.evaluators.base.Evaluator.prepare`: ``clinical-rules`` encodes their
        sentences now), paid once a reference rather than at every step that samples its prompt."""
        new = {row["reference"].strip(): row.get("reference_claims") for row in rows
               if row["reference"].strip() not in self._prepared}
        if not new:
            return
        claims = [claim for given in new.values() for claim in _claim_texts(given)]
        self.scorer.evaluator.prepare(list(new), list(dict.fromkeys(claims)))
        self._prepared.update(new)

    def _row(self, i: int, completion: Any, reference: Any, source: Any, given_claims: Any, given_task: Any,
             counts: StepCounts) -> dict[str, Any]:
        """Completion ``i``'s instance row: its text capped and repaired, its reference, source and
        reference claims checked and repaired (counted once per completion), its task."""
        where = f"completion #{i}"
        if not isinstance(reference, str):
            raise InputError(f"{where}: column '{self.columns['reference']}' must be a string, got "
                             f"{type(reference).__name__}", field=self.columns["reference"])
        given = given_task or self.scorer.settings.task
        prediction, repaired = self._text(completion_text(completion, where), counts, cap=True)
        for key, text in (("reference", reference), ("source", source)):
            if isinstance(text, str) and len(text) > self.max_chars:  # a dataset's text, not the model's: not cut
                raise InputError(f"{where}: column '{self.columns[key]}' has {len(text):,} characters, over "
                                 f"max_chars={self.max_chars:,}; raise max_chars= to score texts this long",
                                 field=self.columns[key])
        reference, repaired_reference = self._text(reference, counts)
        # no task anywhere: detected from the reference, as ``doclens score`` (--task auto) does
        task = detect_task(reference) if given in (None, AUTO_TASK) else check_task(given, f"{where}: ")
        row = {"id": str(i), "prediction": prediction, "reference": reference, "task": task}
        repaired += repaired_reference
        for key, text in (("source", source), ("reference_claims", given_claims)):
            if text is not None:
                row[key], repaired_text = self._text(text, counts)
                repaired += repaired_text
        counts.repaired += bool(repaired)
        return row

    def _report_capped(self, counts: StepCounts) -> None:
        """Say once per reward that completions were cut to ``max_chars`` (counted in every step)."""
        if counts.capped:
            self.capped_total += counts.capped
            if self.capped_total == counts.capped:  # once per reward, as the budget's report
                logger.warning("DocLensReward: %d completion(s) longer than %d characters were cut to that length "
                               "before scoring (max_chars=); counted in doclens/capped", counts.capped, self.max_chars)

    def _log(self, values: list[dict[str, float | None] | None], counts: StepCounts, elapsed: float,
             log_metric: Callable[[str, float], None] | None, log_extra: Callable[[str, list], None] | None) -> None:
        """The step's mean of each component that has a value (``log_metric``), each completion's
        components (``log_extra``, TRL's completions table), the step's counts and wall time."""
        names = next((list(v) for v in values if v is not None), [])
        for name in names:
            present = [value for v in values if v is not None and (value := v.get(name)) is not None]
            if log_metric is not None and present:
                log_metric(f"doclens/{name}", sum(present) / len(present))
            if log_extra is not None:
                log_extra(f"doclens/{name}", [None if v is None else v.get(name) for v in values])
        if log_metric is not None:
            for name, value in counts.logged().items():
                log_metric(f"doclens/{name}", value)
            log_metric("doclens/step_s", elapsed)

    def _check_scored(self, counts: StepCounts) -> None:
        """Raise when the judge could not score too many of the step's completions."""
        judged = counts.scored + counts.unscored
        if not counts.unscored:
            return
        logger.warning("DocLensReward: the judge could not score %d of %d completions (%d items unparsed, %d "
                       "failed): their reward is None", counts.unscored, judged, counts.unparsed, counts.failed)
        if counts.scored and counts.unscored <= self.max_unscored_share * judged:
            return
        raise RewardScoringFailed(
            f"DocLensReward: the judge could not score {counts.unscored} of {judged} completions of this step "
            f"({counts.unparsed} judgements unparsed, {counts.failed} failed)"
            + ("" if not counts.scored else f", more than max_unscored_share={self.max_unscored_share:g} allows")
            + f"; check the {type(self.scorer.evaluator).__name__} judge (its endpoint, model and replies)")

    def _check_budget(self, elapsed: float, counts: StepCounts) -> None:
        if self.budget_s is None or elapsed <= self.budget_s and not counts.over_budget:
            return
        self.over_budget_steps += 1
        left = (f"; {counts.over_budget} of {counts.completions} completions were not scored (reward None)"
                if counts.over_budget else "")
        message = (f"DocLensReward: scoring {counts.completions - counts.over_budget} completions took {elapsed:.2f} s, "
                   f"over the budget of {self.budget_s:g} s per step ({type(self.scorer.evaluator).__name__} judge)"
                   f"{left}; use a faster judge, fewer or shorter completions per step, or a larger budget_s")
        if self.on_over_budget == "raise":
            raise RewardBudgetExceeded(message)
        if self.over_budget_steps == 1:  # once: a warning per step would bury the training log
            logger.warning(message)
            warnings.warn(message, RewardBudgetWarning, stacklevel=3)

    def cache_info(self) -> dict:
        """How the reference-claims cache has done: ``references`` cached, ``extracted`` (each
        reference once), ``hits`` (look-ups answered without extracting)."""
        return {"references": len(self.claims), "extracted": self.claims.extracted, "hits": self.claims.hits}
