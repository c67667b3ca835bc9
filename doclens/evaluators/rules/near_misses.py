"""Rule 7 of ``clinical-rules`` (v6), **near misses**: where the note speaks of the claim's concept,
another direction of change or state, body site, person, dose or daily frequency of the same drug,
or two sides compared the other way round, decide "not supported" (docs/design.md §4)."""

from __future__ import annotations

import re
from collections import Counter
from fractions import Fraction
from types import MappingProxyType

from doclens.evaluators.rules.analysis import Analyser
from doclens.evaluators.rules.assertion import family_history_problems, predicate_negation_problems
from doclens.evaluators.rules.findings import Finding, FindingKind, short
from doclens.evaluators.rules.lexicons import (
    DIRECTIONS,
    RELATIVE_COVERS,
    Axis,
    contradicts,
    contradicts_action,
    covers,
    frequencies_in,
)
from doclens.evaluators.rules.sentences import Regimen, Sentence, Status, Word
from doclens.evaluators.rules.words import OWN_SITE, QUALIFIER_SCALES

#: v8: sites that lie over every other ("skin"): never forgiven, but no other site contradicts them
TISSUES = frozenset({"skin"})

#: A comparison, whose order of sides matters (:func:`_comparison_problems`).
_COMPARING = re.compile(r"\b(?:more|less|worse|better|greater|than|compared)\b", re.IGNORECASE)


def _per_day(frequencies) -> str:
    """"2 a day", "once a week" (1/7), "every other day" (1/2): doses a day as a person says them."""
    said = {Fraction(1, 7): "once a week", Fraction(2, 7): "twice a week", Fraction(3, 7): "3 times a week",
            Fraction(1, 30): "once a month", Fraction(1, 2): "every other day"}
    return " or ".join(said.get(Fraction(n), f"{n} a day") for n in sorted(frequencies))


def near_miss_problems(analyser: Analyser, words: list[Word], claim_sentences: list[Sentence],
                       premise_sentences: list[Sentence]) -> list[Finding]:
    """v6: a near miss decides "not supported" (docs/design.md §4). Read where the note speaks
    of the claim's concept — the note sentences holding the most of the claim's other content
    words (:func:`sentences_about`) — a claim is not supported when there the note gives

    * another **direction** of change or state and not the claim's ("decrease" for "increase",
      "worsened" for "improved", "elevated" or "poorly controlled" for "well controlled");
    * another **body site** and not the claim's, nor a part or whole of it ("ankle pain" for
      "knee pain"; "elbow" is part of "arm", clinical_equivalents.json); a site the note names
      nowhere is not supported either ("knees were tired" against "feeling tired");
    * the fact **of another person** ("his mother" for "his father", a relative for the
      patient), r17: or the belief of another (the patient's for the clinician's, :func:`_holder_problems`);
    * the same drug with **other doses** or **other daily frequencies** only ("Crestor 40 mg
      once a day" for "twice a day"; a brand is its generic name).
    """
    key_stems = {w.stem for w in words}
    problems: list[Finding] = []
    for sentence in claim_sentences:  # each clause of the claim with its own concept
        claim_stems = sentence.stems & key_stems
        problems += _direction_problems(analyser, sentence, claim_stems, premise_sentences)
        problems += _site_problems(analyser, sentence, claim_stems, premise_sentences)
        problems += _person_problems(analyser, sentence, claim_stems, premise_sentences)
        problems += _regimen_problems(sentence, premise_sentences)
        problems += _action_problems(sentence, premise_sentences)
        problems += _comparison_problems(sentence, premise_sentences)
        problems += _qualifier_problems(sentence, premise_sentences)
        problems += _result_problems(analyser, sentence, claim_stems, premise_sentences)
        problems += _how_often_problems(analyser, sentence, claim_stems, premise_sentences)
        problems += predicate_negation_problems(sentence, claim_stems, premise_sentences,
                                                sentences_about(claim_stems, premise_sentences, least=1))
        problems += family_history_problems(sentence, premise_sentences)
    problems += _holder_problems(words, claim_sentences, premise_sentences)
    return list(dict.fromkeys(problems))


#: r17: who holds a belief a text states: the patient ("he believes", "she thinks", "the patient
#: suspects", "he attributes it to") or the clinician who writes ("I believe", "we suspect", "my
#: impression"). "Feels" alone is a sensation ("she feels tired"), only "feels that" a belief.
_BELIEF = (r"(?:also\s+|still\s+|strongly\s+)?"
           r"(?:believe[sd]?|think(?:s)?|thought|suspect(?:s|ed)?|feel(?:s)? that|felt that|attribute[sd]?)\b")
HOLDERS = MappingProxyType({
    "the patient": re.compile(r"\b(?:he|she|the patient|patient)\s+" + _BELIEF, re.IGNORECASE),
    "the clinician": re.compile(r"(?:\bI|\b[Ww]e)\s+" + _BELIEF + r"|\bmy (?:impression|suspicion)\b"),
})
_BELIEF_WORDS = frozenset("believe believes believed think thinks thought suspect suspects suspected feel feels felt "
                          "attribute attributes attributed impression suspicion patient".split())


def _holders(text: str) -> set[str]:
    return {holder for holder, pattern in HOLDERS.items() if pattern.search(text)}


def _holder_problems(words: list[Word], claim_sentences: list[Sentence],
                     premise_sentences: list[Sentence]) -> list[Finding]:
    """r17 (issue 46): **whose belief** a claim states: a belief, suspicion or attribution the claim
    gives the patient ("He believes he has carpal tunnel syndrome") where the note, speaking of the
    same thing (:func:`sentences_about`), gives it only to the clinician who writes ("I believe his
    symptoms are related to carpal tunnel syndrome"), or the reverse: what the patient thinks is no
    diagnosis, and the clinician's impression is not the patient's report. A note sentence that
    gives the claim's holder, or none that holds a belief at all, leaves the claim to the other rules."""
    claimed = _holders(" ".join(s.text for s in claim_sentences))
    if len(claimed) != 1:
        return []
    concept = {w.stem for w in words if w.text.lower() not in _BELIEF_WORDS}
    there = {holder for s in sentences_about(concept, premise_sentences) for holder in _holders(s.text)}
    if not there or claimed & there:
        return []
    return [Finding(FindingKind.PERSON, f"note gives the belief to {', '.join(sorted(there))}, claim to "
                    f"{next(iter(claimed))}", conflict=True)]


def _how_often_problems(analyser: Analyser, sentence: Sentence, claim_stems: set[str],
                        premise_sentences: list[Sentence]) -> list[Finding]:
    """v8: how often something is done, outside a drug's regimen ("monitor her blood pressure once weekly"
    against "three times a week"): where the note speaks of the claim's concept and says how often, it
    says the claim's frequency."""
    claimed = set(frequencies_in(sentence.text))
    if not claimed or sentence.regimens:
        return []  # a drug's frequency is its regimen's (_regimen_problems)
    concept = claim_stems - {analyser.normal(w) for w in sentence.letter_runs
                             if frequencies_in(w) or w in ("once", "twice", "times", "week", "month", "day")}
    stated = {f for s in sentences_about(concept, premise_sentences) for f in frequencies_in(s.text)}
    if stated and not claimed & stated:
        return [Finding(FindingKind.FREQUENCY, f"note says {_per_day(stated)}, claim says {_per_day(claimed)}",
                        conflict=True)]
    return []


#: v8: a result and its opposite, as written (a cue word too: "negative" is ConText's negation):
#: "COVID test is negative" against "COVID-19 test: positive".
RESULT_OPPOSITES = MappingProxyType({"positive": "negative", "negative": "positive", "normal": "abnormal", "abnormal": "normal",
                                     "present": "absent", "absent": "present", "benign": "malignant", "malignant": "benign"})


def _said(sentence: Sentence) -> frozenset[str]:
    return sentence.letter_runs


def _result_problems(analyser: Analyser, sentence: Sentence, claim_stems: set[str],
                     premise_sentences: list[Sentence]) -> list[Finding]:
    """A result the note gives the other way where it speaks of the claim's concept (the note's
    sentences holding the most of the claim's other words, at least two or all of them)."""
    claimed = [w for w in RESULT_OPPOSITES if w in _said(sentence)]
    if not claimed:
        return []
    concept = claim_stems - {analyser.normal(w) for w in RESULT_OPPOSITES}
    problems = []
    for word in claimed:
        other = RESULT_OPPOSITES[word]
        if other in claimed:
            continue
        against = next((s for s in sentences_about(concept, premise_sentences) if other in _said(s) and word not in _said(s)),
                       None)
        if against is not None:
            problems.append(Finding(FindingKind.OPPOSITE, f"note says {other} (\"{short(against.text)}\"), claim says "
                                    f"{word}", conflict=True))
    return problems


#: Scales of severity and course whose words qualify the finding written after them.
SEVERITY_SCALES = tuple(scale for scale in QUALIFIER_SCALES if scale & {"mild", "small", "acute"})
#: How far before its finding a qualifier stands ("mild joint effusion").
QUALIFIER_REACH = 3


def _qualifiers(sentence: Sentence, scale: frozenset) -> list[tuple[str, Word]]:
    """``(qualifier, the finding it qualifies)`` of ``scale`` in one sentence: the next content word
    within :data:`QUALIFIER_REACH` positions."""
    found = []
    words = sorted(sentence.words, key=lambda w: w.position)
    for k, word in enumerate(words):
        if word.text.lower() in scale:
            head = next((w for w in words[k + 1:] if w.text.lower() not in scale), None)
            if head is not None and head.position - word.position <= QUALIFIER_REACH:
                found.append((word.text.lower(), head))
    return found


def _qualifier_problems(sentence: Sentence, premise_sentences: list[Sentence]) -> list[Finding]:
    """v7: a claim's qualifier where the note qualifies the same finding otherwise, and never so:
    "mild effusion" against "significant effusion" (however mild something else in the note is)."""
    problems: list[Finding] = []
    claimed = [(scale, found) for scale in SEVERITY_SCALES for found in _qualifiers(sentence, scale)]
    if not claimed:
        return problems  # (most claims: the note's words are not gathered for them)
    used = {w.text.lower() for s in premise_sentences for w in s.words}
    for scale, (qualifier, head) in claimed:
        if qualifier not in used:
            continue  # a qualifier the note never uses is the content rule's (content.other_qualifier)
        stated = {q for s in premise_sentences for q, h in _qualifiers(s, scale) if h.stem == head.stem}
        if stated and qualifier not in stated:
            problems.append(Finding(FindingKind.QUALIFIER, f"note says {' or '.join(sorted(stated))} {head.text.lower()}, "
                                    f"claim says {qualifier} {head.text.lower()}", conflict=True))
    return problems


def _comparison_problems(sentence: Sentence, premise_sentences: list[Sentence]) -> list[Finding]:
    """Two sides compared ("her right elbow bothers her more than her left") the note compares
    the other way round: the note's sentences naming the same sides of the same body part,
    none in the claim's order."""
    order = [(side.side, side.head) for side in sentence.sides]
    if len({side for side, _ in order}) < 2 or not _COMPARING.search(sentence.text):
        return []
    same = [[(side.side, side.head) for side in s.sides] for s in premise_sentences]
    # the same sides of the same parts, in any order (a multiset: a head may be None, never sorted)
    same = [o for o in same if Counter(o) == Counter(order)]
    if same and order not in same:
        return [Finding(FindingKind.SIDE, f"note compares {' and '.join(s for s, _ in same[0])} the other way round, claim "
                                f"says {' then '.join(s for s, _ in order)}", conflict=True)]
    return []


def _direction_problems(analyser: Analyser, sentence: Sentence, claim_stems: set[str],
                        premise_sentences: list[Sentence]) -> list[Finding]:
    if not sentence.directions:
        return []
    concept = claim_stems - {analyser.normal(w) for _, _, word in sentence.directions for w in word.split()}
    stated = [d for s in sentences_about(concept, premise_sentences) for d in s.directions]
    problems = []
    for axis, sign, word in dict.fromkeys(sentence.directions):
        if any((a, g) == (axis, sign) for a, g, _ in stated):
            continue
        other = next((w for a, g, w in stated if contradicts((axis, sign), (a, g))), None)
        if other is not None:
            problems.append(Finding(FindingKind.DIRECTION, f"note says {other}, claim says {word}", conflict=True))
        elif axis is Axis.USE and not _stop_stated(analyser, word, concept, premise_sentences):
            # stopping a habit or a drug the note never says is stopped ("smoking cessation"
            # against "a bar that allows smoking")
            problems.append(Finding(FindingKind.DIRECTION, f"note does not say {word}"))
        elif _unstated(axis, sign, sentence, stated, premise_sentences):
            problems.append(Finding(FindingKind.DIRECTION, f"note does not say {word}"))
    return problems


def _unstated(axis: Axis, sign: int, sentence: Sentence, stated: list, premise_sentences: list[Sentence]) -> bool:
    """Whether a direction the note does not state otherwise is the claim's own fact: v8, a dose changed
    the note never says is changed ("increase her dose of hydrochlorothiazide" against a note that gives
    the dose); v10, a worsening or a low level the note says of nothing ("worsening her strength"
    against "to work on strength")."""
    if axis is Axis.CHANGE and sentence.regimens:
        return not any(a is Axis.CHANGE and g == sign for a, g, _ in stated)
    return (axis, sign) in _SAID_SOMEWHERE and not _said_somewhere(axis, sign, premise_sentences)


#: v10: directions a claim states that the note must say somewhere, each with the other directions
#: that may word it: worse (or increasing: "increasing pain"), low (or decreased, reduced)
_SAID_SOMEWHERE = MappingProxyType({(Axis.COURSE, -1): ((Axis.COURSE, -1), (Axis.CHANGE, 1)),
                                    (Axis.LEVEL, -1): ((Axis.LEVEL, -1), (Axis.CHANGE, -1))})
#: words that say a level is low without a direction word ("hypoglycemia", "hypokalemia")
_LOW_PREFIX = re.compile(r"\bhypo[a-z]+", re.IGNORECASE)


def _said_somewhere(axis: Axis, sign: int, premise_sentences: list[Sentence]) -> bool:
    """Whether any note sentence states the direction (:data:`_SAID_SOMEWHERE`), whatever it speaks of."""
    wordings = _SAID_SOMEWHERE[axis, sign]
    if axis is Axis.LEVEL and any(_LOW_PREFIX.search(s.text) for s in premise_sentences):
        return True
    return any((a, g) in wordings for s in premise_sentences for a, g, _ in s.directions)


#: Words that state a stop without being a direction themselves ("stop by the office" is none):
#: read only in a sentence about the claim's concept ("stop Reglan" for "discontinue Reglan", v7).
STOPPING = frozenset("stop stops stopping stopped cease ceased hold held".split())


def _stop_stated(analyser: Analyser, word: str, concept: set[str], premise_sentences: list[Sentence]) -> bool:
    """Whether the note states the claim's stop: the word itself anywhere, or any stopping word
    (:data:`STOPPING`, the other stop directions) where the note speaks of the claim's concept
    (:func:`sentences_about`: "instructed to stop smoking" says nothing of "instructed to discontinue Reglan")."""
    if any(analyser.normal(word) in s.stems for s in premise_sentences):
        return True
    stops = {analyser.normal(w) for w in STOPPING} | {analyser.normal(w) for w, (axis, _) in DIRECTIONS.items()
                                                      if axis is Axis.USE}
    return any(s.stems & stops for s in sentences_about(concept, premise_sentences))


def _site_problems(analyser: Analyser, sentence: Sentence, claim_stems: set[str],
                   premise_sentences: list[Sentence]) -> list[Finding]:
    """Another site where the note speaks of the claim's concept, unless a note sentence that
    names the claim's site shares half as much of the concept."""
    if not sentence.sites:
        return []
    concept = claim_stems - {analyser.normal(site) for site in sentence.sites}
    named = {site for s in premise_sentences for site in s.sites}
    problems = []
    for site in sorted(sentence.sites - _own_sites(sentence)):
        if not any(_names(analyser, other, site) for other in named):
            if not _denied_everywhere(analyser, sentence, site, premise_sentences):
                problems.append(Finding(FindingKind.SITE, f"note does not name the {site}"))
            continue
        about = sentences_about(concept, premise_sentences, least=1)
        there = {other for s in about for other in s.sites} - TISSUES
        if site in TISSUES:
            continue  # the skin is on every site: no other site contradicts it
        if not there or any(same_site(analyser, site, other) for other in there):
            continue
        best = max(len(s.stems & concept) for s in about)
        if any(len(s.stems & concept) >= max(1, best // 2) and any(same_site(analyser, site, o) for o in s.sites)
               for s in premise_sentences):
            continue
        problems.append(Finding(FindingKind.SITE, f"note says {', '.join(sorted(there)[:3])}, claim says {site}", conflict=True))
    return problems


def _own_sites(sentence: Sentence) -> set[str]:
    """v11: the one site each of the claim's findings can have ("lungs" of "rhonchi",
    :data:`~doclens.evaluators.rules.words.OWN_SITE`): no detail of its own, which the note need not
    name beside the finding."""
    return {OWN_SITE[w.text.lower()] for w in sentence.words if w.text.lower() in OWN_SITE}


def _names(analyser: Analyser, other: str, site: str) -> bool:
    """v9: whether the note's site ``other`` names the claim's ``site``: the site itself or a part of it;
    a whole of it ("abdomen") does not name a part ("groin": the claim says more than the note)."""
    return site == other or site in analyser.site_wholes.get(other, ())


def _denied_everywhere(analyser: Analyser, sentence: Sentence, site: str, premise_sentences: list[Sentence]) -> bool:
    """v7: the claim denies a finding at ``site`` and the note denies that finding with no site: "no
    lower extremity edema" is the note's "No edema" (a wider negation), however the note never names
    the legs."""
    at_site = [w for w in sentence.words if analyser.noun(w.text.lower()) == site]
    denied = [w for w in sentence.words if w.status == Status.NEGATED and not analyser.names_near_miss(w.text)]
    if not at_site or any(w.status != Status.NEGATED for w in at_site) or not denied:
        return False
    note_denies = {w.stem for s in premise_sentences for w in s.words if w.status == Status.NEGATED}
    return all(w.stem in note_denies for w in denied)


def _person_problems(analyser: Analyser, sentence: Sentence, claim_stems: set[str],
                     premise_sentences: list[Sentence]) -> list[Finding]:
    if not sentence.relatives:
        return []
    concept = claim_stems - {analyser.normal(p) for p in sentence.relatives}
    there = {person for s in sentences_about(concept, premise_sentences) for person in s.relatives}
    problems = []
    for person in sorted(sentence.relatives - RELATIVE_COVERS.keys()):  # "family history of …" names no one
        if not any(covers(other, person) for other in there):
            said = f"of the {', '.join(sorted(there))}" if there else "of the patient"
            problems.append(Finding(FindingKind.PERSON, f"note says it {said}, claim says of the {person}", conflict=True))
    # v8: which side of the family ("paternal grandmother" for "maternal grandmother")
    claimed = _said(sentence) & _KIN_SIDES
    if claimed and not problems:
        about = [s for s in sentences_about(concept | {analyser.normal(p) for p in sentence.relatives}, premise_sentences)
                 if s.relatives & sentence.relatives]
        stated = {side for s in about for side in _said(s) & _KIN_SIDES}
        if stated and not claimed & stated:
            problems.append(Finding(FindingKind.PERSON, f"note says {', '.join(sorted(stated))}, claim says "
                                    f"{', '.join(sorted(claimed))}", conflict=True))
    return problems


_KIN_SIDES = frozenset({"maternal", "paternal"})


def _action_problems(sentence: Sentence, premise_sentences: list[Sentence]) -> list[Finding]:
    """v8: a drug or treatment action the note states otherwise ("stop metformin" for "start metformin",
    a start for "continue"), or a stop the note never states where it names the drug or treatment
    ("He will stop Naprosyn" against "was prescribed Naprosyn")."""
    problems: list[Finding] = []
    for drug, sign, word, name in sentence.actions:
        stated = [(other, said, written) for s in premise_sentences for d, other, said, written in s.actions if d == drug]
        if any(other == sign for other, _, _ in stated):
            continue
        against = next(((said, written) for other, said, written in stated if contradicts_action(sign, other)), None)
        if against is not None:
            problems.append(Finding(FindingKind.DIRECTION, f"note says {against[0]} {against[1]}, claim says {word} "
                                    f"{name}", conflict=True))
        elif sign == -1 and any(drug in s.stems or any(r.drug == drug for r in s.regimens) for s in premise_sentences):
            problems.append(Finding(FindingKind.DIRECTION, f"note does not say {word} {name}"))
        elif sign == 0 and not stated and _only_prescribed(drug, premise_sentences):
            problems.append(Finding(FindingKind.DIRECTION, f"note does not say {word} {name}, only prescribed"))
    return problems


#: v10: words that say a drug is already taken, which a continuation needs ("He takes meloxicam",
#: "currently on lisinopril")
GOING_ON = frozenset("continue continues continued continuing take takes taking took currently current still already "
                     "using uses remains remain refill refilled been on".split())


def _only_prescribed(drug: str, premise_sentences: list[Sentence]) -> bool:
    """v10: whether the note names ``drug`` only as prescribed ("I have prescribed tramadol 50 mg"),
    never as taken or gone on with (:data:`GOING_ON`): going on with it ("was continued") is then the
    claim's own fact, which a new prescription does not state."""
    naming = [_said(s) for s in premise_sentences if drug in s.stems or any(r.drug == drug for r in s.regimens)]
    return bool(naming) and all(any(w.startswith("prescrib") for w in said) and not said & GOING_ON for said in naming)


def _regimen_problems(sentence: Sentence, premise_sentences: list[Sentence]) -> list[Finding]:
    """A drug the note gives other doses or daily frequencies only; or a dose the note gives
    another drug where it gives this one none ("400 mg of acetaminophen" for "ibuprofen 400 mg")."""
    problems: list[Finding] = []
    regimens = [r for s in premise_sentences for r in s.regimens]
    for regimen in sentence.regimens:
        noted = [r for r in regimens if r.drug == regimen.drug]
        problems += _dose_problems(regimen, noted, regimens)
        frequencies = frozenset().union(*(r.frequencies for r in noted))
        if regimen.frequencies and frequencies and not regimen.frequencies & frequencies:
            problems.append(Finding(FindingKind.FREQUENCY, f"note gives {regimen.name} {_per_day(frequencies)}, claim says "
                                    f"{_per_day(regimen.frequencies)}", conflict=True))
        elif regimen.frequencies - {1} and noted and not frequencies:
            # v8: a frequency the note never gives the drug is the claim's own detail ("aspirin twice daily"
            # against "continue aspirin"); once a day is read into a daily dose ("20 mg a day"), so not it
            problems.append(Finding(FindingKind.FREQUENCY, f"note names {regimen.name} with no frequency (the claim: "
                                    f"{_per_day(regimen.frequencies)})"))
    return problems


def _dose_problems(regimen: Regimen, noted: list[Regimen], regimens: list[Regimen]) -> list[Finding]:
    """``regimen``'s doses against the note's: ``noted`` gives the same drug, ``regimens`` every drug."""
    doses = frozenset().union(*(r.doses for r in noted))
    if regimen.doses and doses and not regimen.doses & doses:
        return [Finding(FindingKind.DOSE, f"note gives {regimen.name} {', '.join(sorted(doses))}, claim says "
                                f"{', '.join(sorted(regimen.doses))}", conflict=True)]
    if regimen.doses and noted and not doses:
        others = sorted({r.name for r in regimens if r.drug != regimen.drug and r.doses & regimen.doses})
        if others:
            return [Finding(FindingKind.DOSE, f"note gives {', '.join(sorted(regimen.doses))} of {others[0]}, "
                                    f"claim of {regimen.name}", conflict=True)]
    return []


def same_site(analyser: Analyser, site: str, other: str) -> bool:
    """One site, or one part of the other (clinical_equivalents.json's ``part_of``)."""
    wholes = analyser.site_wholes
    return site == other or other in wholes.get(site, ()) or site in wholes.get(other, ())


#: a verb that makes a short sentence a statement, not a heading (:func:`sentences_about`)
_STATES = re.compile(r"\b(?:is|are|was|were|has|have|had|does|did)\b", re.IGNORECASE)


def sentences_about(concept: set[str], premise_sentences: list[Sentence], least: int = 2) -> list[Sentence]:
    """The note sentences that speak of ``concept`` (stems): those with the most of it in common
    (at least ``least``, or all of a smaller concept), with the sentence after a short one (a
    problem's heading, "Chronic back pain.", is followed by what the note says of it); v15: not after
    a short sentence that states its fact with a verb ("Strength is equal bilaterally." is no heading:
    what follows it, "X-rays of the lumbar spine were reviewed.", speaks of something else)."""
    if not concept:
        return []
    common = [len(s.stems & concept) for s in premise_sentences]
    best = max(common, default=0)
    if best < min(least, len(concept)):
        return []
    found = []
    for k, (sentence, n) in enumerate(zip(premise_sentences, common)):
        if n == best:
            found.append(sentence)
            if sentence.token_count <= 4 and k + 1 < len(premise_sentences) and not _STATES.search(sentence.text):
                found.append(premise_sentences[k + 1])
    return found
