"""The files a streamed run writes (``docs/design.md``, pipeline section): the journal it appends
to as each chunk finishes, and the per-instance results files it leaves beside its summary.

Layout, for ``--output scores.json``:

=========================  =====================================================================
``--output-format json``   ``scores.json``: one file, the summary fields then the ``instances``
                           array (one compact line per instance); the layout every DocLens
                           version reads
``--output-format jsonl``  ``scores.json``: the summary (no ``instances`` array; ``instances_file``
                           names the results file, ``instance_counts`` holds what the bootstrap
                           needs) and ``scores.instances.jsonl``, one result per line
``--output-format parquet``  the summary and ``scores.instances.parquet`` (needs ``pyarrow``:
                           ``pip install 'doclens[parquet]'``)
while running              ``scores.journal.jsonl``: a header line, each finished chunk's results,
                           then a commit line for the chunk; removed once the output is written,
                           kept when the run stops early, for ``--resume``
=========================  =====================================================================

A result line is :meth:`doclens.core.types.InstanceResult.to_dict` as compact JSON (UTF-8; a lone
surrogate is written as a ``\\u`` escape). The journal's commit line is ``{"commit": {...}}``
with the chunk's instance count and its run metadata (tasks met, extractor used, capped
statements); its header line ``{"journal": "doclens-journal/1", "settings": ..., "output":
...}`` holds the run's settings signature, which ``--resume`` checks.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path

from doclens.core.errors import InputError, MissingExtraError, cannot_read
from doclens.core.signature import Signature
from doclens.core.types import OPTIONAL_VERDICT_FIELDS, InstanceResult
from doclens.families import DOCLENS_METRICS, family_metrics, own_item_families

OUTPUT_FORMATS = ("json", "jsonl", "parquet")
JOURNAL_FORMAT = "doclens-journal/1"
PARQUET_EXTRA = "parquet"


def _base(output: str) -> Path:
    path = Path(output)
    return path.with_name(path.stem) if path.suffix == ".json" else path


def instances_path(summary: str, fmt: str) -> str:
    """``scores.json`` → ``scores.instances.jsonl`` (or ``.parquet``): the results file of a
    summary in ``fmt`` (``jsonl`` or ``parquet``)."""
    base = _base(summary)
    return str(base.with_name(base.name + f".instances.{fmt}"))


def journal_path(output: str) -> str:
    """``scores.json`` → ``scores.journal.jsonl``: the journal of a run writing ``output``."""
    base = _base(output)
    return str(base.with_name(base.name + ".journal.jsonl"))


def _dumps(data) -> str:
    text = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate read from an input file: escape it
        text = json.dumps(data, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    return text


def result_line(data: dict) -> str:
    """One result (or journal record) as a line of compact JSON, newline included."""
    return _dumps(data) + "\n"


#: items above which a result is written piece by piece (one verdict at a time) instead of as
#: one dict and one string: a 10 MB prediction has hundreds of thousands of statements
_PIECEWISE_ITEMS = 2000


def _fields(item) -> dict:
    """A verdict's fields as its ``to_dict`` gives them (``reason`` and ``placement`` only when
    set; its lists are not copied: the dict is only encoded)."""
    return {f.name: getattr(item, f.name) for f in fields(item)
            if not (f.name in OPTIONAL_VERDICT_FIELDS and getattr(item, f.name) is None)}


def _to_dict(item) -> dict:
    return item.to_dict()


def write_result(handle, result) -> None:
    """Write one :class:`doclens.core.types.InstanceResult` as a line, exactly
    ``result_line(result.to_dict())``, without building that dict and string for a large result."""
    # the verdict lists (encoded field by field), then each family's own items (by their to_dict)
    parts = [(name, getattr(result, name), _fields) for name in InstanceResult.VERDICT_LISTS]
    parts += [(name, items, _to_dict) for name, items in result.family_items.items()]
    head = {"id": result.id, "task": result.task, "has_source": result.has_source, "scores": dict(result.scores)}
    if sum(len(items) for _, items, _ in parts) <= _PIECEWISE_ITEMS:
        handle.write(result_line({**head, **{name: [encode(i) for i in items] for name, items, encode in parts}}))
        return
    handle.write(_dumps(head)[:-1])
    for name, items, encode in parts:
        handle.write(f',"{name}":[')
        for i, item in enumerate(items):
            handle.write(("," if i else "") + _dumps(encode(item)))
        handle.write("]")
    handle.write("}\n")


class Journal:
    """The append-only JSONL a streamed run writes as each chunk finishes (see the module
    docstring). :meth:`write_chunk` writes the chunk's results and then its commit line, and
    flushes: a run killed at any point leaves at most one uncommitted chunk, which
    :func:`read_journal` drops."""

    def __init__(self, path: str, handle):
        self.path, self.handle = path, handle

    @classmethod
    def create(cls, path: str, settings: str, output: str) -> Journal:
        handle = open(path, "w", encoding="utf-8")
        handle.write(result_line({"journal": JOURNAL_FORMAT, "settings": settings, "output": os.path.basename(output)}))
        handle.flush()
        return cls(path, handle)

    @classmethod
    def append(cls, path: str, committed_bytes: int) -> Journal:
        """Reopen a journal for appending after its last commit (what follows it is cut off)."""
        handle = open(path, "r+b")
        handle.truncate(committed_bytes)
        handle.close()
        return cls(path, open(path, "a", encoding="utf-8"))

    def write_chunk(self, results: list, meta: dict) -> None:
        """Append one chunk: its results (:class:`InstanceResult`), then the commit line."""
        for result in results:
            write_result(self.handle, result)
        self.handle.write(result_line({"commit": {"instances": len(results), **meta}}))
        self.handle.flush()

    def close(self) -> None:
        if not self.handle.closed:
            self.handle.close()


class JournalState:
    """What :func:`read_journal` found: the header, and where the committed part ends."""

    def __init__(self, header: dict):
        self.header = header
        self.committed_bytes = 0
        self.instances = 0
        self.dropped_lines = 0  # an uncommitted chunk's lines, a truncated last line


def read_journal(path: str, state: JournalState | None = None) -> Iterator[tuple[list[str], dict]]:
    """``(result lines, commit metadata)`` for each committed chunk of a journal, in order; the
    lines are the raw JSON text of each result. Lines after the last commit (a chunk cut off by a
    kill) and a truncated last line are dropped and counted in ``state.dropped_lines``; anything
    else that is not a journal line raises :class:`InputError` naming the file and line."""
    try:
        handle = open(path, "rb")
    except OSError as exc:
        raise cannot_read(path, exc, "the journal") from None
    with handle:
        first = handle.readline()
        try:
            header = json.loads(first)
        except ValueError:
            header = None
        if not first.endswith(b"\n") or not isinstance(header, dict) or header.get("journal") != JOURNAL_FORMAT:
            raise InputError(f"{path} line 1: not a DocLens journal (expected a {JOURNAL_FORMAT!r} header line)",
                             line=1)
        if isinstance(header.get("settings"), str):  # the settings signature, read as data once, here
            header["settings"] = Signature.read(header["settings"])
        if state is not None:
            state.header = header
            state.committed_bytes = len(first)
        offset = len(first)
        pending: list[str] = []
        number = 1
        for raw in handle:
            number += 1
            offset += len(raw)
            if not raw.endswith(b"\n"):  # the last line, cut off mid-write
                pending.append("")
                break
            text = raw.decode("utf-8")
            if text.startswith('{"commit":'):
                try:
                    commit = json.loads(text)["commit"]
                except (ValueError, KeyError, TypeError):
                    raise InputError(f"{path} line {number}: unreadable commit line", line=number) from None
                if commit.get("instances") != len(pending):
                    raise InputError(f"{path} line {number}: the commit line counts {commit.get('instances')} "
                                     f"result(s) but {len(pending)} precede it", line=number)
                if state is not None:
                    state.committed_bytes = offset
                    state.instances += len(pending)
                yield pending, commit
                pending = []
            else:
                pending.append(text)
        if state is not None:
            state.dropped_lines = len(pending)


def counts_from_document(document: dict) -> tuple[list[str], list[dict]]:
    """``(ids, per-instance counts)`` of a summary file's ``instance_counts`` (see
    :meth:`doclens.scoring.aggregate.Aggregator.counts_document`). Raises :class:`ValueError` when it is malformed."""
    ids = document.get("ids")
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise ValueError("'instance_counts.ids' must be a list of strings")
    columns = []
    # the DocLens metrics' columns are always there; an opt-in family's only when the run had it on
    metrics = [m for m in family_metrics() if m in DOCLENS_METRICS or m in document]
    for metric in metrics:
        column = document.get(metric)
        if not isinstance(column, dict) or not all(
                isinstance(column.get(k), list) and len(column[k]) == len(ids) for k in ("hits", "items")):
            raise ValueError(f"'instance_counts.{metric}' must hold 'hits' and 'items' lists, one entry per id")
        columns.append((column["hits"], column["items"]))
    return list(ids), [_counts_row(i, metrics, columns) for i in range(len(ids))]


def _counts_row(i: int, metrics: list[str], columns: list[tuple[list, list]]) -> dict[str, tuple[int, int]]:
    """Instance ``i``'s ``{metric: (hits, items)}`` from the summary's columns (a metric with
    neither left out); :class:`ValueError` for an entry that is not ``0 <= hits <= items``."""
    row = {}
    for metric, (hits, items) in zip(metrics, columns):
        h, n = hits[i], items[i]
        if n is None and h is None:
            continue
        if not (isinstance(h, int) and isinstance(n, int) and 0 <= h <= n) or isinstance(h, bool) \
                or isinstance(n, bool):
            raise ValueError(f"'instance_counts.{metric}' entry {i}: expected 0 <= hits <= items (integers)")
        row[metric] = (h, n)
    return row


# ---- Parquet ------------------------------------------------------------------------------------
def require_pyarrow():
    """``(pyarrow, pyarrow.parquet)``, or :class:`MissingExtraError` naming the extra to install."""
    try:
        import pyarrow
        import pyarrow.parquet as parquet
    except ImportError:
        raise MissingExtraError("Parquet results", PARQUET_EXTRA, "pyarrow") from None
    return pyarrow, parquet


def _parquet_schema(pa):
    ids = pa.list_(pa.int64())
    claim = pa.struct([("text", pa.string()), ("entailed", pa.bool_()), ("explanation", pa.string()),
                       ("status", pa.string()), ("section", pa.string()), ("raw", pa.string()),
                       ("reason", pa.string()), ("placement", pa.string()), ("probability", pa.float64()),
                       ("evidence", pa.list_(pa.string())),
                       ("findings", pa.list_(pa.struct([("kind", pa.string()), ("contradiction", pa.bool_())]))),
                       ("review", pa.bool_())])
    statement = pa.struct([("index", pa.int64()), ("text", pa.string()), ("cited", ids), ("valid", ids),
                           ("invalid", ids), ("precise", ids), ("entailed", pa.bool_()), ("section", pa.string()),
                           ("inherited", pa.bool_()), ("status", pa.string()), ("explanation", pa.string()),
                           ("provenance", ids), ("raw", pa.string()), ("reason", pa.string())])
    return pa.schema([("id", pa.string()), ("task", pa.string()), ("has_source", pa.bool_()),
                      ("scores", pa.map_(pa.string(), pa.float64())), ("reference_claims", pa.list_(claim)),
                      ("prediction_claims", pa.list_(claim)), ("statements", pa.list_(statement)),
                      # each registered family's own items (source support's verdicts and their
                      # free-form retrieval records), as the JSON of InstanceResult.to_dict's
                      # "<family>"; null when not asked for
                      *((_json_column(family.name), pa.string()) for family in own_item_families())])


def _json_column(name: str) -> str:
    """The Parquet column holding a family's own items as JSON (``source_support_json``)."""
    return f"{name}_json"


def _check_schema_covers(pa, schema) -> None:
    """Refuse to write Parquet that would silently drop a field the result types gained."""
    from dataclasses import fields

    from doclens.core.types import CitationVerdict, ClaimVerdict

    for name, cls in (("reference_claims", ClaimVerdict), ("statements", CitationVerdict)):
        struct = schema.field(name).type.value_type
        have = {struct.field(i).name for i in range(struct.num_fields)}
        missing = {f.name for f in fields(cls)} - have
        if missing:
            raise RuntimeError(f"the Parquet schema lacks {cls.__name__} field(s) {sorted(missing)}: "
                               "update doclens.reports.results_files._parquet_schema")


class ParquetResults:
    """Write results to a Parquet file, one row group per batch of lines."""

    def __init__(self, path: str):
        pa, parquet = require_pyarrow()
        self.pa = pa
        self.schema = _parquet_schema(pa)
        _check_schema_covers(pa, self.schema)
        self.writer = parquet.ParquetWriter(path, self.schema)

    def write_lines(self, lines: list[str]) -> None:
        if lines:
            rows = [json.loads(line) for line in lines]
            for row in rows:
                row["scores"] = list(row.get("scores", {}).items())
                for family in own_item_families():
                    items = row.pop(family.name, None)
                    row[_json_column(family.name)] = None if items is None else json.dumps(items, ensure_ascii=False)
            self.writer.write_table(self.pa.Table.from_pylist(rows, schema=self.schema))

    def close(self) -> None:
        self.writer.close()


def iter_parquet_results(path: str, batch_size: int = 256) -> Iterator[dict]:
    """Each row of a results Parquet file as the dict :meth:`InstanceResult.to_dict` gives, in
    file order, a batch at a time."""
    _, parquet = require_pyarrow()
    try:
        handle = parquet.ParquetFile(path)
    except OSError as exc:
        raise cannot_read(path, exc, "the results file") from None
    except Exception as exc:  # pyarrow.lib.ArrowInvalid: not Parquet, or cut off
        raise InputError(f"{path}: not a readable Parquet file ({exc})") from None
    batches = handle.iter_batches(batch_size=batch_size)
    while True:
        try:
            batch = next(batches, None)
        except Exception as exc:  # pyarrow's errors: a damaged row group, a schema that is not ours
            raise InputError(f"{path}: cannot read the Parquet results ({type(exc).__name__}: {exc})") from None
        if batch is None:
            return
        for row in batch.to_pylist():
            if not isinstance(row.get("scores"), (list, type(None))):
                raise InputError(f"{path}: not DocLens Parquet results (column 'scores' is not a map)",
                                 field="scores")
            row["scores"] = dict(row.get("scores") or [])
            for family in own_item_families():
                column = _json_column(family.name)
                items = row.pop(column, None)
                if items is not None:
                    try:
                        row[family.name] = json.loads(items)
                    except ValueError:
                        raise InputError(f"{path}: column {column!r} of instance {row.get('id')!r} is not JSON",
                                         field=column) from None
            yield row


def sidecar_name(header: dict, summary_path: str) -> str | None:
    """The results file a summary names (``instances_file``), resolved beside the summary, or
    ``None`` when the summary carries its instances inline. Raises :class:`InputError` for a name
    that is not a plain file name in the summary's folder, or an unknown ``instances_format``."""
    name = header.get("instances_file")
    if name is None:
        return None
    if not isinstance(name, str) or not name or name in (".", "..") or "/" in name or "\\" in name:
        raise InputError(f"{summary_path}: field 'instances_file' must name a file beside the summary "
                         f"(a plain file name), got {name!r}", field="instances_file")
    if header.get("instances_format") not in ("jsonl", "parquet"):
        raise InputError(f"{summary_path}: field 'instances_format' must be 'jsonl' or 'parquet', got "
                         f"{header.get('instances_format')!r}", field="instances_format")
    return str(Path(summary_path).with_name(name))
