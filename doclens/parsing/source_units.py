"""Parse a generation source into citable units numbered from 0 (``docs/design.md`` §1).

Accepted forms:

* a string ``"[0] first unit [1] second unit"``;
* ACI-BENCH dialogue turns ``"[0][doctor] hi . [1][patient] hello ."`` — the speaker is kept
  apart from the text;
* a list of strings, one per unit (a leading ``[i]`` marker matching the position is dropped).

A marker counts as a unit boundary only when its number is the next expected index, so
bracketed numbers inside a unit (``"[2] took [5] pills"`` would be unusual, but a dose like
``[10 mg]`` is common) never start a unit.

A string with no ``[0]`` marker (ACI-BENCH's own ``dialogue`` column) is refused unless the
caller asks for it to be numbered (``units``, :data:`SOURCE_UNITS`; ``--source-units``): by
``lines`` (each non-blank line a unit: ACI-BENCH's dialogues, one turn a line, numbered as the
converted ``[0][doctor] …`` files number them), ``turns`` (a unit from each ``[speaker]`` tag at
the start of a line to the next, untagged lines joining the turn above; text before the first
tag is a turn of its own) or ``sentences``; ``auto`` detects which: lines when there are several,
sentences in a one-line text. It never guesses turns: an untagged line may be a new turn (two
ACI-BENCH test-2 dialogues have such lines) or a continuation. The scorer says how many sources
it numbered each way, and the signature records the setting. A string that is numbered already
keeps its numbers whatever is asked: the prediction cites those.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from doclens.core.errors import InputError
from doclens.core.settings import SOURCE_UNITS, SourceUnits  # the vocabulary lives with the settings
from doclens.core.types import SourceUnit

_MARKER = re.compile(r"\[(\d+)\]")
_SPEAKER = re.compile(r"^\s*\[([A-Za-z][A-Za-z _\-]{0,30})\]\s*")
_TURN = re.compile(r"^[ \t]*\[[A-Za-z][A-Za-z _\-]{0,30}\]", re.MULTILINE)

NUMBER_HINT = ("number its citable units '[0] … [1] …', pass a list of strings, or have DocLens number them: "
               "--source-units lines|turns|sentences|auto (DocLens(source_units=...))")


def _split_speaker(text: str) -> tuple[str | None, str]:
    match = _SPEAKER.match(text)
    if match:
        return match.group(1).strip().lower(), text[match.end():].strip()
    return None, text.strip()


def _number_is(digits: str, number: int) -> bool:
    """``int(digits) == number``, without converting an absurdly long digit run (Python refuses
    more than 4,300 digits; no source has that many units)."""
    return len(digits) <= 18 and int(digits) == number


def _unnumbered_units(text: str, how: str) -> list[str]:
    """``text`` (no ``[0]`` marker) cut into units by ``how`` (lines, turns or sentences)."""
    if how == "lines":
        return [line for line in text.splitlines() if line.strip()]
    if how == "turns":
        starts = [m.start() for m in _TURN.finditer(text)]
        if not starts:
            raise InputError("source has no speaker tag ('[doctor] …' at the start of a line) to cut turns at: "
                             "number it by --source-units lines or sentences", field="source")
        preamble = [text[: starts[0]]] if text[: starts[0]].strip() else []  # a first turn with no tag
        return preamble + [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)])]
    from doclens.parsing.statements import split_sentences

    return split_sentences(text)


def number_source(text: str, units: SourceUnits) -> tuple[list[str] | None, SourceUnits]:
    """``(unit texts, how)`` of a source string: ``(None, "given")`` when it is numbered already
    (or ``units`` is ``given``), else its units cut as ``units`` says (``auto``: detected, the
    detected way returned)."""
    if units not in SOURCE_UNITS:
        raise InputError(f"source units must be one of {', '.join(SOURCE_UNITS)}, got {units!r}", field="source")
    if units == "given" or not text.strip() or text.lstrip().startswith("[0]"):
        return None, "given"
    how: SourceUnits = units
    if units == "auto":
        lines = [line for line in text.splitlines() if line.strip()]
        how = "lines" if len(lines) > 1 else "sentences"
    return _unnumbered_units(text, how), how


def parse_source_units(source: str | Sequence[str] | None, units: SourceUnits = "given") -> list[SourceUnit]:
    """Return the source's units, in order, numbered from 0.

    ``None`` or ``""`` gives ``[]``. A non-empty string with no ``[0]`` marker raises
    :class:`InputError` (field ``source``) unless ``units`` says how to number it
    (:data:`SOURCE_UNITS`, :func:`number_source`): guessing unit boundaries unasked would
    silently change which citations are valid.

    >>> [(u.index, u.speaker, u.text) for u in parse_source_units("[0][doctor] hi . [1][patient] i have a cough .")]
    [(0, 'doctor', 'hi .'), (1, 'patient', 'i have a cough .')]
    >>> [u.text for u in parse_source_units(["Fever.", "No cough."])]
    ['Fever.', 'No cough.']
    """
    if source is None:
        return []
    if isinstance(source, str) and units != "given":
        texts, _ = number_source(source, units)
        if texts is not None:
            return parse_source_units(texts)
    if isinstance(source, (list, tuple)):
        parsed = []
        for i, item in enumerate(source):
            if not isinstance(item, str):
                raise InputError(f"source unit {i} must be a string, got {type(item).__name__}", field="source")
            text = item.strip()
            lead = re.match(r"^\[(\d+)\]\s*", text)
            if lead and _number_is(lead.group(1), i):
                text = text[lead.end():]
            speaker, text = _split_speaker(text)
            parsed.append(SourceUnit(index=i, text=text, speaker=speaker))
        return parsed
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
        raise InputError(f"source has no '[0]' unit marker: {NUMBER_HINT}", field="source")
    if source[: starts[0][0]].strip():
        raise InputError("source has text before its '[0]' marker", field="source")
    parsed = []
    for i, (_, text_start) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else len(source)
        speaker, text = _split_speaker(source[text_start:end])
        parsed.append(SourceUnit(index=i, text=text, speaker=speaker))
    return parsed
