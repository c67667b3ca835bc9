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
from typing import Any, Iterator, Optional

from doclens.core.errors import InputError
from doclens.core.types import Instance


def display_name(path: str) -> str:
    return "<stdin>" if path == "-" else path


def _decode(raw: bytes, name: str, number: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{name} line {number}: not UTF-8 (byte 0x{raw[exc.start]:02x} at byte {exc.start + 1} of "
                         f"the line; {exc.reason}): save the file as UTF-8", line=number) from None


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
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None


def iter_jsonl(path: str) -> Iterator[tuple[int, Any]]:
    """``(line number, parsed value)`` for every non-blank line of a JSONL file (``-``: stdin).
    Raises :class:`InputError` naming the file and line of a line that is not UTF-8, not JSON
    (including numbers Python cannot convert) or nested too deeply to parse; and of a file
    that cannot be opened."""
    name = display_name(path)
    try:
        handle = sys.stdin.buffer if path == "-" else open(path, "rb")
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        for number, raw in enumerate(handle, start=1):
            line = _decode(raw, name, number)
            if number == 1:
                line = line.lstrip("\ufeff")  # a byte-order mark some editors write
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{name} line {number}: not valid JSON ({exc.msg} at column {exc.colno})",
                                 line=number) from None
            except RecursionError:
                raise InputError(f"{name} line {number}: JSON nested too deeply to read", line=number) from None
            except ValueError as exc:  # e.g. an integer with more digits than Python converts
                raise InputError(f"{name} line {number}: not valid JSON ({exc})", line=number) from None
            yield number, data
    finally:
        if handle is not sys.stdin.buffer:
            handle.close()


def read_instances(path: str, seen: Optional[dict] = None) -> Iterator[Instance]:
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
