"""Split a prediction into statements and read the citations that close them.

A statement is a sentence of the prediction, or a bullet or line. Rules:

* lines are read one by one; within a line a sentence ends at ``.``, ``!`` or ``?`` (with any
  closing quotes or brackets) followed by white space or the end of the line, and at ``。``,
  ``！`` or ``？`` wherever they stand (scripts written without spaces);
* a sentence may start with any character, lower case included (``Pain improved. no fever
  today.`` is two statements), except after an ellipsis not followed by a capital (``...``,
  ``…``: a pause, ``i was ... i mean``) and after an abbreviation (``Dr.``, ``e.g.``, ``b.i.d.``, the
  list in :data:`ABBREVIATIONS`) or an initial (``A. Smith``); ``No.`` is an abbreviation only
  before a number (``No. 5``), so ``Narcotic pain medication: No. Her …`` is two statements;
* numbers (``1.2 cm``, ``2/6``) never split; a list marker (``1.``, ``a)``, ``•``) is removed
  wherever a sentence starts, at the start of a line or after another sentence on the same line
  (``… done. 2. Next item``);
* a citation group attaches to the sentence it closes: ``Fever [3].`` and ``Fever. [3]`` both
  cite 3; ``[3][4]``, ``[3, 4]`` and ``[3-5]`` (a range) are read; ids are de-duplicated; a
  line or sentence that holds only citations attaches them to the statement before it;
* letters and digits of any script are content: a piece with neither (``...``, ``—``) is no
  statement;
* a line that is only a section header (``HPI:``, ``ASSESSMENT AND PLAN``, ``## Plan``) carries
  no statement;
* citation markers are removed from the text that is judged.

The splitter runs in time linear in the length of the text: every regular expression is
anchored or bounded, nothing is re-scanned from the start of a line (a 1 MB prediction on one
line splits in well under a second; ``benchmarks/splitter.py`` measures it). The card
``cards/doclens.md`` compares it with pysbd on the ACI-BENCH notes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from doclens.core.types import Statement

#: One citation group: ``[3]``, ``[3, 4]``, ``[3-5]``. Only digits, commas, spaces and dashes.
CITATION_GROUP = re.compile(r"\[[ \t]*\d+(?:[ \t]*[,\-–][ \t]*\d+)*[ \t]*\]")
# citation groups right after a sentence's terminator: "Fever. [3][4]"
_CITATION_RUN = re.compile(r"(?:[ \t]*\[[ \t]*\d+(?:[ \t]*[,\-–][ \t]*\d+)*[ \t]*\])+")
# A list marker where a sentence starts: "-", "•", "1.", "(2)", "a)", "b.". "A." is not one
# (it may be an initial: "A. Smith"); "A)" is.
_LIST_MARKER = re.compile(r"[ \t]*(?:[-*•▪◦‣·]+|\(?\d{1,2}[.)]|\(?[a-z][.)]|\(?[A-Z]\))[ \t]+(?=\S)")
_TERMINATOR = re.compile(r"[.!?…。！？]+[\"')\]”’»]*")
_WIDE_TERMINATORS = frozenset("。！？")
_NON_SPACE = re.compile(r"\S")
# a word that may be an abbreviation: letters of any script, with inner dots ("e.g", "b.i.d")
_ABBREVIATION_TOKEN = re.compile(r"[^\W\d_]+(?:\.[^\W\d_]+)*")
_WINDOW = 48  # characters looked back at for the word before a full stop

#: Words that a full stop follows without ending the sentence (lower case, inner dots kept).
ABBREVIATIONS = frozenset({
    "dr", "mr", "mrs", "ms", "prof", "st", "vs", "e.g", "i.e", "etc", "approx", "nos", "fig", "cf", "al",
    "b.i.d", "t.i.d", "q.i.d", "q.d", "p.o", "p.r.n", "q.h.s", "h.s", "a.m", "p.m", "u.s", "pt", "pts",
    "hx", "dx", "tx", "rx", "sx", "y.o", "incl", "jr", "sr", "viz",
})
_MAX_RANGE = 200  # a range wider than this is a typo, not 200 citations
_MAX_ID_DIGITS = 18
#: What an id of more than 18 digits is read as: no source has this many units, so it counts as
#: an invalid id (the text is never converted to an unbounded integer).
OVERSIZED_ID = 10 ** _MAX_ID_DIGITS


def _read_id(digits: str) -> int:
    digits = digits.strip()
    return int(digits) if len(digits) <= _MAX_ID_DIGITS else OVERSIZED_ID


def parse_citation_group(group: str) -> list[int]:
    """``"[3, 4]"`` → ``[3, 4]``; ``"[3-5]"`` → ``[3, 4, 5]``. Order kept, duplicates dropped.

    A range wider than 200 keeps only its two ends; an id of more than 18 digits is read as
    :data:`OVERSIZED_ID` (an invalid id, never an error)."""
    inner = group.strip()[1:-1].strip()
    if inner.isdecimal():
        return [_read_id(inner)]
    ids: list[int] = []
    for part in inner.split(","):
        bounds = re.split(r"[ \t]*[-–][ \t]*", part.strip())
        if len(bounds) == 2:
            low, high = _read_id(bounds[0]), _read_id(bounds[1])
            if low <= high and high - low <= _MAX_RANGE:
                ids.extend(range(low, high + 1))
            else:
                ids.extend([low, high])
        else:
            ids.extend(_read_id(bound) for bound in bounds)
    return list(dict.fromkeys(ids))


def parse_citations(text: str) -> list[int]:
    """All citation ids in ``text``, in order of appearance, de-duplicated.

    >>> parse_citations("Fever for two days [2][0]. Worse at night [0].")
    [2, 0]
    """
    ids: list[int] = []
    for match in CITATION_GROUP.finditer(text):
        ids.extend(parse_citation_group(match.group(0)))
    return list(dict.fromkeys(ids))


_SPACE_BEFORE_PUNCT = re.compile(r"(?<![ \t])[ \t]+(?=[.,;:!?。！？，；：])")
_SPACE_RUN = re.compile(r"[ \t]{2,}")


def strip_citations(text: str) -> str:
    """Remove citation markers, and the space they leave before punctuation. Line breaks are
    kept (section headers and bullets are read line by line).

    >>> strip_citations("Fever for two days [0][2].")
    'Fever for two days.'
    """
    text = CITATION_GROUP.sub("", text)
    text = _SPACE_BEFORE_PUNCT.sub("", text)
    text = _SPACE_RUN.sub(" ", text)
    return "\n".join(line.strip() for line in text.split("\n")).strip()


def has_content(text: str) -> bool:
    """Whether ``text`` holds a letter or digit of any script."""
    return any(char.isalnum() for char in text)


def is_header_line(line: str) -> bool:
    """True for a line that is only a section header: ``HPI:``, ``CHIEF COMPLAINT``,
    ``## Assessment and Plan``, ``**Plan:**``."""
    stripped = line.strip()
    if not stripped or len(stripped) > 120:
        return False
    if re.match(r"#{1,6}\s", stripped):
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
    return (bool(letters) and core.upper() == core and core.lower() != core
            and not re.search(r"[.!?]$", core) and not re.search(r"\d", core))


def _full_stop_ends(line: str, stop: int, next_char: str, sentence_start: int) -> bool:
    """Whether the ``.`` at ``stop`` (followed by white space, then ``next_char``, or the end of
    the line when ``next_char`` is empty) ends a sentence. Looks back at most a few dozen
    characters, whatever the length of the line."""
    window_start = max(sentence_start, stop - _WINDOW)
    space = max(line.rfind(" ", window_start, stop), line.rfind("\t", window_start, stop))
    if space < 0 and window_start > sentence_start:
        return True  # a "word" longer than the window: no abbreviation, initial or list number
    token_start = space + 1 if space >= 0 else window_start
    token = line[token_start:stop].lstrip("([{\"'“‘")
    if _ABBREVIATION_TOKEN.fullmatch(token):
        lower = token.lower()
        if lower in ABBREVIATIONS:
            return False
        if lower == "no":  # "No. 5" is a number; "… medication: No. Her …" ends a sentence
            return not next_char.isdigit()
        if len(token) == 1 and token.isupper() and next_char.isupper():
            before = line[window_start:token_start].rstrip()
            if not before or not before[-1].isdigit():  # "A. Smith", not "38.5 C. Follow"
                return False
        return True
    if len(token) <= 2 and token.isdecimal():  # "Plan: 1. Start …": a list marker after a colon
        if line[window_start:token_start].rstrip().endswith(":"):
            return False
    return True


def sentence_spans(line: str) -> list[tuple[int, int, int]]:
    """Sentences of one line as ``(start, body, end)`` offsets: ``line[start:end]`` is the
    sentence with any citation groups that close it, ``line[body:end]`` the same without its
    leading list marker. Spans cover the line without gaps (white space between sentences goes
    to the sentence after it)."""
    spans: list[tuple[int, int, int]] = []
    start = 0
    while start < len(line):
        marker = _LIST_MARKER.match(line, start)
        body = marker.end() if marker else start
        end = _sentence_end(line, body)
        spans.append((start, body, end))
        start = end
    return spans


def _sentence_end(line: str, body: int) -> int:
    """Where the sentence whose body starts at ``body`` ends (:func:`sentence_spans`): after the
    first terminator that ends it, the citation groups that close it and the white space after
    them; the line's length when none does."""
    length = len(line)
    position = body
    while True:
        match = _TERMINATOR.search(line, position)
        if match is None:
            return length
        position = match.end()
        after = position
        if position < length and line[position] in " \t[":
            run = _CITATION_RUN.match(line, position)
            if run:
                after = run.end()
        wide = not _WIDE_TERMINATORS.isdisjoint(match.group(0))
        if not wide and after < length and not line[after].isspace():
            continue  # 1.2 cm, 3.5mg, e.g.x
        following = _NON_SPACE.search(line, after)
        next_char = following.group(0) if following else ""
        marks = match.group(0).rstrip("\"')]”’»")
        if not wide and marks == "." and not _full_stop_ends(line, match.start(), next_char, body):
            continue
        if not wide and next_char and not next_char.isupper() and (".." in marks or "…" in marks):
            continue  # a pause, not an end: "i have ... i mean", "chronic urol ... urolithiasis"
        return following.start() if following else length


def split_sentences(text: str) -> list[str]:
    """Every sentence of ``text``, line by line, by the same rules as :func:`parse_statements`,
    with nothing removed: list markers, headers and citation markers stay, so the sentences
    joined with spaces hold every token of ``text``. Empty lines give nothing.

    >>> split_sentences("Fever since Monday. No cough!\\n\\n- Takes ibuprofen [1]")
    ['Fever since Monday.', 'No cough!', '- Takes ibuprofen [1]']
    """
    sentences: list[str] = []
    for line in text.splitlines():
        for start, _body, end in sentence_spans(line):
            sentence = line[start:end].strip()
            if sentence:
                sentences.append(sentence)
    return sentences


def parse_statements(prediction: str, section: str | None = None, start_index: int = 0) -> list[Statement]:
    """Split ``prediction`` into :class:`Statement` objects, numbered from ``start_index``.

    Header-only lines are skipped; a line or sentence that holds only citations attaches them
    to the statement before it (or, with none before it, is dropped).

    >>> [(s.index, s.text, s.citations) for s in parse_statements("Fever since Monday [1]. No cough [2][3].")]
    [(0, 'Fever since Monday.', [1]), (1, 'No cough.', [2, 3])]
    """
    statements: list[Statement] = []
    for line in prediction.splitlines():
        if not line.strip() or is_header_line(line):
            continue
        for _start, body, end in sentence_spans(line):
            text = line[body:end]
            if not has_content(text):
                continue  # no letter or digit: neither a statement nor a citation
            clean = strip_citations(text)
            if not has_content(clean):
                ids = parse_citations(text)
                if ids and statements:
                    last = statements[-1]
                    last.citations = list(dict.fromkeys(last.citations + ids))
                continue
            closing, stray = read_citation_groups(text)
            statements.append(Statement(index=start_index + len(statements), text=clean, citations=closing,
                                        section=section, stray=stray))
    return statements


_STRAY_CONTEXT = re.compile(r"[ \t]*[^\s\[\]]{1,24}")
# words a bracketed number stands before when it is a quantity, not a citation: "[2] weeks"
_QUANTITY_WORD = re.compile(
    r"[ \t]*(?:seconds?|minutes?|mins?|hours?|hrs?|days?|nights?|weeks?|wks?|months?|years?|yrs?|times?|"
    r"doses?|tablets?|tabs?|pills?|puffs?|drops?|units?|mg|mcg|g|kg|lbs?|pounds?|ml|cc|cm|mm|inches|"
    r"out of|to \d|-year|-day|-week|-month|%)\b", re.IGNORECASE)


def read_citation_groups(sentence: str) -> tuple[list[int], list[str]]:
    """The ids of the citation groups of ``sentence``, and the bracketed numbers that are no
    citation in context, each shown with the word after it.

    A group cites what it follows: at a sentence's end (``Fever [3].``, ``Fever. [3]``) or after
    a clause inside it (``Fever [1] and cough [2] since Monday.``), as the original DocLens scripts
    read them. Two kinds are not citations: a group that opens the sentence, with nothing before
    it to cite for (``[2]Regarding your psoriasis …``, as LED writes), and a number in brackets
    before a unit or count (``Pain for [2] weeks.``). Those are reported, never judged.

    >>> read_citation_groups("Pain for [2] weeks [4].")
    ([4], ['[2] weeks'])
    >>> read_citation_groups("Fever [1] and cough [2] since Monday.")
    ([1, 2], [])
    >>> read_citation_groups("[2] She reports no fever.")
    ([], ['[2] She'])
    """
    closing: list[int] = []
    stray: list[str] = []
    for match in CITATION_GROUP.finditer(sentence):
        before = CITATION_GROUP.sub("", sentence[:match.start()])
        after = CITATION_GROUP.sub("", sentence[match.end():])
        opening = not has_content(before) and has_content(after)
        if opening or _QUANTITY_WORD.match(sentence, match.end()):
            context = _STRAY_CONTEXT.match(sentence, match.end())
            stray.append(match.group(0) + (context.group(0) if context else ""))
        else:
            closing.extend(parse_citation_group(match.group(0)))
    return list(dict.fromkeys(closing)), stray


#: what may follow a citation group used as a marker: the end of the text, a space, punctuation that
#: closes a sentence or clause, or another group ("Fever [3].", "Fever [3][4]", "Fever [3], cough [4]")
_MARKER_FOLLOWS = frozenset(".,;!?)[")
#: what may come right before one, besides a letter, digit or space: the end of a sentence or of a
#: quotation, or another group ("Fever.[3]", "Fever [3][4]"); never a comma or an operator ("cough,[1]")
_MARKER_AFTER = frozenset(".!?)]\"'”’")
#: a note's citation style is consistent when at least this share of its bracketed groups are markers
#: (cards/doclens.md, "What counts as a citation") ...
CONSISTENT_SHARE = 0.75
#: ... at least this share of the ids they cite name a source unit (an invalid id among valid ones is a
#: citation that fails, never a stray number: "Alpha [0, 9]." cites 0 and the invalid 9) ...
IN_RANGE_SHARE = 0.5
#: ... and its cited statements are at least this share of its statements: a citation in one fragment
#: of a long note is no style
CITED_SHARE = 0.25


@dataclass(frozen=True)
class CitationStyle:
    """How a prediction uses bracketed numbers (:func:`citation_style`): ``groups`` found,
    ``markers`` among them (closing a sentence or clause, followed by a space, punctuation or the
    end), the ``ids`` those cite and how many name a source unit (``in_range``), the statements
    that cite and all ``statements``. ``consistent``: whether its groups read as citations."""

    groups: int
    markers: int
    ids: int
    in_range: int
    cited_statements: int
    statements: int

    @property
    def consistent(self) -> bool:
        if not self.groups:
            return True  # nothing to read
        cited_enough = self.cited_statements >= CITED_SHARE * self.statements
        return (self.markers > 0 and self.markers >= CONSISTENT_SHARE * self.groups
                and self.in_range >= IN_RANGE_SHARE * self.ids and cited_enough)


def citation_style(prediction: str, statements: list[Statement], units: int) -> CitationStyle:
    """The citation style of ``prediction`` (its ``statements`` as parsed; ``units``: how many
    units its source has). A bracketed number is read as a citation only where the note cites in
    a consistent style: its groups used as markers, the numbers they cite mostly in the source's
    range, in more than a stray fragment (:attr:`CitationStyle.consistent`). LED's notes hold
    fragments such as ``[2]The onset …``, ``[5]=Neurological`` or ``[7]]Depression``: no style, so
    none of their numbers is read as a citation.

    >>> citation_style("Fever [0]. Cough [1].", parse_statements("Fever [0]. Cough [1]."), 2).consistent
    True
    >>> note = "[2]The onset was sudden. Pain in both knees. No fever [5]=Neurological."
    >>> citation_style(note, parse_statements(note), 30).consistent
    False
    """
    groups = markers = ids = in_range = 0
    for line in prediction.splitlines():
        for _start, body, end in sentence_spans(line):
            text = line[body:end]
            for match in CITATION_GROUP.finditer(text):
                groups += 1
                following = text[match.end():match.end() + 1]
                before = text[match.start() - 1:match.start()]
                closes = has_content(CITATION_GROUP.sub("", text[:match.start()])) and (
                    before.isalnum() or before.isspace() or before in _MARKER_AFTER)
                if closes and (not following or following.isspace() or following in _MARKER_FOLLOWS):
                    markers += 1
                    cited = parse_citation_group(match.group(0))
                    ids += len(cited)
                    in_range += sum(0 <= c < units for c in cited)
    return CitationStyle(groups, markers, ids, in_range, sum(bool(s.citations) for s in statements), len(statements))


def without_citations(statements: list[Statement]) -> list[Statement]:
    """The statements citing nothing: a prediction whose bracketed numbers are no citation style."""
    return [Statement(index=s.index, text=s.text, citations=[], section=s.section) for s in statements]


def whole_statement(prediction: str, section: str | None = None, start_index: int = 0) -> list[Statement]:
    """The whole ``prediction`` as one statement citing every id in it (none when it has no
    content): how the original DocLens scripts read a question summary."""
    clean = " ".join(strip_citations(prediction).split())
    if not has_content(clean):
        return []
    return [Statement(index=start_index, text=clean, citations=parse_citations(prediction), section=section)]


def inherit_citations(statements: list[Statement], within_section: bool = True) -> list[Statement]:
    """``uncited="inherit"``: an uncited statement borrows the citations of the next cited
    statement, as the original DocLens scripts did.

    With ``within_section`` (the default, as the original scripts, which split each note
    section on its own) the next cited statement must be in the same section: statements after
    the last cited one of their section stay uncited. ``within_section=False`` borrows across
    sections. Returns new objects; the input is not changed."""
    result: list[Statement] = []
    following: list[int] = []
    following_section: str | None = None
    for statement in reversed(statements):
        if within_section and statement.section != following_section:
            following = []
        following_section = statement.section
        if statement.citations:
            following = statement.citations
            result.append(statement)
        elif following:
            result.append(Statement(index=statement.index, text=statement.text, citations=list(following),
                                    section=statement.section, inherited=True))
        else:
            result.append(statement)
    return result[::-1]
