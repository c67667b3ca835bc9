"""Parse a generation source into citable units numbered from 0 (``docs/design.md`` §1).

Accepted forms:

* a string ``"[0] first unit [1] second unit"``;
* ACI-BENCH dialogue turns ``"[0][doctor] hi . [1][patient] hello ."`` — the speaker is kept
  apart from the text;
* a list of strings, one per unit (a leading ``[i]`` marker matching the position is dropped).

A marker counts as a unit boundary only when its number is the next expected index, so
bracketed numbers inside a unit (``"[2] took [5] pills"`` would be unusual, but a dose like
``[10 mg]`` is common) never start a unit.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from doclens.core.errors import InputError
from doclens.core.types import SourceUnit

_MARKER = re.compile(r"\[(\d+)\]")
_SPEAKER = re.compile(r"^\s*\[([A-Za-z][A-Za-z _\-]{0,30})\]\s*")


def _split_speaker(text: str) -> tuple[str | None, str]:
    match = _SPEAKER.match(text)
    if match:
        return match.group(1).strip().lower(), text[match.end():].strip()
    return None, text.strip()


def _number_is(digits: str, number: int) -> bool:
    """``int(digits) == number``, without converting an absurdly long digit run (Python refuses
    more than 4,300 digits; no source has that many units)."""
    return len(digits) <= 18 and int(digits) == number


def parse_source_units(source: str | Sequence[str] | None) -> list[SourceUnit]:
    """Return the source's units, in order, numbered from 0.

    ``None`` or ``""`` gives ``[]``. A non-empty string with no ``[0]`` marker raises
    :class:`InputError` (field ``source``): guessing unit boundaries would silently change
    which citations are valid.

    >>> [(u.index, u.speaker, u.text) for u in parse_source_units("[0][doctor] hi . [1][patient] i have a cough .")]
    [(0, 'doctor', 'hi .'), (1, 'patient', 'i have a cough .')]
    >>> [u.text for u in parse_source_units(["Fever.", "No cough."])]
    ['Fever.', 'No cough.']
    """
    if source is None:
        return []
    if isinstance(source, (list, tuple)):
        units = []
        for i, item in enumerate(source):
            if not isinstance(item, str):
                raise InputError(f"source unit {i} must be a string, got {type(item).__name__}", field="source")
            text = item.strip()
            lead = re.match(r"^\[(\d+)\]\s*", text)
            if lead and _number_is(lead.group(1), i):
                text = text[lead.end():]
            speaker, text = _split_speaker(text)
            units.append(SourceUnit(index=i, text=text, speaker=speaker))
        return units
    if not isinstance(source, str):
        raise InputError(f"source must be a string or a list of strings, got {type(source).__name__}",
                         field="source")
    if not source.strip():
        return []
    starts: list[tuple[int, int]] = []  # (marker start, text start)
    expected = 0
    for match in _MARKER.finditer(source):
        if _number_is(match.group(1), expected):
            starts.append((match.start(), match.end()))
            expected += 1
    if not starts:
        raise InputError("source has no '[0]' unit marker: number its citable units '[0] … [1] …' "
                         "or pass a list of strings", field="source")
    if source[: starts[0][0]].strip():
        raise InputError("source has text before its '[0]' marker", field="source")
    units = []
    for i, (_, text_start) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else len(source)
        speaker, text = _split_speaker(source[text_start:end])
        units.append(SourceUnit(index=i, text=text, speaker=speaker))
    return units
