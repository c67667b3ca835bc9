"""Reading JSONL files from users: every problem is an :class:`doclens.core.errors.InputError` that names
the file and the line.

Used for ``doclens score``'s input, ``validate --references`` and ``report --input``. Lines are read
as bytes and decoded one by one, so a line that is not UTF-8 is named by its number;
:func:`check_utf8` scans a whole file first so that ``doclens score`` can refuse it before
anything is scored.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

from doclens.core.errors import InputError, cannot_read
from doclens.core.types import Instance, instance_id


def display_name(path: str) -> str:
    return "<stdin>" if path == "-" else path


def _decode(raw: bytes, name: str, number: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{name} line {number}: not UTF-8 (byte 0x{raw[exc.start]:02x} at byte {exc.start + 1} of "
                         f"the line; {exc.reason}): save the file as UTF-8", line=number) from None


_BLANK = object()


def parse_line(raw: bytes, name: str, number: int) -> Any:
    """The JSON value of one line of a JSONL file (a module sentinel for a blank line): the one
    line parser of every JSONL reader. Raises :class:`InputError` naming ``name`` and the line
    when it is not UTF-8, not JSON (numbers Python cannot convert included) or nested too deeply."""
    line = _decode(raw, name, number)
    if number == 1:
        line = line.lstrip("\ufeff")  # a byte-order mark some editors write
    if not line.strip():
        return _BLANK
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        raise InputError(f"{name} line {number}: not valid JSON ({exc.msg} at column {exc.colno})",
                         line=number) from None
    except RecursionError:
        raise InputError(f"{name} line {number}: JSON nested too deeply to read", line=number) from None
    except ValueError as exc:  # e.g. an integer with more digits than Python converts
        raise InputError(f"{name} line {number}: not valid JSON ({exc})", line=number) from None


def check_utf8(path: str) -> None:
    """Raise :class:`InputError` naming the first line of ``path`` that is not UTF-8 (``-``, stdin,
    is not scanned: it can be read only once)."""
    if path == "-":
        return
    try:
        with open(path, "rb") as handle:
            for number, raw in enumerate(handle, start=1):
                _decode(raw, path, number)
    except OSError as exc:
        raise cannot_read(path, exc) from None


def iter_jsonl(path: str) -> Iterator[tuple[int, Any]]:
    """``(line number, parsed value)`` for every non-blank line of a JSONL file (``-``: stdin).
    Raises :class:`InputError` naming the file and line of a line that is not UTF-8, not JSON
    (including numbers Python cannot convert) or nested too deeply to parse; and of a file
    that cannot be opened."""
    name = display_name(path)
    try:
        handle = sys.stdin.buffer if path == "-" else open(path, "rb")
    except OSError as exc:
        raise cannot_read(path, exc) from None
    try:
        for number, raw in enumerate(handle, start=1):
            data = parse_line(raw, name, number)
            if data is not _BLANK:
                yield number, data
    finally:
        if handle is not sys.stdin.buffer:
            handle.close()


def read_instances(path: str, seen: dict | None = None) -> Iterator[Instance]:
    """Instances from a JSONL file, lazily. Raises :class:`InputError` naming the file, the line
    (and the field) of the first bad line: not UTF-8, not JSON, a missing, empty or mistyped
    field, an id seen twice. Every line needs an ``id``: a non-empty string, or an integer
    (turned into its string). ``seen`` (when given) is filled with ``{id: line}``."""
    name = display_name(path)
    seen = {} if seen is None else seen
    for number, data in iter_jsonl(path):
        try:
            instance = Instance.from_dict(data, require_id=True)
        except InputError as exc:
            raise InputError(f"{name} line {number}: {exc}", field=exc.field, line=number) from None
        if instance.id in seen:
            raise InputError(f"{name} line {number}: instance {instance.id!r}: field 'id' repeats the id of line "
                             f"{seen[instance.id]}", field="id", line=number)
        seen[instance.id] = number
        yield instance


class SourceIndex:
    """Instances of a JSONL input file looked up by id without holding the file in memory: one
    pass records each line's byte offset; :meth:`get` seeks and parses that line. Lines that
    cannot be read are listed in :attr:`unreadable` (``"line N: why"``), not raised."""

    def __init__(self, path: str):
        self.path = path
        self.offsets: dict[str, int] = {}
        self.unreadable: list[str] = []
        try:
            handle = open(path, "rb")
        except OSError as exc:
            raise cannot_read(path, exc) from None
        with handle:
            offset = 0
            for number, raw in enumerate(handle, start=1):
                try:
                    data = parse_line(raw, path, number)
                    if data is not _BLANK:
                        self.offsets.setdefault(instance_id(data.get("id") if isinstance(data, dict) else None),
                                                offset)
                except InputError as exc:
                    self.unreadable.append(f"line {number}: {str(exc).split(': ', 1)[-1]}")
                offset += len(raw)
        self._handle = open(path, "rb")

    def get(self, ident: str) -> dict | None:
        offset = self.offsets.get(ident)
        if offset is None:
            return None
        self._handle.seek(offset)
        return parse_line(self._handle.readline(), self.path, 1 if offset == 0 else 0)  # read once already

    def close(self) -> None:
        self._handle.close()
