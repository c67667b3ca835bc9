"""ConText (Harkema et al., 2009): is a finding negated, possible, hypothetical, historical or a
relative's? Trigger phrases ("no", "denies", "history of", "mother") assert a category over the
words in their scope; the clinical-rules judge reads each word's status from it.

The algorithm of medspaCy 1.3.1's ``medspacy_context`` component (MIT License, Copyright (c) 2020
medspacy), written here for the part the judge uses, over medspaCy's default English rules, which
ship beside this file unchanged (``context_rules.json``, with their source and licence). medspaCy
itself is not a dependency: its declared pins (spacy<3.8 on Python < 3.12, a ``quickumls`` package
of its own) cannot be met beside the other extras (docs/design.md, "Maintained libraries and what
stays hand-written"). What is kept, as medspaCy does it:

* **matching**: a rule is a phrase (matched on lower-cased tokens, spaCy's ``PhraseMatcher``) or a
  token pattern (spaCy's ``Matcher``); of overlapping matches the longest is kept;
* **scope**: a ``FORWARD`` trigger reaches from its end to the end of the text, ``BACKWARD`` from
  the start of the text to its start, ``BIDIRECTIONAL`` both ways, each cut to ``max_scope``
  tokens when the rule has one; the text given is one sentence (callers split sentences first);
* **termination**: a trigger's scope ends at the next trigger of its own category or at a
  ``TERMINATE`` trigger ("but", "however" …) in its direction; ``TERMINATE`` and ``PSEUDO``
  triggers modify nothing themselves (a pseudo trigger, "no increase", only hides the shorter
  trigger inside it);
* a trigger never modifies a target it overlaps.

Added for the judge (medspaCy's ``on_match`` callbacks play this part there): a rule may carry a
``where`` condition on its match in the sentence (``where(doc, start, end)``); a match for which it
is false is dropped before overlaps are pruned, so a shorter trigger inside it can still count (the
judge's ``: no`` negates its key backwards only when it ends the text, "Fever: no.", and "Knees: No
erythema." is read by the plain forward ``no``); and a terminating rule may end the scopes of some
categories only (``terminates``: a new main clause, ", I recommend …", ends a negation, not a
hypothesis: "If her pain does not improve, I will recommend an MRI").

Not kept (the judge uses none): target-type filters, ``max_targets``, ``on_modifies`` callbacks,
regular-expression rules and medspaCy's span extensions.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

#: medspaCy 1.3.1's default English rules (MIT), vendored unchanged.
DEFAULT_RULES_PATH = Path(__file__).with_name("context_rules.json")
DEFAULT_RULES_SOURCE = "medspacy-1.3.1-en"

DIRECTIONS = ("FORWARD", "BACKWARD", "BIDIRECTIONAL", "TERMINATE", "PSEUDO")


@dataclass(frozen=True)
class ContextRule:
    """A trigger: ``literal`` matched as a phrase, or ``pattern`` (spaCy ``Matcher`` token
    patterns) when given; ``category`` is what it asserts (``NEGATED_EXISTENCE``, ``HISTORICAL`` …);
    ``where(doc, start, end)``, when given, must hold of a match for it to count; ``terminates``,
    for a ``TERMINATE`` rule, the categories whose scopes it ends (``None``: every category, as
    medspaCy's terminating triggers do)."""

    literal: str
    category: str
    direction: str = "BIDIRECTIONAL"
    pattern: list | None = None
    max_scope: int | None = None
    where: Callable[[object, int, int], bool] | None = field(default=None, compare=False)
    terminates: frozenset[str] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "category", self.category.upper())
        object.__setattr__(self, "direction", self.direction.upper())
        if self.direction not in DIRECTIONS:
            raise ValueError(f"ConText rule {self.literal!r}: direction {self.direction!r} is not one of {DIRECTIONS}")
        if self.max_scope is not None and self.max_scope <= 0:
            raise ValueError(f"ConText rule {self.literal!r}: max_scope must be positive, not {self.max_scope}")


@dataclass
class Modifier:
    """A matched trigger: tokens ``[start, end)``, its scope ``[scope_start, scope_end)``."""

    rule: ContextRule
    start: int
    end: int
    scope_start: int = 0
    scope_end: int = 0
    targets: list[int] = field(default_factory=list)


def default_rules() -> list[ContextRule]:
    """medspaCy 1.3.1's default English ConText rules, in their file's order."""
    with open(DEFAULT_RULES_PATH, encoding="utf-8") as handle:
        data = json.load(handle)
    return [ContextRule(r["literal"], r["category"], r.get("direction", "BIDIRECTIONAL"), r.get("pattern"),
                        r.get("max_scope")) for r in data["context_rules"]]


def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    # medspaCy's test, kept as it is: it is not symmetric (b strictly inside a is no overlap),
    # and scopes are limited in an order that depends on it
    return a[0] <= b[0] < a[1] or a[0] < b[1] <= a[1]


def _longest(matches: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """Overlapping matches pruned to the longer (the earlier on a tie), repeated until none is
    pruned: medspaCy's ``prune_overlapping_matches``, the same pairs compared in the same order."""
    while matches:
        rest = sorted(matches, key=lambda m: (m[1], m[2]))
        pruned = []
        current = rest.pop(0)
        while True:
            if not rest:
                pruned.append(current)
                break
            following = rest.pop(0)
            if _overlaps(current[1:], following[1:]):
                pruned.append(max(current, following, key=lambda m: m[2] - m[1]))
                if not rest:
                    break
                current = rest.pop(0)
            else:
                pruned.append(current)
                current = following
        if len(pruned) == len(matches):
            return pruned
        matches = pruned
    return matches


class ConText:
    """ConText over one sentence at a time. ``nlp`` is a spaCy ``Language`` whose tokenizer made
    the docs (phrases are tokenised by it); ``rules`` are matched in the order given."""

    def __init__(self, nlp, rules: list[ContextRule]) -> None:
        from spacy.matcher import Matcher, PhraseMatcher

        self._tokenizer = nlp.tokenizer
        self._vocab = nlp.vocab
        self._matcher = Matcher(nlp.vocab)
        self._phrases = PhraseMatcher(nlp.vocab, attr="LOWER")
        self._rules: dict[str, ContextRule] = {}
        #: for each token pattern, the words (lower case) each of its required tokens may be; ``None``
        #: when a pattern reads anything else (then the token matcher runs on every sentence)
        self._needs: list[list[frozenset[str]]] | None = []
        self.add(rules)

    def add(self, rules: list[ContextRule]) -> None:
        for rule in rules:
            # keys as medspaCy names them: the matchers' order of equal spans follows their hashes
            key = f"{rule.category}_{len(self._rules)}"
            self._rules[key] = rule
            if rule.pattern is not None:
                self._matcher.add(key, [rule.pattern])
                needs = _needed_words(rule.pattern)
                self._needs = None if needs is None or self._needs is None else [*self._needs, needs]
            else:
                self._phrases.add(key, [self._tokenizer(rule.literal.lower())])

    @property
    def rules(self) -> list[ContextRule]:
        return list(self._rules.values())

    def modifiers(self, doc) -> list[Modifier]:
        """The triggers of ``doc`` (one sentence), with their scopes limited by each other."""
        found_by_tokens = list(self._matcher(doc)) if self._may_match(doc) else []
        matches = [(match_id, start, end) for match_id, start, end in found_by_tokens + list(self._phrases(doc))
                   if self._holds(match_id, doc, start, end)]
        found = []
        for match_id, start, end in _longest(matches):
            found.append(_scoped(Modifier(self._rules[self._vocab.strings[match_id]], start, end), len(doc)))
        for i, first in enumerate(found):
            for second in found[i + 1:]:
                _limit(first, second)
                _limit(second, first)
        return found

    def _may_match(self, doc) -> bool:
        """Whether some token pattern could match ``doc``: each of its required tokens' words occurs
        in it. A sentence where none could is not given to the token matcher, which would find nothing
        (it cost a tenth of a reward step, and half the sentences of real notes have no trigger: issue 49)."""
        if self._needs is None:
            return True
        words = {token.lower_ for token in doc}
        return any(all(choices & words for choices in needs) for needs in self._needs)

    def _holds(self, match_id, doc, start: int, end: int) -> bool:
        where = self._rules[self._vocab.strings[match_id]].where
        return where is None or where(doc, start, end)

    def __call__(self, doc, targets: list[tuple[int, int]]) -> tuple[list[Modifier], list[set[str]]]:
        """The triggers of ``doc`` and, for each target span ``(start, end)``, the categories of
        the triggers that modify it (empty: affirmed)."""
        modifiers = self.modifiers(doc)
        categories: list[set[str]] = []
        for index, target in enumerate(targets):
            found = set()
            for modifier in modifiers:
                if _modifies(modifier, target):
                    modifier.targets.append(index)
                    found.add(modifier.rule.category)
            categories.append(found)
        return modifiers, categories


def _needed_words(pattern: list) -> list[frozenset[str]] | None:
    """For a token pattern that reads only ``LOWER`` (a word, or ``IN`` a list) with no operator or
    ``?``, ``*``, ``+``: the words each token that must be present may be; else ``None``."""
    needs = []
    for token in pattern:
        if set(token) != {"LOWER"} and set(token) != {"LOWER", "OP"} or token.get("OP") not in (None, "?", "*", "+"):
            return None
        value = token["LOWER"]
        if token.get("OP") in ("?", "*"):
            continue
        if isinstance(value, str):
            needs.append(frozenset([value]))
        elif isinstance(value, dict) and set(value) == {"IN"}:
            needs.append(frozenset(value["IN"]))
        else:
            return None
    return needs


def _scoped(modifier: Modifier, length: int) -> Modifier:
    """The sentence on the trigger's side (both sides for the other directions), cut to the
    rule's ``max_scope``."""
    rule, limit = modifier.rule, modifier.rule.max_scope
    if rule.direction == "FORWARD":
        modifier.scope_start, modifier.scope_end = modifier.end, length
        if limit is not None and length - modifier.end > limit:
            modifier.scope_end = modifier.end + limit
    elif rule.direction == "BACKWARD":
        modifier.scope_start, modifier.scope_end = 0, modifier.start
        if limit is not None and modifier.start > limit:
            modifier.scope_start = modifier.start - limit
    else:
        modifier.scope_start, modifier.scope_end = 0, length
        if limit is not None and modifier.start > limit:
            modifier.scope_start = modifier.start - limit
        if limit is not None and length - modifier.end > limit:
            modifier.scope_end = modifier.end + limit
    return modifier


def _limit(modifier: Modifier, other: Modifier) -> None:
    """``other`` ends ``modifier``'s scope when it is a terminating trigger or one of the same
    category lying in ``modifier``'s direction ("no fever, no cough": the first "no" stops at the
    second)."""
    if not _overlaps((modifier.scope_start, modifier.scope_end), (other.scope_start, other.scope_end)):
        return
    if modifier.rule.direction == "TERMINATE":
        return
    if other.rule.direction != "TERMINATE" and other.rule.category != modifier.rule.category:
        return
    if other.rule.terminates is not None and modifier.rule.category not in other.rule.terminates:
        return
    if modifier.rule.direction in ("FORWARD", "BIDIRECTIONAL") and other.start > modifier.start:
        modifier.scope_end = min(modifier.scope_end, other.start)
    if modifier.rule.direction in ("BACKWARD", "BIDIRECTIONAL") and other.end < modifier.end:
        modifier.scope_start = max(modifier.scope_start, other.end)


def _modifies(modifier: Modifier, target: tuple[int, int]) -> bool:
    if _overlaps((modifier.start, modifier.end), target):
        return False
    if modifier.rule.direction in ("TERMINATE", "PSEUDO"):
        return False
    return _overlaps((modifier.scope_start, modifier.scope_end), target)
