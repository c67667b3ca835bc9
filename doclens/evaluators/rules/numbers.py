"""Rules 2 and 3 of ``clinical-rules``, **numbers with their units** and **laterality**: each
number and side of the claim is found in the premise where it speaks of the same concept or body
part, and several of one claim sentence are found together in one premise sentence."""

from __future__ import annotations

import re
from types import MappingProxyType
from typing import NamedTuple

from doclens.evaluators.rules.analysis import Analyser
from doclens.evaluators.rules.findings import Finding, FindingKind
from doclens.evaluators.rules.numerals import KINDS_COUNTED
from doclens.evaluators.rules.sentences import Sentence, Side, Word
from doclens.evaluators.rules.words import FREQUENCY, ONCE_PER, POLAR, is_content, is_number, number_value

#: Durations in days, to read one length written in two units as one: "one month" is "4 weeks", "1
#: year" is "12 months" (v7); v14: "48 hours" is "2 days", "30 minutes" "0.5 hour". Within
#: :data:`DURATION_TOLERANCE` of each other they are the same.
DAYS = MappingProxyType({"minute": 1 / 1440, "hour": 1 / 24, "day": 1, "week": 7, "month": 30, "year": 365})
DURATION_TOLERANCE = 0.1


def same_duration(value: str, unit: str | None, other: str, other_unit: str | None) -> bool:
    """Whether two numbers say one duration in two units of :data:`DAYS` ("1 month", "4 weeks")."""
    if unit is None or other_unit is None or unit not in DAYS or other_unit not in DAYS or unit == other_unit:
        return False
    try:
        days, other_days = float(value) * DAYS[unit], float(other) * DAYS[other_unit]
    except ValueError:
        return False
    return abs(days - other_days) <= DURATION_TOLERANCE * max(days, other_days)


def _comparable(unit: str | None, other_unit: str | None) -> bool:
    """Units a number can be compared in: the same, or two of :data:`DAYS`."""
    return unit == other_unit or (unit in DAYS and other_unit in DAYS)


def _number_for_concept(value, unit, context, premise_sentences) -> str | None:
    """The note's number for the claim's concept when it differs: among the note's numbers with
    the claim's unit, those with the most context words in common (at least two, or all of the
    claim's one) give the value; ``None`` when one of them is the claim's value or none is that
    close ("follow up in 3 months" against "follow up in 1 month", whatever else lasts 3 months)."""
    if unit is None or not context:
        return None
    scored = [(len(context & c), v, u) for s in premise_sentences for v, u, c in s.numbers if _comparable(u, unit)]
    best = max((n for n, _, _ in scored), default=0)
    if best < min(2, len(context)):
        return None
    values = {(v, u) for n, v, u in scored if n == best}
    if any((v, u) == (value, unit) or same_duration(value, unit, v, u) for v, u in values):
        return None
    return ", ".join(_shown(v, u) for v, u in sorted(values)[:3])


def _local(unit: str | None, context: frozenset, other_unit: str | None, sentence: Sentence) -> bool:
    """Whether a note number (``other_unit``, in ``sentence``) speaks where the claim's number does:
    near the same words, or with the same unit ("four days" needs no context; v13: but a count of
    times is bound to what is done so often: "twice daily" needs the words of what is taken twice,
    docs/design.md §4, "Numbers bound to their phrase")."""
    return not context or bool(context & sentence.keys) or (unit not in (None, "time") and other_unit == unit)


def _shown(value, unit) -> str:
    """A number as an explanation quotes it: its value and unit, a kind before its value (v14: "type 2",
    "stage 3"), on the note's side as on the claim's."""
    return (f"{unit} {value}" if unit in KINDS_COUNTED else f"{value} {unit}") if unit else value


def check_number(value, unit, context, premise_sentences, follow_up: bool = False,
                 measure: tuple[Analyser, Measure] | None = None) -> Finding | None:
    """The finding on one number of the claim (``None``: the note gives it); ``follow_up``: it is the
    claim's interval to a follow-up (:attr:`~doclens.evaluators.rules.sentences.Sentence.follow_ups`);
    ``measure``: the analyser and what the claim names right before the number (:func:`measure_before`),
    read to tell a number the note binds to another measure (:func:`_bound_elsewhere`)."""
    shown = _shown(value, unit)
    differs = _number_for_concept(value, unit, context, premise_sentences)
    if differs:
        return Finding(FindingKind.NUMBER, f"note says {differs}, claim says {shown}", conflict=True)
    bound = _check_follow_up(value, unit, context, shown, premise_sentences) if follow_up else None
    if bound is not None:
        return bound
    near, elsewhere = [], []
    for sentence in premise_sentences:
        for k, (v, u, c) in enumerate(sentence.numbers):
            local = _local(unit, context, u, sentence)
            if _gives(value, unit, v, u, local, k in sentence.implied):
                other = None if u in DAYS or u in UNMEASURED else _bound_elsewhere(measure, v, c, sentence)
                if other is None:
                    return None
                elsewhere.append(other)
                continue
            if local and _same_kind(value, unit, v, u):
                near.append(_shown(v, u))  # what the note says instead
    if near:
        return Finding(FindingKind.NUMBER, f"note says {', '.join(dict.fromkeys(near[:3]))}, claim says {shown}", conflict=True)
    if elsewhere and measure is not None:
        return Finding(FindingKind.NUMBER,
                       f"note does not state {shown} for {measure[1].text} (its {shown} is of {elsewhere[0]})")
    return Finding(FindingKind.NUMBER, f"note does not state {shown} there")


class Measure(NamedTuple):
    """What a text names right before one of its numbers (:func:`measure_before`): its keys (stems,
    and the keys of an abbreviation's expansions) and the words as written."""

    keys: frozenset[str]
    text: str
    #: the stem of its last word, the one next to the number ("filling" of "diastolic filling 55%")
    head: str


#: Tokens as :func:`measure_before` reads a sentence: numbers, words and single marks.
_TOKENS = re.compile(r"\d+(?:[.,]\d+)?(?:/\d+(?:\.\d+)?)*|[A-Za-z][A-Za-z'\-]*|[^\sA-Za-z\d]")
#: Words that may stand between a measure and its number ("ejection fraction of 55%", "A1c was 7.2").
_LINKS = frozenset("of is was were at to about approximately around roughly measured measuring estimated the a an".split())
#: At most this many content words before a number name its measure.
MEASURE_WORDS = 3


def measure_before(analyser: Analyser, sentence: Sentence, value: str) -> list[Measure]:
    """r15 (issue 46): the measure a sentence names right before each place it writes ``value``: up to
    :data:`MEASURE_WORDS` content words running before the number, with only linking words
    (:data:`_LINKS`: "of", "was", "about" …) between them and it ("an ejection fraction of 55%":
    ejection fraction; "abnormal diastolic filling 55%": diastolic filling). A level or degree word
    (:data:`~doclens.evaluators.rules.words.POLAR`: "elevated", "mild") names none: "Elevated 144/72"
    gives the reading no measure. A place with no such word gives no measure (none is listed for it)."""
    words = {w.text.lower(): w for w in sentence.words}
    tokens = _TOKENS.findall(sentence.text)
    found = []
    for i, token in enumerate(tokens):
        if not is_number(token.lower()) or number_value(token.lower()) != value:
            continue
        j = i - 1
        while j >= 0 and tokens[j].lower() in _LINKS:
            j -= 1
        named: list[Word] = []
        while j >= 0 and tokens[j].lower() in words and len(named) < MEASURE_WORDS:
            named.insert(0, words[tokens[j].lower()])
            j -= 1
        named = [w for w in named if w.text.lower() not in POLAR]  # a level or a degree names no measure
        if named:
            keys = {w.stem for w in named}.union(*(k for w in named for k in analyser.expansions(w)))
            found.append(Measure(frozenset(keys), " ".join(w.text for w in named), named[-1].stem))
    return found


def _bound_elsewhere(measure: tuple[Analyser, Measure] | None, value: str, context: frozenset,
                     sentence: Sentence) -> str | None:
    """r15 (issue 46): whether the note sentence gives the claim's number only to another measure it
    names, while it names the claim's measure apart from the number ("an ejection fraction of 55% and
    abnormal diastolic filling" does not give "abnormal diastolic filling 55%"): the other measure as
    written, or ``None``. A number is bound to the measure written right before it
    (:func:`measure_before`), unless the claim's measure's own word stands near it too (``context``, the
    note number's: "Elevated BP 144/72" gives "BP 144/72"); a measure
    that shares a word with the claim's ("fraction of 55%" for "ejection fraction 55%"), a number
    written with none, or a claim's measure the sentence never names elsewhere (an abbreviation,
    "LVEF 55%") read as before: one number with the same unit is the same number."""
    if measure is None:
        return None
    analyser, claimed = measure
    if not claimed.keys & sentence.stems or claimed.head in context:
        return None
    measures = measure_before(analyser, sentence, value)
    if not measures or any(m.keys & claimed.keys for m in measures):
        return None
    return measures[0].text


def _gives(value, unit, v, u, local: bool, implied: bool = False) -> bool:
    """Whether the note's number ``v`` ``u`` gives the claim's: the same value in the same unit (or
    one of them with none) where it speaks (``local``), or one duration in other units ("1 month",
    "4 weeks", read as a unit is). v14: a number the note only implies (the once of "a pack
    daily") gives the same unit only: "one pack" is not the once of "half a pack daily"."""
    return ((v == value and (u == unit or not implied and (unit is None or u is None)) and local)
            or same_duration(value, unit, v, u) or _in_decade(value, unit, v, u))


def _in_decade(value, unit, v, u) -> bool:
    """v14: a claim's decade of age ("in his 50s") that the note's age gives ("57-year-old")."""
    return unit == "decade of age" and u == "year old" and v.isdigit() and int(v) // 10 * 10 == int(float(value))


def _same_kind(value, unit, v, u) -> bool:
    """Whether a note number is what the note says instead of the claim's: the same unit or the same
    value (a reading such as 7/10 for a reading), never "42 year" for a pain score; v13: nor a count
    of times for a count of puffs ("twice a day" for "2 puffs")."""
    return (u == unit or (v == value and "time" not in (u, unit))) and ("/" in v) == ("/" in value)


def _check_follow_up(value, unit, context, shown: str, premise_sentences) -> Finding | None:
    """v13: a claim's interval to a follow-up ("follow up in 2 weeks", :func:`check_number`) where no
    note follow-up has it and no note sentence gives it near the claim's words: where the note gives
    the follow-up another interval, a contradiction quoting it; where the note's same duration is
    bound to something else ("a cough for 2 weeks"), an absence; ``None`` otherwise (the ordinary
    check reads it: a follow-up the note writes another way, "RTC 2 weeks", is not told apart)."""
    intervals = [(v, u) for s in premise_sentences for k, (v, u, _) in enumerate(s.numbers) if k in s.follow_ups]
    if any(v == value and u == unit or same_duration(value, unit, v, u) for v, u in intervals):
        return None
    same = [s for s in premise_sentences for v, u, _ in s.numbers
            if (v == value and u == unit) or same_duration(value, unit, v, u)]
    if any(context & s.keys for s in same):
        return None
    if intervals:
        said = dict.fromkeys(f"{v} {u}" for v, u in intervals)
        return Finding(FindingKind.NUMBER, f"note gives the follow-up in {', '.join(list(said)[:3])}, claim says "
                       f"{shown}", conflict=True)
    if same:
        return Finding(FindingKind.NUMBER, f"note does not state {shown} as the time to a follow-up")
    return None


def check_side(claimed: Side, premise_sentences) -> Finding | None:
    """The side the note gives the claim's body part, read where the note speaks of it most
    closely: among the note's sides with the same head word ("knee" of "left knee pain") or two
    context words in common (one when either has only one), those with the most context in
    common (and the same negation) decide; a side named there elsewhere in the note does not support the claim
    ("denies left sided facial pain … reports right sided facial pain" is the right side)."""
    side, body, phrase, negated, head = claimed
    scored = []
    for sentence in premise_sentences:
        for s, b, p, n, h in sentence.sides:
            same_head = head is not None and h == head
            common = len(body & b) if body else 0
            if body and common < min(2, len(body), len(b)) and not same_head:
                continue
            scored.append((common + same_head + (n == negated), s, p))
    if not scored:
        return None if _side_given_otherwise(side, body, premise_sentences) else Finding(
            FindingKind.SIDE, f"note does not give the side of {phrase}")
    best = max(score for score, _, _ in scored)
    closest = [(s, p) for score, s, p in scored if score == best]
    if any(s == side or (s == "bilateral" and side in ("left", "right")) for s, _ in closest):
        return None
    return Finding(FindingKind.SIDE, f"note says {', '.join(dict.fromkeys(p for _, p in closest[:2]))}, claim says {phrase}",
                   conflict=True)


def _side_given_otherwise(side: str, body: frozenset, premise_sentences: list[Sentence]) -> bool:
    """Whether the note gives ``side`` to the claim's body part where no side of it scores
    (:func:`check_side`): a note that names one side only speaks of that side where it gives none
    ("She denies any tingling in her toes" in a note about a right ankle is about the right toes);
    v7: "bilateral(ly)" in a sentence holding the whole of what the claim says it of ("Auscultation
    of Lungs: Clear bilaterally." for "clear to auscultation bilaterally")."""
    if {other.side for sentence in premise_sentences for other in sentence.sides} == {side}:
        return True
    return side == "bilateral" and bool(body) and any(
        body <= sentence.stems and any(other.side == side for other in sentence.sides) for sentence in premise_sentences)


def _plural_in_both(analyser: Analyser, claim_sentence: Sentence, premise_sentences: list[Sentence]) -> bool:
    """A plural word of the claim that a note sentence writes in the plural and with no side:
    "lungs clear to auscultation bilaterally" is the note's "her lungs are clear" (both lungs)."""
    plural = {w.stem for w in claim_sentence.words if analyser.is_plural(w.text)}
    return any(not sentence.sides and any(w.stem in plural and analyser.is_plural(w.text) for w in sentence.words)
               for sentence in premise_sentences)


def number_and_side_problems(analyser: Analyser, claim_sentence: Sentence, premise_sentences: list[Sentence]) -> list[Finding]:
    """Numbers with their units and sides with their body part; several of one claim sentence
    must stand together in one premise sentence."""
    found = [check_number(v, u, c, premise_sentences, k in claim_sentence.follow_ups,
                          _claim_measure(analyser, claim_sentence, v, u)) for k, (v, u, c) in claim_sentence.stated]
    # a count the claim only implies ("2 mg daily": once) is not required of the note, but
    # another count for the same concept contradicts it ("2 mg twice daily")
    found += [p for p in (check_number(*claim_sentence.numbers[k], premise_sentences)
                          for k in sorted(claim_sentence.implied)) if p and p.conflict]
    found += [None if side.side == "bilateral" and _plural_in_both(analyser, claim_sentence, premise_sentences)
              else check_side(side, premise_sentences) for side in claim_sentence.sides]
    found += _more_than_once(analyser, claim_sentence.text, premise_sentences)
    problems = [p for p in found if p]
    if not problems:
        problems += _apart(claim_sentence, premise_sentences)
    return problems


#: v15 (issue 46): a count of more than one said without a number ("several times", "multiple
#: episodes", "a few falls"), and the word after it
_MORE_THAN_ONE = re.compile(r"\b(several|multiple|numerous|a\s+few)\s+([a-z]+)", re.IGNORECASE)
_WORD = re.compile(r"[a-z][a-z'\-]*")
#: a note sentence that counts once and then tells of another time ("once last week and again today")
_ANOTHER_TIME = re.compile(r"\b(?:again|another|more|recurr\w*|repeat\w*)\b", re.IGNORECASE)


def _more_than_once(analyser: Analyser, text: str, premise_sentences: list[Sentence]) -> list[Finding]:
    """v15 (issue 46): a count of events the claim gives as more than one without a number ("passed
    out several times", "multiple episodes of syncope", "a few falls") where the note counts the same
    event once ("passed out once", "one episode of syncope"): a count compared as a number, a
    contradiction quoting both. The event is the content words around the claim's count (three
    words each way, as a number's context: analysis._number_context); the note's is the context of
    its count of one (no unit, or times), with two of them in common (one when the claim has one),
    in a sentence that gives the event no count above one. A note that gives no count says nothing
    here (another rule weighs the claim's words)."""
    problems = []
    text = analyser.written_one_way(text)  # as the note's sentences are read ("passed out" is "fainted")
    for match in _MORE_THAN_ONE.finditer(text):
        counted = match.group(2).lower()
        event = _counted_event(analyser, text, match)
        if not event:
            continue
        # the note's count of the same thing: of times for times, else with the claim's counted noun
        # ("one fall" for "a few falls"); never the once a frequency implies ("a mile daily")
        unit, noun = ("time", None) if counted == "times" else (None, analyser.normal(counted))
        if any(_counts_once(sentence, unit, noun, event) for sentence in premise_sentences):
            problems.append(Finding(FindingKind.NUMBER, f"note says once, claim says "
                                    f"{' '.join(match.group(1).split()).lower()} {counted}", conflict=True))
    return problems


def _counted_event(analyser: Analyser, text: str, match: re.Match) -> set[str]:
    """The keys of what a count of :data:`_MORE_THAN_ONE` counts (:func:`_more_than_once`): none for a
    length ("several weeks"), a frequency ("a few times a week") or a count of nothing plural."""
    counted = match.group(2).lower()
    if counted != "times" and not (is_content(counted) and analyser.is_plural(counted)):
        return set()
    before = _WORD.findall(text[: match.start()].lower())[-3:]
    after = _WORD.findall(text[match.end(2):].lower())[:3]
    if after[:1] and (after[0] in FREQUENCY or after[0] in ONCE_PER):
        return set()
    return {analyser.normal(w) for w in [*before, counted, *after] if is_content(w)} - {"time"}


def _counts_once(sentence: Sentence, unit: str | None, noun: str | None, event: set[str]) -> bool:
    """Whether a note sentence counts the event once and no more (:func:`_more_than_once`)."""
    counts = [v for k, (v, u, c) in enumerate(sentence.numbers) if u == unit and k not in sentence.implied
              and (noun is None or noun in c) and len(event & c) >= min(2, len(event))]
    return "1" in counts and set(counts) == {"1"} and not _ANOTHER_TIME.search(sentence.text)


#: Units whose numbers are bound by their own rules, never by a measure named before them, on the
#: claim's side or the note's: a count of times (v13), an age and its decade (v14; "Ms. Lee is a
#: 43-year-old" gives "a female aged 43"); durations (:data:`DAYS`) neither ("3 days ago" is no
#: measure of the injury the note names before it).
UNMEASURED = frozenset({"time", "year old", "decade of age"})


def _claim_measure(analyser: Analyser, claim_sentence: Sentence, value: str,
                   unit: str | None) -> tuple[Analyser, Measure] | None:
    """The measure the claim names right before its number ``value`` (:func:`measure_before`), where it
    writes the number once, its unit is no duration, count of times or age (:data:`UNMEASURED`) and
    the measure names no drug (a dose: "continue lisinopril 20 mg" against "the lisinopril will be kept
    at 20 milligrams"), with the analyser that reads the note's; ``None`` otherwise."""
    if unit in DAYS or unit in UNMEASURED:
        return None
    measures = measure_before(analyser, claim_sentence, value)
    if len(measures) != 1 or any(analyser.is_drug(w) for w in measures[0].text.lower().split()):
        return None  # a drug's dose is bound to its drug by the regimen rules (near_misses.py), not here
    return analyser, measures[0]


def _only_side(side: Side, named: set[str], sentence: Sentence) -> bool:
    """v7: a sentence that gives no side, in a note that names only the claim's, holds the claim's
    side where it names the same part ("Icing the knee three to four times per day" in a note
    about a left knee holds "ice her left knee 3 to 4 times a day")."""
    return named == {side.side} and not sentence.sides and side.head is not None and side.head in sentence.stems


def _apart(claim_sentence: Sentence, premise_sentences: list[Sentence]) -> list[Finding]:
    """Several numbers and sides of one claim sentence that no premise sentence holds together
    ("left kidney 10 cm" is not supported by "right kidney 10 cm … left kidney 12 cm")."""
    # a range's two ends are found apart: "range of motion 0 to 120 degrees" is "Extension: 0
    # degrees. Flexion: 120 degrees."; its first end is checked on its own only
    together = [(n, k in claim_sentence.follow_ups) for k, n in claim_sentence.stated
                if k not in claim_sentence.range_starts]
    if len(together) + len(claim_sentence.sides) <= 1:
        return []
    named = {other.side for sentence in premise_sentences for other in sentence.sides}
    if any(all(check_number(v, u, c, [s], follow_up) is None for (v, u, c), follow_up in together)
           and all(check_side(side, [s]) is None or _only_side(side, named, s) for side in claim_sentence.sides)
           for s in premise_sentences):
        return []
    return [Finding(FindingKind.TOGETHER, "no note sentence holds " + ", ".join(
        [f"{v} {u}" if u else v for (v, u, _), _ in together] + [side.phrase for side in claim_sentence.sides]) + " together")]
