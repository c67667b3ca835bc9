"""CSV files read as rows, every problem an :class:`~doclens.core.errors.InputError` naming the
file and the line: the human judgements of ``doclens agreement`` and the labelled items of
``doclens judge-check`` / ``judge-fit``."""

from __future__ import annotations

import csv
from collections.abc import Sequence

from doclens.core.errors import InputError, cannot_read


def read_csv_text(path: str) -> str:
    """The text of a UTF-8 CSV file; :class:`InputError` names the file (and the line of a byte
    that is not UTF-8) when it cannot be read."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise cannot_read(path, exc) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise InputError(f"{path} line {line}: not UTF-8 ({exc.reason}): save the CSV as UTF-8", line=line) from None


class _Rows:
    """``csv.DictReader`` rows whose CSV errors become :class:`InputError` naming the line."""

    def __init__(self, path: str, reader: csv.DictReader):
        self.path, self.reader = path, reader

    @property
    def line_num(self) -> int:
        return self.reader.line_num

    def __iter__(self):
        while True:
            try:
                row = next(self.reader)
            except StopIteration:
                return
            except csv.Error as exc:
                line = self.reader.line_num
                raise InputError(f"{self.path} line {line}: not a readable CSV row ({exc})", line=line) from None
            yield row


def open_csv(path: str, required: Sequence[str]):
    """``(handle, rows)`` of a UTF-8 CSV file whose header has every column of ``required``
    (:class:`InputError` naming the missing ones); ``rows.line_num`` is the line of the row read."""
    import io

    handle = io.StringIO(read_csv_text(path), newline="")
    reader = csv.DictReader(handle)
    try:
        header = reader.fieldnames or []
    except csv.Error as exc:
        raise InputError(f"{path} line 1: not a readable CSV header ({exc})", line=1) from None
    missing = [c for c in required if c not in header]
    if missing:
        handle.close()
        raise InputError(f"{path}: column(s) {', '.join(repr(c) for c in missing)} missing; the header has "
                         f"{', '.join(repr(c) for c in header) or 'no columns'}", field=missing[0])
    return handle, _Rows(path, reader)
