"""Exceptions DocLens raises. Each names what is wrong and where."""

from __future__ import annotations

import os
from types import ModuleType

# Exit codes of the ``doclens`` command line; :data:`EXIT_CODES` says what each means (the one
# home of those meanings: docs/reference/exit-codes.md is generated from it).
EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INCOMPLETE = 3
EXIT_INTERRUPTED = 130

#: exit code → what it means (``python -m doclens.tools.reference`` writes docs/reference/exit-codes.md)
EXIT_CODES: dict[int, str] = {
    EXIT_OK: "success",
    EXIT_ERROR: "an unexpected internal error (`-vv` logs its traceback); also a closed standard output "
                "(`doclens score … -o - | head`), which ends quietly",
    EXIT_USAGE: "bad input file, option or value (every command, `validate` included; an input with no "
                "instances, in every format, is refused so: `no instances to score`, and no report is written; a "
                "partial report is written when anything was scored)",
    EXIT_INCOMPLETE: "scored, but incomplete: the run stopped early (calls that failed for good, the circuit "
                     "breaker, `--deadline`, most replies unreadable, or it failed mid-way) and a partial report was "
                     "written; or a baseline failed: the report is complete and marks it",
    EXIT_INTERRUPTED: "interrupted by Ctrl-C or SIGTERM (e.g. `timeout`), with a partial report of every "
                      "finished chunk",
}


class DocLensError(Exception):
    """Base class of every DocLens error."""


class InputError(DocLensError, ValueError):
    """Bad input: the message names the instance (or line) and the field."""

    def __init__(self, message: str, field: str | None = None, line: int | None = None):
        super().__init__(message)
        self.field = field
        self.line = line


def cannot_read(path: str | os.PathLike[str], exc: OSError, what: str = "") -> InputError:
    """The one error for a file that cannot be opened or read: its name, what it should be
    (``what``, e.g. ``"the scores file"``) and the system's reason."""
    return InputError(f"{path}: cannot read{' ' + what if what else ''} ({exc.strerror or exc})")


class ConfigurationError(DocLensError, ValueError):
    """An evaluator, extractor or option was configured in a way that cannot work."""


class MissingExtraError(DocLensError, ImportError):
    """A feature needs an optional dependency group (an *extra*) that is not installed."""

    def __init__(self, feature: str, extra: str, missing: str):
        super().__init__(
            f"{feature} needs the '{extra}' extra ({missing} is not installed): "
            f"pip install 'doclens[{extra}]'")
        self.extra = extra


class UnparsedJudgementError(DocLensError):
    """Raised with ``on_unparsed="raise"`` when a judge reply could not be parsed."""


class EndpointError(DocLensError):
    """A model endpoint failed a request for good (retries spent, or an error that retrying cannot
    fix: 400, 401, 404 …). The message names the endpoint's reply and never carries the API key."""

    def __init__(self, message: str, status: int | None = None, transient: bool = False):
        super().__init__(message)
        self.status = status
        self.transient = transient


class RunStoppedError(DocLensError):
    """The run was stopped early on purpose: the circuit breaker saw too many failed requests in a
    row, or the deadline passed. The exception carries ``partial_report`` (see
    :meth:`doclens.DocLens.score`); every answer received before the stop is cached."""

    def __init__(self, message: str, reason: str):
        super().__init__(message)
        self.reason = reason  # "circuit_breaker" or "deadline"


def require(module: str, feature: str, extra: str) -> ModuleType:
    """Import ``module`` or raise :class:`MissingExtraError` naming the extra to install."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:  # pragma: no cover - exercised where the extra is absent
        raise MissingExtraError(feature, extra, module) from exc


# Warning categories. Each is a UserWarning, so a filter on UserWarning still catches them; filter
# by category (``warnings.filterwarnings("ignore", category=NotApplicableWarning)``), never by text.
# Each has a level (``level``, :func:`warning_level`): ``info`` (said so that nothing is silent, nothing
# is wrong: sources DocLens numbered as asked, outputs that cite nothing), ``warning`` (look at it:
# replies that could not be read, notes scored as one block) or ``error`` (the scores miss something:
# calls that failed for good, a baseline that failed). Summaries and pages show each at its level;
# only errors are drawn in red.
#: the levels of :data:`DocLensWarning.level`, least severe first
WARNING_LEVELS = ("info", "warning", "error")


class DocLensWarning(UserWarning):
    """Base class of every warning DocLens issues."""

    level = "warning"


class JudgeWarning(DocLensWarning):
    """About the verdicts a run got: items left without one (unparsed replies, calls failed for
    good), or a judge that cannot tell two verdicts apart."""


class FailedCallsWarning(JudgeWarning):
    """Items left without a verdict because their model call failed for good (an error: the scores
    miss them)."""

    level = "error"


class NotApplicableWarning(DocLensWarning):
    """A metric is not applicable to some instances (n/a, counted as ``not_applicable`` and left
    out of its score), e.g. a source with no citable units."""

    level = "info"


class UncitedOutputsWarning(NotApplicableWarning):
    """Outputs that cite nothing: their citation recall and precision are not applicable."""


class UnreadCitationsWarning(NotApplicableWarning):
    """Outputs whose bracketed numbers are no consistent citation style (a stray ``[2]`` opening a
    fragment, numbers past the source's units): read as citing nothing, their citation metrics n/a."""

    level = "warning"


class InputWarning(DocLensWarning):
    """The input was read with an assumption or repaired: sources numbered by DocLens, citations
    beyond ``max_citations`` dropped, notes without a task scored as one block, text repaired."""


class NumberedSourcesWarning(InputWarning):
    """Sources without ``[0]`` markers numbered by DocLens, as ``source_units`` asked (``info``)."""

    level = "info"


class UnicodeRepairWarning(InputWarning):
    """A row's text held lone surrogates, replaced with U+FFFD (:mod:`doclens.inputs.tables`)."""


def warning_level(category: type[Warning]) -> str:
    """``info``, ``warning`` or ``error`` (:data:`WARNING_LEVELS`) of a warning category; any
    category that is not DocLens's own is a ``warning``."""
    return getattr(category, "level", "warning") if issubclass(category, DocLensWarning) else "warning"


class CostWarning(DocLensWarning):
    """A cost could not be counted (no price known for a model): it is counted as 0."""


class RewardBudgetWarning(DocLensWarning):
    """Scoring one step took longer than the reward's ``budget_s`` (issued once per reward)."""
