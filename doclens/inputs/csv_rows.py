"""CSV files read as rows, every problem an :class:`~doclens.core.errors.InputError` naming the
file and the line: the human judgements of ``doclens agreement`` and the labelled items of
``doclens judge-check`` / ``judge-fit``."""

from __future__ import annotations

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
    """The rows of :func:`doclens.inputs.tables.csv_table`'s ``records``, as ``{column: cell}``;
    :attr:`line_num` is the file's line where the row last read starts."""

    def __init__(self, records):
        self.records, self.line_num = records, 1

    def __iter__(self):
        for _, line, row in self.records():
            self.line_num = line
            yield row


def open_csv(path: str, required: Sequence[str]):
    """``(handle, rows)`` of a UTF-8 CSV file whose header has every column of ``required``
    (:class:`InputError` naming the missing ones), read by the one strict CSV reader of every
    table a user gives (:func:`doclens.inputs.tables.csv_table`: a row with fewer or more cells
    than the header, a line break in an unquoted cell, a byte that is not UTF-8 is an error naming
    the line); ``rows.line_num`` is the line of the row read, ``handle`` a context with nothing
    left to close (the rows are read as they are iterated)."""
    import contextlib

    from doclens.inputs.tables import csv_table

    header, records, _ = csv_table(path, ",", what="rows")
    missing = [c for c in required if c not in header]
    if missing:
        raise InputError(f"{path}: column(s) {', '.join(repr(c) for c in missing)} missing; the header has "
                         f"{', '.join(repr(c) for c in header) or 'no columns'}", field=missing[0])
    return contextlib.nullcontext(), _Rows(records)
