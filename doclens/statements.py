"""Split a prediction into statements and read the citations that close them (DESIGN §1).

A statement is a sentence of the prediction, or a bullet or line. Rules:

* a citation group attaches to the sentence it closes: ``Fever [3].`` and ``Fever. [3]`` both
  cite 3; ``[3][4]``, ``[3, 4]`` and ``[3-5]`` (a range) are read; ids are de-duplicated;
* numbers (``1.2 cm``, ``2/6``), list markers (``1.``, ``a)``, ``•``) and common abbreviations
  (``Dr.``, ``e.g.``, ``b.i.d.``) neither split a sentence nor cite;
* a line that is only a section header (``HPI:``, ``ASSESSMENT AND PLAN``, ``## Plan``) carries
  no statement;
* citation markers are removed from the text that is judged.
"""

from __future__ import annotations

import re
from typing import Optional

from doclens.types import Statement

#: One citation group: ``[3]``, ``[3, 4]``, ``[3-5]``. Only digits, commas, spaces and dashes.
CITATION_GROUP = re.compile(r"\[\s*\d+(?:\s*(?:,|-|–)\s*\d+)*\s*\]")
_CITATION_RUN = re.compile(r"(?:\s*\[\s*\d+(?:\s*(?:,|-|–)\s*\d+)*\s*\])+")
# "a." / "b)" / "A)" are list markers; "A." is not (it may be an initial: "A. Smith").
_LIST_MARKER = re.compile(r"^\s*(?:[-*•▪◦‣·]+|\(?\d{1,2}[.)]|\(?[a-z][.)](?=\s)|\(?[A-Z]\)(?=\s))\s+")
_TERMINATOR = re.compile(r"[.!?]+[\"')\]]*")
_ABBREVIATIONS = {
    "dr", "mr", "mrs", "ms", "prof", "st", "vs", "e.g", "i.e", "etc", "approx", "no", "nos", "fig",
    "b.i.d", "t.i.d", "q.i.d", "q.d", "p.o", "p.r.n", "q.h.s", "h.s", "a.m", "p.m", "u.s", "cf", "al",
}
_MAX_RANGE = 200  # a range wider than this is a typo, not 200 citations


def parse_citation_group(group: str) -> list[int]:
    """``"[3, 4]"`` → ``[3, 4]``; ``"[3-5]"`` → ``[3, 4, 5]``. Order kept, duplicates dropped."""
    ids: list[int] = []
    for part in group.strip()[1:-1].split(","):
        part = part.strip()
        bounds = re.split(r"\s*[-–]\s*", part)
        if len(bounds) == 2:
            low, high = int(bounds[0]), int(bounds[1])
            if low <= high and high - low <= _MAX_RANGE:
                ids.extend(range(low, high + 1))
            else:
                ids.extend([low, high])
        else:
            ids.append(int(part))
    return list(dict.fromkeys(ids))


def parse_citations(text: str) -> list[int]:
    """All citation ids in ``text``, in order of appearance, de-duplicated."""
    ids: list[int] = []
    for match in CITATION_GROUP.finditer(text):
        ids.extend(parse_citation_group(match.group(0)))
    return list(dict.fromkeys(ids))


def strip_citations(text: str) -> str:
    """Remove citation markers, and the space they leave before punctuation. Line breaks are
    kept (section headers and bullets are read line by line)."""
    text = CITATION_GROUP.sub("", text)
    text = re.sub(r"[ \t]+([.,;:!?])", r"\1", text)
    text = re.sub(r"[ \t]{2,}", " ", text)
    return "\n".join(line.strip() for line in text.split("\n")).strip()


def is_header_line(line: str) -> bool:
    """True for a line that is only a section header: ``HPI:``, ``CHIEF COMPLAINT``,
    ``## Assessment and Plan``, ``**Plan:**``."""
    stripped = line.strip()
    if not stripped:
        return False
    if re.match(r"^#{1,6}\s", stripped):
        return True
    core = stripped.strip("*_ ").strip()
    if not core or CITATION_GROUP.search(core):
        return False
    if len(core.split()) > 8:
        return False
    if core.endswith(":") and not re.search(r"\d:\d", core):
        return True
    letters = [c for c in core if c.isalpha()]
    # an all-capitals line is a header ("CHIEF COMPLAINT"), unless it holds a value ("BP 120/80")
    return (bool(letters) and core.upper() == core and not re.search(r"[.!?]$", core)
            and not re.search(r"\d", core))


def _ends_sentence(line: str, end: int, term_start: int) -> bool:
    """Whether the terminator ending at ``end`` closes a sentence."""
    rest = line[end:]
    if rest and not rest[0].isspace():
        return False  # 1.2 cm, 3.5mg, e.g.x
    following = rest.lstrip()
    if following and following[0].islower():
        return False
    word = re.search(r"([A-Za-z][A-Za-z.]*)$", line[:term_start])
    if word and line[term_start] == "." and (word.group(1).lower().rstrip(".") in _ABBREVIATIONS
                                             or len(word.group(1)) == 1):  # an initial: "A. Smith"
        return False
    return True


def _split_line(line: str) -> list[tuple[str, list[int]]]:
    """Sentences of one line, each with the citations it carries (cited before or after its
    terminator)."""
    pieces: list[tuple[str, list[int]]] = []
    start = 0
    for match in _TERMINATOR.finditer(line):
        if not _ends_sentence(line, match.end(), match.start()):
            continue
        end = match.end()
        run = _CITATION_RUN.match(line, end)
        if run:
            end = run.end()
        pieces.append((line[start:end], parse_citations(line[start:end])))
        start = end
    tail = line[start:]
    if tail.strip():
        if not strip_citations(tail) and pieces:
            text, ids = pieces[-1]  # a bare "[3]" after the last sentence closes it
            pieces[-1] = (text + tail, list(dict.fromkeys(ids + parse_citations(tail))))
        else:
            pieces.append((tail, parse_citations(tail)))
    return pieces


def parse_statements(prediction: str, section: Optional[str] = None, start_index: int = 0) -> list[Statement]:
    """Split ``prediction`` into :class:`Statement` objects, numbered from ``start_index``.

    Header-only lines are skipped; a line that holds only citations attaches them to the
    statement before it.
    """
    statements: list[Statement] = []
    for raw_line in prediction.splitlines():
        if not raw_line.strip() or is_header_line(raw_line):
            continue
        line = _LIST_MARKER.sub("", raw_line, count=1)
        for text, ids in _split_line(line):
            clean = strip_citations(text)
            if not re.search(r"[A-Za-z0-9]", clean):
                if ids and statements:
                    last = statements[-1]
                    last.citations = list(dict.fromkeys(last.citations + ids))
                continue
            statements.append(Statement(index=start_index + len(statements), text=clean, citations=ids,
                                        section=section))
    return statements


def inherit_citations(statements: list[Statement]) -> list[Statement]:
    """``uncited="inherit"``: an uncited statement borrows the citations of the next cited
    statement, as the original DocLens scripts did. Statements after the last cited one stay
    uncited. Returns new objects; the input is not changed."""
    result: list[Statement] = []
    following: list[int] = []
    for statement in reversed(statements):
        if statement.citations:
            following = statement.citations
            result.append(statement)
        elif following:
            result.append(Statement(index=statement.index, text=statement.text, citations=list(following),
                                    section=statement.section, inherited=True))
        else:
            result.append(statement)
    return result[::-1]
