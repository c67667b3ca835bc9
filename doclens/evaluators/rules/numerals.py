"""clinical-rules v14 (issue 46): one number, one spelling. A number a note and a claim write in two
forms is read as one before either is tokenised (:func:`numbers_written_one_way`, called by
:class:`~doclens.evaluators.rules.analysis.Analyser`), so that the number rule (numbers.py) compares
values, not spellings (docs/design.md §4, "Numbers written another way"):

- a compound number word is its digits: "forty-five" is 45, "twenty one" 21, "sixty" 60;
- a Roman numeral that counts a type, stage, grade or class is its digits: "type II diabetes" is
  "type 2 diabetes", "stage III" "stage 3" (the analysis gives the number its kind as its unit:
  "type 2" is no count of tablets);
- a count written with "x" is written out: "x3 days" is "for 3 days", "vomited x2" "vomited 2 times",
  "3x daily" "3 times daily", "thrice" "three times";
- a half is a decimal: "half an hour" is "0.5 hour", "one and a half years" and "a year and a half"
  "1.5 years"; "in his fifties" is "in his 50s" (an age's decade);
- a dosing interval is written out: "q12h", "q 8 hrs", "every 6 hrs" are "every 12 hours", "every 8
  hours", "every 6 hours" (the analysis reads "every 12 hours" as twice a day);
- a daily or nightly frequency is one word: "a day", "per day", "each day", "every day" are "daily",
  "a night", "every night" "nightly" ("a mile a day" is "a mile daily"); "a day" after a word that
  makes it a length of time ("for a day", "in a day") stays a duration; "once a week", "every week"
  are "once weekly", "weekly".
"""

from __future__ import annotations

import re
from types import MappingProxyType

_UNITS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
_TEENS = MappingProxyType({"thirteen": 13, "fourteen": 14, "sixteen": 16, "seventeen": 17, "eighteen": 18,
                           "nineteen": 19})
_TENS = MappingProxyType({"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
                          "eighty": 80, "ninety": 90})
#: "forty-five", "twenty one", "sixty" (tens the judge's WORD_NUMBERS lack, and teens)
_COMPOUND = re.compile(r"\b(" + "|".join(_TENS) + r")(?:[\s-]+(" + "|".join(_UNITS) + r"))?\b|\b("
                       + "|".join(_TEENS) + r")\b", re.IGNORECASE)
#: words whose number names a kind, and is its unit ("type 2 diabetes": analysis._value_and_unit; shown "type 2")
KINDS_COUNTED = frozenset("type stage grade class".split())
_ROMAN = MappingProxyType({"i": 1, "ii": 2, "iii": 3, "iv": 4, "v": 5, "vi": 6})
#: words after which a Roman numeral counts ("type II", "stage IV", "grade III", "class I")
_COUNTED_BY_ROMAN = re.compile(r"\b(type|stage|grade|class)\s+(i{1,3}|iv|vi?)\b(?!-)", re.IGNORECASE)
_DOSING_INTERVAL = re.compile(r"\b(?:q\.?\s?(\d{1,2})\s?(?:h|hr|hrs|hours?)|every\s+(\d{1,2})\s?(?:h|hr|hrs))\b\.?",
                              re.IGNORECASE)
#: "<word> a day" (a frequency: "twice a day", "a mile a day") or "per / each / every day"
_PER_DAY = re.compile(r"(?:\b([\w'-]+)\s+)?\b(a|per|each|every)\s+(day|night)\b(?!\s*(?:-|or\b|to\b|before\b|after\b))",
                      re.IGNORECASE)
#: words that make "a day" a length of time ("for a day", "in a day", "about a day", "half a day")
_LENGTH_BEFORE = frozenset("""for in within over about around almost nearly approximately roughly than after past
last only just under least half of spent took take takes taking lasted lasts lasting""".split())
_PER = MappingProxyType({"day": "daily", "night": "nightly"})
#: "once a week", "twice per week", "3 times a week", "every week": "once weekly" … "weekly" (not "3 days a
#: week", whose days are counted: analysis._add_number)
_PER_WEEK = re.compile(r"\b(?:(once|twice|times|x)\s+(?:a|per|each|every)|every|each)\s+week\b(?!\s*(?:-|or\b|to\b))",
                       re.IGNORECASE)


#: "x3 days" (for 3 days), "vomited x2" (2 times), "3x daily" (3 times daily), "thrice" (three times)
_TIMES_X = re.compile(r"\b([A-Za-z]+)\s+x\s?(\d+)\b(?=(\s+(?:days?|weeks?|months?|years?|hours?)\b)?)", re.IGNORECASE)
_AFTER_TIMES = re.compile(r"\s*(?:[.,;:)]|$|(?:today|yesterday|this|last|in|over|since|per|a|an|daily|weekly)\b)",
                          re.IGNORECASE)
_X_AFTER = re.compile(r"\b(\d+)x\b", re.IGNORECASE)
_THRICE = re.compile(r"\bthrice\b", re.IGNORECASE)
_LENGTH_UNITS = r"(hour|day|week|month|year)s?"
#: "half an hour", "half a year" (0.5 of it); "one and a half years", "a year and a half" (1.5 of it)
_HALF = re.compile(rf"\bhalf\s+an?\s+{_LENGTH_UNITS}\b", re.IGNORECASE)
_AND_A_HALF = re.compile(rf"\b(\d+|one|two|three|four|five|six)\s+and\s+a\s+half\s+{_LENGTH_UNITS}\b", re.IGNORECASE)
_A_AND_A_HALF = re.compile(rf"\ban?\s+{_LENGTH_UNITS}\s+and\s+a\s+half\b", re.IGNORECASE)
_SMALL = MappingProxyType(dict(zip(("one", "two", "three", "four", "five", "six"), range(1, 7))))
#: "in his fifties" is "in his 50s" (an age's decade: analysis._value_and_unit)
_DECADES = re.compile(r"\b(twent|thirt|fort|fift|sixt|sevent|eight|ninet)ies\b", re.IGNORECASE)


def _times_x(match: re.Match) -> str:
    word, count, length = match.group(1), match.group(2), match.group(3)
    if word.lower() in ("x", "by") or re.fullmatch(r"\d+", word):
        return match.group(0)
    if length:
        return f"{word} for {count}"
    if not _AFTER_TIMES.match(match.string, match.end()):
        return match.group(0)  # "x 2 views": no count of times
    return f"{word} {count} times"


def _and_a_half(match: re.Match) -> str:
    whole = match.group(1).lower()
    return f"{int(whole) if whole.isdigit() else _SMALL[whole]}.5 {match.group(2)}s"


def _compound(match: re.Match) -> str:
    if match.group(3):
        return str(_TEENS[match.group(3).lower()])
    units = _UNITS.index(match.group(2).lower()) + 1 if match.group(2) else 0
    return str(_TENS[match.group(1).lower()] + units)


def _per_day(match: re.Match) -> str:
    before, per, period = match.group(1), match.group(2).lower(), match.group(3).lower()
    if per == "a" and (before is None or before.lower() in _LENGTH_BEFORE):
        return match.group(0)  # "for a day", "A day later": a length of time, or no frequency
    return (f"{before} " if before else "") + _PER[period]


def numbers_written_one_way(text: str) -> str:
    """``text`` with its numbers in one form (module docstring)."""
    text = _COMPOUND.sub(_compound, text)
    text = _DECADES.sub(lambda m: str(_TENS[m.group(1).lower() + "y"]) + "s", text)
    text = _THRICE.sub("three times", _X_AFTER.sub(r"\1 times", _TIMES_X.sub(_times_x, text)))
    text = _HALF.sub(r"0.5 \1", _A_AND_A_HALF.sub(r"1.5 \1s", _AND_A_HALF.sub(_and_a_half, text)))
    text = _COUNTED_BY_ROMAN.sub(lambda m: f"{m.group(1)} {_ROMAN[m.group(2).lower()]}", text)
    text = _DOSING_INTERVAL.sub(lambda m: f"every {m.group(1) or m.group(2)} hours", text)
    text = _PER_WEEK.sub(lambda m: f"{m.group(1)} weekly" if m.group(1) else "weekly", text)
    return _PER_DAY.sub(_per_day, text)
