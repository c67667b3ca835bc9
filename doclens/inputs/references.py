"""A leaderboard submission (ids and predictions, ``schemas/submission.schema.json``) joined by id
with a table of references, so that ``doclens score SUBMISSION --references REFS`` scores it.

The submission is validated first (every schema problem listed). A table of outputs is mapped
by ``columns`` (``--columns``: ``id``, ``prediction``, ``prediction_claims``). The references
table is read by :func:`doclens.inputs.tables.read_table` (any format; ``reference_columns``,
``--reference-columns``, maps it and ``split`` applies to it) and needs the ``id`` and
``reference`` fields — ACI-BENCH's published CSVs name the text column ``note`` on both sides, so
each side has its own mapping. Tables given the wrong way round are refused as swapped
(:func:`refuse_swapped`): an outputs table with a reference column and no prediction (or the other
way round); outputs that are the reference notes of a known public set (ACI-BENCH test 1–3,
MeQSum: :mod:`doclens.inputs.known_references`), whatever the columns are called; and an outputs
file that is the references file itself. ``source``, the claims and ``task`` come from it when
present, the prediction (and any ``prediction_claims``) from the submission — a prediction column
in the references table is ignored. The submission's ``task`` is the task of every row that has
none. Ids must match one to one: a duplicate id in the references and every id missing on either
side are refused, all named (the first :data:`SHOWN` of each kind, and a count). The references
are held in memory (one row per id) for the join; the joined instances stream in submission order.
"""

from __future__ import annotations

import json
import logging
import shlex
from collections.abc import Iterator
from typing import Any

from doclens.core.errors import InputError, cannot_read
from doclens.core.paths import same_file
from doclens.core.types import instance_id
from doclens.inputs.tables import Rows, parse_columns, read_table, sized

logger = logging.getLogger(__name__)

#: ids named in a join error before "… and N more"
SHOWN = 20


def _shown(ids: list[str]) -> str:
    text = ", ".join(repr(i) for i in ids[:SHOWN])
    return text + (f" … and {len(ids) - SHOWN} more" if len(ids) > SHOWN else "")


def read_submission(path: str) -> dict:
    """A submission checked against its schema; raises :class:`InputError` listing its problems."""
    from doclens.reports.submissions import validate_file

    kind, problems = validate_file(path, kind="submission")
    if problems:
        listed = "; ".join(str(p) for p in problems[:SHOWN])
        more = f" … and {len(problems) - SHOWN} more" if len(problems) > SHOWN else ""
        raise InputError(f"{path}: not a valid submission ({len(problems)} problem(s): {listed}{more}); "
                         "'doclens validate' lists them all")
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except OSError as exc:
        raise cannot_read(path, exc) from None


def _is_submission(path: str) -> bool:
    """A ``.json`` file holding one JSON object: a submission (then validated as one). A JSON array,
    JSON Lines or any other table is a table of outputs with ``id`` and ``prediction`` columns."""
    if not path.endswith(".json"):
        return False
    try:
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
    except json.JSONDecodeError as exc:
        return "Extra data" not in exc.msg  # JSON Lines in a .json file: a table
    except (OSError, UnicodeDecodeError, RecursionError):
        return True  # read_submission says what is wrong with it
    return isinstance(document, dict)


#: the fields of each side of a join: ``--columns`` maps the outputs, ``--reference-columns`` the references
OUTPUT_FIELDS = ("id", "prediction", "prediction_claims")
REFERENCE_FIELDS = ("id", "reference", "source", "reference_claims", "task")
SWAPPED = ("the outputs go first and the references after --references: doclens score OUTPUTS --references "
           "REFS (--columns maps OUTPUTS, --reference-columns maps REFS)")


def _side_mapping(columns, allowed: tuple[str, ...], option: str, other: str) -> dict[str, str]:
    """``columns`` parsed, refusing a field that belongs to the other side of the join (``other``
    is the option that maps it)."""
    mapping = parse_columns(columns)
    foreign = [name for name in mapping if name not in allowed]
    if foreign:
        raise InputError(f"{option} maps the {'outputs' if option == '--columns' else 'references'} table (fields "
                         f"{', '.join(allowed)}); {', '.join(map(repr, foreign))} belong(s) to the other table: map "
                         f"{'it' if len(foreign) == 1 else 'them'} with {other}", field=foreign[0])
    return mapping


def _first_row(table: Rows) -> dict | None:
    rows = table._rows()
    try:
        first = next(rows, None)
    finally:
        close = getattr(rows, "close", None)
        if close is not None:
            close()  # a CSV reader's file is closed now, not when the generator is collected
    return first[1] if first is not None and isinstance(first[1], dict) else None


def _check_side(table: Rows, mapping: dict[str, str], wanted: str, other: str, option: str) -> None:
    """Refuse a table without a column for field ``wanted`` (``prediction`` for the outputs,
    ``reference`` for the references) before the join: as the other table given in this one's
    place (it has a column for ``other`` instead), or naming the columns it has."""
    row = _first_row(table)
    if row is None:
        return  # an empty table: the join says which ids are missing
    column = mapping.get(wanted, wanted)
    if column in row:
        return
    shown = ", ".join(repr(c) for c in row) or "none"
    if other in row:
        role, given = (("references", "outputs") if wanted == "prediction" else ("outputs", "references"))
        raise InputError(f"{table.name}: no column for field {wanted!r} (looked for {column!r}) but a column "
                         f"{other!r}: a table of {role} where the {given} belong (the tables look swapped); "
                         f"{SWAPPED}; if this is the {given} table, map its {wanted} column with {option} "
                         f"{wanted}=COLUMN", field=wanted)
    raise InputError(f"{table.name}: no column for field {wanted!r} (looked for {column!r}); the table's columns "
                     f"are {shown}; map one with {option} {wanted}=COLUMN", field=wanted)


def refuse_swapped(outputs_path: str, references_path: str, predictions: list, references: list) -> None:
    """Refuse outputs that are the references, by content (:mod:`doclens.inputs.known_references`):
    more than half of ``predictions`` are the reference notes of a known set while ``references``
    are not (scoring a set's references against themselves is allowed, with a warning). The
    error gives the command with the two paths swapped."""
    from doclens.inputs.known_references import reference_set_of

    found = reference_set_of(predictions)
    if found is None:
        return
    other = reference_set_of(references)
    if other is not None and other.key == found.key:
        logger.warning("%s: the outputs are %s's reference notes, and so are the references in %s: the references "
                       "are scored against themselves", outputs_path, found.title, references_path)
        return
    meant = f"doclens score {shlex.quote(references_path)} --references {shlex.quote(outputs_path)}"
    raise InputError(f"{outputs_path}: {found.matched} of {found.total} outputs are the reference notes of "
                     f"{found.title}, and the notes of {references_path} are not: the tables look swapped "
                     f"(recall and precision would come out exchanged). {SWAPPED}. The command you meant, with "
                     f"the two paths swapped and the other options as they were: {meant} …", field="prediction")


def _refuse_repeated_outputs(path: str, outputs: list[dict]) -> None:
    """Refuse outputs that give an id more than once, all named, before anything is scored (found
    mid-run, a repeat cost every judge call before it)."""
    first: dict[str, int] = {}
    repeated: dict[str, list[int]] = {}
    for position, output in enumerate(outputs, start=1):
        if output["id"] in first:
            repeated.setdefault(output["id"], [first[output["id"]]]).append(position)
        else:
            first[output["id"]] = position
    if repeated:
        listed = "; ".join(f"{ident!r} (outputs {', '.join(map(str, places))})"
                           for ident, places in list(repeated.items())[:SHOWN])
        more = f" … and {len(repeated) - SHOWN} more" if len(repeated) > SHOWN else ""
        raise InputError(f"{path}: {len(repeated)} id(s) given more than once (one output per id): {listed}{more}; "
                         "nothing was scored", field="id")


def read_outputs(path: str, columns=None) -> dict:
    """A submission (schema-checked), or a table of outputs (``id``, ``prediction``, optional
    ``prediction_claims``; ``columns`` maps those fields to its columns) read as one:
    ``{"system", "task", "outputs"}``; a table's system is its file name and its task ``None``."""
    mapping = _side_mapping(columns, OUTPUT_FIELDS, "--columns", "--reference-columns")
    if _is_submission(path):
        if mapping:
            raise InputError(f"{path}: a submission has no columns to map; --columns applies to a table of outputs")
        return read_submission(path)
    table = read_table(path, required=("id",), columns=mapping)
    _check_side(table, mapping, "prediction", "reference", "--columns")
    outputs = []
    prediction_column = mapping.get("prediction", "prediction")
    claims_column = mapping.get("prediction_claims", "prediction_claims")
    for location, row in table._rows():
        where = f"{table.name} {location}"
        if not isinstance(row, dict):
            raise InputError(f"{where}: expected an object (a row of named columns), got {type(row).__name__}")
        prediction = row.get(prediction_column)
        if not isinstance(prediction, str):
            raise InputError(f"{where}: 'prediction' must be a string, got {type(prediction).__name__}",
                             field="prediction")
        output = {"id": instance_id(row.get(mapping.get("id", "id")), where), "prediction": prediction}
        if row.get(claims_column) is not None:
            output["prediction_claims"] = row[claims_column]
        outputs.append(output)
    stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    return {"system": stem, "task": None, "outputs": outputs}


def join_references(submission_path: str, references: str, *, input_format: str | None = None,
                    split: str | None = None, columns=None, reference_columns=None) -> Rows:
    """The instances of a submission (or of a table of outputs: ``id``, ``prediction``) joined by
    id with the references table ``references``; has ``len()`` and a ``system`` attribute (the
    submission's system name, or the outputs file's name). ``columns`` maps the outputs table's
    fields (:data:`OUTPUT_FIELDS`), ``reference_columns`` the references table's
    (:data:`REFERENCE_FIELDS`); ``input_format`` and ``split`` apply to the references. Tables
    given the wrong way round are refused as swapped."""
    reference_mapping = _side_mapping(reference_columns, REFERENCE_FIELDS, "--reference-columns", "--columns")
    if "-" not in (submission_path, references) and same_file(submission_path, references):
        raise InputError(f"{submission_path} is given as the outputs and as --references {references}: one file "
                         f"(the tables look swapped); {SWAPPED}", field="--references")
    submission = read_outputs(submission_path, columns)
    table = read_table(references, input_format=input_format, split=split, columns=reference_mapping,
                       required=("id",), hint="--reference-columns")
    _check_side(table, reference_mapping, "reference", "prediction", "--reference-columns")
    id_column = table.mapping.get("id", "id")
    rows: dict[str, tuple[str, dict]] = {}
    repeated: dict[str, list[str]] = {}
    for location, row in table._rows():
        where = f"{table.name} {location}"
        if not isinstance(row, dict):
            raise InputError(f"{where}: expected an object (a row of named columns), got {type(row).__name__}")
        ident = instance_id(row.get(id_column), where)
        if ident in rows:
            repeated.setdefault(ident, [rows[ident][0]]).append(location)
        else:
            rows[ident] = (location, row)
    outputs = submission["outputs"]
    _refuse_repeated_outputs(submission_path, outputs)
    reference_column = table.mapping.get("reference", "reference")
    refuse_swapped(submission_path, references, [o["prediction"] for o in outputs],
                   [row.get(reference_column) for _, row in rows.values()])
    if repeated:
        listed = "; ".join(f"{ident!r} at {', '.join(places)}" for ident, places in list(repeated.items())[:SHOWN])
        more = f" … and {len(repeated) - SHOWN} more" if len(repeated) > SHOWN else ""
        raise InputError(f"{table.name}: {len(repeated)} id(s) given more than once (one reference row per id): "
                         f"{listed}{more}", field="id")
    output_ids = [o["id"] for o in outputs]
    no_reference = [i for i in output_ids if i not in rows]
    submitted = set(output_ids)
    no_output = [i for i in rows if i not in submitted]
    if no_reference or no_output:
        parts = []
        if no_reference:
            parts.append(f"{len(no_reference)} submission id(s) have no row in {table.name}: {_shown(no_reference)}")
        if no_output:
            parts.append(f"{len(no_output)} reference id(s) have no output in {submission_path}: {_shown(no_output)}")
        raise InputError("ids do not match: " + "; ".join(parts), field="id")
    prediction_column = table.mapping.get("prediction", "prediction")
    claims_column = table.mapping.get("prediction_claims", "prediction_claims")
    task_column = table.mapping.get("task", "task")

    def joined() -> Iterator[tuple[str, Any]]:
        for index, output in enumerate(outputs):
            location, row = rows[output["id"]]
            merged = {key: value for key, value in row.items() if key not in (prediction_column, claims_column)}
            merged[prediction_column] = output["prediction"]
            if "prediction_claims" in output:
                merged[claims_column] = output["prediction_claims"]
            if merged.get(task_column) in (None, "") and submission["task"]:
                merged[task_column] = submission["task"]
            yield f"$.outputs[{index}] ({table.name} {location})", merged

    result = sized(Rows(submission_path, joined, table.mapping, decode=table.decode, total=len(outputs)))
    result.system = submission["system"]
    return result



def read_instances(path: str, *, input_format: str | None = None, split: str | None = None, columns=None,
                   references: str | None = None, reference_columns=None) -> Rows:
    """The instances a ``doclens score`` command line names, read lazily (``len()`` when the size
    is known): any table :func:`doclens.inputs.tables.read_table` reads (``columns`` maps it), or,
    with ``references``, a submission or table of outputs joined with that table by id
    (:func:`join_references`: ``columns`` maps the outputs, ``reference_columns`` the references).
    ``score``, ``report --input`` and ``baselines`` read their inputs through it."""
    if references:
        return join_references(path, references, input_format=input_format, split=split, columns=columns,
                               reference_columns=reference_columns)
    if reference_columns:
        raise InputError("--reference-columns maps the table given with --references; without --references, "
                         "map INPUT's columns with --columns")
    return read_table(path, input_format=input_format, split=split, columns=columns)
