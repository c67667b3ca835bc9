"""Submissions and scores files: their JSON Schemas and the checks ``doclens validate`` runs.

A **submission** (format ``doclens-submission/1``, ``schemas/submission.schema.json``) is one
system's outputs for one benchmark::

    {"format": "doclens-submission/1", "system": "my-notes-v2", "task": "note_generation",
     "benchmark": "aci-bench/test1", "metadata": {"model": "..."},
     "outputs": [{"id": "D2N088", "prediction": "..."}, ...]}

A **scores file** (format ``doclens-report/1``, ``schemas/scores.schema.json``) is the report JSON
that :meth:`doclens.Report.save` writes.

:func:`validate_file` returns *every* problem, each with a JSONPath-like location (``$.outputs[3].id``):
schema violations, JSON object keys given twice, ids given twice, and — against the benchmark's
instance ids — unknown and missing ids, each named.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from doclens.core.errors import InputError, cannot_read
from doclens.reports.json_checks import SCHEMA_FILES, Problem, json_path, load_schema  # noqa: F401  (public here too)

SUBMISSION_FORMAT = "doclens-submission/1"
#: file ``format`` value → schema kind
FORMATS = {SUBMISSION_FORMAT: "submission", "doclens-report/1": "scores"}


def schema_problems(document, kind: str) -> list[Problem]:
    """Every violation of the ``kind`` schema in ``document``, sorted by location."""
    import jsonschema

    schema = load_schema(kind)
    validator = jsonschema.Draft202012Validator(schema)
    problems = []
    from doclens.reports.scores_files import _BadNumber

    for error in validator.iter_errors(document):
        if isinstance(error.instance, _BadNumber):  # reported once, as a refused number
            continue
        message = error.message
        if error.validator in ("oneOf", "anyOf") and error.context:
            message += " (" + "; ".join(sorted({e.message for e in error.context})) + ")"
        problems.append(Problem(json_path(error.absolute_path), message))
    return sorted(problems, key=lambda p: (p.path, p.message))


def _document_ids(document, kind: str) -> list[tuple[str, str]]:
    """``(path, id)`` of every instance id in a (schema-shaped) document; non-string ids skipped."""
    entries = document.get("outputs" if kind == "submission" else "instances") if isinstance(document, dict) else None
    if not isinstance(entries, list):
        return []
    field_name = "outputs" if kind == "submission" else "instances"
    return [(json_path([field_name, i, "id"]), entry["id"]) for i, entry in enumerate(entries)
            if isinstance(entry, dict) and isinstance(entry.get("id"), str)]


def id_problems(located_ids: list[tuple[str, str]], expected_ids: Iterable[str] | None = None) -> list[Problem]:
    """Ids given twice and, when ``expected_ids`` is given, ids that are unknown to the benchmark
    (named at their path) and benchmark ids with no entry (named at ``$``)."""
    problems = []
    first: dict[str, str] = {}
    for path, ident in located_ids:
        if ident in first:
            problems.append(Problem(path, f"id {ident!r} repeats the id at {first[ident]} (one entry per id)"))
        else:
            first[ident] = path
    if expected_ids is not None:
        expected = list(dict.fromkeys(expected_ids))
        expected_set = set(expected)
        for path, ident in located_ids:
            if ident not in expected_set:
                problems.append(Problem(path, f"unknown id {ident!r}: not an instance of the benchmark"))
        missing = [i for i in expected if i not in first]
        if missing:
            shown = ", ".join(repr(i) for i in missing[:20]) + (f" … and {len(missing) - 20} more" if len(missing) > 20
                                                               else "")
            problems.append(Problem("$", f"{len(missing)} benchmark id(s) missing: {shown}"))
    return problems


def _strict_object(pairs: list) -> dict:
    keys = [k for k, _ in pairs]
    duplicates = sorted({k for k in keys if keys.count(k) > 1}) if len(set(keys)) != len(keys) else []
    result = dict(pairs)
    if duplicates:
        result.setdefault("\0duplicate-keys", duplicates)
    return result


def _duplicate_key_problems(node, parts=()) -> list[Problem]:
    problems = []
    if isinstance(node, dict):
        for key in node.pop("\0duplicate-keys", []):
            problems.append(Problem(json_path(parts),
                                    f"key {key!r} is given more than once (JSON keeps only the last)"))
        for key, value in node.items():
            problems += _duplicate_key_problems(value, (*parts, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            problems += _duplicate_key_problems(value, (*parts, i))
    return problems


def read_expected_ids(path: str) -> list[str]:
    """The benchmark's instance ids from a JSONL file of instances (one ``{"id": …}`` per line),
    in file order. Raises :class:`doclens.core.errors.InputError` naming the line of a bad line."""
    from doclens.core.types import instance_id
    from doclens.inputs.jsonl import iter_jsonl

    ids = []
    for number, data in iter_jsonl(path):
        if not isinstance(data, dict):
            raise InputError(f"{path} line {number}: not a JSON object", line=number)
        ids.append(instance_id(data.get("id"), f"{path} line {number}"))
    return ids


def validate_document(document, expected_ids: Iterable[str] | None = None,
                      kind: str | None = None) -> tuple[str | None, list[Problem]]:
    """``(kind, problems)`` for a parsed document. ``kind`` is read from its ``format`` field
    when not given; ``None`` (with a problem) when the format is unknown."""
    problems = _duplicate_key_problems(document)
    if kind is None:
        fmt = document.get("format") if isinstance(document, dict) else None
        kind = FORMATS.get(fmt) if isinstance(fmt, str) else None
        if kind is None:
            known = ", ".join(repr(f) for f in FORMATS)
            problems.append(Problem("$.format", f"unknown format {fmt!r}; expected one of {known}"))
            return None, problems
    problems += schema_problems(document, kind)
    problems += id_problems(_document_ids(document, kind), expected_ids)
    return kind, problems


def validate_file(path: str, expected_ids: Iterable[str] | None = None,
                  kind: str | None = None) -> tuple[str | None, list[Problem]]:
    """Read ``path`` (JSON) and validate it; see :func:`validate_document`. Scores files are read
    by the one scores-file reader (:func:`doclens.reports.scores_files.iter_report`), which also refuses
    non-finite numbers; other files are parsed whole. A file that is not UTF-8, not JSON or
    nested too deeply is one problem naming the line. Raises :class:`doclens.core.errors.InputError`
    for a file that cannot be opened."""
    from doclens.reports.scores_files import NotAScoresFile, iter_report, value_problems

    if kind in (None, "scores"):
        problems: list[Problem] = []
        located: list[tuple[str, str]] = []
        try:
            for index, instance in enumerate(iter_report(path, problems=problems)):
                located.append((json_path(["instances", index, "id"]), instance["id"]))
        except NotAScoresFile as exc:
            if kind == "scores":
                return kind, [*problems, Problem("$", str(exc).split(": ", 1)[-1])]
        except InputError as exc:
            return "scores" if kind or problems else kind, [*problems, Problem("$", str(exc))]
        else:
            return "scores", problems + id_problems(located, expected_ids)
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except UnicodeDecodeError as exc:
        with open(path, "rb") as handle:
            line = handle.read()[:exc.start].count(b"\n") + 1
        return kind, [Problem("$", f"line {line}: not UTF-8 ({exc.reason})")]
    except OSError as exc:
        raise cannot_read(path, exc) from None
    from doclens.reports.scores_files import _DECODER

    try:
        document = _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        return kind, [Problem("$", f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}")]
    except RecursionError:
        return kind, [Problem("$", "JSON nested too deeply to read")]
    early = [Problem(json_path(parts), message) for parts, message in value_problems(document)]
    kind, problems = validate_document(document, expected_ids, kind)
    return kind, early + problems
