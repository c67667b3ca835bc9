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

A verdict names each forgiven word with the note word it was read as (:func:`forgiven_as`) and
never says that every content word of the claim matches the note.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from doclens.evaluators.rules.analysis import Analyser

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


def forgiven_as(missing: list[str], words: list[str], cosine: Callable[[str, str], float]) -> list[str]:
    """What a verdict says of each forgiven word: ``heart forgiven as paraphrase of "cardiovascular"``,
    the note word (of ``words``, the aligned sentence's) closest to it by ``cosine``."""
    return [f'{m} forgiven as paraphrase of "{max(words, key=lambda u: cosine(m, u))}"' for m in missing]
