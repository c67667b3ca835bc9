"""Near-misses at scale, made by a program (issue 46, point 2): typed one-detail changes to claims
labelled supported, each checked to be unsupported by its premise note by construction.

Sources: every claim labelled supported in the real-output set's halves ``dev``, ``held-out``,
``fresh`` and ``fresh-2``, and the near-miss probe's supported items (kinds ``correct`` and
``equivalent``). The ``sealed`` half is never read. Each variant changes one contiguous span of its
source claim and has exactly one kind:

* ``negation``: a negation removed ("no X" -> "X", "denies X" -> "reports X", "is not" -> "is"), turned
  into a quantifier ("no X" -> "mild X" / "some X"), or added ("X" -> "no X", "reports X" -> "denies X",
  "is X" -> "is not X"); ``normal`` / ``negative`` / ``positive`` turned over;
* ``action``: start / stop / continue / hold / resume (and prescribed / discontinued) swapped on a
  treatment; ``control``: well / poorly controlled; ``course``: improving / worsening, better /
  worse, resolved / persistent, stable -> worsening; ``amount``: increase / decrease, elevated / high /
  low; ``need``: needed / not needed, required / not required;
* ``side``: left / right / bilateral; ``site``: another body site of the same region; ``drug``:
  another drug of the same class and one of another class; ``dose``: the number doubled or halved,
  or another unit; ``frequency``: another dosing frequency; ``person``: another relative, the
  patient's relative for the patient, or the patient for the relative.

**Unsupported by construction.** A word the variant brings in (and every word of its group: a
drug's brand names, a site's synonyms, a direction's other forms) occurs nowhere in the note,
compared case-insensitively by word and by a crude stem (plurals and tense forms). A negation flip
brings in no new content word, so it is checked on the phrase's head word instead: a removed
negation needs every mention of the head in the note to be negated; an added one needs the note to
mention the head and never in a sentence that negates anything. Where a check cannot be made, no
variant is made: the generator prefers precision to count.

**Independent of the judge.** The word lists are this generator's own
(``benchmarks/near_miss_words.json``, written from general clinical knowledge, each list with its
source). Nothing here reads the clinical-rules judge's lexicons or tables, so a word the judge does
not know cannot hide a variant from this generator too (``docs/design.md``, "Near-misses made by a
program").

    python -m benchmarks.near_miss_generator                        # variants per kind and half
    python -m benchmarks.near_miss_generator --measure --show 10    # the default judge's acceptance
    python -m benchmarks.near_miss_generator --halves dev,held-out --write variants.jsonl

``--write`` writes one labelled item per line (``id``, ``claim``, ``premise_ref``, ``label`` false,
``kind``, and the source, span and checks), readable by ``doclens judge-check FILE``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
import zlib
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from doclens.datasets.labelled import AciBenchNotes, shipped_set  # noqa: E402

WORDS_PATH = Path(__file__).with_name("near_miss_words.json")
KINDS = ("negation", "action", "control", "course", "amount", "need", "side", "site", "drug", "dose", "frequency",
         "person")
#: the real-output halves a variant may come from; ``sealed`` is never read
REAL_HALVES = ("dev", "held-out", "fresh", "fresh-2")
PROBE = "near-miss-probe"
SOURCES = (*REAL_HALVES, PROBE)

_TOKEN = re.compile(r"\d+(?:\.\d+)?|[A-Za-zµ][A-Za-z0-9µ]*(?:['’][A-Za-z]+)?(?:-[A-Za-z0-9]+)*|\S")
_SENTENCE_END = frozenset(".;?!")
_SUFFIXES = ("ness", "ing", "ied", "ies", "ed", "es", "s")


@lru_cache(maxsize=1)
def words() -> dict:
    """The generator's word lists (``near_miss_words.json``)."""
    return json.loads(WORDS_PATH.read_text(encoding="utf-8"))


@cache
def word_set(*path: str) -> frozenset[str]:
    """One list of :func:`words` as a set, by its keys (``word_set("negation_cues", "words")``)."""
    value = words()
    for key in path:
        value = value[key]
    return frozenset(value)


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A crude stem: lower case, possessive, one inflectional suffix and a final ``e`` or doubled
    consonant off, so that ``knees``/``knee``, ``stopped``/``stop``, ``increases``/``increase`` meet."""
    w = word.lower().replace("’", "'")
    w = w[:-2] if w.endswith("'s") else w
    for suffix in _SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)] + ("y" if suffix in ("ies", "ied") else "")
            if suffix in ("ing", "ed") and len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiouls":
                w = w[:-1]
            break
    return w[:-1] if len(w) > 3 and w.endswith("e") else w


@dataclass(frozen=True)
class Token:
    text: str
    low: str
    start: int
    end: int


def tokenize(text: str) -> list[Token]:
    return [Token(m.group(), m.group().lower().replace("’", "'"), m.start(), m.end()) for m in _TOKEN.finditer(text)]


class Text:
    """A claim or note, tokenized: lower-case tokens, their stems (and the stems of a hyphenated
    token's parts), and sentence numbers (a sentence ends at ``. ; ? !`` and at a line break)."""

    def __init__(self, text: str):
        self.text = text
        self.toks = tokenize(text)
        self.low = [t.low for t in self.toks]
        self.stems = [stem(w) for w in self.low]
        self.parts = [frozenset(stem(p) for p in w.split("-") if p) | {stem(w)} for w in self.low]
        self.stem_set = frozenset().union(*self.parts) if self.parts else frozenset()
        self.sent, number = [], 0
        for i, tok in enumerate(self.toks):
            if i and "\n" in text[self.toks[i - 1].end:tok.start]:
                number += 1
            self.sent.append(number)
            if tok.low in _SENTENCE_END:
                number += 1

    def __len__(self) -> int:
        return len(self.toks)

    def find(self, phrase: str, by_stem: bool = False) -> list[int]:
        """Token positions where ``phrase`` starts (its tokens in order, compared lower-case, or by stem;
        a one-word phrase by stem also matches a part of a hyphenated token)."""
        want = [stem(t.low) if by_stem else t.low for t in tokenize(phrase)]
        if not want:
            return []
        if by_stem and len(want) == 1:
            return [i for i, parts in enumerate(self.parts) if want[0] in parts]
        have = self.stems if by_stem else self.low
        n = len(want)
        return [i for i in range(len(have) - n + 1) if have[i:i + n] == want]

    def has(self, phrase: str) -> bool:
        """Whether ``phrase`` occurs (by stem, so in any simple inflection)."""
        want = [stem(t.low) for t in tokenize(phrase)]
        if len(want) == 1:
            return want[0] in self.stem_set
        return bool(self.find(phrase, by_stem=True))

    def has_any(self, phrases: Iterable[str]) -> str | None:
        """The first of ``phrases`` that occurs, else ``None``."""
        return next((p for p in phrases if self.has(p)), None)


@dataclass(frozen=True)
class Edit:
    """One change to a claim: ``claim[start:end]`` becomes ``after``; ``checked`` says why the note
    cannot support the result (the words found absent, or the heads found negated / affirmed)."""

    kind: str
    start: int
    end: int
    after: str
    checked: str


@dataclass(frozen=True)
class Source:
    id: str
    half: str
    claim: str
    premise: str
    premise_ref: str
    side: str | None


@dataclass(frozen=True)
class VariantFields:
    """What every generated variant holds, a near miss here and a rewording in
    ``benchmarks/rewording_generator.py``; each adds the field that says why it is one."""

    id: str
    source_id: str
    half: str
    kind: str
    source_claim: str
    claim: str
    before: dict
    after: dict
    premise_ref: str
    side: str | None


@dataclass(frozen=True)
class Variant(VariantFields):
    checked: str


def match_case(model: str, word: str) -> str:
    """``word`` with ``model``'s capitalisation (all capitals, first capital, or as given)."""
    if len(model) > 1 and model.isupper() and len(word) > 1:
        return word.upper()
    if model[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def pick(options: list, *keys: str) -> list:
    """``options`` in an order fixed by ``keys`` (a CRC, not Python's salted hash): deterministic
    and spread, so that one drug or site is not always the replacement."""
    seed = zlib.crc32("|".join(keys).encode())
    return sorted(options, key=lambda o: zlib.crc32(f"{seed}:{o}".encode()))


def edit_tokens(kind: str, claim: Text, first: int, last: int, after: str, checked: str) -> Edit:
    """An edit replacing tokens ``first..last`` of ``claim`` by ``after`` (with the first token's case)."""
    return Edit(kind, claim.toks[first].start, claim.toks[last].end, match_case(claim.toks[first].text, after), checked)


def delete_token(kind: str, claim: Text, i: int, checked: str) -> Edit | None:
    """An edit deleting token ``i`` (and the space after it); at the claim's start the next word takes
    the capital."""
    if i + 1 >= len(claim):
        return None
    nxt = claim.toks[i + 1]
    if i == 0 or claim.toks[i].text[:1].isupper():
        return Edit(kind, claim.toks[i].start, nxt.end, match_case(claim.toks[i].text, nxt.text), checked)
    return Edit(kind, claim.toks[i].start, nxt.start, "", checked)


# ---------------------------------------------------------------------------------------------- negation


def locally_negated(note: Text, i: int) -> bool:
    """Whether note token ``i`` is denied by a negation cue shortly before it in its clause, a
    ``non-`` prefix, or a denying word shortly after it ("fever: none", "cough resolved")."""
    cues, breaks, after = (word_set("negation_cues", "words"), word_set("clause_breaks", "words"),
                           word_set("negation_after", "words"))
    if note.low[i].startswith("non-"):
        return True
    for j in range(i - 1, max(-1, i - 9), -1):
        if note.sent[j] != note.sent[i] or note.low[j] in breaks:
            break
        if note.low[j] in cues:
            return True
    for j in range(i + 1, min(len(note), i + 4)):
        if note.sent[j] != note.sent[i] or note.low[j] in (".", ";", "but", "however"):
            break
        if note.low[j] in after:
            return True
    return False


def sentence_negates(note: Text, i: int) -> bool:
    """Whether the sentence of note token ``i`` holds any negating word at all (the broad check for an
    added negation: a sentence that denies anything is not trusted to affirm the head)."""
    broad = word_set("negation_cues", "words") | word_set("negation_after", "words")
    s = note.sent[i]
    lo, hi = i, i
    while lo > 0 and note.sent[lo - 1] == s:
        lo -= 1
    while hi + 1 < len(note) and note.sent[hi + 1] == s:
        hi += 1
    return any(note.low[j] in broad or note.low[j].startswith(("non-", "un")) and note.low[j] != "under"
               for j in range(lo, hi + 1))


def phrase_heads(claim: Text, start: int) -> list[str]:
    """The head words of the noun phrase(s) from claim token ``start``: a list split at ``, and or``
    gives one head each; a phrase ends at a preposition, verb or clause mark, its head is its last
    content word ("pain with palpation" -> pain; "cervical lymphadenopathy" -> lymphadenopathy)."""
    stop, breaks, lists = word_set("stopwords", "words"), word_set("phrase_breaks", "words"), {",", "and", "or", "nor", "/"}
    subjects = {"he", "she", "they", "it", "i", "we", "patient", "the", "there", "his", "her"}
    heads: list[str] = []
    chunk: list[str] = []
    for j in range(start, len(claim)):
        w = claim.low[j]
        if w in lists:
            heads += [c for c in chunk[-1:]]
            chunk = []
            if j + 1 < len(claim) and claim.low[j + 1] in subjects:
                return heads
            continue
        if w in breaks or re.fullmatch(r"\d+(\.\d+)?", w) or _unit_family(w):
            if w == "of" and not chunk:
                continue  # "no evidence of X", "history of X": the head follows
            break
        if w.isalpha() or "-" in w:
            if w not in stop and len(w) > 1 and not w.endswith("ly"):
                chunk.append(w)
    return heads + chunk[-1:]


def heads_denied(note: Text, heads: list[str]) -> bool:
    """Every head is mentioned in the note, and every mention is locally negated (none affirms it). A
    head the note never names ("no history of knee problems" against "denies previous injuries to her
    knees") is not trusted: the note's own wording might be read either way."""
    return bool(heads) and all(
        (found := note.find(h, by_stem=True)) and all(locally_negated(note, i) for i in found) for h in heads)


def heads_affirmed(note: Text, heads: list[str]) -> bool:
    """Every head is mentioned, and never in a sentence that negates anything."""
    return bool(heads) and all(
        (found := note.find(h, by_stem=True)) and not any(sentence_negates(note, i) for i in found) for h in heads)


def third_person(verb: str) -> str:
    irregular = words()["negation_removals"]["irregular_s"]
    if verb in irregular:
        return irregular[verb]
    if verb.endswith(("s", "x", "z", "ch", "sh")):
        return verb + "es"
    if verb.endswith("y") and verb[-2:-1] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def past(verb: str) -> str:
    irregular = words()["negation_removals"]["irregular_past"]
    if verb in irregular:
        return irregular[verb]
    if verb.endswith("e"):
        return verb + "d"
    if verb.endswith("y") and verb[-2:-1] not in "aeiou":
        return verb[:-1] + "ied"
    if len(verb) <= 4 and re.fullmatch(r"[a-z]*[^aeiou][aeiou][^aeiouwxy]", verb):
        return verb + verb[-1] + "ed"
    return verb + "ed"


_CONTRACTIONS = {"isn't": "is", "wasn't": "was", "aren't": "are", "weren't": "were", "hasn't": "has",
                 "haven't": "have", "hadn't": "had", "won't": "will", "can't": "can", "cannot": "can",
                 "wouldn't": "would", "shouldn't": "should", "couldn't": "could"}


def _removal_spans(claim: Text, i: int) -> Iterator[tuple[int, int, str, int]]:
    """``(first, last, after, scope)`` for removing the negation at claim token ``i``: tokens
    ``first..last`` become ``after``; the negated phrase starts at token ``scope``."""
    rm, w = words()["negation_removals"], claim.low[i]
    nxt = claim.low[i + 1] if i + 1 < len(claim) else ""
    if w in rm["replace"] and (w != "negative" or nxt == "for"):
        last = i + 1 if nxt == "any" else i
        yield i, last, rm["replace"][w], last + 1
    elif w in _CONTRACTIONS:
        yield i, i, _CONTRACTIONS[w], i + 1
    elif w == "not" and i and claim.low[i - 1] in rm["drop_after_not"]:
        yield i - 1, i, claim.toks[i - 1].text, i + 1
    elif (w == "not" and i and claim.low[i - 1] in rm["do_support"]) or w in ("doesn't", "didn't", "don't"):
        aux = i - 1 if w == "not" else i
        form = rm["do_support"][claim.low[aux]]
        if nxt.isalpha():
            verb = {"s": third_person, "past": past, "base": str}[form](nxt)
            yield aux, i + 1, verb, i + 2


def negation_removed(claim: Text, note: Text) -> Iterator[Edit]:
    """"no X" -> "X" / "mild X" / "some X", "denies X" -> "reports X", "is not X" -> "is X", "does not
    have X" -> "has X", "never" dropped: only where the note denies every mention of the head."""
    rm = words()["negation_removals"]
    for i, w in enumerate(claim.low):
        nxt = claim.low[i + 1] if i + 1 < len(claim) else ""
        if nxt in rm["skip_after"] or not nxt:
            continue
        if w in ("no", "never"):
            heads = phrase_heads(claim, i + 1)
            if not heads_denied(note, heads):
                continue
            why = f"note denies every mention of {', '.join(heads)}"
            if edit := delete_token("negation", claim, i, why):
                yield edit
            if w == "no" and nxt not in rm["no_quantifier_before"] and nxt.isalpha():
                yield edit_tokens("negation", claim, i, i, pick(rm["quantifiers"], claim.text, str(i))[0], why)
            continue
        for first, last, after, scope in _removal_spans(claim, i):
            heads = phrase_heads(claim, scope)
            if heads_denied(note, heads):
                yield edit_tokens("negation", claim, first, last, after,
                                  f"note denies every mention of {', '.join(heads)}")


def _insert_no(claim: Text, note: Text, adds: dict) -> Iterator[Edit]:
    """"has X" -> "has no X", "reveals a rub" -> "reveals no rub", "there is X" -> "there is no X"."""
    triggers = [tokenize(t) for t in adds["insert_no_after"]]
    for i in range(len(claim)):
        for trig in triggers:
            n = i + len(trig)
            if n >= len(claim) or claim.low[i:n] != [t.low for t in trig]:
                continue
            nxt = claim.low[n]
            if nxt in adds["replaceable_determiners"]:
                first, after = n, "no"
            elif nxt.isalpha() and nxt not in adds["no_np_start"] and not nxt.endswith("ed"):
                first, after = n, "no " + claim.toks[n].text
            else:
                continue
            heads = phrase_heads(claim, n)
            if heads_affirmed(note, heads):
                yield Edit("negation", claim.toks[first].start, claim.toks[first].end, after,
                           f"note affirms {', '.join(heads)} and negates none of it")


def negation_added(claim: Text, note: Text) -> Iterator[Edit]:
    """"reports X" -> "denies X", "has X" -> "has no X", "is X" -> "is not X": only where the note
    mentions every head and never in a sentence that negates anything."""
    adds = words()["negation_additions"]
    for i, w in enumerate(claim.low):
        nxt = claim.low[i + 1] if i + 1 < len(claim) else ""
        if w in adds["replace"] and w != "positive":
            heads = phrase_heads(claim, i + 1)
            if heads_affirmed(note, heads):
                yield edit_tokens("negation", claim, i, i, adds["replace"][w],
                                  f"note affirms {', '.join(heads)} and negates none of it")
        elif w in adds["not_after"] and nxt.isalpha() and nxt not in adds["no_adj_start"] and i + 1 < len(claim):
            heads = phrase_heads(claim, i + 1)
            if heads_affirmed(note, heads):
                yield Edit("negation", claim.toks[i].start, claim.toks[i].end, claim.toks[i].text + " not",
                           f"note affirms {', '.join(heads)} and negates none of it")
    yield from _insert_no(claim, note, adds)


def polarity_flipped(claim: Text, note: Text) -> Iterator[Edit]:
    """``normal`` -> ``abnormal``, ``negative`` -> ``positive``, ``positive`` -> ``negative``: the new
    word (any form: abnormality, positively …) occurs nowhere in the note."""
    flips = {"normal": "abnormal", "negative": "positive", "positive": "negative"}
    for i, w in enumerate(claim.low):
        if w not in flips or (w == "negative" and i + 1 < len(claim) and claim.low[i + 1] == "for"):
            continue
        if w == "normal" and (i and claim.low[i - 1] in ("within", "not") or claim.low[i + 1:i + 2] in (["saline"], ["limits"])):
            continue
        new = flips[w]
        if any(t.startswith(new) for t in note.low) or (new == "abnormal" and note.has_any(["not normal", "abnormality"])):
            continue
        yield edit_tokens("negation", claim, i, i, new, f"'{new}' occurs nowhere in the note")


def negation(claim: Text, note: Text) -> Iterator[Edit]:
    yield from negation_removed(claim, note)
    yield from negation_added(claim, note)
    yield from polarity_flipped(claim, note)


# ------------------------------------------------------------------------------------ swaps of a word


def absent(note: Text, phrases: Iterable[str]) -> str | None:
    """``None`` when every phrase is absent from the note, else the first one found."""
    return note.has_any(phrases)


def _forms(groups: dict, group: str) -> list[str]:
    return [w for form in groups[group].values() for w in form]


def _treatment_near(claim: Text, i: int, window: int = 7) -> bool:
    treat = word_set("actions", "treatment_words")
    lo, hi = max(0, i - window), min(len(claim), i + window + 1)
    return any(claim.low[j] in treat or claim.low[j] in drug_names() for j in range(lo, hi) if j != i)


def action(claim: Text, note: Text) -> Iterator[Edit]:
    """start / stop / continue / hold / resume of a treatment (a drug or treatment word within a few
    words), in the same tense; every form of the new group and its near-synonyms absent from the note."""
    acts = words()["actions"]
    groups = acts["groups"]
    for i, w in enumerate(claim.low):
        found = next(((g, f, forms.index(w)) for g, fs in groups.items() for f, forms in fs.items() if w in forms), None)
        if found is None or not _treatment_near(claim, i) or _negated_in_claim(claim, i):
            continue
        group, form, _ = found
        nxt = claim.low[i + 1] if i + 1 < len(claim) else ""
        if nxt in ("to", "with", "on", "off"):
            continue  # "continue to take", "continue with PT": another verb would not fit
        for target in acts["swaps"][group]:
            if target == "hold" and nxt.endswith("ing"):
                continue
            blocking = absent(note, _forms(groups, target) + acts["also_blocks"][target])
            if blocking is None:
                yield edit_tokens("action", claim, i, i, groups[target][form][0],
                                  f"no form of '{target}' in the note")


def _phrase_at(claim: Text, phrases: Iterable[str]) -> Iterator[tuple[int, int, str]]:
    """``(first, last, phrase)`` for every phrase found in the claim, longest first, not overlapping."""
    taken: set[int] = set()
    for phrase in sorted(phrases, key=lambda p: -len(tokenize(p))):
        n = len(tokenize(phrase))
        for i in claim.find(phrase):
            if not taken & set(range(i, i + n)):
                taken |= set(range(i, i + n))
                yield i, i + n - 1, phrase


def control(claim: Text, note: Text) -> Iterator[Edit]:
    """well controlled <-> poorly controlled: no wording of the new state in the note."""
    c = words()["control"]
    for first, last, phrase in _phrase_at(claim, c["well"] + c["poorly"]):
        to_poorly = phrase in c["well"]
        if _negated_in_claim(claim, first) or (to_poorly and first and claim.low[first - 1] in ("poorly", "inadequately")):
            continue
        blocks = c["blocks_poorly"] if to_poorly else c["blocks_well"]
        if absent(note, blocks) is None and not (not to_poorly and _bare_controlled(note)):
            new = c["to_poorly"] if to_poorly else c["to_well"]
            yield edit_tokens("control", claim, first, last, new, f"no wording of '{new}' in the note")


def _bare_controlled(note: Text) -> bool:
    """The note says "controlled" with nothing that makes it poorly controlled before it."""
    deny = {"poorly", "not", "un", "inadequately", "suboptimally", "well"}
    return any(not (i and note.low[i - 1] in deny) and not (i > 1 and note.low[i - 2] == "not")
               for i in note.find("controlled"))


def _negated_in_claim(claim: Text, i: int) -> bool:
    return any(claim.low[j] in ("not", "no", "without", "never", "n't") or claim.low[j].endswith("n't")
               for j in range(max(0, i - 3), i))


def _swap_by_group(kind: str, claim: Text, note: Text, table: dict, skip=lambda claim, i: False) -> Iterator[Edit]:
    """Swap a word for its opposite (``table["swaps"]``) where no word of the opposite's group
    (``table["groups"][table["target_group"][new]]``) occurs in the note; a word the claim negates is left."""
    for i, w in enumerate(claim.low):
        new = table["swaps"].get(w)
        if new is None or _negated_in_claim(claim, i) or skip(claim, i):
            continue
        group = table["groups"][table["target_group"][new]]
        if absent(note, group) is None:
            yield edit_tokens(kind, claim, i, i, new, f"no word of '{new}' ({table['target_group'][new]}) in the note")


def _attributive_stable(claim: Text, i: int) -> bool:
    """``stable`` / ``unchanged`` before a noun ("in stable position") says nothing of a course."""
    return claim.low[i] in ("stable", "unchanged") and not (i and claim.low[i - 1] in (
        "is", "are", "was", "were", "remains", "remained", "been", "be", "and", "appears", "seems", "has"))


def course(claim: Text, note: Text) -> Iterator[Edit]:
    """improving <-> worsening, better <-> worse, resolved <-> persistent, stable -> worsening."""
    yield from _swap_by_group("course", claim, note, words()["course"], _attributive_stable)


def _not_amount(claim: Text, i: int) -> bool:
    """``lower back``, ``high school``, ``low-dose``: a place or a name, not an amount."""
    nxt = claim.low[i + 1] if i + 1 < len(claim) else ""
    return nxt in word_set("amount", "not_amount_before") or "-" in claim.low[i]


def amount(claim: Text, note: Text) -> Iterator[Edit]:
    """increase <-> decrease, elevated / high <-> low, higher <-> lower, reduced -> increased."""
    a = words()["amount"]
    for i, w in enumerate(claim.low):
        new = a["swaps"].get(w)
        if new is None or _negated_in_claim(claim, i) or _not_amount(claim, i):
            continue
        group = a["groups"][a["target_group"][new]]
        found = [g for g in group if _amount_mentions(note, g)]
        if not found:
            yield edit_tokens("amount", claim, i, i, new, f"no word of '{new}' ({a['target_group'][new]}) in the note")


def _amount_mentions(note: Text, word: str) -> bool:
    """``word`` in the note as an amount (not "lower back", "low back pain")."""
    skip = word_set("amount", "not_amount_before")
    moved = {"went", "go", "goes", "gone", "going", "come", "came", "trending", "trended", "is", "are", "was", "were"}
    return any(not (i + 1 < len(note) and note.low[i + 1] in skip)
               and (word not in ("up", "down") or (i and note.low[i - 1] in moved))  # not "follow up"
               for i in note.find(word, by_stem=True))


def need(claim: Text, note: Text) -> Iterator[Edit]:
    """needed <-> not needed, required <-> not required: the note says neither that it is needed (for
    "needed") nor anything negated about a need (for "not needed")."""
    n = words()["need"]
    need_words = n["words"]
    mentions = [i for w in need_words for i in note.find(w, by_stem=True)
                if not (i and note.low[i - 1] in n["skip_before"])]
    any_negated = any(locally_negated(note, i) for i in mentions) or note.has("unnecessary")
    any_affirmed = any(not sentence_negates(note, i) for i in mentions)
    for first, last, phrase in _phrase_at(claim, list(n["negative_to_positive"]) + list(n["positive_to_negative"])):
        if set(claim.low[max(0, first - 2):first]) & set(n["skip_before"]):
            continue  # "as needed", "if she needs anything": no statement of a need
        if phrase in n["negative_to_positive"]:
            heads = phrase_heads(claim, last + 1)
            if not any_affirmed and (not heads or heads_denied(note, heads)):
                yield edit_tokens("need", claim, first, last, n["negative_to_positive"][phrase],
                                  "the note affirms no need")
        elif not any_negated and not _negated_in_claim(claim, first):
            yield edit_tokens("need", claim, first, last, n["positive_to_negative"][phrase],
                              "the note negates no need")


# ------------------------------------------------------------------------------------ side and site


def _side_uses(note: Text, side: str) -> bool:
    """Whether the note uses ``side`` ("left"/"right") as a side anywhere (its idioms aside)."""
    s = words()["sides"]
    idioms = [i + k for p in s["idioms"] if side in p.split() for i in note.find(p)
              for k, t in enumerate(tokenize(p)) if t.low == side]
    return any(i not in idioms for w in s[side] for i in note.find(w, by_stem=True))


def _is_side(claim: Text, i: int) -> bool:
    """Claim token ``i`` (left/right) names a side: a body site or "side" follows within three words."""
    if "-" in claim.low[i]:
        return True
    sites = site_words()
    follow = claim.low[i + 1:i + 4]
    return any(w in sites or w in word_set("sides", "side_nouns") for w in follow)


def side(claim: Text, note: Text) -> Iterator[Edit]:
    """left <-> right, and left / right -> bilateral: the new side (and "bilateral"/"both", which would
    cover it) never used as a side in the note. Bilateral -> one side is not made: both sides
    include each."""
    s = words()["sides"]
    both_in_note = absent(note, s["both"]) is not None
    for i, w in enumerate(claim.low):
        base = w.split("-")[0]
        if base not in ("left", "right") or not _is_side(claim, i):
            continue
        other = "right" if base == "left" else "left"
        if both_in_note or _side_uses(note, other):
            continue
        why = f"'{other}' (as a side) and 'bilateral' / 'both' not in the note"
        yield edit_tokens("side", claim, i, i, claim.low[i].replace(base, other), why)
        if "-" not in w and i + 1 < len(claim) and claim.low[i + 1] not in word_set("sides", "side_nouns") \
                and _note_gives_side(claim, note, i):
            yield _both_sides(claim, i, why)


def _note_gives_side(claim: Text, note: Text, i: int) -> bool:
    """The note names the claim's side (token ``i``) just before the site that follows it in the claim
    ("left knee" in both): else a note silent on the side might be read as either, or both."""
    sites = [w for w in claim.low[i + 1:i + 4] if w in site_words()]
    side_word = claim.low[i].split("-")[0]
    return bool(sites) and any(side_word in note.low[max(0, j - 3):j] or note.low[j].startswith(side_word)
                               for j in note.find(sites[0], by_stem=True))


def _both_sides(claim: Text, i: int, why: str) -> Edit:
    """"her right ankle." -> "both ankles." (a possessive, a paired site, then the phrase's end);
    otherwise "right knee pain" -> "bilateral knee pain"."""
    site_entry = _site_form(claim, i + 1) if i + 1 < len(claim) else None
    after = claim.low[i + 2] if i + 2 < len(claim) else "."
    phrase_ends = after in word_set("phrase_breaks", "words") or not after.isalpha()
    if (site_entry and site_entry[1] == "noun" and site_entry[0].get("plural") and i
            and claim.low[i - 1] in ("his", "her", "their") and phrase_ends):
        return Edit("side", claim.toks[i - 1].start, claim.toks[i + 1].end, f"both {site_entry[0]['plural']}", why)
    return edit_tokens("side", claim, i, i, "bilateral", why)


@lru_cache(maxsize=1)
def _site_entries() -> list[dict]:
    return words()["anatomy"]["sites"]


@lru_cache(maxsize=1)
def site_words() -> frozenset[str]:
    """Every single word that names a site (noun, plural, adjective, related)."""
    out = set()
    for e in _site_entries():
        out |= {w for w in [e["noun"], e.get("plural", ""), e.get("adj", ""), *e["related"]] if w and " " not in w}
    return frozenset(out | {"extremity", "extremities"})


def _site_form(claim: Text, i: int) -> tuple[dict, str] | None:
    """The site entry and form (noun / plural / adj) claim token ``i`` is, unless an ambiguous word
    ("back", "hand", "head") is used in another sense here."""
    w = claim.low[i]
    amb = words()["anatomy"]
    prev = claim.low[i - 1] if i else ""
    nxt = claim.low[i + 1] if i + 1 < len(claim) else ""
    if w in amb["ambiguous"] and (prev in amb["ambiguous"][w] or nxt in amb["ambiguous_next_block"].get(w, [])):
        return None
    if prev in amb["compound_before"]:
        return None  # "lower back", "upper arm": the compound names the site, not the word alone
    for entry in _site_entries():
        for form in ("noun", "plural", "adj"):
            if entry.get(form) == w:
                return entry, form
    return None


def _site_absent(note: Text, entry: dict) -> bool:
    """No name of the site in the note, nor of a region that holds it ("arm" for the elbow): a note
    that names only the region might be read as naming the part."""
    names = [entry["noun"], entry.get("plural", ""), entry.get("adj", ""), *entry["related"]]
    return absent(note, [n for n in names if n] + _containers(entry)) is None


def _containers(entry: dict) -> list[str]:
    """The names of every region that holds the site, transitively (toe -> foot -> leg)."""
    anatomy, names = words()["anatomy"], []
    by_noun = {e["noun"]: e for e in anatomy["sites"]}
    region, seen = entry.get("part_of"), set()
    while region and region not in seen:
        seen.add(region)
        names += anatomy["containers"].get(region, [])
        region = by_noun.get(region, {}).get("part_of")
    return names


def site(claim: Text, note: Text) -> Iterator[Edit]:
    """Another body site of the same region (joint, limb, spine, trunk, head, organ), in the same form
    (noun, plural, adjective); none of its names or related words in the note. Two per mention."""
    for i in range(len(claim)):
        found = _site_form(claim, i)
        if found is None:
            continue
        entry, form = found
        sided = bool(set(claim.low[max(0, i - 2):i]) & {"left", "right", "bilateral", "both", "left-sided", "right-sided"})
        options = [e for e in _site_entries() if e["class"] == entry["class"] and e is not entry and e.get(form)
                   and " " not in e[form] and (e.get("paired") or not sided)]
        made = 0
        for other in pick(options, claim.text, str(i)):
            if made < 2 and _site_absent(note, other):
                made += 1
                yield edit_tokens("site", claim, i, i, other[form], f"no name of '{other['noun']}' in the note")


# ------------------------------------------------------------------------------------ drug, dose, frequency


@lru_cache(maxsize=1)
def drug_index() -> dict[str, tuple[str, int]]:
    """Every drug name (generic or brand, lower case) -> (its class, the drug's index in the class)."""
    return {name: (cls, k) for cls, drugs in words()["drugs"]["classes"].items()
            for k, names in enumerate(drugs) for name in names}


@lru_cache(maxsize=1)
def drug_names() -> frozenset[str]:
    return frozenset(drug_index())


def drug(claim: Text, note: Text) -> Iterator[Edit]:
    """The drug swapped for another of its class and for one of another class; none of the new drug's
    names (generic or brand) in the note."""
    classes = words()["drugs"]["classes"]
    index = drug_index()
    for i, w in enumerate(claim.low):
        if w not in index:
            continue
        cls, k = index[w]
        within = [tuple(d) for j, d in enumerate(classes[cls]) if j != k]
        across = [tuple(d) for c, ds in classes.items() if c != cls for d in ds]
        for label, options in (("same class", within), ("another class", across)):
            new = next((d for d in pick(options, claim.text, w, label) if absent(note, d) is None), None)
            if new is not None:
                yield edit_tokens("drug", claim, i, i, new[0], f"no name of {new[0]} ({label}) in the note")


def _unit_family(word: str) -> str | None:
    families = words()["dose_units"]["families"]
    return next((f for f, spellings in families.items() if word in spellings), None)


def _number_text(value: float) -> str:
    return f"{value:.3f}".rstrip("0").rstrip(".")


def _number_near_units(note: Text, number: str) -> bool:
    """``number`` occurs in a note sentence that names any dose unit (or any sentence, when it is next to a unit)."""
    unit_sents = {note.sent[i] for i, w in enumerate(note.low) if _unit_family(w)}
    return any(note.sent[i] in unit_sents for i in note.find(number))


def dose(claim: Text, note: Text) -> Iterator[Edit]:
    """A dose ("10 mg") doubled, halved, or in another unit: the new number occurs in no sentence of the
    note that names a dose unit; the new unit occurs nowhere in the note. A rate ("mg/dL") is not a dose."""
    du = words()["dose_units"]
    for i in range(len(claim) - 1):
        number, family = claim.low[i], _unit_family(claim.low[i + 1])
        if not re.fullmatch(r"\d+(\.\d+)?", number) or family is None or claim.low[i + 2:i + 3] == ["/"]:
            continue
        value = float(number)
        for new in (_number_text(value * 2), _number_text(value / 2)):
            if new != number and not _number_near_units(note, new):
                yield edit_tokens("dose", claim, i, i, new, f"'{new}' with a dose unit nowhere in the note")
        target = du["swap"][family]
        if absent(note, du["families"][target]) is None:
            yield edit_tokens("dose", claim, i + 1, i + 1, du["spelled"][target], f"no '{target}' in the note")


@lru_cache(maxsize=1)
def _frequency_phrases() -> list[tuple[str, str]]:
    """(phrase, class), longest phrase first."""
    classes = words()["frequencies"]["classes"]
    return sorted(((p, c) for c, ps in classes.items() for p in ps), key=lambda pc: -len(tokenize(pc[0])))


def frequencies(text: Text) -> list[tuple[int, int, str]]:
    """``(first, last, class)`` of every frequency phrase in ``text``, longest match first, not overlapping."""
    found, taken = [], set()
    for phrase, cls in _frequency_phrases():
        n = len(tokenize(phrase))
        for i in text.find(phrase):
            if not taken & set(range(i, i + n)):
                taken |= set(range(i, i + n))
                found.append((i, i + n - 1, cls))
    return sorted(found)


#: hours between doses -> the frequency class a range of hours ("every 6 to 8 hours") may mean
_HOURS = {4: "every_4_hours", 6: "four_times_daily", 8: "three_times_daily", 12: "twice_daily", 24: "once_daily"}


_COUNTED = ("once_daily", "twice_daily", "three_times_daily", "four_times_daily")
_COUNTED_WEEKLY = ("once_weekly", "twice_weekly", "three_times_weekly")


def implied_frequencies(note: Text) -> set[str]:
    """Frequency classes the note gives without a listed phrase: a range of hours ("every 6 to 8
    hours", "q4-6h": every class in the range), a morning and an evening dose (twice daily), and any
    counted spelling ("3 times per day", "2x a week")."""
    out = set()
    for m in re.finditer(r"(?:every|q)\s*(\d+)\s*(?:to|-|or)\s*(\d+)\s*(?:hours|hrs|h)\b", note.text, re.I):
        low, high = sorted((int(m.group(1)), int(m.group(2))))
        out |= {cls for hours, cls in _HOURS.items() if low <= hours <= high}
    if "morning" in note.low and {"night", "evening", "bedtime", "nightly"} & set(note.low):
        out.add("twice_daily")
    counted = r"\b(one|1|two|2|three|3|four|4)\s*(?:times|x)\s*(?:a|per|each|every|/)?\s*(day|daily|week|weekly)\b"
    for m in re.finditer(counted, note.text, re.I):
        n = {"one": 1, "two": 2, "three": 3, "four": 4}.get(m.group(1).lower()) or int(m.group(1))
        daily = m.group(2).lower().startswith("da")
        out.add(_COUNTED[n - 1] if daily else _COUNTED_WEEKLY[min(n, 3) - 1])
    return out


def _is_frequency(claim: Text, first: int, last: int) -> bool:
    """Whether a frequency phrase found in the claim gives a frequency here: not "a week ago", not "3 to
    4 times a day" (a range), not "activities of daily living", and a bare "a day" / "per week" only
    after a dose or a count ("5 mg a day", "2 cups a day")."""
    fr = words()["frequencies"]
    phrase = " ".join(claim.low[first:last + 1])
    prev = claim.low[first - 1] if first else ""
    nxt = claim.low[last + 1] if last + 1 < len(claim) else ""
    if nxt in fr["not_frequency_after"] or nxt in fr["adjective_before"]:
        return False
    prev2 = claim.low[first - 2] if first > 1 else ""
    if prev in ("to", "or", "-") and (prev2.isdigit() or prev2 in ("once", "twice", "one", "two", "three", "four")):
        return False  # "3 to 4 times a day", "once or twice a day": a range
    return phrase not in fr["bare"] or prev in fr["bare_after"]


def frequency(claim: Text, note: Text) -> Iterator[Edit]:
    """Another frequency class in the frequency's place: no spelling of the new class anywhere in the
    note (phrases matched longest first, so "twice a day" is not "a day"). "as needed" beside a
    scheduled frequency is left alone."""
    fr = words()["frequencies"]
    in_claim = [f for f in frequencies(claim) if _is_frequency(claim, f[0], f[1])]
    in_note = {cls for _, _, cls in frequencies(note)} | implied_frequencies(note)
    scheduled = [c for _, _, c in in_claim if c != "as_needed"]
    for first, last, cls in in_claim:
        if cls == "as_needed" and (scheduled or not _treatment_near(claim, first, 12)):
            continue  # beside a schedule, or "follow up as needed": no dosing frequency to change
        for target in fr["swaps"][cls]:
            if target not in in_note and target not in {c for _, _, c in in_claim}:
                yield edit_tokens("frequency", claim, first, last, fr["canonical"][target],
                                  f"no '{fr['canonical'][target]}' (any spelling) in the note")


# ------------------------------------------------------------------------------------ person


def _relative_swaps(claim: Text, note: Text) -> Iterator[Edit]:
    p = words()["persons"]
    for i, w in enumerate(claim.low):
        new = p["swaps"].get(w)
        if new and absent(note, p["groups"][new]) is None:
            yield edit_tokens("person", claim, i, i, new, f"no word for the {new} in the note")


def _patient_to_relative(claim: Text, note: Text) -> Iterator[Edit]:
    """"He has X" -> "His father has X", "The patient reports X" -> "The patient's mother reports X":
    the claim's subject made a relative whose every name is absent from the note."""
    p = words()["persons"]
    if not claim.toks or any(w in p["family_words"] for w in claim.low):
        return
    subject = next((s for s in sorted(p["subjects"], key=lambda s: -len(s)) if claim.low[:len(tokenize(s))] ==
                    [t.low for t in tokenize(s)]), None)
    n = len(tokenize(subject)) if subject else 0
    if subject is None or n >= len(claim) or not _verb_like(claim.low[n]) or not claim.toks[n].text.islower():
        return  # "Patient Agreements:", "Patient Joe": a header or a name, not a subject and its verb
    if _family_context(claim, note, n):
        return
    for relative in pick(p["relatives_for_patient"], claim.text):
        if absent(note, p["groups"][relative]) is None:
            yield edit_tokens("person", claim, 0, n - 1, f"{p['subjects'][subject]} {relative}",
                              f"no word for the {relative} in the note")
            return


def _family_context(claim: Text, note: Text, start: int) -> bool:
    """Whether a content word of the claim (from token ``start``) shares a note sentence with a family
    word: then the note may give the fact to a relative too ("family history of smoking")."""
    family, stop = set(words()["persons"]["family_words"]), word_set("stopwords", "words")
    family_sents = {note.sent[i] for i, w in enumerate(note.low) if w in family}
    content = {w for w in claim.low[start:] if w.isalpha() and len(w) > 2 and w not in stop}
    return any(note.sent[i] in family_sents for w in content for i in note.find(w, by_stem=True))


def _verb_like(word: str) -> bool:
    """A word that can follow a subject as its verb ("has", "reports", "denied", "will")."""
    aux = {"is", "was", "has", "had", "will", "would", "can", "could", "should", "may", "might", "must", "does", "did",
           "takes", "took", "presents", "presented", "says", "said", "uses", "used", "also", "still", "continues"}
    reporting = {"reports", "reported", "states", "stated", "says", "said", "notes", "noted", "affirms", "affirmed", "denies",
                 "denied", "endorses", "endorsed", "mentions", "mentioned", "explains", "explained", "describes", "described",
                 "believes", "feels", "thinks", "understands", "agrees", "confirms", "confirmed", "admits", "verbalizes"}
    if word in reporting:
        return False  # "her mother reports X": whose X? a reported fact may still be the patient's
    return word in aux or (word.isalpha() and word.endswith(("s", "ed")) and word not in ("his", "this", "was"))


def _relative_to_patient(claim: Text, note: Text) -> Iterator[Edit]:
    """"family history of X" -> "history of X": where every mention of X's head in the note shares its
    sentence with a family word (the note gives X to a relative only)."""
    p = words()["persons"]
    family = set(p["family_words"])
    for i in claim.find("family history of"):
        heads = phrase_heads(claim, i + 3)
        if heads and all(note.find(h, by_stem=True) and all(
                family & {note.low[j] for j in range(len(note)) if note.sent[j] == note.sent[k]}
                for k in note.find(h, by_stem=True)) for h in heads):
            yield edit_tokens("person", claim, i, i + 1, "history",
                              f"the note gives {', '.join(heads)} to a relative only")


def person(claim: Text, note: Text) -> Iterator[Edit]:
    yield from _relative_swaps(claim, note)
    yield from _patient_to_relative(claim, note)
    yield from _relative_to_patient(claim, note)


GENERATORS = {"negation": negation, "action": action, "control": control, "course": course, "amount": amount,
              "need": need, "side": side, "site": site, "drug": drug, "dose": dose, "frequency": frequency,
              "person": person}


# ------------------------------------------------------------------------------------ variants


#: kinds that change a detail of what the claim asserts: in a claim that denies something they are
#: not made, since a note's wider denial ("denies any tingling") would cover the changed detail too
#: ("denies tingling in her calves")
DETAIL_KINDS = ("side", "site", "drug", "dose", "frequency", "person")


def denies_something(claim: Text) -> bool:
    """Whether the claim holds a negating word (before or after what it denies)."""
    cues = word_set("negation_cues", "words") | word_set("negation_after", "words")
    return any(w in cues or w.endswith("n't") for w in claim.low)


def variants_of(claim: str, note: str | Text, kinds: Iterable[str] = KINDS) -> list[tuple[Edit, str]]:
    """Every near-miss of ``claim`` against ``note``: ``(edit, variant text)``, one per distinct text,
    in a fixed order (kind, then position)."""
    c, n = Text(claim), note if isinstance(note, Text) else Text(note)
    out, seen = [], {claim}
    negated = denies_something(c)
    for kind in kinds:
        if negated and kind in DETAIL_KINDS:
            continue
        for edit in GENERATORS[kind](c, n):
            text = claim[:edit.start] + edit.after + claim[edit.end:]
            if text not in seen and claim[edit.start:edit.end] != edit.after:
                seen.add(text)
                out.append((edit, text))
    return out


def _probe_refs() -> dict[str, str]:
    """The near-miss probe's premise references by item id (its items file names the note)."""
    text = resources.files("doclens.datasets").joinpath("near_miss_probe", "items.jsonl").read_text(encoding="utf-8")
    refs = {}
    for line in filter(str.strip, text.splitlines()):
        row = json.loads(line)
        note = "reference" if row["premise"] == "reference" else row["system"]
        refs[str(row["id"])] = f"{row['split']}/{row['encounter']}/{note}"
    return refs


def read_sources(halves: Iterable[str] = SOURCES, aci_bench_dir: Path | str | None = None) -> list[Source]:
    """The supported claims of the given halves (``sealed`` refused)."""
    notes = AciBenchNotes(aci_bench_dir)
    out = []
    for half in halves:
        if half not in SOURCES:
            raise SystemExit(f"unknown half {half!r}: choose from {', '.join(SOURCES)} (the sealed half is never read)")
        if half == PROBE:
            refs = _probe_refs()
            out += [Source(i.id, half, i.claim, i.premise, refs[i.id], None)
                    for i in shipped_set(PROBE, "all", notes=notes).items if i.label]
            continue
        for i in shipped_set("real-outputs", half, notes=notes).items:  # type: ignore[arg-type]
            if i.label:
                note = "reference" if i.side == "precision" else i.group
                out.append(Source(i.id, half, i.claim, i.premise, f"{i.fold}/{note}", i.side))
    return out


def generate(sources: Iterable[Source], kinds: Iterable[str] = KINDS) -> list[Variant]:
    """The variants of every source, in source order; ids ``<source id>#<kind><n>``."""
    kinds = tuple(kinds)
    notes: dict[str, Text] = {}
    out = []
    for src in sources:
        note = notes.setdefault(src.premise, Text(src.premise))
        counts: Counter = Counter()
        for edit, text in variants_of(src.claim, note, kinds):
            counts[edit.kind] += 1
            out.append(Variant(f"{src.id}#{edit.kind}{counts[edit.kind]}", src.id, src.half, edit.kind, src.claim, text,
                               {"start": edit.start, "end": edit.end, "text": src.claim[edit.start:edit.end]},
                               {"start": edit.start, "end": edit.start + len(edit.after), "text": edit.after},
                               src.premise_ref, src.side, edit.checked))
    return out


def sample(variants: list[Variant], n: int, seed: str = "near-miss") -> list[Variant]:
    """``n`` variants drawn deterministically (by a CRC of their ids)."""
    return sorted(variants, key=lambda v: zlib.crc32(f"{seed}:{v.id}".encode()))[:n]


# ------------------------------------------------------------------------------------ measuring


def _rate(accepted: int, total: int) -> dict:
    return {"variants": total, "accepted": accepted, "rate": round(accepted / total, 4) if total else None}


def measure(variants: list[Variant], sources: list[Source], show: int = 0, judge=None) -> dict:
    """The default judge (clinical-rules) on every variant and, as a control, on each variant's
    supported source claim: acceptance per kind, per half and per half and kind; with ``show`` the
    first ``show`` accepted variants of each kind with the judge's explanation."""
    if judge is None:
        from doclens.evaluators.rules.clinical_rules import ClinicalRulesJudge

        judge = ClinicalRulesJudge()
    premise = {s.id: s.premise for s in sources}
    varied = {v.source_id for v in variants}
    used = [s for s in sources if s.id in varied]
    started = time.time()
    verdicts = judge.entail_batch([(premise[v.source_id], v.claim) for v in variants])
    control = judge.entail_batch([(s.premise, s.claim) for s in used])
    seconds = time.time() - started
    by_kind, by_half, by_half_kind = Counter(), Counter(), Counter()
    totals_kind, totals_half, totals_half_kind = Counter(), Counter(), Counter()
    for v, ok in zip(variants, verdicts):
        totals_kind[v.kind] += 1
        totals_half[v.half] += 1
        totals_half_kind[v.half, v.kind] += 1
        by_kind[v.kind] += ok
        by_half[v.half] += ok
        by_half_kind[v.half, v.kind] += ok
    report = {
        "judge": "clinical-rules",
        "variants": _rate(sum(verdicts), len(variants)),
        "per_kind": {k: _rate(by_kind[k], totals_kind[k]) for k in KINDS if totals_kind[k]},
        "per_half": {h: {"all": _rate(by_half[h], totals_half[h]),
                         **{k: _rate(by_half_kind[h, k], totals_half_kind[h, k]) for k in KINDS if totals_half_kind[h, k]}}
                     for h in SOURCES if totals_half[h]},
        "control": {"sources": len(used), "accepted": sum(control),
                    "rate": round(sum(control) / len(used), 4) if used else None},
        "judge_seconds": round(seconds, 1),
    }
    if show:
        report["accepted"] = _accepted_examples(variants, verdicts, premise, judge, show)
    return report


def _accepted_examples(variants, verdicts, premise, judge, show: int) -> dict:
    """Up to ``show`` accepted variants of each kind, drawn in a fixed spread order (not the first
    sources only), with the judge's explanation."""
    accepted = {v.id for v, ok in zip(variants, verdicts) if ok}
    out: dict[str, list] = defaultdict(list)
    for v in sample(variants, len(variants), "accepted"):
        if v.id in accepted and len(out[v.kind]) < show:
            explanation = judge.explain(premise[v.source_id], v.claim)[1]
            out[v.kind].append({"id": v.id, "half": v.half, "source_claim": v.source_claim, "variant": v.claim,
                                "before": v.before["text"], "after": v.after["text"], "premise_ref": v.premise_ref,
                                "checked": v.checked, "explanation": explanation})
    return dict(out)


def write_jsonl(variants: list, path: str, label: bool = False, extra: str = "checked") -> None:
    """One labelled item per variant, readable by ``read_labelled`` with its premise reference:
    ``label`` false for a near miss, true for the rewording generator's variants, whose ``extra``
    field is ``rule`` where a near miss's is ``checked``."""
    with open(path, "w", encoding="utf-8") as handle:
        for v in variants:
            row = {"id": v.id, "claim": v.claim, "premise_ref": v.premise_ref, "label": label, "kind": v.kind,
                   "half": v.half, "source_id": v.source_id, "source_claim": v.source_claim, "before": v.before,
                   "after": v.after, extra: getattr(v, extra)}
            if v.side:
                row["side"] = v.side
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def counts(variants: list, sources: list[Source], kinds: Iterable[str] = KINDS) -> dict:
    """Variants per kind and half (``kinds``: the generator's; the rewording generator's reuse it)."""
    per_half: dict[str, Counter] = defaultdict(Counter)
    for v in variants:
        per_half[v.half][v.kind] += 1
    return {"sources": dict(Counter(s.half for s in sources)), "variants": len(variants),
            "per_kind": {k: sum(c[k] for c in per_half.values()) for k in kinds},
            "per_half": {h: dict(c) for h, c in per_half.items()}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--halves", default=",".join(SOURCES),
                        help=f"comma-separated, from {', '.join(SOURCES)} (default all; sealed is never read)")
    parser.add_argument("--kinds", default=",".join(KINDS), help="comma-separated kinds (default all)")
    parser.add_argument("--aci-bench-dir", default=None, help="the folder of ACI-BENCH system outputs")
    parser.add_argument("--measure", action="store_true", help="judge every variant with the default judge")
    parser.add_argument("--show", type=int, default=0, help="with --measure: list N accepted variants per kind")
    parser.add_argument("--limit", type=int, default=0, help="only N variants, drawn deterministically")
    parser.add_argument("--write", metavar="FILE", help="write the variants as JSONL labelled items")
    args = parser.parse_args(argv)
    kinds = [k for k in args.kinds.split(",") if k]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        parser.error(f"unknown kind(s) {', '.join(unknown)}; choose from {', '.join(KINDS)}")
    sources = read_sources([h for h in args.halves.split(",") if h], args.aci_bench_dir)
    variants = generate(sources, kinds)
    if args.limit:
        variants = sample(variants, args.limit)
    if args.write:
        write_jsonl(variants, args.write)
    report = measure(variants, sources, args.show) if args.measure else counts(variants, sources)
    json.dump(report, sys.stdout, indent=1, ensure_ascii=False)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
