"""v12 (issue 46): a claim whose assertion is the level of a thing ("Blood pressure: elevated.", "Her
potassium was low.", "Liver enzymes are increased."), where the note names the thing but never gives
it that level. The level is what such a claim asserts: a note that writes "Her blood pressure has been
up and down" does not say it is elevated, and the missing level word is no rewording (before v12 it
was weighed, as "note does not say elevated", and often accepted). It decides "not supported", in
both texts' words: "note gives blood pressure without a level ("… up and down …"), claim says elevated".

The note gives the level, and the claim's level word is no longer missing, when a sentence naming the
thing says it with a word of the same direction ("high" for "elevated", "reduced" for "decreased":
:data:`~doclens.evaluators.rules.lexicons.DIRECTIONS`), or anywhere with a level named by one word
(:data:`~doclens.evaluators.rules.words.NAMED_LEVELS`: "hypertension" for high blood pressure), or
with a vital sign's reading outside its adult range in the claim's direction (150/95 is an elevated
blood pressure: :func:`~doclens.evaluators.rules.vitals.reading_levels`). A reading inside the range,
or a word that calls the thing normal just after it ("His cholesterol looked good"), contradicts the
claim ("note says blood pressure 118/76 (in the normal range), claim says elevated").
The rule abstains, leaving the missing word weighed as before, where the note may imply the level in
a way it cannot read: another number beside the thing (a lab value, whose range it does not know), a
direction the sentence states of it ("goes up"), or a condition said to be poorly controlled ("the
diabetes is uncontrolled" for high blood sugars). Only the direction words are read so: a claim's
"normal", "positive" or "negative" is said in too many other ways ("regular", "looks good", "no
murmurs", a symptom simply affirmed) to decide on its absence (docs/design.md, "Judging real notes").
"""

from __future__ import annotations

import re

from doclens.evaluators.rules.findings import Finding, FindingKind, short
from doclens.evaluators.rules.lexicons import DIRECTIONS, Axis
from doclens.evaluators.rules.sentences import Sentence, Status, Word
from doclens.evaluators.rules.vitals import claim_vitals, reading_levels
from doclens.evaluators.rules.words import NAMED_LEVELS, SPELLINGS

#: The claim words that assert a level (or a change of one) of a thing: their direction is their sign.
LEVEL_WORDS = frozenset("elevated high low increased decreased reduced".split())
#: Words of a claim that name no thing whose level it gives ("Blood sugar levels were also high").
_NOT_THE_THING = frozenset("level levels value values reading readings also still again today now".split())
_MISSING = "note does not say "
#: Words with which a note calls the thing's level normal ("His cholesterol looked good").
_NORMAL = frozenset("normal good fine wnl unremarkable".split())
#: v17: a "label: value" claim whose value is one level word, perhaps graded ("Lyme titer: Mildly elevated.").
_KEYED_LEVEL = re.compile(r"^[^:]{2,40}:\s*(?:(?:mildly|slightly|significantly|markedly|very)\s+)?"
                          r"(elevated|high|low|increased|decreased|reduced)\s*\.?\s*$", re.IGNORECASE)
_DIGIT = re.compile(r"\d")  # a number written beside the thing ("last month" implies a 1, which is none)


def unsaid_levels(findings: list[Finding], claim: str, words: list[Word], key: set[str],
                  premise_sentences: list[Sentence]) -> list[Finding]:
    """``findings`` with each "note does not say <level>" of a level word (:data:`LEVEL_WORDS`)
    read again (module docstring): dropped where the note gives that level, a weighed one made a
    contradiction where the note names the thing without a level, else kept as it was (a missing
    direction, near_misses', already decides: "low" against a heart rate of 48 is said by the reading)."""
    kept: list[Finding] = []
    for finding in findings:
        word = finding.text[len(_MISSING):] if finding.kind in (FindingKind.POLAR, FindingKind.DIRECTION) \
            and not finding.conflict and finding.text.startswith(_MISSING) else ""
        if word not in LEVEL_WORDS:
            kept.append(finding)
            continue
        said = level_said(word, claim, words, key, premise_sentences)
        if said is None or (said and finding.kind is FindingKind.DIRECTION):
            kept.append(finding)
        elif said:
            kept.append(Finding(FindingKind.QUALIFIER, said, conflict=True))
    return kept + _keyed_level(kept, claim, words, key, premise_sentences)


def _keyed_level(findings: list[Finding], claim: str, words: list[Word], key: set[str],
                 premise_sentences: list[Sentence]) -> list[Finding]:
    """v17 (issue 46): a "label: value" claim whose value is only a level ("Lyme titer: Elevated.",
    "Potassium: low") asserts that level of the label's thing, whatever else the note calls elevated:
    where the note uses the level word, but only of something else, and names the thing without a
    level (:func:`level_said`), the claim's level is the note's word read off another thing."""
    keyed = _KEYED_LEVEL.match(claim)
    if keyed is None:
        return []
    word = keyed.group(1).lower()
    if any(word in f.text for f in findings):
        return []  # already read (a missing level word, or a contradiction that names it)
    said = level_said(word, claim, words, key, premise_sentences, level_is_control=False)
    return [Finding(FindingKind.QUALIFIER, said, conflict=True)] if said else []


def _runs(words: list[Word]) -> list[list[Word]]:
    """``words`` in runs of words written one after the other (consecutive positions)."""
    runs: list[list[Word]] = []
    for w in words:
        if runs and w.position == runs[-1][-1].position + 1:
            runs[-1].append(w)
        else:
            runs.append([w])
    return runs


def _thing(word: str, words: list[Word], key: set[str], premise_sentences: list[Sentence]) -> list[Word]:
    """The claim's words that name the thing whose level ``word`` is: the content words written right
    after it ("elevated blood pressure"), else the last run of them before it ("Blood pressure: elevated",
    "Blood sugar levels were also high"), but those of :data:`_NOT_THE_THING` and the directions;
    none where the note lacks one of them (a claim about something else, which the other rules weigh)."""
    at = next((k for k, w in enumerate(words) if w.text.lower() == word), None)
    if at is None:
        return []

    def named(run: list[Word]) -> list[Word]:
        return [w for w in run if w.text.lower() not in _NOT_THE_THING and w.text.lower() not in DIRECTIONS]

    after = _runs(words[at:])[0][1:]
    before = [named(run) for run in _runs(words[:at]) if named(run)]
    found = named(after) or (before[-1] if before else [])
    used = set().union(*(s.stems | s.keys for s in premise_sentences)) if premise_sentences else set()
    ok = found and all(w.stem in used and w.status == Status.AFFIRMED and w.text.lower() not in key for w in found)
    return found if ok else []


def level_said(word: str, claim: str, words: list[Word], key: set[str],
               premise_sentences: list[Sentence], *, level_is_control: bool = True) -> str | None:
    """For the claim's level ``word``: ``""`` where the note gives that level, the contradiction
    where it names the thing without one (or with a reading in range), ``None`` where the rule
    abstains (module docstring). ``level_is_control=False`` (v17): a level word the note writes
    ("elevated cholesterol") is no poor control of a condition that could imply the claim's level."""
    sign = DIRECTIONS[word][1]
    thing = _thing(word, words, key, premise_sentences)
    stems = {w.stem for w in thing}
    naming = [s for s in premise_sentences if stems and stems <= s.stems | s.keys]
    if not naming:
        return None
    if _named_level(sign, {w.text.lower() for w in thing}, premise_sentences) or any(_same_way(sign, s) for s in naming):
        return ""
    if any(s.directions for s in naming):
        return None  # another direction ("worse", "uncontrolled"; the opposite level is content.qualifies_otherwise's)
    other = _reading_or_normal(word, sign, claim, stems, naming)
    if other is not None:
        return other
    if any(_DIGIT.search(s.text) for s in naming) or (sign > 0 and _poorly_controlled(premise_sentences,
                                                                                      level_is_control)):
        return None
    name = " ".join(w.text.lower() for w in thing)
    return f'note gives {name} without a level ("{short(naming[0].text, 70)}"), claim says {word}'


def _reading_or_normal(word: str, sign: int, claim: str, stems: set[str], naming: list[Sentence]) -> str | None:
    """What the ``naming`` sentences' readings of a vital sign, or a normal word, say of the claim's
    level ``word`` (of ``sign``): ``""`` a reading out of range its way, a contradiction a reading in
    range or a normal word of the thing, ``None`` nothing."""
    vitals = claim_vitals(claim)
    levels = reading_levels(naming, vitals) if vitals else []
    if any(level == sign for _, _, level in levels):
        return ""
    if levels and all(level == 0 for _, _, level in levels):
        kind, value, _ = levels[0]
        return f"note says {kind} {value} (in the normal range), claim says {word}"
    normal = next(((w, s) for s in naming for w in _called_normal(stems, s)), None)
    if normal is not None:  # "His cholesterol looked good": a level, another one
        return f'note says {normal[0].text.lower()} ("{short(normal[1].text, 70)}"), claim says {word}'
    return None


def _called_normal(stems: set[str], sentence: Sentence) -> list[Word]:
    """The words of :data:`_NORMAL` that ``sentence`` affirms of the thing (its ``stems``): at most
    three words after it ("His cholesterol looked good"; not "BP checked, and she feels good today" far on)."""
    last = max((w.position for w in sentence.words if w.stem in stems), default=None)
    return [w for w in sentence.words if last is not None and w.text.lower() in _NORMAL
            and w.status == Status.AFFIRMED and 0 < w.position - last <= 3]


def _named_level(sign: int, thing: set[str], premise_sentences: list[Sentence]) -> bool:
    """Whether the note, affirmed, names the level of ``sign`` of the claim's ``thing`` (its words) by
    one word ("hypertension" for a high blood pressure, not for a high blood sugar)."""
    for sentence in premise_sentences:
        for w in sentence.words:
            level, things = NAMED_LEVELS.get(SPELLINGS.get(w.text.lower(), w.text.lower()), ("", frozenset()))
            if level and w.status == Status.AFFIRMED and DIRECTIONS[level][1] == sign \
                    and thing & things - {"blood"}:
                return True
    return False


def _same_way(sign: int, sentence: Sentence) -> bool:
    """Whether ``sentence`` states a level or change of ``sign`` ("high", "goes up", "increased")."""
    return any(axis in (Axis.LEVEL, Axis.CHANGE) and s == sign for axis, s, _ in sentence.directions)


def _poorly_controlled(premise_sentences: list[Sentence], level_is_control: bool = True) -> bool:
    """Whether the note calls a condition poorly controlled (a high level the note implies); with
    ``level_is_control=False``, not by a level word (:data:`LEVEL_WORDS`)."""
    return any(axis is Axis.CONTROL and s < 0 and (level_is_control or word.lower() not in LEVEL_WORDS)
               for sentence in premise_sentences for axis, s, word in sentence.directions)
