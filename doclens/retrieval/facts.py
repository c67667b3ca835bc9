"""A source of any length, turned into *facts*: the sentences (or table rows) that retrieval
ranks and a judge reads as evidence.

Accepted shapes of ``source``:

* numbered units, as citations use them: a string starting with ``[0]`` (``"[0] … [1] …"``,
  ACI-BENCH dialogue turns ``"[0][doctor] hi . [1][patient] …"``), parsed by
  :func:`doclens.parsing.source_units.parse_source_units`;
* a long text with no ``[0]`` at its start: each paragraph (text between blank lines) is a unit;
* a list, one unit per item: a string (a dialogue turn, a sentence, or a whole document — one
  patient's notes are a list of documents), or a dict (a table row, as DOSSIER keeps EHR rows:
  the unit ``"column: value; column: value"``, columns in the dict's order, empty values left
  out). Strings and rows may be mixed.

Units are numbered from 0 in that order. A text unit is split into sentences by the prediction
splitter (:func:`doclens.parsing.statements.sentence_spans`: the same rules, so a claim and the record
it is checked against are cut alike); lines that are only a section header (``HPI:``) and pieces
without a letter or digit are no facts. A table row is one fact, never split. Each fact keeps
its unit, its sentence number in the unit and its character span in the unit's text, so the
evidence shown to a reader points at the exact place in the record.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from doclens.core.errors import InputError
from doclens.core.types import SourceUnit
from doclens.parsing.source_units import parse_source_units
from doclens.parsing.statements import has_content, is_header_line, sentence_spans

#: Kinds of unit: text (a turn, a sentence, a paragraph, a document) and table row.
KIND_TEXT = "text"
KIND_ROW = "row"

_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")


@dataclass(frozen=True)
class Fact:
    """One fact of a source: a sentence of a text unit, or a whole table row."""

    index: int  # position in the source's fact list, from 0
    unit: int  # the unit it comes from, numbered from 0
    position: int  # its sentence number within the unit, from 0
    start: int  # character span of ``text`` in the unit's text
    end: int
    text: str
    speaker: str | None = None  # "doctor" for an ACI-BENCH turn
    kind: str = KIND_TEXT

    @property
    def premise_text(self) -> str:
        """What is indexed and shown to a judge: ``"patient: i have a cough ."`` for a turn."""
        return f"{self.speaker}: {self.text}" if self.speaker else self.text

    def to_dict(self) -> dict:
        return asdict(self)


def _cell(value: Any, where: str) -> str | None:
    """A table cell as text; ``None`` for a missing value (``None``, ``""``, NaN)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return None
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        text = " ".join(value.split())
        return text or None
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False)
    raise InputError(f"{where} must be a string, number, boolean, list, object or null, "
                     f"got {type(value).__name__}", field="source")


def row_text(row: dict, where: str = "source row") -> str:
    """``{"test": "HbA1c", "value": 7.2, "unit": "%"}`` → ``"test: HbA1c; value: 7.2; unit: %"``."""
    parts = []
    for column, value in row.items():
        if not isinstance(column, str) or not column.strip():
            raise InputError(f"{where}: column names must be non-empty strings, got {column!r}", field="source")
        cell = _cell(value, f"{where}, column {column!r},")
        if cell is not None:
            parts.append(f"{column.strip()}: {cell}")
    return "; ".join(parts)


def record_units(source: Any) -> list[tuple[SourceUnit, str]]:
    """The units of ``source`` (any shape in the module docstring) with their kind, numbered from 0.

    Raises :class:`~doclens.core.errors.InputError` (field ``source``) naming the item at fault."""
    if source is None:
        return []
    if isinstance(source, str):
        if not source.strip():
            return []
        if source.lstrip().startswith("[0]"):
            return [(unit, KIND_TEXT) for unit in parse_source_units(source)]
        paragraphs = [p.strip("\n") for p in _PARAGRAPH_BREAK.split(source)]
        paragraphs = [p for p in paragraphs if p.strip()]
        return [(SourceUnit(index=i, text=p), KIND_TEXT) for i, p in enumerate(paragraphs)]
    if isinstance(source, (list, tuple)):
        strings = []
        for i, item in enumerate(source):
            if isinstance(item, str):
                strings.append(item)
            elif isinstance(item, dict):
                strings.append("")
            else:
                raise InputError(f"source item {i} must be a string (a unit or document) or an object "
                                 f"(a table row), got {type(item).__name__}", field="source")
        parsed = parse_source_units(strings)
        units = []
        for i, item in enumerate(source):
            if isinstance(item, dict):
                units.append((SourceUnit(index=i, text=row_text(item, f"source item {i} (table row)")), KIND_ROW))
            else:
                units.append((parsed[i], KIND_TEXT))
        return units
    raise InputError(f"source must be a string, or a list of strings and table rows, got {type(source).__name__}",
                     field="source")


def _unit_sentences(text: str) -> list[tuple[int, int]]:
    """Character spans of the sentences of a text unit (header-only lines and pieces with no
    letter or digit left out; list markers not included)."""
    spans = []
    offset = 0
    for line in text.split("\n"):
        if line.strip() and not is_header_line(line):
            for _start, body, end in sentence_spans(line):
                piece = line[body:end]
                if not has_content(piece):
                    continue
                left = body + (len(piece) - len(piece.lstrip()))
                right = body + len(piece.rstrip())
                spans.append((offset + left, offset + right))
        offset += len(line) + 1
    return spans


def split_facts(units: Sequence[tuple[SourceUnit, str]]) -> list[Fact]:
    """Facts of ``units`` (from :func:`record_units`), in source order."""
    facts: list[Fact] = []
    for unit, kind in units:
        if kind == KIND_ROW:
            if has_content(unit.text):
                facts.append(Fact(index=len(facts), unit=unit.index, position=0, start=0, end=len(unit.text),
                                  text=unit.text, speaker=unit.speaker, kind=KIND_ROW))
            continue
        for position, (start, end) in enumerate(_unit_sentences(unit.text)):
            facts.append(Fact(index=len(facts), unit=unit.index, position=position, start=start, end=end,
                              text=unit.text[start:end], speaker=unit.speaker, kind=KIND_TEXT))
    return facts


def source_facts(source: Any) -> list[Fact]:
    """The facts of ``source``, any shape in the module docstring."""
    return split_facts(record_units(source))


def facts_hash(facts: Sequence[Fact]) -> str:
    """A content hash of the facts as they are indexed (text, speaker, unit and position): equal
    for the same record however it was given, different when any fact changes."""
    digest = hashlib.sha256()
    for fact in facts:
        digest.update(json.dumps([fact.unit, fact.position, fact.kind, fact.premise_text],
                                 ensure_ascii=False).encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()
