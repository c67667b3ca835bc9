"""The TRL reward's own options as frozen data (:class:`RewardSettings`), checked once when made.

The scoring settings (:class:`doclens.core.settings.ScoringSettings`) say how DocLens scores; these
say what :class:`doclens.rewards.DocLensReward` makes of the scores (the reward's weights, its
value when nothing has one), how a step is bounded (budget, characters, unscored share) and which
dataset columns it reads. They share :class:`doclens.core.settings._Settings`'s ``from_kwargs`` and
``replace``. They live here, not in :mod:`doclens.core.settings`, because the score's components
are the families' (:func:`doclens.rewards.values.check_weights`), a layer above ``core``
(``docs/design.md`` §6).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, get_args

from doclens.core.errors import ConfigurationError
from doclens.core.settings import _number, _one_of, _Settings, _whole
from doclens.rewards.values import check_weights

OnOverBudget = Literal["warn", "raise"]
#: what a step over ``budget_s`` does: warn once, or raise ``RewardBudgetExceeded``
ON_OVER_BUDGET: tuple[str, ...] = get_args(OnOverBudget)
#: The longest completion analysed, in characters (longer ones are cut to it, and counted): about
#: 2.5 times the longest note of ACI-BENCH (13,047 characters) and far below spaCy's one-million
#: limit; the default judge scores a completion this long in under a second.
DEFAULT_MAX_CHARS = 32_000
#: The share of a step's completions that may go unscored before the step raises.
DEFAULT_MAX_UNSCORED_SHARE = 0.5
#: the options naming a dataset column
COLUMN_OPTIONS = ("reference_column", "source_column", "reference_claims_column", "task_column")


@dataclass(frozen=True)
class RewardSettings(_Settings):
    """The options of :class:`doclens.rewards.DocLensReward` that are its own (the keywords of the
    same names; its docstring says what each does).

    ``score``: a component name or ``{component: weight}``; :attr:`weights` is it as weights.
    ``empty_value``: a finite number. ``budget_s``: positive seconds or ``None`` (no budget).
    ``on_over_budget``: ``"warn"`` or ``"raise"``. ``budget_chunk_size``, ``max_chars``: whole
    numbers >= 1. ``max_unscored_share``: a share from 0 to 1. The ``*_column`` options: column
    names. ``name``: the name TRL logs the reward under (``None``: ``doclens_<score>``).
    ``threads``: a preset judge's CPU threads (``None``: its default; the judge checks it).
    """

    score: str | Mapping[str, float] = "claim_f1"
    empty_value: float = 0.0
    budget_s: float | None = None
    on_over_budget: OnOverBudget = "warn"
    budget_chunk_size: int = 8
    max_chars: int = DEFAULT_MAX_CHARS
    max_unscored_share: float = DEFAULT_MAX_UNSCORED_SHARE
    reference_column: str = "reference"
    source_column: str = "source"
    reference_claims_column: str = "reference_claims"
    task_column: str = "task"
    name: str | None = None
    threads: int | None = None

    def __post_init__(self) -> None:
        _ = self.weights  # checks score (check_weights), naming it
        _one_of("on_over_budget", self.on_over_budget, ON_OVER_BUDGET)
        _number("budget_s", self.budget_s, low_open=True, optional=True, what="a positive number of seconds")
        _whole("budget_chunk_size", self.budget_chunk_size, 1, what="a whole number >= 1")
        _whole("max_chars", self.max_chars, 1, what="a whole number >= 1")
        _number("max_unscored_share", self.max_unscored_share, high=1, what="a share from 0 to 1")
        _number("empty_value", self.empty_value, low=-float("inf"), what="a finite number (a reward)")
        for option in (*COLUMN_OPTIONS, "name"):
            value = getattr(self, option)
            if not (value is None and option == "name") and (not isinstance(value, str) or not value):
                raise ConfigurationError(f"{option} must be a non-empty string, got {value!r}")

    @property
    def weights(self) -> dict[str, float]:
        """``score`` as ``{component: weight}`` (:func:`doclens.rewards.values.check_weights`)."""
        try:
            return check_weights(self.score)
        except ValueError as exc:  # named "score", as every option's error names it
            message = str(exc)
            raise ConfigurationError(message if message.startswith("score") else f"score: {message}") from None

    @property
    def columns(self) -> dict[str, str]:
        """The dataset column of each field the reward reads."""
        return {"reference": self.reference_column, "source": self.source_column,
                "reference_claims": self.reference_claims_column, "task": self.task_column}
