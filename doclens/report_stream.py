"""Read a scores file (``doclens-report/1``) one instance at a time, in bounded memory.

:meth:`doclens.Report.load` holds the whole file, its parsed dict and every dataclass at once:
for a 10,000-instance report that is several times the file's size. The HTML views and the
leaderboard only ever need one instance at a time, so they read the file with
:func:`iter_report`, which keeps in memory the top-level fields other than ``instances`` plus a
read buffer and the instance being decoded.

The file is parsed by :class:`json.JSONDecoder` (``raw_decode``) value by value; the reader only
walks the top-level object and the ``instances`` array itself. Any key order works.
"""

from __future__ import annotations

import json
from typing import Iterator, Optional

from doclens.types import InstanceResult

_DECODER = json.JSONDecoder()
_WHITESPACE = " \t\n\r"
_CHUNK = 1 << 20


class _Buffer:
    """A sliding window over a text file with just enough look-ahead for ``raw_decode``."""

    def __init__(self, handle, path: str):
        self.handle, self.path = handle, path
        self.text, self.pos, self.eof = "", 0, False

    def _fill(self) -> bool:
        if self.eof:
            return False
        chunk = self.handle.read(_CHUNK)
        if not chunk:
            self.eof = True
            return False
        self.text = self.text[self.pos:] + chunk
        self.pos = 0
        return True

    def peek(self) -> str:
        """The next non-whitespace character ('' at the end of the file), not consumed."""
        while True:
            while self.pos < len(self.text) and self.text[self.pos] in _WHITESPACE:
                self.pos += 1
            if self.pos < len(self.text):
                return self.text[self.pos]
            if not self._fill():
                return ""

    def expect(self, characters: str) -> str:
        char = self.peek()
        if not char or char not in characters:
            raise ValueError(f"{self.path}: not a DocLens scores file: expected one of {characters!r} at character "
                             f"{self.pos} of the current window, found {char!r}")
        self.pos += 1
        return char

    def value(self):
        """Decode the next JSON value. A value is accepted only when a character follows it in the
        window (or the file has ended), so a number cut by the window's edge is never mis-read."""
        self.peek()
        while True:
            try:
                value, end = _DECODER.raw_decode(self.text, self.pos)
                if end < len(self.text) or self.eof:
                    self.pos = end
                    return value
            except json.JSONDecodeError:
                if self.eof:
                    raise
            if not self._fill():
                value, end = _DECODER.raw_decode(self.text, self.pos)
                self.pos = end
                return value


def iter_report(path: str, header: Optional[dict] = None) -> Iterator[dict]:
    """Yield each element of the report's ``instances`` array (a dict, as
    :meth:`InstanceResult.to_dict` wrote it), in file order. The other top-level fields are put
    into ``header`` (when given) as they are read: all of them are there once the generator is
    exhausted. Raises :class:`ValueError` for a file that is not a JSON object or whose
    ``format`` is not ``doclens-report/1``."""
    from doclens.report import REPORT_FORMAT

    header = {} if header is None else header
    with open(path, encoding="utf-8") as handle:
        buffer = _Buffer(handle, path)
        buffer.expect("{")
        if buffer.peek() == "}":
            buffer.pos += 1
        else:
            while True:
                key = buffer.value()
                buffer.expect(":")
                if key == "instances":
                    buffer.expect("[")
                    if buffer.peek() == "]":
                        buffer.pos += 1
                    else:
                        while True:
                            yield buffer.value()
                            if buffer.expect(",]") == "]":
                                break
                else:
                    header[key] = buffer.value()
                    if key == "format" and header[key] != REPORT_FORMAT:
                        raise ValueError(f"{path}: not a DocLens report (format {header[key]!r}, expected "
                                         f"{REPORT_FORMAT!r})")
                if buffer.expect(",}") == "}":
                    break
    if header.get("format") != REPORT_FORMAT:
        raise ValueError(f"{path}: not a DocLens report (format {header.get('format')!r}, expected "
                         f"{REPORT_FORMAT!r})")


def iter_instance_results(path: str, header: Optional[dict] = None) -> Iterator[InstanceResult]:
    """:func:`iter_report`, each instance as an :class:`InstanceResult`."""
    for data in iter_report(path, header):
        yield InstanceResult.from_dict(data)


def scan_report(path: str) -> tuple[dict, list[str], list[dict]]:
    """One bounded-memory pass: ``(header, ids, per-instance {metric: (hits, items)})``, counted
    with the report's own ``on_unparsed`` rule (:func:`doclens.bootstrap.counting_rule`). Reports
    that :meth:`doclens.Report.save` writes put ``config`` before ``instances``; a file that puts
    it after is counted in a second pass."""
    from doclens.bootstrap import counting_rule
    from doclens.metrics import instance_counts

    def count(result: InstanceResult, rule: str) -> dict:
        return instance_counts(result.reference_claims, result.prediction_claims,
                               result.statements if result.has_source else None, rule)

    header: dict = {}
    ids, counts = [], []
    rule = None
    for result in iter_instance_results(path, header):
        rule = rule or counting_rule(header.get("config"))
        ids.append(result.id)
        counts.append(count(result, rule))
    if ids and counting_rule(header.get("config")) != rule:
        rule = counting_rule(header.get("config"))
        counts = [count(result, rule) for result in iter_instance_results(path)]
    return header, ids, counts
