"""v11 (issue 46): a claim that the vital signs are normal ("Vital signs are normal.", "Her vitals
were stable.", "All vital signs are within normal limits."), or that one of them is ("Her blood
pressure is normal.", "Heart rate was normal.", "She is afebrile."), where the note says so only
with its readings ("BP: 118/77. HR: 77 bpm. Temperature 98.6."), or under a VITALS heading ("VITALS /
Within normal limits"), which the analysis does not read as a sentence of its own.

The note supports "the vital signs are normal" when it gives at least :data:`MIN_READINGS` vital
signs, every one inside the adult range below, and says none of them is abnormal (an affirmed
"elevated blood pressure", "tachycardic", "febrile"), or when a VITALS heading is followed by a line
that calls them normal; it supports "the blood pressure is normal" when it gives the blood pressure,
every reading of it in range, and calls no vital sign abnormal. The ranges are the thresholds that
name an abnormal vital sign: hypotension below 90/60 and hypertension from 140/90 mmHg (JNC 7:
normal and prehypertension are both below 140/90), bradycardia below 60 and tachycardia above 100
beats a minute, bradypnea below 12 and tachypnea above 20 breaths a minute, fever from 100.4 °F
(38.0 °C) and hypothermia below 95 °F (35 °C), and an oxygen saturation below 95 % (MedlinePlus,
"Vital signs" and "Pulse oximetry"). A reading outside its range, a vital sign the note does not
give, or a single reading for all of them leaves the claim's words missing as before (docs/design.md,
"Judging real notes").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from types import MappingProxyType
from typing import NamedTuple

from doclens.evaluators.rules.findings import Finding, FindingKind
from doclens.evaluators.rules.sentences import Sentence, Status, Word

#: The fewest vital signs a note must give for "the vital signs are normal" (one oxygen saturation
#: says nothing of the others).
MIN_READINGS = 2

#: The words with which a claim calls the vital signs, or one of them, normal (beside the section key
#: and the patient's name, which the note need not use; "afebrile" is a normal temperature).
NORMAL_WORDS = frozenset("""normal stable good fine great excellent ok okay within limits limit range ranges wnl
unremarkable acceptable all today look looks looked appear appears appeared seem seems seemed""".split())
#: Words that call the vital signs unchanged or seen rather than normal: a reading out of range does not
#: contradict them.
_NOT_SAYING_NORMAL = frozenset("stable look looks looked appear appears appeared seem seems seemed".split())
VITAL_WORDS = frozenset({"vital", "vitals", "sign", "signs"})
#: kind → how a claim names it: a claim calling one vital sign normal names it whole ("heart rate",
#: not "heart": "the heart is normal" is the heart's examination).
_NAMED = MappingProxyType({
    "blood pressure": re.compile(r"\b(?:blood pressures?|bps?)\b", re.I),
    "heart rate": re.compile(r"\b(?:heart rates?|pulse rates?|pulses?|hr)\b", re.I),
    "respiratory rate": re.compile(r"\b(?:respiratory rates?|respiration rates?|respirations|breathing rates?|rr)\b", re.I),
    "temperature": re.compile(r"\b(?:temperatures?|temp|afebrile)\b", re.I),
    "oxygen saturation": re.compile(r"\b(?:oxygen saturations?|o2 sat(?:uration)?s?|spo2|oxygenation|pulse ox\w*)\b", re.I),
})

_NUMBER = r"[^0-9\n]{0,40}?(\d{2,3}(?:\.\d+)?)"
#: kind → (the words that name it, then its reading); the readings' ranges are :data:`RANGES`.
_READINGS = MappingProxyType({
    "blood pressure": re.compile(r"\b(?:blood pressure|bp)\b[^0-9\n]{0,40}?(\d{2,3})\s*(?:/|over)\s*(\d{2,3})\b", re.I),
    "heart rate": re.compile(r"\b(?:heart rate|pulse rate|pulse|hr)\b" + _NUMBER, re.I),
    "respiratory rate": re.compile(r"\b(?:respiratory rate|respiration rate|respirations|breathing rate|rr)\b"
                                   + _NUMBER, re.I),
    "temperature": re.compile(r"\b(?:temperature|temp)\b" + _NUMBER, re.I),
    "oxygen saturation": re.compile(r"\b(?:oxygen saturation|o2 saturation|o2 sat|spo2|oxygenation|pulse ox\w*|"
                                    r"saturation|sats?)\b" + r"[^0-9\n]{0,40}?(\d{2,3})\s*%", re.I),
})
#: kind → the ranges of a normal reading (inclusive): the module docstring's thresholds.
RANGES: Mapping[str, tuple[tuple[float, float], ...]] = MappingProxyType({
    "blood pressure": ((90, 139), (60, 89)),  # systolic, diastolic
    "heart rate": ((60, 100),),
    "respiratory rate": ((12, 20),),
    "temperature": ((95.0, 100.3),),  # °F; a value under 50 is read in °C (35.0-37.9)
    "oxygen saturation": ((95, 100),),
})
#: Words that call a vital sign abnormal where the note affirms them.
ABNORMAL_STATES = frozenset("""tachycardic tachycardia bradycardic bradycardia febrile hypotensive hypotension hypoxic
hypoxia hypoxemia tachypneic tachypnea hypothermic hypothermia""".split())
_LEVEL_WORDS = frozenset("elevated high low abnormal increased decreased borderline".split())
_VITAL_TERMS = tuple(frozenset(terms.split()) for terms in (
    "blood pressur", "heart rate", "puls", "temperatur", "respir", "satur"))
_HEADING = re.compile(r"^\W*vital(?:s| signs)?(?: reviewed)?\W*$", re.I)
_OWNER = re.compile(r"^([A-Z][a-z]+)['’]s\s")
_SAID_NORMAL = re.compile(r"^\W*(?:(?:are|were|all)\s+)?(?:within normal limits|wnl|normal|stable|unremarkable)\W*$", re.I)


def _in_range(kind: str, values: tuple[float, ...]) -> bool:
    if kind == "temperature" and values[0] < 50:
        return 35.0 <= values[0] <= 37.9
    return all(low <= value <= high for value, (low, high) in zip(values, RANGES[kind]))


def readings(text: str) -> dict[str, list[tuple[bool, str]]]:
    """Each vital sign ``text`` gives, with each reading as written and whether it is in its normal range."""
    found: dict[str, list[tuple[bool, str]]] = {}
    for kind, pattern in _READINGS.items():
        for match in pattern.finditer(text):
            ok = _in_range(kind, tuple(float(v) for v in match.groups()))
            found.setdefault(kind, []).append((ok, "/".join(match.groups())))
    return found


@lru_cache(maxsize=64)
def _heading_says_normal(premise: str) -> str | None:
    """The line after a VITALS heading that calls the vital signs normal ("Within normal limits")."""
    lines = [line.strip() for line in premise.splitlines() if line.strip()]
    return next((after for line, after in zip(lines, lines[1:]) if _HEADING.match(line) and _SAID_NORMAL.match(after)),
                None)


def _called_abnormal(sentence: Sentence) -> bool:
    said = {w.text.lower() for w in sentence.words if w.status == Status.AFFIRMED}
    if said & ABNORMAL_STATES:
        return True
    return bool(said & _LEVEL_WORDS) and any(terms <= sentence.stems for terms in _VITAL_TERMS)


def _normal_kinds(premise_sentences: list[Sentence]) -> tuple[dict[str, list[tuple[bool, str]]], dict[str, list[Sentence]]]:
    """Each vital sign the note gives, its readings (whether in range, as written) and the sentences
    giving it (the note's affirmed "afebrile" is a temperature in range)."""
    kinds: dict[str, list[tuple[bool, str]]] = {}
    shown: dict[str, list[Sentence]] = {}
    for sentence in premise_sentences:
        found = readings(sentence.text)
        if not found and any(w.text.lower() == "afebrile" and w.status == Status.AFFIRMED for w in sentence.words):
            found = {"temperature": [(True, "afebrile")]}
        for kind, said in found.items():
            kinds.setdefault(kind, []).extend(said)
            shown.setdefault(kind, []).append(sentence)
    return kinds, shown


def normal_vitals(premise: str, premise_sentences: list[Sentence], named: frozenset[str] = frozenset()) -> list[Sentence] | None:
    """The note sentences that say the vital signs are normal (their readings, or the line under a
    VITALS heading), or, with ``named``, those vital signs; ``None`` when the note does not say so
    (module docstring)."""
    if any(_called_abnormal(s) for s in premise_sentences):
        return None
    kinds, shown = _normal_kinds(premise_sentences)
    if named:
        if not all(kind in kinds and all(ok for ok, _ in kinds[kind]) for kind in named):
            return None
        return [s for kind in sorted(named) for s in shown[kind]]
    heading = _heading_says_normal(premise)
    if heading is not None:
        return [s for s in premise_sentences if s.text.strip() == heading][:1] or None
    if len(kinds) < MIN_READINGS or not all(ok for said in kinds.values() for ok, _ in said):
        return None
    return sorted({id(s): s for ss in shown.values() for s in ss}.values(), key=premise_sentences.index)


def _out_of_range(premise_sentences: list[Sentence], named: frozenset[str], word: str) -> list[Finding]:
    """A claim calling the vital signs (or those ``named``) normal by ``word`` where the note gives a
    reading of one outside its range: the contradiction, in both texts' words."""
    kinds, _ = _normal_kinds(premise_sentences)
    for kind in sorted(named or kinds):
        wrong = [value for ok, value in kinds.get(kind, ()) if not ok]
        if wrong:
            return [Finding(FindingKind.QUALIFIER, f"note says {kind} {wrong[0]} (outside the normal range), "
                                                   f"claim says {word}", conflict=True)]
    return []


class VitalsSaid(NamedTuple):
    """What :func:`normal_vitals_words` found: the claim's words the note's vital signs say, the
    sentences that say them, and a reading that contradicts the claim."""

    words: set[str]
    shown: list[Sentence]
    problems: list[Finding]


def normal_vitals_words(claim: str, words: list[Word], key: set[str], premise: str,
                        premise_sentences: list[Sentence]) -> VitalsSaid:
    """The claim's words that the note's normal vital signs say (every content word of a claim
    that the vital signs, or the ones it names, are normal, none negated; a name opening the claim
    as their possessor, "Joe's vital signs", is the patient's), with the sentences that say it; or
    the reading out of range that contradicts it (a claim that says "stable" is not contradicted:
    a stable reading may stay high); else nothing."""
    owner = _OWNER.match(claim)
    said = {w.text.lower() for w in words} - key - ({owner.group(1).lower()} if owner else set())
    named = frozenset(kind for kind, pattern in _NAMED.items() if pattern.search(claim))
    names = {w.lower() for kind in named for m in _NAMED[kind].finditer(claim) for w in m.group(0).split()}
    if said & VITAL_WORDS:
        named, names = frozenset(), set(VITAL_WORDS)
    calls_normal = sorted(said & (NORMAL_WORDS - {"all", "today"}) | said & {"afebrile"})
    if (not names or not calls_normal or not said <= NORMAL_WORDS | names
            or any(w.status != Status.AFFIRMED for w in words if w.text.lower() in said)):
        return VitalsSaid(set(), [], [])
    shown = normal_vitals(premise, premise_sentences, named)
    if shown:
        return VitalsSaid(said | ({owner.group(1).lower()} if owner else set()), shown, [])
    strong = [w for w in calls_normal if w not in _NOT_SAYING_NORMAL]
    return VitalsSaid(set(), [], _out_of_range(premise_sentences, named, strong[0]) if strong else [])


def claim_vitals(claim: str) -> frozenset[str]:
    """v12: the vital signs a claim names, whole ("blood pressure", "heart rate": :data:`_NAMED`)."""
    return frozenset(kind for kind, pattern in _NAMED.items() if pattern.search(claim))


def _level(kind: str, values: tuple[float, ...]) -> int:
    """A reading's level against its adult range (:data:`RANGES`): -1 below, 0 inside, +1 above (a
    blood pressure is above when either number is: 150/85 is elevated)."""
    if kind == "temperature" and values[0] < 50:
        return -1 if values[0] < 35.0 else (1 if values[0] > 37.9 else 0)
    signs = {-1 if value < low else (1 if value > high else 0) for value, (low, high) in zip(values, RANGES[kind])}
    return 1 if 1 in signs else (-1 if -1 in signs else 0)


def reading_levels(sentences: list[Sentence], kinds: frozenset[str]) -> list[tuple[str, str, int]]:
    """v12: each reading of the vital signs ``kinds`` that ``sentences`` give: (kind, the reading as
    written, its level: :func:`_level`). A note's 150/95 says a claim's "blood pressure is elevated"
    (levels.py)."""
    return [(kind, "/".join(match.groups()), _level(kind, tuple(float(v) for v in match.groups())))
            for sentence in sentences for kind in sorted(kinds) for match in _READINGS[kind].finditer(sentence.text)]
