"""Split a clinical note into the four ACI-BENCH divisions by its headers.

Divides a note as ACI-BENCH's ``SectionTagger.divide_note_by_metasections`` (Yim et al., 2023)
does:

* a line opens a subsection when it starts with a known header followed by ``:``, or when the
  whole line is the header without the colon (``RESULTS``); a line starting with ``IMPRESSION``
  (upper case only) opens the assessment and plan;
* text before the first header belongs to ``subjective``;
* only the first occurrence of each division is kept, and a kept division runs until the next
  kept division starts — so later headers of an already-seen division, and unknown headers such
  as ``VITALS``, stay inside the division they follow.

The division *boundaries* are ACI-BENCH's, but the division *scores* DocLens reports by default
are not its published ones: ACI-BENCH glued the lines of each division with ``__lf1__``, scored
a missing division as the text ``#####EMPTY#####`` and averaged a division over all notes.
``cards/baselines.md`` explains the difference; ``compute_baselines(..., divisions="aci-bench")``
reproduces ACI-BENCH's procedure.
``__lf1__`` (ACI-BENCH's line-break token in one-note-per-line files) is read as a line break by
:func:`split_note_sections`.

Real system notes write their headers in more ways than ACI-BENCH's tagger reads (docs/design.md
§4): inline after a preamble (``Possible clinical note: HISTORY OF PRESENT ILLNESS: …``), numbered
or marked up in running text (``… 2) Physical exam: …``, ``**Results:**``, ``Section 2: Physical
Exam``), or on a line of their own with the colon on the next (``HISTORY OF PRESENT ILLNESS\n: …``).
With ``real_headers=True`` (what :func:`segments`, and so the scorer, uses) such a header opens its
division too: the whitespace before it is read as a line break (offsets are unchanged) and a line
may begin with a list or markup marker. A key inside running text opens a division only where the
test-2/3 system outputs write headers there (:func:`break_inline_headers`): after a preamble's
colon, two spaces (a flattened line break), a list or markup marker, or written in capitals — never
after one space at a sentence end (``… throbbing pain. Examination: sensation intact …`` is a
clinician's sentence, as ACI-BENCH's tagger reads it). And each division is the **union of its
spans**: a later header always reopens its own division (``REVIEW OF SYSTEMS`` after the exam is
subjective again), where ACI-BENCH's tagger keeps only a division's first span and leaves a later
header's text inside whatever division it follows. No ACI-BENCH reference note writes a division
twice or a key inside a paragraph, so on clinicians' notes both readings divide alike
(``tests/parsing/test_sections.py``). The default (``False``) is ACI-BENCH's tagger, which the baselines
and the citation statements (the original scripts' ``divide_section.py``) reproduce.
"""

from __future__ import annotations

import functools
import re

from doclens.core.tasks import SECTION_NAMES, Task

__all__ = ["LINE_BREAK_TOKEN", "SECTION_NAMES", "detect_task", "looks_like_note", "note_section_spans", "segments",
           "split_note_sections"]

#: ACI-BENCH's stand-in for a line break in one-note-per-line files.
LINE_BREAK_TOKEN = "__lf1__"

# (division, header with colon or bare); a header ending in ':' also matches bare on its own line.
_HEADERS: list[tuple[str, list[str]]] = [
    ("subjective", ["cc :", "chief complaint :", "reason for visit :"]),
    ("subjective", ["history :", "history of present illness :", "history of present illness", "hpi :", "hpi",
                    "hpi notes :", "interval history :", "interval hx :", "subjective :"]),
    ("subjective", ["ros :", "review of system :", "review of systems :"]),
    ("objective_exam", ["physical exam :", "physical examination :", "pe :", "physical findings :",
                        "examination :", "exam :"]),
    ("objective_results", ["results :", "findings :"]),
    ("assessment_and_plan", ["assessment :", "a:"]),
    ("assessment_and_plan", ["plan :", "plan of care :", "p:", "medical decision-making plan :", "summary plan"]),
    ("assessment_and_plan", ["ap :", "a / p :", "assessment and plan :", "assessment & plan :",
                             "disposition / plan :"]),
]


def _words(header: str) -> str:
    return r"\s*".join(re.escape(part) for part in header.split(" "))


def _compile(headers: list[str]) -> re.Pattern:
    prefix = [_words(h) for h in headers]
    bare = [_words(h[:-1].rstrip()) for h in headers if h.endswith(":")]
    pattern = r"\s*(?:" + "|".join(prefix) + r")"
    if bare:
        pattern = r"(?:" + pattern + r"|\s*(?:" + "|".join(bare) + r")\s*$)"
    return re.compile(pattern, re.IGNORECASE)


_COMPILED = [(division, _compile(headers)) for division, headers in _HEADERS]
_IMPRESSION = re.compile(r"\s*IMPRESSION")
#: What may stand before a header at the start of a line in real outputs: "1)", "2.", "-", "##",
#: "**", "Section 2:".
_MARKER = re.compile(r"\s*(?:(?:section\s*)?\d{1,2}\s*[.):]|[-•#*]+)?\s*\**\s*", re.IGNORECASE)
#: A header inside running text (real outputs): after a sentence end, a colon, a list or markup
#: marker, or two spaces; and followed by a colon (possibly after "**"), or written in capitals.
_INLINE_NAMES = sorted({h.rstrip(" :") for _, headers in _HEADERS for h in headers if len(h.rstrip(" :")) > 3}
                       | {"physical exam", "assessment and plan", "history of present illness"}, key=len, reverse=True)
_INLINE = re.compile(
    r"(?:(?<=[.!?:])|(?<=\s\s))\s+(?=(?:(?:section\s*)?\d{1,2}\s*[.):]\s*|[-•#*]+\s*)?\**\s*(?:"
    + "|".join(_words(name) for name in _INLINE_NAMES) + r")\s*\**\s*:)", re.IGNORECASE)
_INLINE_CAPS = re.compile(
    r"(?:(?<=[.!?:])|(?<=\s\s))\s+(?=(?:" + "|".join(_words(name.upper()) for name in _INLINE_NAMES)
    + r")\b(?:\s*:|\s+[A-Z][a-z]))")
_SECTION_NUMBER = re.compile(r"(?<=\S)\s+(?=section\s*\d{1,2}\s*:)", re.IGNORECASE)
#: After a "Section 2:" marker, a header needs no colon ("Section 2: Physical Exam The vital signs").
_NAMED = re.compile(r"\s*(?:" + "|".join(_words(name) for name in _INLINE_NAMES) + r")\b", re.IGNORECASE)
_NAMED_DIVISION = {name: division for division, headers in _HEADERS for h in headers
                   for name in [h.rstrip(" :")] if name in _INLINE_NAMES}


def _line_division(line: str, real_headers: bool = False) -> str | None:
    if real_headers:
        marker = _MARKER.match(line)
        if marker and re.match(r"\s*section", marker.group(0), re.IGNORECASE):
            named = _NAMED.match(line, marker.end())
            if named:
                return _NAMED_DIVISION.get(" ".join(named.group(0).lower().split()), "subjective")
        line = line[marker.end():] if marker else line
    for division, regex in _COMPILED:
        if regex.match(line):
            return division
    if _IMPRESSION.match(line):
        return "assessment_and_plan"
    return None


_LIST_NUMBER_BEFORE = re.compile(r"(?:^|\s)(?:section\s*)?\d{1,2}\s*[.)]$", re.IGNORECASE)
_MARKER_AHEAD = re.compile(r"(?:(?:section\s*)?\d{1,2}\s*[.):]|[-•#*]+)", re.IGNORECASE)


def _opens_inline(text: str, match: re.Match, in_capitals: bool) -> bool:
    """Whether a key found inside running text (``match`` spans the whitespace before it) is a
    header where real outputs write one. Measured on the test-2/3 system outputs (all 21 systems,
    ``benchmarks/inline_headers.py``): every inline key there follows a preamble's colon, two
    spaces, a list or markup marker, or is in capitals; a title-case key after one space at a
    sentence end occurs only after a list number (``… legs. 3. Results: …``)."""
    before = text[:match.start()]
    return (in_capitals or before.endswith(":") or len(match.group(0)) >= 2 or before.endswith(" ")
            or bool(_MARKER_AHEAD.match(text, match.end())) or bool(_LIST_NUMBER_BEFORE.search(before)))


def break_inline_headers(text: str) -> str:
    """``text`` with the whitespace character before each header written inside running text
    replaced by a line break (same length, so offsets stay valid); a key after one space at a
    sentence end is left in its sentence (:func:`_opens_inline`)."""
    spots = {m.end() - 1 for m in _INLINE.finditer(text) if _opens_inline(text, m, False)}
    spots |= {m.end() - 1 for regex in (_INLINE_CAPS, _SECTION_NUMBER) for m in regex.finditer(text)}
    if not spots:
        return text
    chars = list(text)
    for spot in spots:
        chars[spot] = "\n"
    return "".join(chars)


def note_section_spans(text: str, real_headers: bool = False) -> list[tuple[str, int, int]]:
    """``[(division, start, end), …]`` in order of appearance; character offsets into ``text``,
    the spans covering it end to end. ``real_headers``: also read the headers real outputs write,
    and give every span (a division may appear several times: a later header reopens it;
    neighbouring spans of one division are merged); without it, ACI-BENCH's tagger: one span per
    division, the first, running to the next kept division (module docstring)."""
    starts: list[tuple[str, int]] = []
    offset = 0
    for line in (break_inline_headers(text) if real_headers else text).split("\n"):
        division = _line_division(line, real_headers)
        if division is not None:
            starts.append((division, offset))
        offset += len(line) + 1
    if not starts or starts[0][1] != 0:
        starts.insert(0, ("subjective", 0))
    kept: list[tuple[str, int]] = []
    seen = set()
    for division, start in starts:
        if real_headers:
            if not kept or kept[-1][0] != division:
                kept.append((division, start))
        elif division not in seen:
            seen.add(division)
            kept.append((division, start))
    kept.sort(key=lambda item: item[1])
    return [(division, start, kept[i + 1][1] if i + 1 < len(kept) else len(text))
            for i, (division, start) in enumerate(kept)]


def split_note_sections(text: str, real_headers: bool = False) -> dict[str, str]:
    """Map each of :data:`SECTION_NAMES` to its text, stripped (``""`` where the note has no such
    section). ``__lf1__`` in ``text`` is read as a line break. ``real_headers``: also read the
    headers real outputs write (module docstring); a header's text is then cut at the line break
    put before it, and a division written several times is its spans' texts joined by line breaks.

    >>> sections = split_note_sections("CHIEF COMPLAINT__lf1__Cough.__lf1__PLAN__lf1__Rest.")
    >>> sections["subjective"], sections["objective_exam"], sections["assessment_and_plan"]
    ('CHIEF COMPLAINT\\nCough.', '', 'PLAN\\nRest.')
    """
    text = text.replace(LINE_BREAK_TOKEN, "\n")
    if real_headers:
        text = break_inline_headers(text)
    parts: dict[str, list[str]] = {name: [] for name in SECTION_NAMES}
    for division, start, end in note_section_spans(text, real_headers):
        if text[start:end].strip():
            parts[division].append(text[start:end].strip())
    return {name: "\n".join(found) for name, found in parts.items()}


def looks_like_note(text: str) -> bool:
    """Whether ``text`` is shaped like a SOAP note: header lines of at least two of the four
    divisions (``HISTORY OF PRESENT ILLNESS`` … ``ASSESSMENT AND PLAN``).

    >>> looks_like_note("HPI: knee pain.\\nPHYSICAL EXAM\\nSwelling.")
    True
    >>> looks_like_note("Knee pain for two weeks. Plan: rest.")
    False
    """
    text = text.replace(LINE_BREAK_TOKEN, "\n")
    return len({_line_division(line) for line in text.split("\n")} - {None}) >= 2


def detect_task(reference: str) -> str:
    """``task="auto"``: ``note_generation`` for a SOAP-shaped reference, else ``general``."""
    return "note_generation" if looks_like_note(reference) else "general"


def segments(task: str, text: str) -> dict[str | None, str]:
    """The parts of ``text`` scored separately: the four SOAP divisions for
    ``note_generation``, else the whole text under the key ``None``."""
    if task == Task.NOTE_GENERATION:
        return dict(_note_segments(text))  # a new dict each call: callers may change theirs
    return {None: text}


@functools.lru_cache(maxsize=256)
def _note_segments(text: str) -> tuple[tuple[str | None, str], ...]:
    """A note's sections, cut once a text (a note is cut for its claims, their placement and each
    reward step's references again; issue 49)."""
    return tuple(split_note_sections(text, real_headers=True).items())
