"""Labelled (claim, premise, label) items: what ``doclens judge-check`` measures a judge on and
``doclens judge-fit`` fits a decision model on.

Two sources:

* **a user's file** (:func:`read_labelled`): CSV or JSONL with the columns ``claim``, ``premise``
  and ``label``, an optional group column (``group_column``: per-group figures, and what
  cross-validation keeps together), an optional ``id``, ``side`` (``recall`` / ``precision``) and
  ``kind``. A premise is the note's text, or, in a ``premise_ref`` column, a reference to an
  ACI-BENCH note (:class:`PremiseRef`: ``{"split", "encounter", "note"}`` or
  ``"split/encounter/note"``, ``note`` being ``reference`` or a system's name) read from the
  folder of ACI-BENCH system outputs at run time;
* **a shipped set** (:func:`shipped_set`): ``real-outputs``, the claims of real ACI-BENCH test-2/3
  system and clinician notes labelled by reading (``doclens/datasets/real_outputs/DATASHEET.md``),
  by half (``dev``, ``held-out``, ``fresh`` — round 3, read by no one tuning a judge —, ``fresh-2``
  — round 4, drawn after v7 was measured on ``fresh`` —, ``sealed`` — round 5, drawn and labelled
  before issue 46's changes and measured once at their end —, ``calibration`` — round 6, drawn and
  labelled after clinical-rules v11, what the verdicts' confidence is fitted on — or ``all``, every
  half but ``sealed`` and ``calibration``);
  ``near-miss-probe``, correct claims and their one-detail variants
  (``doclens/datasets/near_miss_probe/DATASHEET.md``), held out from fitting as a whole (it has no
  dev half), grouped by kind. Their premises are references, resolved the same way.

A user's file is read by the readers ``doclens score`` reads its tables with, as strictly: a CSV
row with fewer or more cells than the header names columns (a premise with an unquoted line break
cuts its row in two) and a JSONL line without a ``label`` are errors naming the line, never items
left out. A label is boolean-like (``true``/``false``, ``1``/``0``, ``yes``/``no``, ``supported``/
``unsupported``, any case); an empty label cell (JSON ``null`` or ``""`` in JSONL) and nothing
else means the labeller could not decide (the sentence asserts no checkable fact): such items are
left out and counted (:attr:`LabelledSet.undecided`; the commands print the count). Anything else
is an :class:`~doclens.core.errors.InputError` naming the file, the line and the field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Literal

from doclens.core.errors import InputError

Side = Literal["recall", "precision"]
SIDES: tuple[Side, ...] = ("recall", "precision")
#: ``fresh``: the real-output set's third round, drawn and labelled after the held-out half had been
#: read for error analysis, for the next reported figure (its DATASHEET, "Round 3"); ``fresh-2``: the
#: fourth, drawn and labelled after clinical-rules v7 was measured on ``fresh`` ("Round 4"); ``sealed``:
#: the fifth, drawn and labelled before any change of issue 46 and read only by name, never in ``all``
#: ("Round 5"), so no fit, no tuning run and no figure over ``all`` can touch it by accident;
#: ``calibration``: the sixth, drawn and labelled after clinical-rules v11, read by name only too: the
#: calibration fit reads its labels (benchmarks/fit_calibration.py), no rule is written from it ("Round 6")
Half = Literal["dev", "held-out", "fresh", "fresh-2", "sealed", "calibration", "all"]
HALVES: tuple[Half, ...] = ("dev", "held-out", "fresh", "fresh-2", "sealed", "calibration", "all")
#: the halves read by name only, never in ``all``
BY_NAME_ONLY = frozenset({"sealed", "calibration"})
#: the shipped sets, by the name ``--set`` takes: their folders under ``doclens/datasets``
SHIPPED_SETS = {"real-outputs": "real_outputs", "near-miss-probe": "near_miss_probe"}
#: ``PremiseRef.note`` naming the clinician's note (any other value names a system's note)
REFERENCE_NOTE = "reference"
_TRUE = frozenset({"true", "1", "yes", "y", "supported", "entailed"})
_FALSE = frozenset({"false", "0", "no", "n", "unsupported", "not supported", "not_supported", "not entailed"})
#: what an undecided label is written as, once stripped: an empty cell (``null`` in JSON is one too)
_UNDECIDED = frozenset({""})
#: the real-output set's label files, in the order their items were drawn
_REAL_OUTPUT_FILES = ("labels_test2.jsonl", "labels_test3.jsonl", "labels_test2_round2.jsonl",
                      "labels_test3_round2.jsonl", "labels_test2_round3.jsonl", "labels_test3_round3.jsonl",
                      "labels_test2_round4.jsonl", "labels_test3_round4.jsonl", "labels_test2_round5.jsonl",
                      "labels_test3_round5.jsonl", "labels_test2_round6.jsonl",
                      "labels_test3_round6.jsonl")


#: where the folder of ACI-BENCH notes is looked for when none is given
ACI_BENCH_DIR_VARIABLE = "DOCLENS_ACI_BENCH_DIR"
#: ACI-BENCH's own CSV files (as it publishes them, ``dataset,encounter_id,dialogue,note``): the
#: clinicians' notes of each split, and each system's notes by the name DocLens's labels give the system
PUBLISHED_GOLD = {"test2": "clinicalnlp_taskC_test2", "test3": "clef_taskC_test3"}
_PUBLISHED_SYSTEMS = {
    "longest_speaker_turn": "longest_speaker_turn_{gold}", "longest_doctor_turn": "longest_doctor_turn_{gold}",
    "12_speaker_turns": "12_speaker_turns_{gold}", "12_doctor_turns": "12_doctor_turns_{gold}",
    "transcript": "transcript_{gold}", "train_UMLS": "UMLS_similarity_{gold}", "train_sent": "spacy_similarity_{gold}",
    "BART": "BART_large_{gold}_full", "BART-div": "BART_large_{gold}_division_combined",
    "BART+FT_SAMSum": "bart-large-xsum-samsum_{gold}_full",
    "BART+FT_SAMSum-div": "bart-large-xsum-samsum_{gold}_division_combined",
    "BioBART": "BioBART_{gold}_full", "BioBART-div": "BioBART_{gold}_division_combined",
    "LED": "LED_{gold}_full", "LED-div": "LED_{gold}_division_combined",
    "LED+FT_PubMed": "LED_pubmed_{gold}_full", "LED+FT_PubMed-div": "LED_pubmed_{gold}_division_combined",
    "Text-Davinci-002": "{split}Text-Davinci-002_", "Text-Davinci-003": "{split}Text-Davinci-003_",
    "ChatGPT": "{split}ChatGPT_", "GPT-4": "{split}GPT-4_"}
#: what to pass when no folder is found (every message that needs the notes says it)
ACI_BENCH_HINT = ("give --aci-bench-dir DIR (or set $DOCLENS_ACI_BENCH_DIR): the folder holding test2/ and test3/ of "
                  "ACI-BENCH's system outputs, either as ACI-BENCH publishes them (test2/clinicalnlp_taskC_test2.csv, "
                  "test2/test2GPT-4_.csv, test2/LED_clinicalnlp_taskC_test2_full.csv, …; test3/clef_taskC_test3.csv, "
                  "…) or converted to JSON Lines (test2/references.jsonl, test2/systems/GPT-4.jsonl, …); the notes "
                  "are CC BY 4.0 (Yim et al., 2023) and not shipped inside DocLens")


def aci_bench_dir_candidates() -> list[Path]:
    """Where the folder of ACI-BENCH notes is looked for, in order: ``$DOCLENS_ACI_BENCH_DIR``,
    ``../shared/data/aci_bench_systems`` beside a checkout of the repository (the project's own runs),
    then ``shared/data/aci_bench_systems`` under the current folder and its parent."""
    import os

    found = [Path(os.environ[ACI_BENCH_DIR_VARIABLE])] if os.environ.get(ACI_BENCH_DIR_VARIABLE) else []
    found.append(Path(__file__).resolve().parents[3] / "shared" / "data" / "aci_bench_systems")
    found += [Path.cwd() / "shared" / "data" / "aci_bench_systems",
              Path.cwd().parent / "shared" / "data" / "aci_bench_systems"]
    return found


def default_aci_bench_dir() -> Path | None:
    """The first of :func:`aci_bench_dir_candidates` that is a folder, else ``None`` (then
    :data:`ACI_BENCH_HINT` says what to pass)."""
    return next((path for path in aci_bench_dir_candidates() if path.is_dir()), None)


@dataclass(frozen=True)
class PremiseRef:
    """One ACI-BENCH note: ``note`` is :data:`REFERENCE_NOTE` (the clinician's note) or the name of
    a system whose output is in ``<split>/systems/<note>.jsonl``."""

    split: str
    encounter: str
    note: str

    @classmethod
    def parse(cls, value, where: str) -> PremiseRef:
        """From ``{"split", "encounter", "note"}`` or ``"split/encounter/note"``; ``where`` names
        the file, line and field in the error."""
        parts: list[object] = [None, None, None]
        if isinstance(value, str) and value.count("/") == 2:
            parts = list(value.split("/"))
        elif isinstance(value, dict):
            parts = [value.get(k) for k in ("split", "encounter", "note")]
        names = [v for v in parts if isinstance(v, str) and v and "/" not in v and ".." not in v]
        if len(names) != 3:
            raise InputError(f"{where}: a premise reference is {{'split', 'encounter', 'note'}} or "
                             f"'split/encounter/note', got {value!r}", field="premise_ref")
        return cls(*names)

    def __str__(self) -> str:
        return f"{self.split}/{self.encounter}/{self.note}"


class AciBenchNotes:
    """The notes of a folder of ACI-BENCH system outputs, each file read once: as ACI-BENCH
    publishes them (``<split>/clinicalnlp_taskC_test2.csv`` and one CSV per system, the note in
    column ``note``, :data:`PUBLISHED_GOLD`) or converted to JSON Lines (``<split>/references.jsonl``,
    ``<split>/systems/<system>.jsonl``, lines ``{"id", "reference"}`` / ``{"id", "prediction"}``).
    A system's note is given with its citation marks stripped. With no folder given, the first of
    :func:`aci_bench_dir_candidates` that exists; none: the error says what to pass."""

    def __init__(self, folder: Path | str | None = None):
        self.given = folder is not None
        self.folder = Path(folder) if folder is not None else default_aci_bench_dir()
        self._files: dict[Path, dict[str, object]] = {}

    def _missing_folder(self, where: str) -> InputError:
        if self.given:
            return InputError(f"{where}: the premise is an ACI-BENCH note, and the folder of ACI-BENCH system outputs "
                              f"{str(self.folder)!r} does not exist: {ACI_BENCH_HINT}", field="premise_ref")
        looked = ", ".join(str(path) for path in aci_bench_dir_candidates())
        return InputError(f"{where}: the premise is an ACI-BENCH note and no folder of ACI-BENCH system outputs was "
                          f"found (looked in {looked}): {ACI_BENCH_HINT}", field="premise_ref")

    def _path(self, ref: PremiseRef) -> tuple[Path, str]:
        """The file holding ``ref``'s note and the column or field of its text: the JSON Lines layout
        where the folder has it, else ACI-BENCH's published CSVs."""
        assert self.folder is not None
        reference = ref.note == REFERENCE_NOTE
        converted = self.folder / ref.split / ("references.jsonl" if reference else f"systems/{ref.note}.jsonl")
        gold = PUBLISHED_GOLD.get(ref.split)
        if converted.is_file() or gold is None or (not reference and ref.note not in _PUBLISHED_SYSTEMS):
            return converted, "reference" if reference else "prediction"
        stem = gold if reference else _PUBLISHED_SYSTEMS[ref.note].format(gold=gold, split=ref.split)
        for folder in (self.folder / ref.split, self.folder):
            if (folder / f"{stem}.csv").is_file():
                return folder / f"{stem}.csv", "note"
        return converted, "reference" if reference else "prediction"

    def _rows(self, path: Path, column: str, where: str) -> dict[str, object]:
        if path not in self._files:
            if self.folder is None or not self.folder.is_dir():
                raise self._missing_folder(where)
            if not path.is_file():
                raise InputError(f"{where}: cannot read the note's file (no such file: {path}); {ACI_BENCH_HINT}",
                                 field="premise_ref")
            self._files[path] = _read_notes(path, column, where)
        return self._files[path]

    def text(self, ref: PremiseRef, where: str = "") -> str:
        from doclens.parsing.statements import strip_citations

        if self.folder is None:
            raise self._missing_folder(where or str(ref))
        path, column = self._path(ref)
        notes = self._rows(path, column, where or str(ref))
        note = notes.get(ref.encounter)
        if ref.encounter not in notes:
            raise InputError(f"{where or ref}: encounter {ref.encounter!r} is not in {path}", field="premise_ref")
        if not isinstance(note, str):
            raise InputError(f"{where or ref}: the premise's ACI-BENCH notes: {path}: encounter {ref.encounter!r} has "
                             f"no text {column}", field="premise_ref")
        return note if ref.note == REFERENCE_NOTE else strip_citations(note)


def _read_notes(path: Path, column: str, where: str) -> dict[str, object]:
    """``{encounter id: note}`` of an ACI-BENCH CSV (ids in ``encounter_id``; an empty cell is an
    empty note, as ACI-BENCH publishes it) or a JSON Lines file (ids in ``id``); every problem an
    :class:`InputError` naming the item that led there (``where``), the notes file and its line
    (``doclens score``'s JSONL reader)."""
    if path.suffix == ".csv":
        import csv

        try:
            with path.open(encoding="utf-8", newline="") as handle:
                return {row["encounter_id"]: row.get(column) or "" for row in csv.DictReader(handle)}
        except (OSError, UnicodeDecodeError, KeyError, csv.Error) as exc:
            raise InputError(f"{where}: the premise's ACI-BENCH notes: {path}: cannot read it as ACI-BENCH's CSV "
                             f"({type(exc).__name__}: {exc}); {ACI_BENCH_HINT}", field="premise_ref") from None
    from doclens.inputs.jsonl import iter_jsonl

    notes: dict[str, object] = {}
    try:
        for number, row in iter_jsonl(str(path)):
            ident = row.get("id") if isinstance(row, dict) else None
            if not isinstance(ident, str) or not ident:
                raise InputError(f"{path} line {number}: a note needs a text 'id', got {ident!r}", line=number)
            notes.setdefault(ident, row.get(column))
    except InputError as exc:
        raise InputError(f"{where}: the premise's ACI-BENCH notes: {exc}", field="premise_ref") from None
    return notes


@dataclass(frozen=True)
class LabelledItem:
    """One labelled claim: ``label`` says whether ``premise`` supports ``claim``. ``group`` (a
    system, a site, a note type …) gets its own figures; ``fold`` is what cross-validation keeps
    in one fold (default: the group, else the item alone)."""

    id: str
    claim: str
    premise: str
    label: bool
    group: str | None = None
    side: Side | None = None
    kind: str | None = None
    fold: str | None = None

    @property
    def fold_key(self) -> str:
        return self.fold or self.group or self.id


@dataclass
class LabelledSet:
    """Items read from one source; ``undecided``: items whose label was empty or null, left out."""

    name: str
    items: list[LabelledItem]
    undecided: int = 0
    group_name: str | None = None
    description: dict = field(default_factory=dict)


def parse_label(value, where: str, column: str = "label") -> bool | None:
    """``True`` / ``False`` for a boolean-like label, ``None`` for an undecided one (an empty cell,
    JSON ``null``); :class:`InputError` naming ``where`` and the column otherwise (the text
    ``null`` or ``none`` too: only an empty cell means undecided)."""
    if isinstance(value, bool):
        return value
    if value is None:
        return None
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    text = str(value).strip().lower() if isinstance(value, str) else None
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    if text in _UNDECIDED:
        return None
    raise InputError(f"{where}: {column!r} is not a boolean-like label (true/false, 1/0, yes/no, "
                     f"supported/unsupported; an empty cell: undecided), got {value!r}", field=column)


def _text(row: dict, column: str, where: str, required: bool = True, name: bool = False) -> str | None:
    """The text in ``column``; a number too when it is a ``name`` (an id, a group)."""
    value = row.get(column)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise InputError(f"{where}: {column!r} is missing or empty", field=column)
        return None
    if name and isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise InputError(f"{where}: {column!r} must be text, got {type(value).__name__}", field=column)
    return value


def _rows(path: str) -> tuple[list[tuple[int, dict]], list[str]]:
    """``([(line, row)], columns)`` of a CSV (``.csv``/``.tsv``) or JSONL file, read by the readers
    ``doclens score`` reads its tables with (:func:`doclens.inputs.tables.csv_table`,
    :func:`doclens.inputs.jsonl.iter_jsonl`): a row with fewer or more cells than the header, a
    line that is not JSON or not UTF-8, is an error naming the file and the line."""
    suffix = Path(path).suffix.lower()
    if suffix in (".csv", ".tsv"):
        from doclens.inputs.tables import csv_table

        header, records, _ = csv_table(path, "\t" if suffix == ".tsv" else ",", what="labelled items")
        return [(line, row) for _, line, row in records()], header
    from doclens.inputs.jsonl import iter_jsonl

    rows, columns = [], {}
    for number, row in iter_jsonl(path):
        if not isinstance(row, dict):
            raise InputError(f"{path} line {number}: a line must be a JSON object, got {type(row).__name__}",
                             line=number)
        rows.append((number, row))
        columns.update(dict.fromkeys(row))
    return rows, list(columns)


def _label(row: dict, where: str, number: int) -> bool | None:
    """The row's label (:func:`parse_label`); a JSONL line without one is an error (a CSV row
    always has every cell: the reader refuses a short one)."""
    if "label" not in row:
        raise InputError(f"{where}: no 'label' (an undecided item has an empty one: \"label\": null)",
                         field="label", line=number)
    return parse_label(row["label"], where)


def read_labelled(path: str, *, group_column: str | None = None, aci_bench_dir: Path | str | None = None,
                  notes: AciBenchNotes | None = None) -> LabelledSet:
    """The items of a user's CSV or JSONL file (module docstring). Every problem is an
    :class:`InputError` naming the file, the line and the field: a missing column, an empty claim
    or premise, a label that is not boolean-like, an empty file, a repeated id."""
    rows, columns = _rows(path)
    if not rows:
        raise InputError(f"{path}: no labelled items (the file is empty)")
    needed = ["claim", "label"] + ([group_column] if group_column else [])
    missing = [c for c in needed if c not in columns]
    if "premise" not in columns and "premise_ref" not in columns:
        missing.append("premise")
    if missing:
        raise InputError(f"{path}: column(s) {', '.join(repr(c) for c in missing)} missing; the file has "
                         f"{', '.join(repr(c) for c in columns) or 'no columns'}", field=missing[0])
    reader = notes or AciBenchNotes(aci_bench_dir)
    items: list[LabelledItem] = []
    seen: dict[str, int] = {}
    undecided = 0
    for number, row in rows:
        item = _labelled_item(row, f"{path} line {number}", number, reader, group_column, seen)
        if item is None:
            undecided += 1
        else:
            items.append(item)
    return LabelledSet(Path(path).name, items, undecided, group_column)


def _labelled_item(row: dict, where: str, number: int, notes: AciBenchNotes, group_column: str | None,
                   seen: dict[str, int]) -> LabelledItem | None:
    """One row of a user's labelled file as an item (``None``: its label is left undecided),
    every field checked first (:func:`read_labelled`); ``seen``: the ids so far and their lines."""
    label = _label(row, where, number)
    claim = _text(row, "claim", where)
    premise = _text(row, "premise", where, required=False)
    if premise is None:
        if row.get("premise_ref") in (None, ""):
            raise InputError(f"{where}: 'premise' is missing or empty (and there is no 'premise_ref')",
                             field="premise", line=number)
        premise = notes.text(PremiseRef.parse(row["premise_ref"], where), where)
    ident = _text(row, "id", where, required=False, name=True) or f"line {number}"
    if ident in seen:
        raise InputError(f"{where}: id {ident!r} repeats line {seen[ident]}", field="id", line=number)
    seen[ident] = number
    side = _side(row.get("side") or None, where, number)
    group = _text(row, group_column, where, name=True) if group_column else None
    if label is None:
        return None
    return LabelledItem(ident, claim or "", premise, label, group, side,
                        _text(row, "kind", where, required=False, name=True))


def _side(value: object, where: str, number: int) -> Side | None:
    """A row's ``side`` (empty: ``None``), or :class:`InputError` for a value that is not one of :data:`SIDES`."""
    if value is None:
        return None
    for side in SIDES:
        if value == side:
            return side
    raise InputError(f"{where}: 'side' must be recall or precision, got {value!r}", field="side", line=number)


def shipped_set(name: str = "real-outputs", half: Half = "held-out", aci_bench_dir: Path | str | None = None,
                notes: AciBenchNotes | None = None) -> LabelledSet:
    """A shipped labelled set by name (:data:`SHIPPED_SETS`) and half; its premises read from
    ``aci_bench_dir`` (default :func:`default_aci_bench_dir`). ``real-outputs`` is grouped by
    system and cross-validation keeps each encounter in one fold; ``near-miss-probe`` is grouped by
    kind and has no dev half."""
    if name not in SHIPPED_SETS:
        raise InputError(f"unknown labelled set {name!r}; shipped: {', '.join(SHIPPED_SETS)}", field="set")
    if half not in HALVES:
        raise InputError(f"unknown half {half!r}; choose one of {', '.join(HALVES)}", field="half")
    notes = notes or AciBenchNotes(aci_bench_dir)
    folder = resources.files("doclens.datasets").joinpath(SHIPPED_SETS[name])
    if name == "near-miss-probe":
        return near_miss_probe(folder, half, notes)
    items, undecided = [], 0
    for file_name in _REAL_OUTPUT_FILES:
        text = folder.joinpath(file_name).read_text(encoding="utf-8")
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            row = json.loads(line)
            if (row["half"] in BY_NAME_ONLY and half != row["half"]) or (half != "all" and row["half"] != half.replace("-", "_")):
                continue  # never resolved, never returned: a held-out half stays unread while tuning on dev
            if row["label"] is None:
                undecided += 1
                continue
            note = REFERENCE_NOTE if row["side"] == "precision" else row["system"]
            ref = PremiseRef(row["split"], row["encounter"], note)
            items.append(LabelledItem(row["item"], row["claim"], notes.text(ref, f"{file_name} line {number}"),
                                      bool(row["label"]), row["system"], row["side"], None,
                                      f"{row['split']}/{row['encounter']}"))
    return LabelledSet(f"{name} ({half})", items, undecided, "system",
                       {"set": name, "half": half, "datasheet": "doclens/datasets/real_outputs/DATASHEET.md"})


def near_miss_probe(folder, half: Half, notes: AciBenchNotes) -> LabelledSet:
    """The near-miss probe (``folder/items.jsonl``: ``{"id", "system", "split", "encounter",
    "premise", "claim", "label", "kind", …}``, ``premise`` naming the note: ``reference`` or
    ``system``, the note of the item's system), grouped by kind; refused for the dev half."""
    if half in ("dev", "fresh", "fresh-2", "sealed", "calibration"):
        raise InputError(f"near-miss-probe has no {half} half: it is held out from every fit (use held-out or all)",
                         field="half")
    path = folder.joinpath("items.jsonl")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"near-miss-probe: cannot read {path} ({exc.strerror or exc})", field="set") from None
    items = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        row, where = json.loads(line), f"near_miss_probe/items.jsonl line {number}"
        if row.get("premise") not in (REFERENCE_NOTE, "system"):
            raise InputError(f"{where}: 'premise' names the note, 'reference' or 'system', got "
                             f"{row.get('premise')!r}", field="premise", line=number)
        note = REFERENCE_NOTE if row["premise"] == REFERENCE_NOTE else row["system"]
        ref = PremiseRef(row["split"], row["encounter"], note)
        label = parse_label(row.get("label"), where)
        if label is None:
            raise InputError(f"{where}: every probe item is labelled", field="label", line=number)
        items.append(LabelledItem(str(row["id"]), row["claim"], notes.text(ref, where), label, row["kind"], None,
                                  row["kind"], f"{row['split']}/{row['encounter']}"))
    return LabelledSet(f"near-miss-probe ({half})", items, 0, "kind",
                       {"set": "near-miss-probe", "half": half,
                        "datasheet": "doclens/datasets/near_miss_probe/DATASHEET.md"})
