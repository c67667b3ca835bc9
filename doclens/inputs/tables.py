"""Instances from any table: JSONL, a JSON array, CSV/TSV, Parquet, a dataset saved with
``datasets``' ``save_to_disk``, a Hub dataset id from the local cache (offline), and in Python a
``datasets.Dataset``, a pandas ``DataFrame`` or a list of dicts.

One reader per input kind, all ending in the same row → :class:`Instance` step, so every format
gives the same instances (and the same scores) for the same data:

* **columns** — ``{"prediction": "generated_note", "reference": "note"}`` maps DocLens field
  names (:data:`FIELDS`) to column names; unmapped fields are read from the column of their own
  name; every other column is ignored (never scored, never kept).
* **nested values** — JSONL and JSON hold lists and objects natively. In CSV, Parquet and
  datasets, a cell of a claims column that holds a *string* is decoded as JSON (a list of
  strings, or an object of section lists); a ``source`` cell is decoded only when it starts with
  ``["`` (a JSON list of strings), since a source string such as ``"[0] … [1] …"`` also starts
  with a bracket. Empty cells of optional fields are absent values. A struct column's missing
  sections (Arrow fills them with null) are dropped.
* **errors** — every bad row is an :class:`InputError` naming the file, the row (``line N`` for
  JSONL, ``row N`` counted from 1 for the others; a CSV header is not a row), the instance id
  and the field (and the column, when a cell does not decode).
* **unencodable text** — a lone UTF-16 surrogate (JSON may spell ``"\\ud800"``) is replaced with
  U+FFFD in the row it is met (:mod:`doclens.inputs.unicode`), with a warning naming the file, the
  row, the instance and the fields: no encoder (spaCy's, a tokenizer's, an HTTP client's) then
  meets it mid-run, and the rest of the input scores.
* **size** — readers of a known size (a file's rows, Parquet metadata, a dataset's length) have
  ``len()``, so a progress bar gets a total; rows are streamed (Parquet and Arrow in record
  batches), never loaded whole, except a JSON array, which is parsed whole.

pandas, pyarrow and ``datasets`` are optional (the ``tables`` extra) and imported only for the
formats that need them.
"""

from __future__ import annotations

import csv
import json
import re
import warnings
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from doclens.core.errors import InputError, UnicodeRepairWarning, cannot_read, require
from doclens.core.types import Instance
from doclens.inputs.unicode import replace_lone_surrogates

#: DocLens's instance fields, the names ``columns`` maps from
FIELDS = ("id", "prediction", "reference", "source", "reference_claims", "prediction_claims", "task")
REQUIRED = ("id", "prediction", "reference")
CLAIM_FIELDS = ("reference_claims", "prediction_claims")
OPTIONAL_TEXT = ("task",)
#: ``--input-format`` choices
INPUT_FORMATS = ("jsonl", "json", "csv", "tsv", "parquet", "dataset", "hub")
EXTENSIONS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv", ".tsv": "tsv",
              ".parquet": "parquet", ".pq": "parquet"}
#: formats whose cells are plain strings or Arrow values, decoded for fields that need structure
DECODED = ("csv", "tsv", "parquet", "dataset", "hub")
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
BATCH_ROWS = 1024


def _tables_extra(module: str, what: str):
    return require(module, what, "tables")


# ---- the column mapping ------------------------------------------------------------------------
def parse_columns(spec) -> dict[str, str]:
    """``"prediction=generated_note,reference=note"`` (or a dict) → ``{field: column}``. Raises
    :class:`InputError` for an unknown field name, a pair without ``=``, or a field given twice."""
    if spec is None:
        return {}
    if isinstance(spec, str):
        pairs = []
        for part in (p.strip() for p in spec.split(",")):
            if not part:
                continue
            field_name, sep, column = part.partition("=")
            if not sep or not field_name.strip() or not column.strip():
                raise InputError(f"columns: expected FIELD=COLUMN, got {part!r}")
            pairs.append((field_name.strip(), column.strip()))
    elif isinstance(spec, dict):
        pairs = list(spec.items())
    else:
        raise InputError(f"columns must be a dict {{field: column}} or 'field=column,…', got {type(spec).__name__}")
    mapping: dict[str, str] = {}
    for field_name, column in pairs:
        if field_name not in FIELDS:
            raise InputError(f"columns: unknown field {field_name!r}; DocLens fields are {', '.join(FIELDS)}",
                             field=field_name)
        if not isinstance(column, str) or not column:
            raise InputError(f"columns: field {field_name!r} must map to a column name, got {column!r}",
                             field=field_name)
        if field_name in mapping:
            raise InputError(f"columns: field {field_name!r} is mapped twice", field=field_name)
        mapping[field_name] = column
    return mapping


def _column_of(field_name: str, mapping: dict[str, str]) -> str:
    return mapping.get(field_name, field_name)


def check_columns(available: Iterable[str], mapping: dict[str, str], name: str, required: tuple = REQUIRED,
                  hint: str = "--columns") -> None:
    """Refuse, before any row is read, a mapped column the table lacks and a required field with
    no column, listing the table's columns."""
    available = list(available)
    shown = ", ".join(repr(c) for c in available) or "none"
    absent = [f"{column!r} (for field {field_name!r})" for field_name, column in mapping.items()
              if column not in available]
    if absent:
        raise InputError(f"{name}: no column {', '.join(absent)}; the table's columns are {shown}",
                         field=next(f for f, c in mapping.items() if c not in available))
    for field_name in required:
        column = _column_of(field_name, mapping)
        if column not in available:
            raise InputError(f"{name}: no column for field {field_name!r} (looked for {column!r}); the table's "
                             f"columns are {shown}; map one with {hint} {field_name}=COLUMN", field=field_name)


# ---- one row → one instance --------------------------------------------------------------------
def _plain(value):
    """numpy scalars and arrays (pandas cells) and tuples as plain Python values."""
    if hasattr(value, "tolist") and type(value).__module__.startswith("numpy"):
        return _plain(value.tolist())
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and value != value)  # None, or pandas' NaN


def _decode_cell(value, field_name: str, column: str, where: str):
    """A string cell of a field that needs structure, decoded as JSON where it must be."""
    text = value.strip()
    if not text:
        return None
    if field_name == "source" and not text.startswith('["') and text != "[]":
        return value  # a source string such as "[0] … [1] …"
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError, ValueError) as exc:
        why = f"{exc.msg} at column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else str(exc) or "too deep"
        shape = ("a JSON list of strings" if field_name == "source" else
                 "a JSON list of strings, or an object mapping section names to lists of strings")
        raise InputError(f"{where}: column {column!r} (field {field_name!r}) is not valid JSON ({why}); the cell "
                         f"must hold {shape}", field=field_name) from None


def _structured(value, field_name: str):
    """Claims from Arrow: a map column's ``[(key, value), …]`` as a dict; a struct column's
    sections that Arrow filled with null left out."""
    if field_name in CLAIM_FIELDS:
        if isinstance(value, list) and value and all(isinstance(v, (list, tuple)) and len(v) == 2
                                                     and isinstance(v[0], str) and not isinstance(v[1], str)
                                                     for v in value):
            value = dict(value)
        if isinstance(value, dict):
            value = {k: v for k, v in value.items() if v is not None}
    return value


def row_to_instance(row, mapping: dict[str, str], where: str, *, decode: bool, require_id: bool = True,
                    position: int | None = None) -> Instance:
    """One table row as an :class:`Instance`. ``where`` (``"data.csv row 3"``) prefixes every
    error, which then names the instance id and the field (and the column of a cell that does not
    decode). ``decode``: the row comes from CSV or Arrow (see the module docstring)."""
    if isinstance(row, Instance):
        return row
    if not isinstance(row, dict):
        raise InputError(f"{where}: expected a JSON object (a row of named fields), got {type(row).__name__}")
    row, repaired = _repair_row(row)
    ident = row.get(_column_of("id", mapping))
    label = (f"instance {ident!r}" if isinstance(ident, (str, int)) and not isinstance(ident, bool) and ident != ""
             else None)
    located = f"{where}: {label}" if label else where
    if repaired:
        warnings.warn(f"{located}: {sum(repaired.values())} lone surrogate(s) (text no encoding can write) in "
                      f"{', '.join(repr(name) for name in repaired)} replaced with U+FFFD", UnicodeRepairWarning,
                      stacklevel=2)
    data = _instance_fields(row, mapping, decode, located)
    try:
        return Instance.from_dict(data, None if require_id else position, require_id=require_id)
    except InputError as exc:
        raise InputError(f"{where}: {exc}", field=exc.field) from None


def _instance_fields(row: dict, mapping: dict[str, str], decode: bool, located: str) -> dict[str, Any]:
    """``{field: value}`` of a row's cells (:func:`row_to_instance`): empty cells of optional
    fields left out, structured cells decoded when ``decode``; a mapped column that is missing is
    an :class:`InputError` prefixed with ``located``."""
    data: dict[str, Any] = {}
    for field_name in FIELDS:
        column = _column_of(field_name, mapping)
        if column not in row:
            if field_name in mapping:
                raise InputError(f"{located}: no column {column!r} (mapped to field {field_name!r})",
                                 field=field_name)
            continue
        value = _plain(row[column])
        if (value is None or (decode and _missing(value))) and field_name not in ("prediction", "reference"):
            continue  # an empty cell of an optional field (JSON's explicit NaN is refused below)
        if decode and field_name in ("source", *CLAIM_FIELDS):
            if isinstance(value, str):
                value = _decode_cell(value, field_name, column, located)
            value = _structured(value, field_name)
            if value is None:
                continue
        if decode and field_name in OPTIONAL_TEXT and value == "":
            continue
        data[field_name] = value
    return data


def _repair_row(row: dict) -> tuple[dict, dict[str, int]]:
    """``row`` with lone surrogates replaced in its keys and values, and the count per column."""
    repaired: dict[str, int] = {}
    fixed = {}
    for key, value in row.items():
        new_key, in_key = replace_lone_surrogates(key)
        new_value, in_value = replace_lone_surrogates(value)
        if in_key or in_value:
            repaired[str(new_key)] = in_key + in_value
        fixed[new_key] = new_value
    return (fixed if repaired else row), repaired


class Rows:
    """Instances read lazily from ``(location, row)`` pairs, refusing an id seen twice.

    ``total`` is the number of rows when it is known without reading them (``None`` otherwise);
    :func:`sized` gives such a reader a ``len()``. ``seen`` maps each id read to its location
    (``"line 3"``, ``"row 3"``) so that a later error about an instance can name where it is."""

    def __init__(self, name: str, rows: Callable[[], Iterator[tuple[str, Any]]], mapping: dict[str, str], *,
                 decode: bool, total: int | None = None, require_id: bool = True):
        self.name = name
        self._rows = rows
        self.mapping = mapping
        self.decode = decode
        self.total = total
        self.require_id = require_id
        self.seen: dict[str, str] = {}
        self.system: str | None = None  # the system a submission names (inputs/references.py)

    def __iter__(self) -> Iterator[Instance]:
        for position, (location, row) in enumerate(self._rows()):
            instance = row_to_instance(row, self.mapping, f"{self.name} {location}", decode=self.decode,
                                       require_id=self.require_id, position=position)
            if instance.id in self.seen:
                raise InputError(f"{self.name} {location}: instance {instance.id!r}: field 'id' repeats the id of "
                                 f"{self.seen[instance.id]}", field="id")
            self.seen[instance.id] = location
            yield instance


    def check_ids(self) -> int:
        """Read every row's id once, before any row is scored (``doclens score`` spends nothing on
        an input whose ids would stop it mid-run): a missing, empty, mistyped or repeated id is an
        :class:`InputError` naming the row (and, for a repeat, the row it repeats). Returns the
        number of rows. The rows' other fields are checked as they are scored; stdin (which can
        be read only once) is not read ahead."""
        from doclens.core.types import instance_id

        if self.name == "<stdin>" or not self.require_id:
            return 0
        column = _column_of("id", self.mapping)
        seen: dict[str, str] = {}
        count = 0
        for location, row in self._rows():
            where = f"{self.name} {location}"
            if not isinstance(row, dict):
                raise InputError(f"{where}: expected a JSON object (a row of named fields), got {type(row).__name__}")
            value = row.get(column)
            ident = instance_id(replace_lone_surrogates(_plain(value))[0] if value is not None else None, where)
            if ident in seen:
                raise InputError(f"{where}: instance {ident!r}: field 'id' repeats the id of {seen[ident]} (ids are "
                                 "checked before anything is scored: nothing was)", field="id")
            seen[ident] = location
            count += 1
        return count


class SizedRows(Rows):
    """:class:`Rows` whose number is known (:func:`sized` makes one only then)."""

    def __len__(self) -> int:
        if self.total is None:
            raise TypeError("rows whose number is not known have no len()")
        return self.total


def sized(rows: Rows) -> Rows:
    """``rows`` with ``len()`` when its total is known (a progress bar reads it)."""
    if rows.total is not None and not isinstance(rows, SizedRows):
        rows.__class__ = SizedRows
    return rows


# ---- formats ------------------------------------------------------------------------------------
def detect_format(path: str) -> str:
    """The input format of ``path``: ``-`` is JSONL (stdin); a file by its extension (JSONL when
    unknown, as before tables were read); a folder holding ``dataset_dict.json`` or
    ``state.json`` is a saved dataset; a path that does not exist and looks like ``owner/name`` is a
    Hub dataset id."""
    if path == "-":
        return "jsonl"
    target = Path(path)
    if target.is_dir():
        if (target / "dataset_dict.json").is_file() or (target / "state.json").is_file():
            return "dataset"
        raise InputError(f"{path}: a folder, but not one written by datasets' save_to_disk (no dataset_dict.json "
                         "or state.json in it)")
    if target.exists():
        return EXTENSIONS.get(target.suffix.lower(), "jsonl")
    if HUB_ID.match(path):
        return "hub"
    raise InputError(f"{path}: cannot read (No such file or directory; not an owner/name Hub dataset id either)")


def _jsonl_rows(path: str) -> Callable[[], Iterator[tuple[str, Any]]]:
    from doclens.inputs.jsonl import iter_jsonl

    return lambda: ((f"line {number}", data) for number, data in iter_jsonl(path))


def _count_lines(path: str) -> int | None:
    """Non-blank lines of a file (a JSONL file's rows); ``None`` for stdin."""
    if path == "-":
        return None
    count = 0
    try:
        with open(path, "rb") as handle:
            for raw in handle:
                count += bool(raw.strip())
    except OSError as exc:
        raise cannot_read(path, exc) from None
    return count


def _json_rows(path: str) -> tuple[list | None, str | None]:
    """The rows of a JSON file: a top-level array of objects, or an object holding one array
    (``{"data": [...]}``). ``(None, None)`` when the file is JSON Lines after all."""
    try:
        with open(path, encoding="utf-8-sig") as handle:
            text = handle.read()
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 ({exc.reason}): save the file as UTF-8") from None
    except OSError as exc:
        raise cannot_read(path, exc) from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data" and text.lstrip().startswith("{"):
            return None, None  # one object per line: JSON Lines in a .json file
        raise InputError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except RecursionError:
        raise InputError(f"{path}: JSON nested too deeply to read") from None
    if isinstance(document, list):
        return document, None
    if isinstance(document, dict):
        if document.get("format") == "doclens-submission/1":
            raise InputError(f"{path}: a DocLens submission (ids and predictions only): score it with "
                             "--references REFS, the file of references to join it with")
        arrays = [key for key, value in document.items() if isinstance(value, list)]
        if len(arrays) == 1:
            return document[arrays[0]], arrays[0]
    raise InputError(f"{path}: expected a JSON array of objects, or an object holding one array "
                     "(such as {\"data\": [...]})")


def csv_table(path: str, delimiter: str = ",", what: str = "instances to score") -> tuple[
        list[str], Callable[[], Iterator[tuple[int, int, dict]]], int]:
    """The one CSV/TSV reader of every table a user gives (``score``'s inputs and references,
    ``judge-check`` / ``judge-fit``'s labelled items): ``(header, records, rows)``, where
    ``records()`` yields ``(row number, line, {column: cell})`` for each non-blank row (rows
    counted from 1 after the header; ``line``: the file's line where the row starts) and ``rows``
    is their count. Every problem is an :class:`InputError` naming the file and the line: a byte
    that is not UTF-8, a CSV that does not parse, an empty file (``what`` says what it lacks), a
    column named twice, and a row with fewer or more cells than the header names columns (a cell
    that holds a line break must be quoted: unquoted, it cuts its row in two)."""
    from doclens.inputs.jsonl import check_utf8

    csv.field_size_limit(2 ** 31 - 1)  # a dialogue or a JSON claims list is longer than the 128 KiB default
    check_utf8(path)  # names the line of a byte that is not UTF-8

    def records():
        try:
            handle = open(path, encoding="utf-8-sig", newline="")
        except OSError as exc:
            raise cannot_read(path, exc) from None
        with handle:
            reader = csv.reader(handle, delimiter=delimiter)
            line = 1
            try:
                for record in reader:
                    yield line, record
                    line = reader.line_num + 1
            except csv.Error as exc:
                raise InputError(f"{path} line {reader.line_num}: not valid CSV ({exc})", line=reader.line_num) from None

    header: list[str] | None = None
    total = 0
    for _, record in records():
        if header is None:
            header = record
        elif record:
            total += 1
    if header is None:
        raise InputError(f"{path}: no {what} (an empty file: a CSV file needs a header line naming its "
                         f"columns, then one row {'per instance' if what == 'instances to score' else 'each'})")
    duplicated = sorted({c for c in header if header.count(c) > 1})
    if duplicated:
        raise InputError(f"{path}: the header names column(s) {', '.join(map(repr, duplicated))} more than once")
    columns = header

    def rows():
        records_iter = records()
        next(records_iter, None)  # the header
        number = 0
        for line, record in records_iter:
            if not record:  # a blank line
                continue
            number += 1
            if len(record) != len(columns):
                raise InputError(f"{path} row {number}: {len(record)} cell(s), but the header names "
                                 f"{len(columns)} column(s) (line {line} of the file; a cell that holds a line break "
                                 "must be quoted)", line=line)
            yield number, line, dict(zip(columns, record))

    return header, rows, total


def _csv_rows(path: str, delimiter: str) -> tuple[list[str], Callable[[], Iterator[tuple[str, Any]]], int]:
    header, records, total = csv_table(path, delimiter)
    return header, lambda: ((f"row {number}", row) for number, _, row in records()), total


def _arrow_batches(batches: Callable[[], Iterator]) -> Callable[[], Iterator[tuple[str, Any]]]:
    def rows():
        number = 0
        for batch in batches():
            for row in batch.to_pylist():
                number += 1
                yield f"row {number}", row
    return rows


def _parquet(path: str, mapping: dict[str, str], name: str, required: tuple, hint: str = "--columns"):
    pq = _tables_extra("pyarrow.parquet", "reading Parquet")
    try:
        table = pq.ParquetFile(path)
        columns = table.schema_arrow.names
    except OSError as exc:
        raise cannot_read(path, exc) from None
    except Exception as exc:  # pyarrow.ArrowInvalid: not a Parquet file
        raise InputError(f"{path}: not a Parquet file ({exc})") from None
    check_columns(columns, mapping, name, required, hint)
    wanted = [c for c in dict.fromkeys(_column_of(f, mapping) for f in FIELDS) if c in columns]
    return _arrow_batches(lambda: table.iter_batches(batch_size=BATCH_ROWS, columns=wanted)), table.metadata.num_rows


def pick_split(data, split: str | None, name: str):
    """The one ``datasets.Dataset`` of ``data`` that ``split`` names: a ``DatasetDict`` needs a
    split when it has several, and an unknown split is refused listing the available ones."""
    splits = list(data.keys()) if isinstance(data, dict) else None  # a DatasetDict is a dict of splits
    if splits is None:  # one Dataset
        own = getattr(data, "split", None)
        if split is not None and str(own) != split:
            raise InputError(f"{name}: a single table{f' (split {own})' if own else ''}, not a dataset with "
                             f"splits; --split {split!r} does not apply")
        return data
    if split is None:
        if len(splits) == 1:
            return data[splits[0]]
        raise InputError(f"{name}: the dataset has splits {', '.join(splits)}; choose one with --split")
    if split not in splits:
        raise InputError(f"{name}: no split {split!r}; the dataset has splits {', '.join(splits) or 'none'}")
    return data[split]


def _dataset_rows(dataset, mapping: dict[str, str], name: str, required: tuple, hint: str = "--columns"):
    check_columns(dataset.column_names, mapping, name, required, hint)
    wanted = [c for c in dict.fromkeys(_column_of(f, mapping) for f in FIELDS) if c in dataset.column_names]
    narrow = dataset.select_columns(wanted).with_format("arrow")
    return _arrow_batches(lambda: narrow.iter(batch_size=BATCH_ROWS)), len(dataset)


def _load_from_disk(path: str):
    datasets = _tables_extra("datasets", "reading a dataset saved with save_to_disk")
    try:
        return datasets.load_from_disk(path)
    except (FileNotFoundError, ValueError, OSError) as exc:
        raise InputError(f"{path}: cannot read the saved dataset ({exc})") from None


def load_hub_offline(repo_id: str):
    """A Hub dataset from the local cache, never the network: ``datasets.load_dataset`` in offline
    mode (which reads the Arrow cache a previous online load prepared,
    ``$HF_DATASETS_CACHE/<owner>___<name>/<config>/<version>/<hash>/``), else the repository's
    files in the Hub download cache (``$HF_HUB_CACHE/datasets--<owner>--<name>/snapshots/…``)."""
    datasets = _tables_extra("datasets", "reading a Hub dataset")
    import datasets.config as datasets_config

    previous = datasets_config.HF_HUB_OFFLINE
    datasets_config.HF_HUB_OFFLINE = True
    try:
        try:
            return datasets.load_dataset(repo_id)
        except Exception as cached_error:  # not in the Arrow cache: try the downloaded files
            folder = _hub_snapshot(repo_id)
            if folder is None:
                raise InputError(
                    f"{repo_id}: Hub dataset not found in the local cache (DocLens never downloads: load it once "
                    f"with datasets.load_dataset({repo_id!r}) while online, or pass a file; {cached_error})") from None
            return datasets.load_dataset(folder)
    finally:
        datasets_config.HF_HUB_OFFLINE = previous


def _hub_snapshot(repo_id: str) -> str | None:
    try:
        from huggingface_hub import snapshot_download

        return snapshot_download(repo_id, repo_type="dataset", local_files_only=True)
    except Exception:  # not downloaded (LocalEntryNotFoundError) or no huggingface_hub
        return None


def read_table(path: str, *, input_format: str | None = None, split: str | None = None,
               columns=None, required: tuple = REQUIRED, hint: str = "--columns") -> Rows:
    """Instances from ``path`` in any :data:`INPUT_FORMATS` (detected by :func:`detect_format`
    unless ``input_format`` is given), lazily. ``columns`` maps fields to columns
    (:func:`parse_columns`); ``split`` picks a split of a saved ``DatasetDict`` or Hub dataset.
    Every row needs an id; ``required`` are the fields whose columns must exist (a references
    table has no predictions); ``hint`` is the option an error about a missing column points to.
    Problems found before reading rows (a missing column, a wrong split)
    raise here; a bad row raises while iterating, naming the row, instance and field."""
    mapping = parse_columns(columns)
    fmt = input_format or detect_format(path)
    if fmt not in INPUT_FORMATS:
        raise InputError(f"unknown input format {fmt!r}; choose one of {', '.join(INPUT_FORMATS)}")
    name = "<stdin>" if path == "-" else path
    if path == "-" and fmt not in ("jsonl", "json"):
        raise InputError(f"stdin is read as JSON Lines; a {fmt} input must be a file")
    if split is not None and fmt not in ("dataset", "hub"):
        raise InputError(f"{name}: --split applies to a saved dataset or a Hub dataset, not a {fmt} file")
    if fmt == "json":
        if path == "-":
            raise InputError("a JSON array cannot be read from stdin; pipe JSON Lines instead")
        document, _ = _json_rows(path)
        if document is None:
            fmt = "jsonl"
        else:
            return sized(Rows(name, lambda: ((f"row {i}", row) for i, row in enumerate(document, start=1)),
                              mapping, decode=False, total=len(document)))
    if fmt == "jsonl":
        from doclens.inputs.jsonl import check_utf8

        check_utf8(path)
        return sized(Rows(name, _jsonl_rows(path), mapping, decode=False, total=_count_lines(path)))
    if fmt in ("csv", "tsv"):
        header, rows, total = _csv_rows(path, "\t" if fmt == "tsv" else ",")
        check_columns(header, mapping, name, required, hint)
        return sized(Rows(name, rows, mapping, decode=True, total=total))
    if fmt == "parquet":
        rows, total = _parquet(path, mapping, name, required, hint)
        return sized(Rows(name, rows, mapping, decode=True, total=total))
    data = _load_from_disk(path) if fmt == "dataset" else load_hub_offline(path)
    rows, total = _dataset_rows(pick_split(data, split, name), mapping, name, required, hint)
    return sized(Rows(name, rows, mapping, decode=True, total=total))


# ---- Python objects -----------------------------------------------------------------------------
def _is_dataframe(data) -> bool:
    return type(data).__name__ == "DataFrame" and type(data).__module__.startswith("pandas")


def _is_dataset(data) -> bool:
    return type(data).__module__.startswith("datasets") and hasattr(data, "column_names")


def as_instances(data, columns=None):
    """What :meth:`doclens.DocLens.score` iterates: a ``datasets.Dataset`` (or a ``DatasetDict``
    with one split), a pandas ``DataFrame`` or a list of dicts, with ``columns`` mapping field
    names to column names; a list or iterable of dicts or :class:`Instance` without ``columns``
    comes back unchanged. Rows without an id column get their position as id, as dicts do."""
    mapping = parse_columns(columns)
    if _is_dataset(data):
        dataset = pick_split(data, None, "dataset")
        rows, total = _dataset_rows(dataset, mapping, "dataset", REQUIRED[1:], hint="columns=")
        return sized(Rows("dataset", rows, mapping, decode=True, total=total, require_id=False))
    if _is_dataframe(data):
        check_columns([str(c) for c in data.columns], mapping, "DataFrame", REQUIRED[1:], hint="columns=")
        frame = data

        def frame_rows():
            for start in range(0, len(frame), BATCH_ROWS):
                for offset, row in enumerate(frame.iloc[start:start + BATCH_ROWS].to_dict("records")):
                    yield f"row {start + offset + 1}", row
        return sized(Rows("DataFrame", frame_rows, mapping, decode=True, total=len(frame), require_id=False))
    if not mapping:
        return data
    total = len(data) if hasattr(data, "__len__") else None
    return sized(Rows("input", lambda: ((f"row {i}", row) for i, row in enumerate(data, start=1)), mapping,
                      decode=False, total=total, require_id=False))
