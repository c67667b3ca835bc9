"""Settings as frozen data, one class per concern, each checked once when it is made.

* :class:`ScoringSettings`: how a :class:`doclens.DocLens` scores (task, premise scope, citation
  rules, how unparsed verdicts count, how sources are numbered, chunk size, metric families).
* :class:`EndpointSettings`: an OpenAI-compatible judge's endpoint, decoding, retries, timeouts and
  concurrency (:class:`doclens.evaluators.llm.openai_chat.OpenAIChatJudge`).
* :class:`ModelSettings`: an in-process model: its path, device, precision and batch or token
  budget (the NLI judges, :mod:`doclens.evaluators.models.nli`).

Every option is checked in ``__post_init__``, in the spirit of scikit-learn's
``@validate_params``: a bad value is a :class:`~doclens.core.errors.ConfigurationError` that names
the option and what it takes, before anything loads. The command line, the ``evaluate`` module,
the training reward and metric, the Ray engine and the dry run build these objects and pass them
on; nothing downstream lists or checks an option again. Keyword arguments (``DocLens(judge,
uncited="inherit")``) are read by :meth:`ScoringSettings.from_kwargs` and its siblings: the one
path from loose keywords to settings. The objects are frozen (``dataclasses.replace`` or
:meth:`replace` makes a changed copy, checked again) and picklable, so the Ray engine ships the
driver's own settings to its workers (``docs/design.md`` §3).

The vocabularies of the scoring options live here, as ``Literal`` types and the tuples of their
values that the command line offers as choices.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, cast, get_args

from doclens.core.errors import ConfigurationError
from doclens.core.tasks import AUTO_TASK, TASKS

Uncited = Literal["zero", "inherit", "inherit-across-sections"]
UncitedOutputs = Literal["not-applicable", "strict"]
OnUnparsed = Literal["zero", "exclude", "raise"]
QuestionStatements = Literal["whole", "sentences"]
PremiseScope = Literal["note", "section"]
SectionFallback = Literal["note", "section"]
SourceUnits = Literal["given", "lines", "turns", "sentences", "auto"]
DType = Literal["float32", "bfloat16", "float16"]

#: how a statement without citations counts (docs/design.md §1, "Statements and citations")
UNCITED: tuple[str, ...] = get_args(Uncited)
#: the citation metrics of an output that cites nothing: not applicable, or the paper's 0
UNCITED_OUTPUTS: tuple[str, ...] = get_args(UncitedOutputs)
#: how a verdict the judge never gave counts (:mod:`doclens.core.metrics`)
ON_UNPARSED: tuple[str, ...] = get_args(OnUnparsed)
#: question_summarization: the output judged whole, or sentence by sentence
QUESTION_STATEMENTS: tuple[str, ...] = get_args(QuestionStatements)
#: what a note claim is judged against (docs/design.md §4, "Premise scope")
PREMISE_SCOPES: tuple[str, ...] = get_args(PremiseScope)
#: under premise_scope="section", what a claim whose section the premise note lacks is judged against
SECTION_FALLBACKS: tuple[str, ...] = get_args(SectionFallback)
#: how a source string without ``[0]`` markers is numbered (:mod:`doclens.parsing.source_units`)
SOURCE_UNITS: tuple[str, ...] = get_args(SourceUnits)
#: the precisions an in-process model can be asked to run in
DTYPES: tuple[str, ...] = get_args(DType)


def _one_of(name: str, value: Any, allowed: tuple) -> None:
    if value not in allowed:
        raise ConfigurationError(f"{name} must be one of {allowed}, got {value!r}")


def _whole(name: str, value: Any, low: int, optional: bool = False, what: str = "") -> None:
    """``value`` an integer (not a bool) of at least ``low``, or ``None`` when ``optional``."""
    if value is None and optional:
        return
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise ConfigurationError(f"{name} must be {what or f'at least {low} (a whole number)'}"
                                 f"{' or None' if optional else ''}, got {value!r}")


def _number(name: str, value: Any, *, low: float = 0.0, low_open: bool = False, high: float = math.inf,
            high_open: bool = False, optional: bool = False, what: str) -> None:
    """``value`` a finite real number (not a bool) within the bounds, or ``None`` when ``optional``."""
    if value is None and optional:
        return
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if ok:
        ok = (value > low if low_open else value >= low) and (value < high if high_open else value <= high)
    if not ok:
        raise ConfigurationError(f"{name} must be {what}{' or None' if optional else ''}, got {value!r}")


def parse_duration(value: Any, name: str = "deadline") -> float | None:
    """Seconds from a number or a duration such as ``90``, ``90s``, ``15m``, ``1h30m``, ``2h``;
    ``None`` stays ``None``. A :class:`ConfigurationError` naming ``name`` otherwise."""
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
    else:
        text = str(value).strip().lower()
        try:
            seconds = float(text)
        except ValueError:
            parts = re.fullmatch(r"(?:(\d+(?:\.\d+)?)h)?\s*(?:(\d+(?:\.\d+)?)m(?:in)?)?\s*(?:(\d+(?:\.\d+)?)s)?", text)
            if not text or not parts or not any(parts.groups()):
                raise ConfigurationError(f"{name} must be seconds or a duration like 90s, 15m, 1h30m; got "
                                         f"{value!r}") from None
            hours, minutes, secs = (float(g) if g else 0.0 for g in parts.groups())
            seconds = hours * 3600 + minutes * 60 + secs
    if not math.isfinite(seconds) or seconds <= 0:
        raise ConfigurationError(f"{name} must be positive, got {value!r}")
    return seconds


class _Selectors:
    """Where ``metrics=`` names are looked up: :mod:`doclens.families` (a layer above this one,
    ``docs/design.md`` §6) hands its registry's ``selectors`` here when it is imported, which
    ``import doclens`` does; ``None`` until then (a name is then taken as given)."""

    known: Callable[[], tuple[str, ...]] | None = None


SELECTORS = _Selectors()


def metric_selectors(metrics: Any) -> tuple[str, ...]:
    """``metrics=`` (``"doclens,<selector>"`` or a list) → the families' selectors, checked
    (the one check: :class:`ScoringSettings` makes it). Which selectors exist is the families'
    registry's to say (:func:`doclens.families.selectors`, through :data:`SELECTORS`;
    ``families.register`` adds one); the
    DocLens metrics are always on (the opt-in families judge their prediction claims)."""
    parts = metrics.split(",") if isinstance(metrics, str) else metrics
    names = [m.strip() if isinstance(m, str) else m for m in parts] if isinstance(parts, (list, tuple)) else [None]
    if not all(isinstance(m, str) for m in names):
        raise ConfigurationError(f"metrics must be a string or a list of strings, got {metrics!r}")
    names = list(dict.fromkeys(m for m in names if m))
    known = SELECTORS.known() if SELECTORS.known is not None else tuple(names)
    unknown = [m for m in names if m not in known]
    if unknown:
        raise ConfigurationError(f"metrics: unknown metric family {', '.join(map(repr, unknown))}; the known ones are "
                                 f"{', '.join(known)}")
    if "doclens" not in names:
        others = ",".join(name for name in names if name != "doclens")
        raise ConfigurationError(f"metrics must include 'doclens' (the other families judge the claims that the "
                                 f"DocLens metrics extract): use 'doclens,{others}'")
    return tuple(names)


#: a settings class's own type: :meth:`_Settings.from_kwargs` and :meth:`_Settings.replace` give one
_S = TypeVar("_S", bound="_Settings")


class _Settings:
    """What the settings classes share: made from keywords in one place, changed by copy."""

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The option names, in declaration order."""
        return tuple(f.name for f in dataclasses.fields(cls))  # type: ignore[arg-type]

    @classmethod
    def _known(cls, options: dict[str, Any]) -> None:
        """Refuse an option name the class does not have, naming it and the names it has."""
        unknown = sorted(set(options) - set(cls.names()))
        if unknown:
            raise ConfigurationError(f"unknown option(s) {', '.join(map(repr, unknown))} for {cls.__name__}; "
                                     f"the options are {', '.join(cls.names())}")

    @classmethod
    def from_kwargs(cls: type[_S], base: _S | None = None, /, **options: Any) -> _S:
        """Settings from keyword options, the one path from loose keywords to settings: a name the
        class does not have is refused, naming it and the names it has. ``None`` means "not
        given": without ``base``, an option that takes no ``None`` gets its default (one whose
        ``None`` is a value of its own, ``seed=None``, gets ``None``); with ``base`` (settings
        already made, a constructor's ``settings=``) it keeps ``base``'s value —
        ``base.replace(**options)``, which reads ``None`` the same way."""
        if base is None:
            cls._known(options)
            takes_none = {f.name for f in dataclasses.fields(cls) if "None" in str(f.type)}  # type: ignore[arg-type]
            return cls(**{name: value for name, value in options.items() if value is not None or name in takes_none})
        if not isinstance(base, cls):
            raise ConfigurationError(f"settings must be a doclens.{cls.__name__}, got {type(base).__name__}")
        return base.replace(**options)

    def replace(self: _S, **changes: Any) -> _S:
        """A copy with ``changes``, checked again (a name the class lacks is refused). ``None``
        leaves an option as it is, as :meth:`from_kwargs` reads it over settings already made (no
        change: this object itself). To set an option to ``None`` itself (``max_citations=None``:
        no cap; ``seed=None``): ``dataclasses.replace(settings, max_citations=None)``, checked
        the same way."""
        self._known(changes)
        given = {name: value for name, value in changes.items() if value is not None}
        return dataclasses.replace(self, **given) if given else self  # type: ignore[type-var]


class KeywordSignature:
    """A class's ``__signature__`` (set in its body: ``__signature__ = KeywordSignature(Settings)``)
    for a constructor that takes ``settings=`` and the same options as ``**keywords``: its own
    parameters, then each option of ``Settings`` as a keyword. ``inspect.signature`` (and with it
    :func:`doclens.evaluators.accepted_options`, the preset loader's option check, help and IDEs)
    then reads the settings' list of options instead of a copy of it. A subclass with an
    ``__init__`` of its own gets ``None``, so ``inspect`` reads that ``__init__`` as usual."""

    def __init__(self, settings: type[_Settings]):
        self.settings = settings
        self.owner: type | None = None

    def __set_name__(self, owner: type, name: str) -> None:
        self.owner = owner

    def __get__(self, instance: Any, owner: type | None = None) -> inspect.Signature | None:
        init = vars(self.owner).get("__init__") if self.owner is not None else None
        if not callable(init) or instance is not None or owner is None or getattr(owner, "__init__", None) is not init:
            return None
        own = [p for p in inspect.signature(cast(Callable[..., Any], init)).parameters.values()
               if p.name != "self" and p.kind is not inspect.Parameter.VAR_KEYWORD]
        taken = {p.name for p in own}
        options = [inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default)
                   for f in dataclasses.fields(self.settings) if f.name not in taken]  # type: ignore[arg-type]
        return inspect.Signature([*own, *options])


@dataclass(frozen=True)
class ScoringSettings(_Settings):
    """How a :class:`doclens.DocLens` scores; every field is one ``DocLens`` keyword and one
    ``doclens score`` option (``--premise-scope`` for ``premise_scope``).

    task : str, optional
        Default task for instances without a ``task`` field: one of
        :data:`doclens.core.tasks.TASKS`, ``None`` (``general``; a SOAP-shaped reference is then
        scored as one block, with a warning) or ``"auto"``, which picks ``note_generation`` for a
        reference with SOAP section headers, else ``general``, per instance (each result's
        ``task`` says which; the report counts them).
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
        counted (none capped away). Every capped statement is counted and warned about.
    on_unparsed : {"zero", "exclude", "raise"}
        How an item the judge never gave a readable verdict for counts (unparsed reply, failed
        call; :mod:`doclens.core.metrics`).
    question_statements : {"whole", "sentences"}
        For ``question_summarization``: ``whole`` (the original scripts) judges the whole
        prediction as one statement citing every id in it; ``sentences`` splits it into
        sentences like any other prediction.
    uncited_outputs : {"not-applicable", "strict"}
        An output in which no statement cites anything: ``not-applicable`` leaves it out of the
        citation metrics (counted as ``not_applicable``, one warning per run); ``strict`` scores
        each of its statements 0, the paper's reading. Outputs that cite something follow the
        paper either way.
    premise_scope : {"note", "section"}
        ``note_generation``: what a claim is judged against. ``"note"``: the whole premise note, once;
        a supported claim whose evidence — the premise sentence the judge found it in
        (``ClaimVerdict.evidence``), or, for a judge that gives none, the note section sharing most of
        its words — lies outside its own section, and that its own section does not state too, is
        *stated in another section* (``ClaimVerdict.placement``, counted per metric and section), and
        still counted under its own section (issue 46); one its own section states too is placed
        there, that section's sentence its evidence. A history, exam or results claim whose only
        evidence is a plan proposing it is not supported (``docs/design.md`` "Premise scope").
        ``"section"``: the paper's per-section premise (claim verdicts equal the original DocLens
        scripts'). Signature ``premise:``; ``docs/design.md`` §4.
    section_fallback : {"note", "section"}
        Under ``premise_scope="section"``: a claim whose section the premise note lacks is judged
        against the whole note (``"note"``, counted in ``counts[...]["section_fallbacks"]``) or,
        as the original scripts did, not entailed (``"section"``). Signature ``sections:``.
        ``"section"`` contradicts ``premise_scope="note"`` and is refused with it.
    source_units : {"given", "lines", "turns", "sentences", "auto"}
        How a source string without ``[0]`` markers is numbered (:mod:`doclens.parsing.source_units`):
        ``given`` refuses it; the others cut it into units, ``auto`` detecting how. Each numbered
        source is counted in a warning; signature ``units:``.
    metrics : tuple of str
        The metric families' selectors: ``"doclens"`` (the four DocLens metrics, always on) and
        the opt-in families' (source support: each prediction claim judged against evidence from
        the instance's own source, ``cards/source-support.md``); a comma-separated string is split.
        Which selectors exist is the families' registry's to say
        (:func:`metric_selectors` refuses an unknown one, naming the known ones).
    chunk_size : int
        Instances per batch sent to the extractor and the judge.
    review_below : float, optional
        A review queue (issue 46): every claim verdict whose confidence — the judge's calibrated
        probability of the verdict, :attr:`doclens.core.types.ClaimVerdict.confidence` — is under
        this is marked ``review`` and counted (``counts["review"]``), so a person reads those and signs
        the rest. A verdict the judge gives no probability for is counted apart (``unrated``). Changes
        no score, so it is not in the signature. ``None``: no queue.
    """

    task: str | None = None
    uncited: Uncited = "zero"
    max_citations: int | None = None
    on_unparsed: OnUnparsed = "zero"
    question_statements: QuestionStatements = "whole"
    uncited_outputs: UncitedOutputs = "not-applicable"
    premise_scope: PremiseScope = "note"
    section_fallback: SectionFallback = "note"
    source_units: SourceUnits = "given"
    metrics: tuple[str, ...] = ("doclens",)
    chunk_size: int = 32
    review_below: float | None = None

    def __post_init__(self) -> None:
        if self.task == "":  # no task, as before settings were an object
            object.__setattr__(self, "task", None)
        if self.task is not None and self.task not in (AUTO_TASK, *TASKS):
            raise ConfigurationError(f"task must be one of {(AUTO_TASK, *TASKS)} or None, got {self.task!r}")
        _one_of("uncited", self.uncited, UNCITED)
        _whole("max_citations", self.max_citations, 1, optional=True, what="a positive integer")
        _one_of("on_unparsed", self.on_unparsed, ON_UNPARSED)
        _one_of("question_statements", self.question_statements, QUESTION_STATEMENTS)
        _one_of("uncited_outputs", self.uncited_outputs, UNCITED_OUTPUTS)
        _one_of("premise_scope", self.premise_scope, PREMISE_SCOPES)
        _one_of("section_fallback", self.section_fallback, SECTION_FALLBACKS)
        if self.premise_scope == "note" and self.section_fallback == "section":
            raise ConfigurationError("section_fallback='section' (a claim whose section the premise note lacks is not "
                                     "entailed) is the paper's per-section rule: it needs premise_scope='section' "
                                     "(--premise-scope section); under premise_scope='note' every claim is judged "
                                     "against the whole note")
        _one_of("source_units", self.source_units, SOURCE_UNITS)
        _whole("chunk_size", self.chunk_size, 1)
        if self.review_below is not None and not (isinstance(self.review_below, (int, float))
                                                  and not isinstance(self.review_below, bool)
                                                  and 0 < self.review_below <= 1):
            raise ConfigurationError(f"review_below must be a probability in (0, 1], got {self.review_below!r}")
        object.__setattr__(self, "metrics", metric_selectors(self.metrics))  # frozen: the normalised form, set once


@dataclass(frozen=True)
class EndpointSettings(_Settings):
    """An OpenAI-compatible chat endpoint and how it is called (the ``doclens score`` flags of the
    same names; :class:`doclens.evaluators.llm.openai_chat.OpenAIChatJudge` says what each does).

    ``model`` ``None``: the judge's default (Azure: the deployment name). ``deadline``: seconds
    or a duration (``90s``, ``15m``, ``1h30m``), kept as given; :attr:`deadline_s` is it in
    seconds. ``json_response`` ``None``: on for OpenAI and Azure, off for other servers.
    """

    model: str | None = None
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    azure_endpoint: str | None = None
    azure_deployment: str | None = None
    azure_api_version: str | None = None
    local_only: bool = False
    concurrency: int = 8
    rpm: float | None = None
    tpm: float | None = None
    timeout: float = 60.0
    max_retries: int = 5
    max_consecutive_failures: int = 20
    deadline: float | str | None = None
    max_retry_after: float = 60.0
    backoff_base: float = 1.0
    backoff_max: float = 60.0
    seed: int | None = 0
    temperature: float = 0.0
    max_tokens: int | None = None
    json_response: bool | None = None
    price_table: str | None = None

    def __post_init__(self) -> None:
        if self.azure_endpoint and self.base_url:
            raise ConfigurationError("give either base_url (OpenAI-compatible server) or azure_endpoint, not both")
        if (self.azure_deployment or self.azure_api_version) and not self.azure_endpoint:
            raise ConfigurationError("azure_deployment / azure_api_version need azure_endpoint")
        for name in ("model", "base_url", "api_key_env", "azure_endpoint", "azure_deployment", "azure_api_version",
                     "price_table"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise ConfigurationError(f"{name} must be a string, got {value!r}")
        if not self.api_key_env:
            raise ConfigurationError("api_key_env must name an environment variable")
        _whole("concurrency", self.concurrency, 1)
        _whole("max_retries", self.max_retries, 0, what="0 or more")
        _whole("max_consecutive_failures", self.max_consecutive_failures, 0, what="0 (off) or more")
        _whole("max_tokens", self.max_tokens, 1, optional=True)
        _whole("seed", self.seed, -2**63, optional=True, what="an integer")
        for name in ("rpm", "tpm"):
            _number(name, getattr(self, name), low_open=True, optional=True, what="positive")
        _number("timeout", self.timeout, low_open=True, what="a positive number of seconds")
        _number("max_retry_after", self.max_retry_after, what="0 or more seconds")
        _number("backoff_base", self.backoff_base, what="0 or more seconds")
        _number("backoff_max", self.backoff_max, what="0 or more seconds")
        _number("temperature", self.temperature, what="0 or more")
        for name in ("local_only", "json_response"):
            value = getattr(self, name)
            if not isinstance(value, bool) and not (name == "json_response" and value is None):
                raise ConfigurationError(f"{name} must be true or false, got {value!r}")
        parse_duration(self.deadline)

    @property
    def deadline_s(self) -> float | None:
        """:attr:`deadline` in seconds (``None``: no deadline)."""
        return parse_duration(self.deadline)


@dataclass(frozen=True)
class ModelSettings(_Settings):
    """An in-process model and how it runs (the ``doclens score`` flags of the same names;
    ``docs/design.md`` §2, "NLI judges on a GPU").

    ``model``: a hub id, local folder or file (``None``: the judge's default). ``device``,
    ``dtype``: ``None`` picks them (a GPU when there is one; the judge's measured GPU precision).
    ``batch_size``: inputs per forward pass at most; ``max_batch_tokens``: padded tokens per pass
    at most; ``max_length``: the model window in tokens (at least 8); ``window_overlap``: the
    share of a window a long premise's windows overlap by, in [0, 1); ``padding_tolerance``: the
    padding a batch may carry, in [0, 1]; ``runtime``: ``torch``, ``onnx``, ``onnx-int8``,
    ``torch-int8`` or ``bf16-checked`` (:mod:`doclens.evaluators.models.nli_runtimes` checks which
    a judge can run).
    """

    model: str | None = None
    device: str | None = None
    dtype: DType | None = None
    batch_size: int | None = None
    max_batch_tokens: int | None = None
    max_length: int | None = None
    window_overlap: float = 0.25
    padding_tolerance: float | None = None
    runtime: str = "torch"

    def __post_init__(self) -> None:
        for name in ("model", "device", "runtime"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise ConfigurationError(f"{name} must be a string, got {value!r}")
        if self.dtype is not None:
            _one_of("dtype", self.dtype, DTYPES)
        _whole("batch_size", self.batch_size, 1, optional=True)
        _whole("max_batch_tokens", self.max_batch_tokens, 1, optional=True)
        _whole("max_length", self.max_length, 8, optional=True, what="at least 8 tokens")
        _number("window_overlap", self.window_overlap, high=1, high_open=True, what="in [0, 1)")
        _number("padding_tolerance", self.padding_tolerance, high=1, optional=True, what="in [0, 1]")
