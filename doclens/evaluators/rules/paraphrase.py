"""Which missing claim words the paraphrase tolerance may forgive, and how a verdict says what it
forgave (rule 5 of :mod:`~doclens.evaluators.rules.clinical_rules`; v12, issue 46).

A word cosine of :data:`~doclens.evaluators.rules.clinical_rules.PARAPHRASE_WORD_COSINE` (0.2) says
two words are related, not that one says the other: "CT" and "ultrasound" (0.23), "supple" and
"lymphadenopathy" are related, not one thing in other words. So a missing word that **names a
specific thing or quality** (:func:`names_a_thing_or_quality`: a clinical abbreviation naming a
test or disease, a term no dictionary of common English knows (a coined or clinical term, a
name), a classification's Roman numeral ("type II"), an adjective of quality with no other
reading ("supple", "afraid")) is forgiven only for a near-synonym of a word of the aligned note
sentence (MiniLM cosine ≥ :data:`~doclens.evaluators.rules.clinical_rules.PARAPHRASE_THING_COSINE`:
"kidney" / "renal" 0.92, "tiredness" / "fatigue" 0.80, "GERD" / "reflux" 0.62), while verbs,
modifiers and common nouns ("diagnosed", "prolonged", "level", "onset") keep the wider tolerance:
on the real-output dev half, holding common nouns to a near-synonym too rejected as many right
rewordings as wrong ones (cards/clinical-rules.md). Lay and clinical names the rules' tables spell
alike (``clinical_equivalents.json``) and inflections (one stem) are never missing at all.

v13 (issue 46): **one clinical concept in another's place** is no rewording, however related the
two words are: where the claim's missing word is a clinical concept (``clinical_concepts.json``:
:func:`~doclens.evaluators.rules.concepts.is_concept`) and the note sentence the claim is about has,
beside the same claim word (the content word before or after it), another clinical concept that the
claim does not use and that is no near-synonym of it ("a potassium level" against "a hemoglobin
level", "shows crepitus laterally" against "shows tenderness laterally", "a CT of the abdomen"
against "an ultrasound of the abdomen"), the note says that thing and the claim another
(:func:`concept_in_place`): a substitution, which decides. The note's word must be a concept too:
any noun beside the same word is no swap ("fever ... last night" against "yes, it was 38.5 last
night"). A concept whose neighbours the note does not share ("burning sensations" against "stomach
burning") is weighed as before.

v15 (issue 46): **a swapped thing needs a thing in its place** (:func:`fills_a_things_place`). A
claim word that can name a thing, swapped for a related note word, decides only when the note word
names a thing of the same kind: not a verb's past form (the note's "fell" is the event, the claim's
"injury" what came of it), not a word that names no thing at all (the note's "a calcineurin
inhibitor", unknown to the dictionary and no clinical concept, describes the drug the claim names,
not the claim's "prescription"). Two actions ("watch for signs" against "call with any signs") were
tried as a third exception and left out: read word by word, "roof" and "ladder" are verbs too.
Such a pair is weighed by the decision model as a swapped verb or modifier is (v7); a swapped
finding, site, person or direction ("cough" for "wheezing", "leg" for "arm") still decides.

r17 (issue 46): **a forgiven word needs a note word in its place** (:func:`stand_ins`). A paraphrase
says a note word in other words, so only a note word that the claim does not itself say can be what a
missing word rewords. A note word the claim also uses is said already: a missing word elsewhere in the
claim adds something of its own ("takes it at night and it is well tolerated" against "takes it at
night": a tolerance the note never gives; "reports difficulty with her urine output" against "urine
output is about a liter a day": a finding). Only a word the claim writes beside it (at most one word
between: one phrase) may say it again with its head or modifier ("burning sensations" for the note's
"burning"). A frequency or another detail word (:data:`~doclens.evaluators.rules.lexicons.DETAIL_WORDS`)
stands for itself only, as such a missing word is never forgiven: "safe" is no rewording of "nightly".
Polar and direction words were tried as a third kind that stands for nothing else and left out:
"doing well" says the note's "stable" (measured on the real-output dev half).

A verdict names each forgiven word with the note word it was read as (:func:`forgiven_as`) and
never says that every content word of the claim matches the note.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from doclens.evaluators.rules.analysis import Analyser
    from doclens.evaluators.rules.sentences import Sentence, Word

#: A classification written as a Roman numeral ("type II", "grade III", "stage IV").
_ROMAN = re.compile(r"^(?:i{1,3}|iv|vi{0,3}|ix|x)$")
#: A word lemminflect does not know: a coined or clinical term ("tibiofemoral", "noninvasive") or a name.
_WORDLIKE = re.compile(r"^[a-z][a-z\-]{2,}$")


def names_a_thing_or_quality(analyser: Analyser, word: str) -> bool:
    """A word that names a specific thing or quality, which only a near-synonym rewords: a clinical
    abbreviation ("CT", "DOB"), a Roman numeral (a classification: "type II"), a word lemminflect
    does not know (hyphenated or not: a coined or clinical term, a name) that is no adverb in -ly,
    or an adjective with no noun, verb or adverb reading ("supple", "afraid", "postoperative").
    Verbs, modifiers and common nouns ("diagnosed", "deep", "around", "level") are not."""
    lower = word.lower()
    if _ROMAN.match(lower) or (len(word) >= 2 and isinstance(analyser._abbreviations.get(word.upper()), list)):
        return True
    if not _WORDLIKE.match(lower) or lower.endswith("ly"):
        return False
    lemmas = analyser._lemmas(lower) if lower.isalpha() else {}
    return not lemmas or ("ADJ" in lemmas and not lemmas.keys() & {"NOUN", "VERB", "ADV"})


def all_near(analyser: Analyser, missing: list[str], words: list[str], cosine: Callable[[str, str], float],
             floors: tuple[float, float]) -> bool:
    """Whether each missing word has a word of ``words`` (the aligned sentence's) at ``cosine`` of
    at least ``floors[0]``, or ``floors[1]`` for one that names a thing or quality
    (:func:`names_a_thing_or_quality`)."""
    word_floor, thing_floor = floors
    for m in missing:
        floor = thing_floor if names_a_thing_or_quality(analyser, m) else word_floor
        if not any(cosine(m, u) >= floor for u in words):
            return False
    return True


def concept_in_place(missing: str, words: Sequence[Word], sentence: Sentence, unused: Collection[str],
                     is_concept: Callable[[str], bool], synonym: Callable[[str, str], bool]) -> str | None:
    """v13: the note word of ``sentence`` standing where the claim has ``missing``, a clinical
    concept (``is_concept``) the note does not use: a word of ``unused`` (the sentence's words the
    claim does not use, lower case) that is a clinical concept too, is no near-synonym of it
    (``synonym``: a cosine of at least the synonym floor, one body site) and stands beside the
    claim word that stands beside ``missing`` (the content word before it, or after it), or ``None``
    (module docstring)."""
    texts = [w.stem for w in words]
    lower = [w.text.lower() for w in words]
    if missing not in lower or not is_concept(missing):
        return None
    at = lower.index(missing)
    before, after = (texts[at - 1] if at else None), (texts[at + 1] if at + 1 < len(texts) else None)
    note = sentence.words
    for n, word in enumerate(note):
        used = word.text.lower()
        if used not in unused or not is_concept(used) or synonym(missing, used):
            continue
        if (before is not None and n and note[n - 1].stem == before) or (
                after is not None and n + 1 < len(note) and note[n + 1].stem == after):
            return used
    return None


def _verb_form(analyser: Analyser, word: str) -> bool:
    """A verb's irregular past form ("fell", "took", "felt"): a verb reading whose lemma is another
    word, in no ``-ing`` or ``-s`` form (those are nouns too: "swelling", "calls")."""
    lemmas = analyser._lemmas(word) if word.isalpha() else {}
    return not word.endswith(("ing", "s")) and any(lemma != word for lemma in lemmas.get("VERB", ()))


def fills_a_things_place(analyser: Analyser, word: str, used: str, is_concept: Callable[[str], bool]) -> bool:
    """v15: whether the note word ``used``, swapped for the claim word ``word`` (which can name a
    thing), names a thing of the same kind (module docstring): a clinical concept or a near-miss word
    always does; else it must name a thing (:meth:`~doclens.evaluators.rules.analysis.Analyser.names_a_thing`),
    not as a verb's past form."""
    if any(is_concept(w) or analyser.names_near_miss(w) for w in (word, used)):
        return is_concept(used) or analyser.names_near_miss(used) or (
            analyser.names_a_thing(used) and not _verb_form(analyser, used))
    # (two words that both read as base-form verbs, "call" / "watch", were tried as a third exception:
    # lemminflect gives "roof" and "ladder" verb readings too, so "fell off the roof" against "fell off a
    # ladder" was weighed as rewording; without the word's place in its sentence the test cannot tell)
    return analyser.names_a_thing(used) and not _verb_form(analyser, used)


def stand_ins(missing: str, claim: Sequence[Word], sentence: Sentence) -> list[str]:
    """r17: the words of ``sentence`` (lower case, in order, once each) the claim's missing word
    ``missing`` may be forgiven as (module docstring): no detail word
    (:data:`~doclens.evaluators.rules.lexicons.DETAIL_WORDS`: a frequency, a drug action), and none
    the claim says itself unless the claim writes it beside ``missing`` (at most one word between, in
    one sentence: one phrase, "burning sensations", "pain in stomach", against the note's "burning").
    ``claim``: the claim's words, sentence by sentence."""
    from doclens.evaluators.rules.lexicons import DETAIL_WORDS

    # (the claim's words run sentence by sentence, each sentence's positions from 0: a word's place is
    # its sentence's number and its position)
    places, number = [], 0
    for n, w in enumerate(claim):
        number += bool(n) and w.position <= claim[n - 1].position
        places.append((number, w.position))
    at = [place for w, place in zip(claim, places) if w.text.lower() == missing]
    beside = {w.stem for w, (number, position) in zip(claim, places)
              if any(number == s and 0 < abs(position - p) <= 2 for s, p in at)}
    said = {w.stem for w in claim} - beside
    return [text for text in dict.fromkeys(w.text.lower() for w in sentence.words if w.stem not in said)
            if text not in DETAIL_WORDS]


def forgiven_as(missing: list[str], words: list[str], cosine: Callable[[str, str], float]) -> list[str]:
    """What a verdict says of each forgiven word: ``heart forgiven as paraphrase of "cardiovascular"``,
    the note word (of ``words``, the aligned sentence's) closest to it by ``cosine``."""
    return [f'{m} forgiven as paraphrase of "{max(words, key=lambda u: cosine(m, u))}"' for m in missing]
