"""What ``clinical-rules``' analysis makes of a text (:mod:`doclens.evaluators.rules.analysis`): its
sentences, each with its content words and their assertion status, its numbers with their units,
its sides with their body parts, and the near-miss facts (directions, sites, people, drug regimens)
the rules compare."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

from doclens.core.types import TextEnum
from doclens.evaluators.rules.lexicons import Direction

#: A run of letters of a lower-cased text (:attr:`Sentence.letter_runs`).
_LETTER_RUN = re.compile(r"[a-z]+")


class Status(TextEnum):
    """A content word's assertion status, as ConText reads it (the analysis's ``_STATUS_OF``): its
    value is the name written before the statuses were typed (``Status.NEGATED == "negated"``)."""

    AFFIRMED = "affirmed"
    NEGATED = "negated"
    FAMILY = "family"  # about a family member
    HYPOTHETICAL = "hypothetical"
    POSSIBLE = "possible"
    HISTORICAL = "historical"
    PLANNED = "planned"  # a test ordered or to be done, whose result is not known


@dataclass
class Word:
    stem: str
    text: str
    status: Status
    position: int
    #: a negated word that only qualifies the negated concept before it: the knee of "no problems
    #: with the knee", the palpation of "no tenderness to palpation" (:func:`~doclens.evaluators.rules.analysis._negated_items`)
    dependent: bool = False
    #: a negated word's list item: the stems negated with it ("denies left knee pain": knee, pain)
    phrase: frozenset = frozenset()
    #: the same item without the words that only qualify it (:attr:`dependent`): the concept the
    #: note negates ("no tenderness to palpation": tenderness; "no extra heart sounds": extra, heart, sound)
    concept: frozenset = frozenset()
    #: the stem of the item's last word that names its concept (neither a qualifier nor a time word):
    #: the sounds of "no extra heart sounds", the lightheadedness of "denies lightheadedness yesterday"
    head: str | None = None
    #: the item has words that qualify its head ("no pain with palpation of the lateral knee"): it denies
    #: less than its head alone
    qualified: bool = False


class Side(NamedTuple):
    side: str  # left, right or bilateral
    body: frozenset  # the content stems around it (two before, three after: the body part)
    phrase: str  # as written, "left sided", "both hands"
    negated: bool  # its body part is negated ("denies left sided facial pain")
    head: str | None  # the stem of the word it names ("knee" of "left knee pain"; "hand" of "right-hand")


class Regimen(NamedTuple):
    drug: str  # the drug's key (its generic name's: "Norvasc" and "amlodipine" are one)
    name: str  # as written
    doses: frozenset  # "40 mg"
    frequencies: frozenset  # doses a day


@dataclass
class Sentence:
    text: str
    words: list[Word] = field(default_factory=list)
    numbers: list[tuple[str, str | None, frozenset]] = field(default_factory=list)  # value, unit, context
    #: the numbers (their indices in ``numbers``) that open a range: the 0 of "0 to 120 degrees"
    range_starts: set[int] = field(default_factory=set)
    #: the numbers a frequency implies, not written: the 1 of "2 mg daily" (analysis._numbers_and_sides);
    #: a note's implied count supports or contradicts a claim's; a claim's own need not be in the
    #: note, but another count there contradicts it
    implied: set[int] = field(default_factory=set)
    #: v13: the durations (their indices in ``numbers``) that are the interval to a follow-up ("follow
    #: up in 2 weeks", analysis._follows_up)
    follow_ups: set[int] = field(default_factory=set)
    sides: list[Side] = field(default_factory=list)
    #: v6's near-miss facts (:func:`~doclens.evaluators.rules.near_misses.near_miss_problems`): the directions it
    #: states (axis, sign, word: :func:`~doclens.evaluators.rules.lexicons.directions_of`), the body
    #: sites it names (lemmas), the people other than the patient it names, and each drug with the
    #: doses and daily frequencies written after it (before the next drug)
    directions: list[Direction] = field(default_factory=list)
    sites: set[str] = field(default_factory=set)
    relatives: set[str] = field(default_factory=set)
    regimens: list[Regimen] = field(default_factory=list)
    #: v8: what is done with each drug (:func:`~doclens.evaluators.rules.lexicons.drug_actions`): its
    #: key, the action's sign (+1 start, 0 continue, -1 stop), the action word and the drug as written
    actions: list[tuple[str, int, str, str]] = field(default_factory=list)
    #: the stems with the keys of their abbreviations' expansions ("BP": blood, pressure), which a
    #: number's context (read the same way) is matched against
    keys: frozenset = frozenset()

    @cached_property
    def stems(self) -> set[str]:
        """The stems of :attr:`words`, made once a sentence (the rules ask for them some 700,000
        times in a reward step of 64, issue 49): a reading's words are set when it is made
        (:meth:`~doclens.evaluators.rules.analysis.Analyser.sentences`, or the analysis cache's
        decoding) and never changed after. One set a sentence: read it, never change it."""
        return {w.stem for w in self.words}

    @cached_property
    def letter_runs(self) -> frozenset[str]:
        """The runs of letters of the lower-cased text, as written (no stem, no equivalent): what the
        near-miss rules look up a word in, made once a sentence rather than once a claim that reads it
        (issue 49). Like :attr:`stems`, a sentence's text is never changed after it is read."""
        return frozenset(_LETTER_RUN.findall(self.text.lower()))

    @cached_property
    def token_count(self) -> int:
        """How many whitespace-separated tokens the text has (a short heading has few), counted once."""
        return len(self.text.split())

    @property
    def stated(self) -> list[tuple[int, tuple[str, str | None, frozenset]]]:
        """The numbers the text writes (an implied count left out), with their indices."""
        return [(k, n) for k, n in enumerate(self.numbers) if k not in self.implied]
