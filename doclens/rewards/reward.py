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
"""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from doclens.core.errors import ConfigurationError, InputError
from doclens.core.tasks import AUTO_TASK, check_task
from doclens.evaluators import load_evaluator, load_extractor
from doclens.evaluators.base import Evaluator
from doclens.extraction.extractors import Extractor
from doclens.parsing.sections import detect_task
from doclens.rewards.claims_cache import ReferenceClaimsCache
from doclens.rewards.values import SUPPORT_SCORES, check_weights, combine, components
from doclens.scoring.scorer import DocLens

logger = logging.getLogger("doclens")

ON_OVER_BUDGET = ("warn", "raise")


class RewardBudgetExceeded(RuntimeError):
    """Scoring one step took longer than the reward's ``budget_s`` (with ``on_over_budget="raise"``)."""


class RewardBudgetWarning(UserWarning):
    """Scoring one step took longer than the reward's ``budget_s`` (issued once per reward)."""


def completion_text(completion: Any, where: str) -> str:
    """The text of one completion as TRL gives it: a string, or (conversational) a list of
    messages whose assistant contents are joined; a content may be a string or a list of parts,
    of which the ``{"type": "text"}`` ones count."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Mapping):
        completion = [completion]
    if isinstance(completion, (list, tuple)) and all(isinstance(m, Mapping) for m in completion):
        texts = []
        for message in completion:
            if message.get("role", "assistant") != "assistant":
                continue
            content = message.get("content") or ""
            if isinstance(content, (list, tuple)):
                content = "".join(part.get("text", "") for part in content
                                  if isinstance(part, Mapping) and part.get("type", "text") == "text")
            if not isinstance(content, str):
                raise InputError(f"{where}: a message's content must be a string or a list of text parts, "
                                 f"got {type(content).__name__}", field="completions")
            texts.append(content)
        return "\n".join(texts)
    raise InputError(f"{where}: a completion must be a string or a list of chat messages, got "
                     f"{type(completion).__name__}", field="completions")


def make_scorer(evaluator: str | Evaluator = "clinical-rules", extractor: str | Extractor | None = "auto", *,
                task: str | None = None, evaluator_options: dict | None = None, **scorer_options) -> DocLens:
    """The :class:`doclens.DocLens` that a reward or a Trainer metric keeps for a whole run: the
    judge loaded once (a preset name with ``evaluator_options``, or an object), an extractor
    (``"auto"``: the judge's own ``make_extractor()``; completions always need one), and every
    instance of a step in one chunk (``chunk_size`` 1024 unless given)."""
    judge = load_evaluator(evaluator, **(evaluator_options or {})) if isinstance(evaluator, str) else evaluator
    if extractor == "auto":
        make = getattr(judge, "make_extractor", None)
        if not callable(make):
            raise ConfigurationError(f"{type(judge).__name__} has no extractor of its own; completions need one: "
                                     "pass extractor= ('sentences', 'clauses', 'llm' … or a doclens.Extractor)")
        extractor = make()
    elif isinstance(extractor, str):
        extractor = load_extractor(extractor)
    elif not isinstance(extractor, Extractor):
        raise ConfigurationError(f"extractor must be 'auto', a preset name or a doclens.Extractor, "
                                 f"got {type(extractor).__name__}")
    scorer_options.setdefault("chunk_size", 1024)
    return DocLens(judge, extractor, task=task, **scorer_options)


class DocLensReward:
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
        against an empty reference, or a citation score without a source). Default 0.
    task : str, optional
        The task of rows without a ``task`` column; unset (or ``"auto"``), each row's task is
        detected from its reference as ``doclens score`` does (``note_generation``, section by
        section, for a reference with SOAP section headers; ``general`` otherwise), so the reward
        equals the command line's score.
    budget_s : float, optional
        A latency budget per call (one training step). A step that takes longer is reported once
        (a :class:`RewardBudgetWarning` and a log record with the measured time), or raises
        :class:`RewardBudgetExceeded` with ``on_over_budget="raise"``.
    reference_column, source_column, reference_claims_column, task_column : str
        The dataset columns read (TRL passes them as keywords).
    name : str, optional
        The name TRL logs the reward under (``rewards/<name>/mean``); default ``doclens_<score>``.
    evaluator_options : dict, optional
        Constructor options for a preset judge.
    scorer_options
        Other :class:`doclens.DocLens` options (``uncited``, ``max_citations``, ``on_unparsed``,
        ``question_statements``, ``source_support``, ``chunk_size``). A source-support component
        in ``score`` turns source support on.

    Each call scores all its completions in one :meth:`doclens.DocLens.score` call (one judge
    batch when they fit in ``chunk_size``, 1024 by default) and, when TRL passes ``log_metric``,
    logs the step's mean of every component (``doclens/claim_recall`` …) and its wall time
    (``doclens/step_s``); with ``log_extra``, the per-completion components go to TRL's
    completions table.
    """

    def __init__(self, evaluator: str | Evaluator = "clinical-rules",
                 extractor: str | Extractor | None = "auto", *, score: str | Mapping[str, float] = "claim_f1",
                 empty_value: float = 0.0, task: str | None = None, budget_s: float | None = None,
                 on_over_budget: str = "warn", reference_column: str = "reference", source_column: str = "source",
                 reference_claims_column: str = "reference_claims", task_column: str = "task",
                 name: str | None = None, evaluator_options: dict | None = None, **scorer_options):
        try:
            self.weights = check_weights(score)
        except ValueError as exc:
            raise ConfigurationError(str(exc)) from None
        if on_over_budget not in ON_OVER_BUDGET:
            raise ConfigurationError(f"on_over_budget must be one of {ON_OVER_BUDGET}, got {on_over_budget!r}")
        if budget_s is not None and not budget_s > 0:
            raise ConfigurationError(f"budget_s must be a positive number of seconds or None, got {budget_s!r}")
        if any(name_ in SUPPORT_SCORES for name_ in self.weights):
            scorer_options.setdefault("metrics", ["doclens", "source_support"])
        self.scorer = make_scorer(evaluator, extractor, task=task, evaluator_options=evaluator_options,
                                  **scorer_options)
        self.claims = ReferenceClaimsCache(self.scorer.extractor)
        self.empty_value = float(empty_value)
        self.budget_s, self.on_over_budget = budget_s, on_over_budget
        self.columns = {"reference": reference_column, "source": source_column,
                        "reference_claims": reference_claims_column, "task": task_column}
        self.score_name = score if isinstance(score, str) else "mix"
        #: TRL names a reward by ``__name__`` (``rewards/<name>/mean`` in its logs)
        self.__name__ = name or f"doclens_{self.score_name}"
        self.steps = 0
        self.last_step_s: float | None = None
        self.over_budget_steps = 0

    # ------------------------------------------------------------------------------------------
    def __call__(self, prompts: Sequence | None = None, completions: Sequence | None = None,
                 log_metric: Callable[[str, float], None] | None = None,
                 log_extra: Callable[[str, list], None] | None = None, **columns) -> list[float]:
        """One reward per completion (TRL's ``reward_funcs`` contract; ``prompts`` is not read)."""
        if completions is None:
            raise InputError("DocLensReward: no completions given (TRL passes completions=…)", field="completions")
        started = time.perf_counter()
        values = self.score_components(completions, **columns)
        rewards = [combine(v, self.weights, self.empty_value) for v in values]
        elapsed = time.perf_counter() - started
        self.steps += 1
        self.last_step_s = elapsed
        self._log(values, elapsed, log_metric, log_extra)
        self._check_budget(elapsed, len(rewards))
        return rewards

    def score_components(self, completions: Sequence, **columns) -> list[dict[str, float | None]]:
        """Every component (:func:`doclens.rewards.values.components`) of every completion, in
        order, scored in one :meth:`doclens.DocLens.score` call; ``columns`` as TRL passes them."""
        instances = self._instances(completions, columns)
        with warnings.catch_warnings():
            # completions rarely cite: their citation scores are n/a (a documented component value),
            # which the scorer would otherwise warn about at every training step
            warnings.filterwarnings("ignore", message=r".*cite no source unit", category=UserWarning)
            report = self.scorer.score(instances, progress=False)
        if len(report.instances) != len(instances):
            raise RuntimeError(f"DocLens scored {len(report.instances)} of {len(instances)} completions")
        return [components(result.scores) for result in report.instances]

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

    def _instances(self, completions: Sequence, columns: dict) -> list[dict]:
        count = len(completions)
        references = self._column(columns, "reference", count, required=True)
        sources = self._column(columns, "source", count)
        if sources is None and all(name.startswith("citation_") for name in self.weights):
            raise InputError(f"DocLensReward: score {self.score_name!r} needs sources, and no "
                             f"'{self.columns['source']}' column was passed; name it with source_column=",
                             field=self.columns["source"])
        given_claims = self._column(columns, "reference_claims", count)
        tasks = self._column(columns, "task", count)
        rows = []
        for i, completion in enumerate(completions):
            where = f"completion #{i}"
            reference = references[i]
            if not isinstance(reference, str):
                raise InputError(f"{where}: column '{self.columns['reference']}' must be a string, got "
                                 f"{type(reference).__name__}", field=self.columns["reference"])
            given = (tasks[i] if tasks else None) or self.scorer.task
            # no task anywhere: detected from the reference, as ``doclens score`` (--task auto) does
            task = detect_task(reference) if given in (None, AUTO_TASK) else check_task(given, f"{where}: ")
            row = {"id": str(i), "prediction": completion_text(completion, where), "reference": reference, "task": task}
            if sources is not None and sources[i] is not None:
                row["source"] = sources[i]
            if given_claims is not None and given_claims[i] is not None:
                row["reference_claims"] = given_claims[i]
            rows.append(row)
        todo = [i for i, row in enumerate(rows) if "reference_claims" not in row]
        for i, claims in zip(todo, self.claims.claims_for([(rows[i]["task"], rows[i]["reference"]) for i in todo])):
            if claims is not None:
                rows[i]["reference_claims"] = claims
        return rows

    def _log(self, values: list[dict], elapsed: float, log_metric, log_extra) -> None:
        """The step's mean of each component that has a value (``log_metric``), each completion's
        components (``log_extra``, TRL's completions table) and the step's wall time."""
        for name in (values[0] if values else ()):
            present = [v[name] for v in values if v.get(name) is not None]
            if log_metric is not None and present:
                log_metric(f"doclens/{name}", sum(present) / len(present))
            if log_extra is not None:
                log_extra(f"doclens/{name}", [v.get(name) for v in values])
        if log_metric is not None:
            log_metric("doclens/step_s", elapsed)

    def _check_budget(self, elapsed: float, count: int) -> None:
        if self.budget_s is None or elapsed <= self.budget_s:
            return
        self.over_budget_steps += 1
        message = (f"DocLensReward: scoring {count} completions took {elapsed:.2f} s, over the budget of "
                   f"{self.budget_s:g} s per step ({type(self.scorer.evaluator).__name__} judge); use a faster judge, "
                   "fewer or shorter completions per step, or a larger budget_s")
        if self.on_over_budget == "raise":
            raise RewardBudgetExceeded(message)
        if self.over_budget_steps == 1:  # once: a warning per step would bury the training log
            logger.warning(message)
            warnings.warn(message, RewardBudgetWarning, stacklevel=3)

    def cache_info(self) -> dict:
        """How the reference-claims cache has done: ``references`` cached, ``extracted`` (each
        reference once), ``hits`` (look-ups answered without extracting)."""
        return {"references": len(self.claims), "extracted": self.claims.extracted, "hits": self.claims.hits}
