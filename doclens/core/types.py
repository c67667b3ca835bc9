"""Plain data types that flow through the pipeline (``docs/design.md`` §3).

Everything here is a dataclass that serialises to JSON with ``to_dict`` and back with
``from_dict``, so a report written to disk can be read, compared and rendered later.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, fields
from enum import Enum
from typing import Any, ClassVar, Literal, TypeVar, cast

from doclens.core.errors import InputError


class TextEnum(str, Enum):
    """A vocabulary that steers code: each member is a string equal to its value (hashed, compared,
    formatted, printed — ``repr`` too — and JSON-encoded as that value), so files and messages
    read exactly as they did when these were plain strings."""

    __hash__ = str.__hash__

    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:
        return repr(self.value)

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


class Status(TextEnum):
    """Verdict statuses. ``ok``: the judge gave a verdict. ``unparsed``: the judge's reply could not
    be read after retries; the raw reply is kept and the item is scored per ``on_unparsed``.
    ``failed``: no reply at all — the call to the model failed for good (retries spent, or an
    error such as 401 that retrying cannot fix); the explanation names the error, the item is
    scored per ``on_unparsed`` like an unparsed one, and nothing is cached, so a rerun asks exactly
    these again."""

    OK = "ok"
    UNPARSED = "unparsed"
    FAILED = "failed"


STATUS_OK = Status.OK
STATUS_UNPARSED = Status.UNPARSED
STATUS_FAILED = Status.FAILED
#: Statuses of an item without a verdict (``entailed is None``).
NO_VERDICT = (STATUS_UNPARSED, STATUS_FAILED)


class Reason(TextEnum):
    """Why an item was decided without asking the judge (``reason`` of a verdict; ``None``: the
    judge decided it, or was due to). Code reads these, never the explanation text."""

    EMPTY_PREMISE = "empty_premise"  # a claim judged against an empty text: not entailed
    NO_CITATION = "no_citation"  # a statement that cites nothing: citation recall 0
    INVALID_IDS = "invalid_ids"  # a statement citing an id the source lacks: recall 0


REASON_EMPTY_PREMISE = Reason.EMPTY_PREMISE
REASON_NO_CITATION = Reason.NO_CITATION
REASON_INVALID_IDS = Reason.INVALID_IDS
UNJUDGED_REASONS = tuple(Reason)


class Direction(TextEnum):
    """What a claim request asks (``ClaimRequest.direction``): ``recall``, a reference claim against
    the prediction; ``precision``, a prediction claim against the reference; ``support``, a
    prediction claim against evidence from the instance's source, answered in three verdicts
    (source support, ``cards/source-support.md``; the ``support`` prompts). Prompt
    families that are not symmetric (question summarisation) read it."""

    RECALL = "recall"
    PRECISION = "precision"
    SUPPORT = "support"


#: The explanations shown for those items (text for people; code reads ``reason``).
EMPTY_PREMISE = "empty premise: nothing to entail the claim"
NO_CITATION = "no citation"
INVALID_IDS = "invalid citation id(s)"
#: Where the premise note states a note claim the judge entailed (``ClaimVerdict.placement``;
#: docs/design.md §4, Premise scope): in the claim's own section; only in another section of the
#: note (``premise_scope="note"``: entailed by the whole note, not by its own section); or in the
#: whole note because the note lacks the claim's section (``section_fallback="note"``). ``None``:
#: not entailed, no verdict, or a claim that is not a note section's.
Placement = Literal["own_section", "other_section", "whole_note"]
PLACEMENT_OWN_SECTION: Placement = "own_section"
PLACEMENT_OTHER_SECTION: Placement = "other_section"
PLACEMENT_WHOLE_NOTE: Placement = "whole_note"
#: The text of the one item that stands for the unknown claims of a text whose extraction failed.
EXTRACTION_FAILED = "[claims not extracted: the extraction call failed]"


def _legacy_reason(data: dict) -> str | None:
    """The ``reason`` of a verdict read from a file written before verdicts carried one: recovered
    once, here, from the explanation those versions wrote (exactly one of three texts)."""
    if "reason" in data:
        return data["reason"]
    explanation = data.get("explanation") or ""
    if explanation == EMPTY_PREMISE:
        return REASON_EMPTY_PREMISE
    if explanation == NO_CITATION:
        return REASON_NO_CITATION
    return REASON_INVALID_IDS if explanation.startswith(INVALID_IDS) else None


#: verdict fields written only when set (files stay as they were for items without them)
OPTIONAL_VERDICT_FIELDS = ("reason", "placement", "probability", "evidence", "findings", "review")


def _verdict_dict(verdict: ClaimVerdict | CitationVerdict) -> dict[str, Any]:
    """A verdict as JSON: every field; ``reason`` only when the item was decided without the judge,
    ``placement`` only for an entailed note claim."""
    data = asdict(verdict)
    for name in OPTIONAL_VERDICT_FIELDS:
        if data.get(name) is None:
            data.pop(name, None)
    return data


def instance_id(value: object, where: str = "instance") -> str:
    """An instance id as DocLens keeps it: a non-empty string as is, an integer turned into its
    decimal string (``7`` → ``"7"``). Anything else (a missing id, ``""``, a float, ``NaN``,
    ``true``, an object, a list) raises :class:`doclens.core.errors.InputError` naming ``where`` and
    the field ``id``."""
    if isinstance(value, str):
        if value:
            return value
        raise InputError(f"{where}: field 'id' is empty (ids are non-empty strings or integers)", field="id")
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if value is None:
        raise InputError(f"{where}: missing required field 'id' (ids are non-empty strings or integers)",
                         field="id")
    if isinstance(value, bool):
        shown = "true" if value else "false"
    elif isinstance(value, float):
        shown = "NaN" if value != value else repr(value)
    else:
        json_kinds: dict[type, str] = {dict: "a JSON object", list: "a JSON array"}
        shown = json_kinds.get(type(value), type(value).__name__)
    raise InputError(f"{where}: field 'id' must be a non-empty string or an integer, got {shown}", field="id")


#: the verdict types that :func:`_from_dict` reads
_Verdict = TypeVar("_Verdict", "ClaimVerdict", "CitationVerdict")


def _from_dict(cls: type[_Verdict], data: dict[str, Any]) -> _Verdict:
    names = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in data.items() if k in names})


@dataclass
class SourceUnit:
    """One citable unit of the source, numbered from 0 (a dialogue turn, a sentence)."""

    index: int
    text: str
    speaker: str | None = None

    @property
    def premise_text(self) -> str:
        """The text a judge sees: ``"doctor: hi"`` for a dialogue turn, else the text."""
        return f"{self.speaker}: {self.text}" if self.speaker else self.text


@dataclass
class Statement:
    """A sentence, bullet or line of the prediction with the citation ids that close it."""

    index: int
    text: str  # citation markers removed: the text that is judged
    citations: list[int] = field(default_factory=list)  # de-duplicated, in order of appearance
    section: str | None = None
    inherited: bool = False  # citations borrowed from the next cited statement (uncited="inherit")
    #: Bracketed numbers inside running text (``"[2] weeks"``), each with the word after it: not
    #: citations in context, so never judged; reported as invalid ids (``docs/design.md`` §1).
    stray: list[str] = field(default_factory=list)


@dataclass
class Instance:
    """One scored example. See ``docs/design.md`` §1 for the fields."""

    id: str
    prediction: str
    reference: str
    #: ``None``; numbered units (a string ``"[0] … [1] …"`` or a list of strings); a long text
    #: (a string without ``[0]``: no citable units, used by source support only); a list of
    #: documents (strings); table rows (dicts, each the unit ``"column: value; …"``), mixable
    #: with strings. See :mod:`doclens.retrieval.facts`.
    source: Any = None
    reference_claims: Any | None = None  # list[str], or {section: list[str]} for notes
    prediction_claims: Any | None = None
    task: str | None = None

    @classmethod
    def from_dict(cls, data: dict, position: int | None = None, *, require_id: bool = False,
                  where: str | None = None) -> Instance:
        """Build an instance, raising :class:`doclens.core.errors.InputError` that names the
        instance (by id, else by position, or ``where``) and the field at fault.

        Ids: a non-empty string, or an integer turned into its string (:func:`instance_id`).
        A dict with no ``id`` gets its ``position`` as id, unless ``require_id`` (the command
        line requires one on every line: a line number is no id). Claims given in
        ``reference_claims`` / ``prediction_claims`` must be non-empty strings."""
        where = where or _instance_label(data, position)
        _check_object(data, where)
        ident = data.get("id")
        if ident is None and not require_id and position is not None:
            ident = position
        ident = instance_id(ident, where)
        _check_texts(data, where)
        source = data.get("source")
        _check_source(source, where)
        for name in ("reference_claims", "prediction_claims"):
            _check_claims(data.get(name), name, where)
        task = data.get("task")
        if task is not None and not isinstance(task, str):
            raise InputError(f"{where}: field 'task' must be a string", field="task")
        return cls(id=ident, prediction=data["prediction"], reference=data["reference"], source=source,
                   reference_claims=data.get("reference_claims"), prediction_claims=data.get("prediction_claims"),
                   task=task)


# ---- the instance schema, one step a function (Instance.from_dict runs them in order) -------------
def _instance_label(data: object, position: int | None) -> str:
    """``instance 'id'`` when the id is usable, else ``instance #position``, else ``instance``."""
    ident = data.get("id") if isinstance(data, dict) else None
    if isinstance(ident, (str, int)) and not isinstance(ident, bool) and ident != "":
        return f"instance {ident!r}"
    return f"instance #{position}" if position is not None else "instance"


def _check_object(data: object, where: str) -> None:
    if not isinstance(data, dict):
        raise InputError(f"{where}: expected a JSON object, got {type(data).__name__}", field=None)


def _check_texts(data: dict, where: str) -> None:
    for name in ("prediction", "reference"):
        if name not in data:
            raise InputError(f"{where}: missing required field '{name}'", field=name)
        if not isinstance(data[name], str):
            raise InputError(f"{where}: field '{name}' must be a string, got {type(data[name]).__name__}", field=name)


def _check_source(source: object, where: str) -> None:
    if source is not None and not isinstance(source, (str, list)):
        raise InputError(f"{where}: field 'source' must be a string, or a list of strings (units, documents) "
                         "and objects (table rows)", field="source")
    for k, item in enumerate(source if isinstance(source, list) else ()):
        if not isinstance(item, (str, dict)):
            raise InputError(f"{where}: field 'source[{k}]' must be a string (a unit or document) or an "
                             f"object (a table row), got {type(item).__name__}", field="source")


def _check_claims(claims: object, name: str, where: str) -> None:
    """Given claims: a list of non-empty strings, or a mapping section → such a list."""
    if claims is None:
        return
    ok = (isinstance(claims, list) and all(isinstance(c, str) for c in claims)) or (
        isinstance(claims, dict) and all(
            isinstance(v, list) and all(isinstance(c, str) for c in v) for v in claims.values()))
    if not ok:
        raise InputError(f"{where}: field '{name}' must be a list of strings (or, for note_generation, "
                         "an object mapping section names to lists of strings)", field=name)
    sections = cast("dict[str, list[str]]", claims)  # not a list: a section mapping (checked above)
    located = list(enumerate(claims)) if isinstance(claims, list) else [
        (f"{section!r}][{i}", c) for section, values in sections.items() for i, c in enumerate(values)]
    for i, claim in located:
        if not claim.strip():
            raise InputError(f"{where}: field '{name}[{i}]' is an empty claim (leave empty claims out)", field=name)


@dataclass
class ClaimJudgement:
    """An evaluator's answer for one claim against one premise."""

    entailed: bool | None  # None when unparsed
    explanation: str = ""
    status: str = STATUS_OK
    raw: str | None = None  # the judge's raw reply, kept when it could not be parsed
    #: source support only: the 3-way verdict (:data:`doclens.core.support.SUPPORT_LABELS`)
    label: str | None = None
    #: one of :data:`UNJUDGED_REASONS` when decided without asking the judge
    reason: str | None = None
    #: the judge's calibrated probability that the premise supports the claim (``None``: the judge
    #: gives none); the verdict's confidence is this for a supported verdict, 1 minus it otherwise
    probability: float | None = None
    #: the premise sentences the judge found the claim in, for a supported verdict (placement reads them)
    evidence: list[str] | None = None
    #: what the judge's rules found, typed: ``[{"kind", "contradiction"}]`` (a rule-based judge's)
    findings: list[dict] | None = None

    @classmethod
    def unparsed(cls, raw: str | None, explanation: str = "reply could not be parsed") -> ClaimJudgement:
        return cls(entailed=None, explanation=explanation, status=STATUS_UNPARSED, raw=raw)

    @classmethod
    def failed(cls, error: str) -> ClaimJudgement:
        """No verdict because the model call failed for good; ``error`` says why."""
        return cls(entailed=None, explanation=f"call failed: {error}", status=STATUS_FAILED)


@dataclass
class CitationJudgement:
    """An evaluator's answer for one statement against the source units it cites.

    ``precise`` maps each cited (valid) id to whether that citation is precise. Evaluators that
    give provenance (LLM judges) fill it from the provenance list; the leave-one-out rule fills
    it for entailment-only judges.
    """

    entailed: bool | None
    precise: dict[int, bool] = field(default_factory=dict)
    provenance: list[int] | None = None
    explanation: str = ""
    status: str = STATUS_OK
    raw: str | None = None
    #: one of :data:`UNJUDGED_REASONS` when decided without asking the judge
    reason: str | None = None

    @classmethod
    def uncited(cls) -> CitationJudgement:
        """A statement that cites nothing: not entailed, decided without the judge."""
        return cls(entailed=False, explanation=NO_CITATION, reason=REASON_NO_CITATION)

    @classmethod
    def unparsed(cls, raw: str | None, cited: list[int],
                 explanation: str = "reply could not be parsed") -> CitationJudgement:
        return cls(entailed=None, precise={c: False for c in cited}, explanation=explanation,
                   status=STATUS_UNPARSED, raw=raw)

    @classmethod
    def failed(cls, error: str, cited: list[int]) -> CitationJudgement:
        """No verdict because the model call failed for good; ``error`` says why."""
        return cls(entailed=None, precise={c: False for c in cited}, explanation=f"call failed: {error}",
                   status=STATUS_FAILED)


@dataclass
class ClaimVerdict:
    """One claim in the report, with its verdict and evidence."""

    text: str
    entailed: bool | None
    explanation: str = ""
    status: str = STATUS_OK
    section: str | None = None
    raw: str | None = None
    #: one of :data:`UNJUDGED_REASONS` when decided without asking the judge
    reason: str | None = None
    #: where the premise note states an entailed note claim (:data:`Placement`); ``None`` otherwise
    placement: Placement | None = None
    #: the judge's calibrated probability that the premise supports the claim (:class:`ClaimJudgement`)
    probability: float | None = None
    #: the premise sentences the judge found a supported claim in; for a note claim placed in its own
    #: section after the judge found it elsewhere, the own section's supporting sentence (issue 46)
    evidence: list[str] | None = None
    #: the judge's typed findings (:class:`ClaimJudgement`)
    findings: list[dict] | None = None
    #: ``doclens score --review-below P``: the verdict's confidence is under ``P`` (a person should read it)
    review: bool | None = None

    to_dict = _verdict_dict

    @property
    def confidence(self) -> float | None:
        """How likely the verdict is right, by the judge's calibrated probability: the probability for
        a supported verdict, 1 minus it for an unsupported one; ``None`` without one or a verdict."""
        if self.probability is None or self.entailed is None:
            return None
        return self.probability if self.entailed else 1.0 - self.probability

    @property
    def judged(self) -> bool:
        """Whether the judge gave (or owed) this verdict, rather than a rule deciding it unasked."""
        return self.status in NO_VERDICT or self.reason is None

    @classmethod
    def from_dict(cls, data: dict) -> ClaimVerdict:
        return _from_dict(cls, {**data, "reason": _legacy_reason(data)})


@dataclass
class CitationVerdict:
    """One statement of the prediction in the report, with its citation verdicts."""

    index: int
    text: str
    cited: list[int]
    valid: list[int]
    invalid: list[int]
    precise: list[int]
    entailed: bool | None
    section: str | None = None
    inherited: bool = False
    status: str = STATUS_OK
    explanation: str = ""
    provenance: list[int] | None = None
    raw: str | None = None
    #: one of :data:`UNJUDGED_REASONS` when decided without asking the judge
    reason: str | None = None

    to_dict = _verdict_dict

    @property
    def judged(self) -> bool:
        """Whether the judge gave (or owed) this verdict, rather than a rule deciding it unasked."""
        return self.status in NO_VERDICT or self.reason is None

    @classmethod
    def from_dict(cls, data: dict) -> CitationVerdict:
        return _from_dict(cls, {**data, "reason": _legacy_reason(data)})

    @property
    def recall_hit(self) -> bool:
        return bool(self.entailed) and not self.invalid and bool(self.cited)


def __getattr__(name: str) -> type:
    """``SupportJudgement`` and ``SupportVerdict`` live in :mod:`doclens.core.support`, with the
    family's other types; importing them from here still works."""
    if name in ("SupportJudgement", "SupportVerdict"):
        from doclens.core import support

        return getattr(support, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _FamilyHooks:
    """What :class:`InstanceResult` asks the metric families' registry (:mod:`doclens.families`, a
    layer above this one, ``docs/design.md`` §6, which sets both when it is imported, as ``import
    doclens`` does): the registered families' names, and each one's reader of its own items."""

    names: Callable[[], tuple[str, ...]] = staticmethod(lambda: ())
    item_readers: Callable[[], Mapping[str, Callable[[dict], Any]]] = staticmethod(lambda: {})


FAMILY_HOOKS = _FamilyHooks()


@dataclass
class InstanceResult:
    """Everything DocLens found for one instance.

    ``family_items``: the items of each metric family judged in a step of its own
    (:mod:`doclens.families`), by family name, in its JSON under that name; a family absent from
    it was not judged for this instance (not asked for, or no source). ``result.<family name>``
    reads them too (``None`` where absent)."""

    id: str
    task: str
    reference_claims: list[ClaimVerdict] = field(default_factory=list)
    prediction_claims: list[ClaimVerdict] = field(default_factory=list)
    statements: list[CitationVerdict] = field(default_factory=list)
    has_source: bool = False
    scores: dict[str, float | None] = field(default_factory=dict)
    family_items: dict[str, list] = field(default_factory=dict)

    #: the verdict lists every instance has (judged by the scorer's claim and citation pass)
    VERDICT_LISTS: ClassVar[tuple[str, ...]] = ("reference_claims", "prediction_claims", "statements")

    def items_of(self, name: str) -> list | None:
        """A verdict list by name (:attr:`VERDICT_LISTS`) or a family's own items (``None``
        where that family was not judged): what a family's ``item_fields`` name."""
        return getattr(self, name) if name in self.VERDICT_LISTS else self.family_items.get(name)

    def __getattr__(self, name: str) -> list[Any] | None:
        """A registered family's own items by its name (``family_items[name]``, ``None`` where it
        was not judged): for code written before families kept their items in one place."""
        if not name.startswith("__") and name in FAMILY_HOOKS.names():
            return self.__dict__.get("family_items", {}).get(name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:  # any field's value
        """``result.<family name> = items`` sets ``family_items[name]`` (``None`` removes them)."""
        if name in _RESULT_FIELDS or name not in FAMILY_HOOKS.names():
            object.__setattr__(self, name, value)
        elif value is None:
            self.family_items.pop(name, None)
        else:
            self.family_items[name] = value

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "task": self.task,
            "has_source": self.has_source,
            "scores": dict(self.scores),
            "reference_claims": [c.to_dict() for c in self.reference_claims],
            "prediction_claims": [c.to_dict() for c in self.prediction_claims],
            "statements": [s.to_dict() for s in self.statements],
            **{name: [item.to_dict() for item in items] for name, items in self.family_items.items()},
        }

    @classmethod
    def from_dict(cls, data: dict, item_readers: Mapping[str, Callable[[dict], Any]] | None = None) -> InstanceResult:
        """A result from :meth:`to_dict`; ``item_readers``: family name → the reader of one of
        its items (default: every registered family's, :func:`doclens.families.result_from_dict`)."""
        if item_readers is None:
            item_readers = FAMILY_HOOKS.item_readers()
        return cls(
            family_items={name: [read(v) for v in data[name]] for name, read in item_readers.items()
                          if data.get(name) is not None},
            id=data["id"], task=data["task"], has_source=data.get("has_source", False),
            scores=dict(data.get("scores", {})),
            reference_claims=[ClaimVerdict.from_dict(c) for c in data.get("reference_claims", [])],
            prediction_claims=[ClaimVerdict.from_dict(c) for c in data.get("prediction_claims", [])],
            statements=[CitationVerdict.from_dict(s) for s in data.get("statements", [])],
        )


#: InstanceResult's own fields (set as they are; any other registered family name goes to family_items)
_RESULT_FIELDS = frozenset(f.name for f in fields(InstanceResult))
