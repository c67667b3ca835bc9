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
"""

from __future__ import annotations

import re

from doclens.core.tasks import SECTION_NAMES

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


def _line_division(line: str) -> str | None:
    for division, regex in _COMPILED:
        if regex.match(line):
            return division
    if _IMPRESSION.match(line):
        return "assessment_and_plan"
    return None


def note_section_spans(text: str) -> list[tuple[str, int, int]]:
    """``[(division, start, end), …]`` in order of appearance; character offsets into ``text``."""
    starts: list[tuple[str, int]] = []
    offset = 0
    for line in text.split("\n"):
        division = _line_division(line)
        if division is not None:
            starts.append((division, offset))
        offset += len(line) + 1
    if not starts or starts[0][1] != 0:
        starts.insert(0, ("subjective", 0))
    kept: list[tuple[str, int]] = []
    seen = set()
    for division, start in starts:
        if division not in seen:
            seen.add(division)
            kept.append((division, start))
    kept.sort(key=lambda item: item[1])
    return [(division, start, kept[i + 1][1] if i + 1 < len(kept) else len(text))
            for i, (division, start) in enumerate(kept)]


def split_note_sections(text: str) -> dict[str, str]:
    """Map each of :data:`SECTION_NAMES` to its text, stripped (``""`` where the note has no such
    section). ``__lf1__`` in ``text`` is read as a line break.

    >>> sections = split_note_sections("CHIEF COMPLAINT__lf1__Cough.__lf1__PLAN__lf1__Rest.")
    >>> sections["subjective"], sections["objective_exam"], sections["assessment_and_plan"]
    ('CHIEF COMPLAINT\\nCough.', '', 'PLAN\\nRest.')
    """
    text = text.replace(LINE_BREAK_TOKEN, "\n")
    sections = {name: "" for name in SECTION_NAMES}
    for division, start, end in note_section_spans(text):
        sections[division] = text[start:end].strip()
    return sections


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
    if task == "note_generation":
        return {name: part for name, part in split_note_sections(text).items()}
    return {None: text}
