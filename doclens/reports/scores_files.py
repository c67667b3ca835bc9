"""Read a scores file (``doclens-report/1``) one instance at a time, in bounded memory, checking
each instance against the shipped JSON Schema (``schemas/scores.schema.json``) before it is used.

This is the one reader of scores files: ``doclens report``, ``leaderboard``, ``compare``,
``agreement``, ``validate`` and :meth:`doclens.Report.load` all go through :func:`iter_report`.
A scores file may come from anyone (a leaderboard submission is adversarial by nature), so
nothing in it is trusted:

- every instance is validated against the schema's ``instance`` definition as soon as it is
  decoded (wrong types such as ``"entailed": "false"``, a string ``cited``, a non-string id,
  task, claim or explanation), and the top-level fields against the rest of the schema once the
  file has been read (e.g. an integer ``signature``);
- ``NaN``, ``Infinity`` and numbers too large for a float are refused (Python's ``json`` would
  read them);
- object keys given twice are refused (JSON would silently keep the last), and so are instance
  ids given twice (:func:`iter_instance_results`; ``validate`` lists them);
- input that is not UTF-8, not JSON, or nested too deeply to decode is refused with its line.

Every refusal is an :class:`doclens.core.errors.InputError` that names the file, the instance (its
id, its position ``#n`` and its line) and the field (``statements[0].cited``).

:meth:`doclens.Report.load` holds the whole file, its parsed dict and every dataclass at once:
for a 10,000-instance report that is several times the file's size. The HTML views and the
leaderboard only ever need one instance at a time, so they read the file with
:func:`iter_report`, which keeps in memory the top-level fields other than ``instances`` plus a
read buffer and the instance being decoded.

The file is parsed by :class:`json.JSONDecoder` (``raw_decode``) value by value; the reader only
walks the top-level object and the ``instances`` array itself. Any key order works. Why this
stays hand-written rather than ijson (no lines, last of a duplicated key kept, memory quadratic
in nesting depth): ``docs/design.md``, "Maintained libraries and what stays hand-written"; the
measured figures: ``cards/leaderboard.md``, "Measured figures".
"""

from __future__ import annotations

import codecs
import copy
import json
import math
from array import array
from collections.abc import Callable, Generator, Iterator, Sequence
from functools import cache

from doclens.core.errors import InputError, cannot_read
from doclens.core.signature import Signature
from doclens.core.types import InstanceResult
from doclens.families import CountingRule, result_counts, result_from_dict

#: the ``format`` field of every scores file :meth:`doclens.Report.save` writes
REPORT_FORMAT = "doclens-report/1"


def wrong_format_message(value) -> str:
    """What a document whose ``format`` is ``value`` (not :data:`REPORT_FORMAT`) is told."""
    return f"not a DocLens report (format {value!r}, expected {REPORT_FORMAT!r})"

_WHITESPACE = " \t\n\r"
_CHUNK = 1 << 20


class NotAScoresFile(InputError):
    """The file is JSON but not a ``doclens-report/1`` document (another format, or not an object)."""


class _BadNumber:
    """Stands in for a number the reader refuses (``NaN``, ``Infinity``, a float that overflows, an
    integer too long to convert), so that the problem can be reported with its location."""

    def __init__(self, token: str, reason: str):
        self.token, self.reason = token, reason

    def __repr__(self) -> str:
        return self.token


def _parse_float(token: str):
    value = float(token)
    return value if math.isfinite(value) else _BadNumber(token[:40], "a number too large for a float")


def _parse_int(token: str):
    try:
        return int(token)
    except ValueError:  # more digits than int() converts (sys.get_int_max_str_digits)
        return _BadNumber(token[:20] + "…", f"an integer of {len(token)} digits")


def _parse_constant(token: str):
    return _BadNumber(token, "not a finite number")


def _pairs(pairs: list) -> dict:
    result = dict(pairs)
    if len(result) != len(pairs):
        keys = [k for k, _ in pairs]
        result["\0duplicate-keys"] = sorted({k for k in keys if keys.count(k) > 1})
    return result


_DECODER = json.JSONDecoder(object_pairs_hook=_pairs, parse_float=_parse_float, parse_int=_parse_int,
                            parse_constant=_parse_constant)


def _location(parts) -> str:
    """``["statements", 0, "cited"]`` → ``"statements[0].cited"``."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _clean(node) -> bool:
    """Whether a decoded value holds no refused number and no duplicated key (a quick pass that
    builds no paths; :func:`value_problems` locates the problems when there are any)."""
    cls = node.__class__
    if cls is dict:
        if "\0duplicate-keys" in node:
            return False
        values = node.values()
    elif cls is list:
        values = node
    else:
        return cls is not _BadNumber
    for child in values:
        kind = child.__class__
        if kind is _BadNumber or ((kind is dict or kind is list) and not _clean(child)):
            return False
    return True


def value_problems(value, parts=()) -> list[tuple[tuple, str]]:
    """``(location parts, message)`` for every refused number and every duplicated key in a
    decoded value; duplicated-key markers are removed on the way."""
    try:
        if _clean(value):
            return []
    except RecursionError:  # deeper than the quick pass can go: the walk below is iterative
        pass
    problems = []
    stack = [(value, tuple(parts))]
    while stack:  # iterative: a deep value cannot exhaust the stack here
        node, where = stack.pop()
        if isinstance(node, _BadNumber):
            problems.append((where, f"{node.token} is {node.reason}: scores files hold finite numbers only"))
        elif isinstance(node, dict):
            for key in node.pop("\0duplicate-keys", []):
                problems.append((where, f"key {key!r} is given more than once (JSON keeps only the last)"))
            stack.extend((v, (*where, k)) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, (*where, i)) for i, v in enumerate(node))
    return sorted(problems, key=lambda p: str(p[0]))


class _Checker:
    """A ``jsonschema`` validator behind a fastjsonschema filter. fastjsonschema compiles the schema
    to Python code once, so that checking a note-sized instance takes a fraction of a millisecond
    (``jsonschema`` takes several); it only decides whether an instance is sound. An instance it
    rejects is re-checked by ``jsonschema``, which has the last word and writes the messages the
    user sees (a test checks the two agree), so the messages are ``jsonschema``'s as before."""

    def __init__(self, schema: dict):
        import fastjsonschema
        import jsonschema

        self.validator = jsonschema.Draft202012Validator(schema)
        # a copy: fastjsonschema rewrites each $ref in place (to an absolute URI that jsonschema's
        # resolver would then try to fetch); detailed_exceptions stays on: off, fastjsonschema
        # 2.22.3 fails to compile a 'const'
        self._compiled = fastjsonschema.compile(copy.deepcopy(schema), use_default=False, use_formats=False)
        self._refused = fastjsonschema.JsonSchemaException

    def fast(self, value) -> bool:
        """Whether ``value`` passes the compiled check (a refused number fails its type check)."""
        try:
            self._compiled(value)
        except (self._refused, TypeError, ValueError, RecursionError):
            return False  # jsonschema decides and words it
        return True

    def iter_errors(self, value):
        if self.fast(value):
            return iter(())
        return self.validator.iter_errors(value)


@cache
def _validators():
    """``(instance checker, header checker)`` built from the shipped scores schema."""
    from doclens.reports.json_checks import load_schema

    schema = load_schema("scores")
    instance = _Checker({"$defs": schema["$defs"], "$ref": "#/$defs/instance"})
    header_schema = dict(schema, required=[r for r in schema["required"] if r != "instances"],
                         properties={k: v for k, v in schema["properties"].items() if k != "instances"})
    return instance, _Checker(header_schema)


def schema_messages(validator, value, parts=()) -> list[tuple[tuple, str]]:
    """``(location parts, message)`` for each schema violation, leaving out those on a refused
    number (already reported by :func:`value_problems`)."""
    problems = []
    for error in validator.iter_errors(value):
        if isinstance(error.instance, _BadNumber):
            continue
        message = error.message
        if len(message) > 300:
            message = message[:300] + "…"
        if error.validator in ("oneOf", "anyOf") and error.context:
            message += " (" + "; ".join(sorted({e.message for e in error.context})) + ")"
        problems.append(((*parts, *error.absolute_path), message))
    return sorted(problems, key=lambda p: str(p[0]))


class _Buffer:
    """A sliding window over a UTF-8 file with just enough look-ahead for ``raw_decode``. It
    counts line breaks so that an error can name its line."""

    def __init__(self, handle, path: str):
        self.handle, self.path = handle, path
        self.text, self.pos, self.eof = "", 0, False
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.lines_dropped = 0  # line breaks in text already slid out of the window
        self.lines_read = 0  # line breaks in all text decoded so far

    def _fill(self) -> bool:
        if self.eof:
            return False
        data = self.handle.read(_CHUNK)
        try:
            chunk = self.decoder.decode(data, final=not data)
        except UnicodeDecodeError as exc:
            line = self.lines_read + exc.object[:exc.start].count(b"\n") + 1
            raise InputError(f"{self.path} line {line}: not UTF-8 ({exc.reason}: byte "
                             f"0x{exc.object[exc.start]:02x}); scores files are UTF-8 JSON", line=line) from None
        if not data:
            self.eof = True
            if not chunk:
                return False
        self.lines_read += chunk.count("\n")
        self.lines_dropped += self.text.count("\n", 0, self.pos)
        self.text = self.text[self.pos:] + chunk
        self.pos = 0
        return True

    def line(self, pos: int | None = None) -> int:
        """The 1-based line of ``pos`` (default: the read position) in the window."""
        return self.lines_dropped + self.text.count("\n", 0, self.pos if pos is None else pos) + 1

    def peek(self) -> str:
        """The next non-whitespace character ('' at the end of the file), not consumed."""
        while True:
            while self.pos < len(self.text) and self.text[self.pos] in _WHITESPACE:
                self.pos += 1
            if self.pos < len(self.text):
                return self.text[self.pos]
            if not self._fill():
                return ""

    def expect(self, characters: str, error=InputError) -> str:
        char = self.peek()
        if not char or char not in characters:
            found = repr(char) if char else "the end of the file"
            line = self.line()
            raise error(f"{self.path} line {line}: not a DocLens scores file: expected "
                        f"{' or '.join(repr(c) for c in characters)}, found {found}", line=line)
        self.pos += 1
        return char

    def _decode(self):
        try:
            return _DECODER.raw_decode(self.text, self.pos)
        except RecursionError:
            line = self.line()
            raise InputError(f"{self.path} line {line}: JSON nested too deeply to read (a scores file is a "
                             "few levels deep)", line=line) from None

    def value(self):
        """Decode the next JSON value. A value is accepted only when a character follows it in the
        window (or the file has ended), so a number cut by the window's edge is never mis-read."""
        self.peek()
        while True:
            self.start = self.pos  # the value's first character (line() of it names the value's line)
            try:
                value, end = self._decode()
                if end < len(self.text) or self.eof:
                    self.pos = end
                    return value
            except json.JSONDecodeError as exc:
                if self.eof:
                    line = self.line(exc.pos)
                    raise InputError(f"{self.path} line {line}: not valid JSON ({exc.msg})", line=line) from None
            if not self._fill():
                self.start = self.pos
                try:
                    value, end = self._decode()
                except json.JSONDecodeError as exc:
                    line = self.line(exc.pos)
                    raise InputError(f"{self.path} line {line}: not valid JSON ({exc.msg})", line=line) from None
                self.pos = end
                return value


def _instance_label(data, index: int, line: int) -> str:
    ident = data.get("id") if isinstance(data, dict) else None
    named = f"instance {ident!r}" if isinstance(ident, str) and ident else "instance"
    return f"{named} (#{index}, line {line})"


def _checked_instances(buffer: _Buffer, instance_validator, refuse) -> Iterator[dict]:
    """The elements of the ``instances`` array at ``buffer``, each checked: a sound one is
    yielded, each problem of another goes to ``refuse(parts, message, label, id)``."""
    buffer.expect("[")
    if buffer.peek() == "]":
        buffer.pos += 1
        return
    index = 0
    while True:
        data = buffer.value()
        found = value_problems(data) + schema_messages(instance_validator, data)
        if found:
            label = _instance_label(data, index, buffer.line(buffer.start))
            ident = data.get("id") if isinstance(data, dict) else None
            for parts, message in found:
                refuse(("instances", index, *parts), message, label, ident)
        else:
            yield data
        index += 1
        if buffer.expect(",]") == "]":
            return


def iter_report(path: str, header: dict | None = None, problems: list | None = None) -> Iterator[dict]:
    """Yield each element of the report's ``instances`` array (a dict, as
    :meth:`InstanceResult.to_dict` wrote it), in file order, each checked against the schema (see
    the module docstring). The other top-level fields are put into ``header`` (when given) as
    they are read: all of them are there, checked, once the generator is exhausted.

    Without ``problems``, the first problem raises :class:`doclens.core.errors.InputError` naming the
    file, the instance (id, position, line) and the field. With a list, every problem is appended
    to it as a :class:`doclens.reports.json_checks.Problem` (``$.instances[3].statements[0].cited``) and
    the instance is skipped; a file that cannot be read on (not UTF-8, not JSON, too deep) still
    raises. A file that is JSON but not a scores file raises :class:`NotAScoresFile`.

    One streaming pass, so that a file of any size is read in bounded memory: the nested helpers
    share the open buffer, the header read so far and the problem list."""
    from doclens.reports.json_checks import Problem, json_path

    header = {} if header is None else header
    instance_validator, header_validator = _validators()

    def refuse(parts: tuple, message: str, label: str = "", ident=None) -> None:
        if problems is not None:
            prefix = f"instance {ident!r}: " if isinstance(ident, str) and ident else ""
            problems.append(Problem(json_path(parts), prefix + message))
            return
        field = _location(parts[2:] if label else parts)
        raise InputError(f"{path}: {label + ': ' if label else ''}"
                         f"{f'field {field!r}' if field else 'the instance'}: {message}; "
                         f"'doclens validate {path}' lists every problem", field=field or None)

    def wrong_format(value) -> NotAScoresFile:
        return NotAScoresFile(f"{path}: {wrong_format_message(value)}", field="format")

    try:
        handle = open(path, "rb")
    except OSError as exc:
        raise cannot_read(path, exc, "the scores file") from None
    with handle:
        seen = yield from _read_object(_Buffer(handle, path), path, header, instance_validator, refuse, wrong_format)
    if header.get("format") != REPORT_FORMAT:
        raise wrong_format(header.get("format"))
    for parts, message in schema_messages(header_validator, header):
        refuse(parts, message)
    if "instances" not in seen:
        yield from _iter_results_file(path, header, instance_validator, refuse)


def _read_object(buffer: _Buffer, path: str, header: dict, instance_validator, refuse: Callable[..., None],
                 wrong_format: Callable[[object], NotAScoresFile]) -> Generator[dict, None, set[str]]:
    """:func:`iter_report`'s one pass over the top-level object: yield each checked instance of an
    inline ``instances`` array, put every other field into ``header``; return the keys seen."""
    buffer.expect("{", NotAScoresFile)
    seen: set[str] = set()
    if buffer.peek() == "}":
        buffer.pos += 1
    else:
        while True:
            key = buffer.value()
            if not isinstance(key, str):
                line = buffer.line(buffer.start)
                raise InputError(f"{path} line {line}: not valid JSON (an object key must be a string)", line=line)
            if key in seen:
                refuse((key,), f"key {key!r} is given more than once (JSON keeps only the last)")
            seen.add(key)
            buffer.expect(":")
            if key == "instances":
                yield from _checked_instances(buffer, instance_validator, refuse)
            else:
                header[key] = buffer.value()
                if key == "format" and header[key] != REPORT_FORMAT:
                    raise wrong_format(header[key])
                for parts, message in value_problems(header[key], (key,)):
                    refuse(parts, message)
            if buffer.expect(",}") == "}":
                break
    if buffer.peek():
        line = buffer.line()
        raise InputError(f"{path} line {line}: not valid JSON (extra data after the scores object)", line=line)
    return seen


def _iter_results_file(path: str, header: dict, instance_validator, refuse) -> Iterator[dict]:
    """The instances of a streamed result (:mod:`doclens.reports.results_files`): the summary at
    ``path`` names its results file (``instances_file``, beside it), whose every instance is
    checked like an inline one; the summary's ``instance_counts`` must agree with them, instance
    by instance (a summary whose counts were edited is refused)."""
    from doclens.reports.results_files import iter_parquet_results, sidecar_name

    results_path = sidecar_name(header, path)
    if results_path is None:
        raise InputError(f"{path}: not a DocLens scores file: neither an 'instances' array nor an "
                         "'instances_file' naming the results beside it", field="instances")
    expected = _expected_counts(path, header)
    rule = CountingRule.from_config(header.get("config"))
    rows: Iterator[tuple[int | None, object]]
    if header["instances_format"] == "parquet":
        rows = ((None, row) for row in iter_parquet_results(results_path))
    else:
        rows = _iter_jsonl_results(results_path)
    index = -1
    for index, (line, data) in enumerate(rows):
        found = value_problems(data) + schema_messages(instance_validator, data)
        where = f"line {line}" if line is not None else f"row {index + 1}"
        ident = data.get("id") if isinstance(data, dict) else None
        label = f"{f'instance {ident!r}' if isinstance(ident, str) and ident else 'instance'} (#{index}, {where})"
        if found:
            for parts, message in found:
                refuse(("instances", index, *parts), message, label, ident)
            continue
        assert isinstance(data, dict)  # the schema check (found) refuses every value that is not an object
        if expected is not None:
            counts = result_counts(result_from_dict(data), rule)
            if index >= len(expected[0]) or expected[0][index] != data["id"] or expected[1][index] != counts:
                refuse(("instance_counts",), f"disagrees with {label} in {results_path} (the summary's "
                       "per-instance counts must be those of its results, in the same order)")
                expected = None
                continue
        yield data
    if expected is not None and index + 1 != len(expected[0]):
        refuse(("instance_counts",), f"lists {len(expected[0])} instance(s) but {results_path} holds {index + 1}")


def _expected_counts(path: str, header: dict):
    """``(ids, counts)`` of a summary's ``instance_counts``, or ``None`` when it has none."""
    from doclens.reports.results_files import counts_from_document

    document = header.get("instance_counts")
    if document is None:
        return None
    try:
        return counts_from_document(document) if isinstance(document, dict) else counts_from_document({})
    except ValueError as exc:
        raise InputError(f"{path}: field 'instance_counts': {exc}", field="instance_counts") from None


def _iter_jsonl_results(path: str) -> Iterator[tuple[int, object]]:
    """``(line number, value)`` of each line of a results JSONL file, decoded as strictly as a
    scores file (refused numbers and duplicated keys are marked for :func:`value_problems`)."""
    try:
        handle = open(path, "rb")
    except OSError as exc:
        raise cannot_read(path, exc, "the results file") from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(f"{path} line {number}: not UTF-8 ({exc.reason})", line=number) from None
            if not text.strip():
                continue
            if not text.endswith("\n"):
                raise InputError(f"{path} line {number}: the last line is cut off (the file was not written to "
                                 "the end)", line=number)
            try:
                yield number, _DECODER.decode(text)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path} line {number}: not valid JSON ({exc.msg})", line=number) from None
            except RecursionError:
                raise InputError(f"{path} line {number}: JSON nested too deeply to read", line=number) from None


def iter_instance_results(path: str, header: dict | None = None) -> Iterator[InstanceResult]:
    """:func:`iter_report`, each (checked) instance as an :class:`InstanceResult`. An id given
    twice is refused too (:class:`InputError` naming both positions): a file that repeats its
    best instances would otherwise weigh them twice."""
    seen: dict[str, int] = {}
    for position, data in enumerate(iter_report(path, header)):
        ident = data["id"]
        if ident in seen:
            raise InputError(f"{path}: instance {ident!r} (#{position}): field 'id' repeats the id of instance "
                             f"#{seen[ident]} (one entry per id); 'doclens validate {path}' lists every problem",
                             field="id")
        seen[ident] = position
        yield result_from_dict(data)


class CountColumns(Sequence):
    """Per-instance ``{metric: (hits, items)}`` counts kept as columns of numbers (two doubles
    per metric and instance, NaN where an instance lacks the metric) instead of one dict per
    instance: a million instances' counts take some 100 MB, not several hundred. Reads back as
    the dicts it was given (a :class:`~collections.abc.Sequence` of them, equal to their list)."""

    def __init__(self):
        self._columns: dict[str, tuple[array, array]] = {}
        self._size = 0

    def append(self, counts: dict) -> None:
        for metric in counts.keys() - self._columns.keys():  # a metric first met here: earlier rows lack it
            self._columns[metric] = (array("d", [math.nan]) * self._size, array("d", [math.nan]) * self._size)
        for metric, (hits, items) in self._columns.items():
            value = counts.get(metric)
            hits.append(math.nan if value is None else value[0])
            items.append(math.nan if value is None else value[1])
        self._size += 1

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._size))]
        if index < 0:
            index += self._size
        if not 0 <= index < self._size:
            raise IndexError(index)
        return {metric: (_number(hits[index]), _number(items[index]))
                for metric, (hits, items) in self._columns.items() if not math.isnan(hits[index])}

    def __eq__(self, other) -> bool:
        return isinstance(other, (list, tuple, CountColumns)) and len(self) == len(other) and all(
            a == b for a, b in zip(self, other))


def _number(value: float):
    return int(value) if value.is_integer() else value


def scan_report(path: str, each: Callable[[InstanceResult], None] | None = None
                ) -> tuple[dict, list[str], CountColumns]:
    """One bounded-memory pass: ``(header, ids, per-instance {metric: (hits, items)})``, counted
    with the report's own counting rule (:meth:`doclens.families.CountingRule.from_config`), the
    counts kept compact (:class:`CountColumns`). ``each(result)``, when given, sees every
    instance of that pass; the header's ``signature`` is a :class:`~doclens.core.signature.Signature`.
    Reports that :meth:`doclens.Report.save` writes put ``config`` before
    ``instances``; a file that puts it after is counted in a second pass."""
    header: dict = {}
    ids, counts = [], CountColumns()
    rule = None
    for result in iter_instance_results(path, header):
        rule = rule or CountingRule.from_config(header.get("config"))
        ids.append(result.id)
        counts.append(result_counts(result, rule))
        if each is not None:
            each(result)
    if ids and CountingRule.from_config(header.get("config")) != rule:
        rule = CountingRule.from_config(header.get("config"))
        counts = CountColumns()
        for result in iter_instance_results(path):
            counts.append(result_counts(result, rule))
    if isinstance(header.get("signature"), str):  # read as data once, here: commands and views never parse it
        header["signature"] = Signature.read(header["signature"])
    return header, ids, counts
