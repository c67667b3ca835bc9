"""Rule 1 of ``clinical-rules``, **content**, the parts that need no encoder: which missing claim
words the premise says otherwise (a prefixed opposite, another qualifier of the same scale), or
says in other words (an abbreviation written out, a finding a normal one says is absent). The
paraphrase tolerance (rule 5) and the drug and missing-word findings are the judge's
(:meth:`~doclens.evaluators.rules.clinical_rules.ClinicalRulesJudge._content_problems`)."""

from __future__ import annotations

import re
from collections.abc import Collection, Container

from doclens.evaluators.rules.analysis import Analyser
from doclens.evaluators.rules.findings import Finding, FindingKind, short
from doclens.evaluators.rules.lexicons import DIRECTIONS, Axis, site_name
from doclens.evaluators.rules.sentences import Sentence, Status, Word
from doclens.evaluators.rules.subjects import system_of
from doclens.evaluators.rules.words import (
    ABNORMAL_WORDS,
    EXAMINING,
    NAMED_LEVELS,
    NORMAL_FINDINGS,
    NORMAL_WORDS,
    OWN_SITE,
    POLAR,
    POLAR_PREFIXES,
    QUALIFIER_SCALES,
    SAME_AS_NORMAL,
    SPELLINGS,
    is_drug,
)


def same_way(word: str, other: str) -> bool:
    """v11: two amount words that state one direction of a level or a change ("high" and "elevated",
    "decreased" and "reduced", "increase" and "increased"): no contradiction of each other."""
    mine, theirs = DIRECTIONS.get(word), DIRECTIONS.get(other)
    return (mine is not None and theirs is not None and mine[1] == theirs[1]
            and {mine[0], theirs[0]} <= {Axis.LEVEL, Axis.CHANGE})


def other_qualifier(word: str, sentence: Sentence | None) -> str | None:
    """The qualifier of ``word``'s scale that ``sentence`` uses instead (:data:`QUALIFIER_SCALES`)."""
    if sentence is None:
        return None
    used = {SPELLINGS.get(w.text.lower(), w.text.lower()) for w in sentence.words}  # v10: "2nd" is "second"
    for scale in QUALIFIER_SCALES:
        if word in scale:
            others = sorted(o for o in (scale & used) - {word} if not same_way(word, o))
            if others:
                return others[0]
    return None


def qualifies_otherwise(word: str, words: list[Word], premise_sentences: list[Sentence]) -> str | None:
    """v10: another qualifier of ``word``'s scale that the note puts, affirmed, next to the word the
    claim's ``word`` qualifies, in any sentence ("high hemoglobin" against "Her hemoglobin is low"
    where the claim's closest sentence is another one, "Anemia labs: pending"). The words ``word``
    qualifies are the claim's content words on either side of it; next to is within one content word.
    v11 (amounts): a level or change said after its thing may stand two content words on ("Her
    hemoglobin level was low"); a level named by one word (:data:`~doclens.evaluators.rules.words.NAMED_LEVELS`:
    the note's "high blood pressure" is read as "hypertension") is its level word on its thing ("note
    says hypertension, claim says low" for "low blood pressure"); an amount word of the same direction
    ("elevated" for "high") is none other (:func:`same_way`)."""
    at = [k for k, w in enumerate(words) if SPELLINGS.get(w.text.lower(), w.text.lower()) == word]
    scale = next((s for s in QUALIFIER_SCALES if word in s), None)
    if not at or scale is None:
        return None
    qualified = {words[k + d].stem for k in at for d in (-1, 1) if 0 <= k + d < len(words)
                 and SPELLINGS.get(words[k + d].text.lower(), words[k + d].text.lower()) not in scale}
    for sentence in premise_sentences:
        for k in range(len(sentence.words)):
            other = _qualifies_at(word, scale, qualified, sentence.words, k)
            if other is not None:
                return other
    return None


def _qualifies_at(word: str, scale: frozenset[str], qualified: set[str], said: list[Word], k: int) -> str | None:
    """The note's word at ``k`` of ``said`` as written, where it is another qualifier of ``scale`` than
    ``word`` (:func:`qualifies_otherwise`) and qualifies a word of ``qualified``."""
    w = said[k]
    lower = SPELLINGS.get(w.text.lower(), w.text.lower())
    level, things = NAMED_LEVELS.get(lower, (lower, frozenset()))
    if w.status == Status.NEGATED or level not in scale or level == word or same_way(word, level):
        return None
    before = 2 if level in DIRECTIONS else 1  # v11: "hemoglobin level was low"
    if qualified & things or any(n.stem in qualified for n in said[max(0, k - before): k + 2] if n is not w):
        return lower
    return None


def called_normal(word: str, words: list[Word], premise_sentences: list[Sentence]) -> str | None:
    """v8: the word the note calls a finding normal by (:data:`~doclens.evaluators.rules.words.NORMAL_WORDS`)
    where the claim calls it abnormal (``word`` in ``ABNORMAL_WORDS``): in the first note sentence that
    holds at least half the claim's other content words, affirmed ("Heart exam is abnormal" against
    "Heart: Regular rate and rhythm")."""
    if word not in ABNORMAL_WORDS:
        return None
    concept = {w.stem for w in words if w.text.lower() != word}
    for sentence in premise_sentences:
        if concept and 2 * len(sentence.stems & concept) >= len(concept):
            found = [w.text.lower() for w in sentence.words if w.text.lower() in NORMAL_WORDS and w.status != Status.NEGATED]
            if found:
                return found[0]
            denied = _only_denies(sentence, concept)
            if denied:
                return denied
    return None


def said_normal(word: str, words: list[Word], premise_sentences: list[Sentence]) -> bool:
    """v10: a claim's word for normal (:data:`~doclens.evaluators.rules.words.SAME_AS_NORMAL`) that
    the note says with another of them ("The EKG was normal" against "EKG: unremarkable"): in the note
    sentences that hold at least half the claim's other content words, the first that calls the
    finding normal or abnormal (affirmed) calls it normal by another word of the same meaning."""
    if word not in SAME_AS_NORMAL:
        return False
    concept = {w.stem for w in words if w.text.lower() != word}
    for sentence in premise_sentences:
        if not concept or 2 * len(sentence.stems & concept) < len(concept):
            continue
        said = {w.text.lower() for w in sentence.words if w.status != Status.NEGATED}
        if said & ABNORMAL_WORDS:
            return False
        if said & (SAME_AS_NORMAL - {word}):
            return True
    return False


#: v15: a "Key:" line ("Abdomen: soft", "- Neck: supple", "Examination of Abdomen: …"), and an examining word
_KEYED = re.compile(r"^[\s\-•*]*[A-Za-z][A-Za-z ]{0,30}:")
_EXAMINING = re.compile(r"\b(?:" + "|".join(sorted(EXAMINING)) + r")\b", re.I)
#: v15: how far after a normal-finding word a noun it qualifies may stand ("regular rate and rhythm",
#: "full range of motion": "rhythm" and "motion" three words on)
_QUALIFIED_WITHIN = 3


def examined_normal(analyser: Analyser, words: list[Word], premise_sentences: list[Sentence],
                    signs: Collection[str] = frozenset()) -> set[str]:
    """v15 (issue 46): a claim that the examination of a body site or system is normal, and no more
    (a word of :data:`~doclens.evaluators.rules.words.SAME_AS_NORMAL`, affirmed, and words naming the
    sites or systems, and the findings it denies, checked as any denial is: "Abdominal exam is normal",
    "The cardiovascular examination was unremarkable", "Heart exam is normal, with no murmurs"; not "The
    abdominal x-ray was normal"), that the note gives as its findings, all
    of them normal: the note examines each site or system (:func:`_examined_normal`) and states there
    only normal findings (:data:`~doclens.evaluators.rules.words.NORMAL_FINDINGS`, a noun they qualify,
    or findings it denies: "Examination of Abdomen: No hepatomegaly or splenomegaly", "Heart: Regular
    rate and rhythm. No murmurs."). The words the note then says otherwise (returned, lower case): the
    claim's normal word, and a system the note examines by its organ ("cardiovascular" for the note's
    "Heart: …"). One finding stated otherwise there (a tenderness, a murmur, a number), or no
    examination of the site, and nothing is returned: the claim's "normal" stays what the note does
    not say. ``signs``: the examination signs (clinical_concepts.json) a sentence of findings names."""
    normal = {w.text.lower() for w in words if w.text.lower() in SAME_AS_NORMAL and w.status == Status.AFFIRMED}
    subjects = {w.text.lower(): _subject(analyser, w.text.lower()) for w in words
                if w.text.lower() not in normal and w.status != Status.NEGATED}  # "with no murmurs": its own check
    # v16: the words a normal finding qualifies ("rate and rhythm" of "regular rate and rhythm")
    qualities = {w.stem for w in words if w.text.lower() in subjects and subjects[w.text.lower()] is None}
    if len(normal) != 1 or not subjects or not _qualified_normal(analyser, qualities, premise_sentences):
        return set()  # the claim says more than that a site is normal ("abdominal x-ray", "bowel sounds")
    sign_stems = {analyser.normal(t) for t in signs}
    if not all(_examined_normal(analyser, subject, premise_sentences, sign_stems) for subject in set(subjects.values())
               if subject is not None):
        return set()
    return normal | {w for w, subject in subjects.items() if subject is not None and system_of(w) == subject}


def _qualified_normal(analyser: Analyser, qualities: set[str], premise_sentences: list[Sentence]) -> bool:
    """v16 (issue 46): whether one note sentence that states only normal findings (:func:`_only_normal`)
    qualifies each of ``qualities`` (the stems of a claim's words naming neither a site nor a system)
    by a normal-finding word before it: "Heart rate and rhythm are normal" is the note's "CV: Regular rate
    and rhythm", "Range of motion is normal" its "Full range of motion"; not its "Decreased range of
    motion", nor a sentence with a finding stated otherwise ("Regular rate and rhythm with a murmur").
    No qualities: nothing to check."""
    if not qualities:
        return True
    for sentence in premise_sentences:
        if sentence.stated or not qualities <= sentence.stems or not _only_normal(analyser, sentence):
            continue
        at = _normal_at(analyser, sentence)
        qualified = {w.stem for w in sentence.words if w.status == Status.AFFIRMED
                     and any(0 < w.position - p <= _QUALIFIED_WITHIN for p in at)}
        if qualities <= qualified:
            return True
    return False


def _subject(analyser: Analyser, lower: str) -> str | None:
    """The body system (:func:`~doclens.evaluators.rules.subjects.system_of`: "abdominal", "abdomen" and
    "gastrointestinal" are one) or else the body site (:func:`~doclens.evaluators.rules.lexicons.site_name`)
    a word names."""
    site = site_name(lower, analyser.noun(lower))
    return system_of(lower, site or analyser.noun(lower)) or site


def _subjects(analyser: Analyser, lower: str) -> set[str]:
    """The subject a word names (:func:`_subject`) and those of the wholes its site is part of
    (clinical_equivalents.json's ``part_of``: a quadrant is the abdomen's)."""
    site = site_name(lower, analyser.noun(lower))
    wholes = analyser.site_wholes.get(site, frozenset()) if site else frozenset()
    return {s for s in (_subject(analyser, lower), *(_subject(analyser, whole) for whole in wholes)) if s}


def _examined_normal(analyser: Analyser, subject: str, premise_sentences: list[Sentence], signs: set[str]) -> bool:
    """Whether the note examines ``subject`` and finds it normal everywhere it does: its examination
    is each sentence naming it that is a "Key:" line, has an examining word or states a normal
    finding, with the sentences of findings after it (an examining word, a normal finding, a sign of
    ``signs``' stems, only denials: "Examination of the right knee: No effusion. Full range of
    motion.") up to one naming another site or system or opening another "Key:" line; a sentence of
    the history ("abdominal pain for 2 days") is none, and neither is one after it that states no
    finding ("Recent cholesterol level is reviewed")."""
    found = False
    within = False
    for sentence in premise_sentences:
        named = {n for w in sentence.words for n in _subjects(analyser, w.text.lower())}
        keyed = bool(_KEYED.match(sentence.text))
        said = {w.text.lower() for w in sentence.words}
        findings = bool(_EXAMINING.search(sentence.text)) or bool(said & NORMAL_FINDINGS)
        if subject in named:
            within = within or keyed or findings
        elif named or keyed:
            within = False
        elif within:
            within = findings or bool(sentence.stems & signs) or all(w.status == Status.NEGATED for w in sentence.words)
        if not within:
            continue
        if sentence.stated or not _only_normal(analyser, sentence):
            return False
        found = True
    return found


def _only_normal(analyser: Analyser, sentence: Sentence) -> bool:
    """Whether every finding ``sentence`` states is a normal one: a normal-finding word (or an
    abbreviation of one: "RRR"), a word one of them qualifies (at most :data:`_QUALIFIED_WITHIN`
    words before it), a word naming a site or system, or a finding it denies; none called abnormal,
    none only possible."""
    normal_at = _normal_at(analyser, sentence)
    for w in sentence.words:
        lower = w.text.lower()
        if lower in ABNORMAL_WORDS or w.status not in (Status.AFFIRMED, Status.NEGATED):
            return False
        if (w.status == Status.NEGATED or w.position in normal_at or _subject(analyser, lower) is not None
                or lower in EXAMINING):  # v16: "Auscultation of Heart: No murmurs" names how, not a finding
            continue
        if not any(0 < w.position - p <= _QUALIFIED_WITHIN for p in normal_at):
            return False
    return True


def _normal_at(analyser: Analyser, sentence: Sentence) -> list[int]:
    """The positions of ``sentence``'s normal-finding words, affirmed (:data:`~doclens.evaluators.rules.words.NORMAL_FINDINGS`,
    or an abbreviation of one: "RRR")."""
    normal_stems = {analyser.normal(n) for n in NORMAL_FINDINGS}
    return [w.position for w in sentence.words if w.status == Status.AFFIRMED and (
        w.text.lower() in NORMAL_FINDINGS or any(keys & normal_stems for keys in analyser.expansions(w)))]


def _only_denies(sentence: Sentence, concept: set[str]) -> str | None:
    """A note sentence about the claim's concept that only denies findings ("Auscultation of Heart:
    No murmurs, gallops or rubs"): the first denial as the note words it, else ``None``."""
    denied = [w for w in sentence.words if w.status == Status.NEGATED and not w.dependent]
    stated = [w for w in sentence.words if w.status != Status.NEGATED and w.stem not in concept
              and w.text.lower() not in EXAMINING]
    return f"no {denied[0].text.lower()}" if denied and not stated else None


def opposite(word: str, words: list[Word], first: dict[str, tuple[int, Word, Sentence]],
             premise_sentences: list[Sentence]) -> str | None:
    """A missing claim ``word`` whose prefixed opposite the note uses (normal/abnormal,
    controlled/uncontrolled): ``"same"`` when one of the two is negated ("not controlled" =
    "uncontrolled"), else the contradiction to report; ``None`` when the note has no opposite.
    ``first``: the note's words' first occurrences (the judge's ``_PremiseView``): the one the note
    uses first says whether the two mean the same. v7: a contradiction only where the note speaks of
    the claim's concept, the first of ``premise_sentences`` sharing another word of the claim with the
    opposite: "A normal physical exam was conducted" says nothing of an "abnormal renal ultrasound".
    v16 (issue 46): a quality named by its noun has its adjective's opposite too: the examination's
    "nontender in the right lower quadrant" against a claim of "pain and tenderness" there."""
    candidates = [p + word for p in POLAR_PREFIXES] + [word[len(p):] for p in POLAR_PREFIXES if word.startswith(p)]
    if word.endswith("ness") and len(word) > 7:  # v16: the quality's adjective: "nontender" denies "tenderness"
        candidates += [p + word[:-4] for p in POLAR_PREFIXES]
    found = [first[o] for o in candidates if o in first]
    if not found:
        return None
    _, other, _ = min(found, key=lambda occurrence: occurrence[0])
    claim_negated = any(w.text.lower() == word and w.status == Status.NEGATED for w in words)
    if claim_negated != (other.status == Status.NEGATED):
        return "same"
    sentence = _stating(candidates, claim_negated, {w.stem for w in words if w.text.lower() != word}, premise_sentences)
    if sentence is None:
        return None
    shown = f"not {word}" if claim_negated else word
    return f"note says \"{short(sentence.text)}\", claim says {shown}"


def _stating(candidates: list[str], negated: bool, concept: set[str], premise_sentences: list[Sentence]) -> Sentence | None:
    """The first sentence that states one of ``candidates`` (negated as ``negated``) and shares a
    word of ``concept`` (any sentence when the concept is empty)."""
    return next((s for s in premise_sentences if (s.stems & concept or not concept)
                 and any(w.text.lower() in candidates and (w.status == Status.NEGATED) == negated for w in s.words)), None)


def said_absent(analyser: Analyser, text: str, words: list[Word], premise_sentences: list[Sentence]) -> bool:
    """A finding the claim negates that a normal finding of the note says is absent
    (clinical_equivalents.json's ``implies_absent``): "no wheezes" is the note's "lungs are clear"; r17:
    "no fracture" a bone or joint x-ray's "normal", not a chest x-ray's (an entry's ``unless``)."""
    stem = analyser.normal(text)
    if not any(w.text.lower() == text and w.status == Status.NEGATED for w in words):
        return False
    return any(stem in absent and any(when <= {w.stem for w in s.words if w.status == Status.AFFIRMED}
                                      and not unless & s.stems for s in premise_sentences)
               for when, absent, unless in analyser.absent_when)


#: r17: the generic heads by which a note denies a body system's symptoms as a whole ("denies
#: gastrointestinal symptoms", "no urinary issues", "no cardiac complaints").
SYSTEM_DENIAL_HEADS = ("symptom", "symptoms", "complaint", "complaints", "issue", "issues", "problem", "problems")
#: how far before its head a system's name may stand ("gastrointestinal or respiratory symptoms": 3 words)
SYSTEM_DENIAL_SPAN = 3


def said_denied(analyser: Analyser, text: str, words: list[Word], premise_sentences: list[Sentence]) -> bool:
    """r17 (issue 46): a symptom the claim denies ("denies nausea", "no dysuria") that the note denies
    with its whole body system's symptoms (clinical_equivalents.json's ``denied_with``, the review of
    systems' checklist): the note's "denies gastrointestinal symptoms" denies each symptom of that
    system. Only a denial says it: a symptom the claim reports, a symptom of another system, or a note
    that denies a named symptom ("denies abdominal pain") or states the system's symptoms is no denial
    of the claim's."""
    if not any(w.text.lower() == text and w.status == Status.NEGATED for w in words):
        return False
    stem = analyser.normal(text)
    systems = [system for system, members in analyser.denied_with if stem in members]
    if not systems:
        return False
    heads = {analyser.normal(h) for h in SYSTEM_DENIAL_HEADS}
    named = frozenset().union(*systems)
    for s in premise_sentences:
        denied = [w for w in s.words if w.status == Status.NEGATED]
        # the system names the head: "gastrointestinal symptoms", "gastrointestinal or respiratory symptoms"
        if any(h.stem in heads and 0 < h.position - w.position <= SYSTEM_DENIAL_SPAN and w.stem in named
               for h in denied for w in denied):
            return True
    return False


def abbreviation_found(analyser: Analyser, text: str, words: list[Word], index: dict) -> bool:
    """A claim abbreviation whose expansion the premise writes out ("SOB": shortness of breath)."""
    word = next(w for w in words if w.text.lower() == text)
    return any(keys <= index.keys() for keys in analyser.expansions(word))


def site_named(analyser: Analyser, text: str, premise_sentences: list[Sentence]) -> bool:
    """v10: a claim word naming a body site that the note names by its noun or its adjective
    (:func:`~doclens.evaluators.rules.lexicons.site_name`): "abdominal exam" is the note's
    "Examination of Abdomen", "the pelvis" its "pelvic" x-ray. Only the same site: the site check
    (near_misses.py) still decides another one."""
    site = site_name(text, analyser.noun(text))
    return site is not None and any(site in _site_names(analyser, s) for s in premise_sentences)


def _site_names(analyser: Analyser, sentence: Sentence) -> set[str | None]:
    """The sites a note sentence's words name (:func:`~doclens.evaluators.rules.lexicons.site_name`),
    read once a sentence, not once for each claim word judged against it (issue 49)."""
    return analyser.of_sentence("_site_names", sentence, lambda: {
        site_name(w.text.lower(), analyser.noun(w.text.lower())) for w in sentence.words})


def own_site(analyser: Analyser, text: str, words: list[Word]) -> bool:
    """v11: a claim word naming the one site the claim's finding can have (:data:`~doclens.evaluators.rules.words.OWN_SITE`:
    the lungs of "the lungs have rhonchi"), which the note need not name beside the finding."""
    return analyser.noun(text) in {OWN_SITE[w.text.lower()] for w in words if w.text.lower() in OWN_SITE}


def reported_positive(analyser: Analyser, text: str, words: list[Word], premise_sentences: list[Sentence],
                      symptoms: Collection[str]) -> bool:
    """v16 (issue 46): a claim's "positive" that says, as a review of systems does ("Gastrointestinal:
    Positive for nausea", "Respiratory: Positive wheezing"), that the patient has the symptom it stands
    before (a term of clinical_concepts.json's category "symptom"), which the note names: the note's
    "She reports nausea" says it without the word. Every symptom the claim names must be one the note
    states of the patient, affirmed: a symptom the note denies, gives to a family member or does not
    name ("Positive for dizziness and headache" against the note's dizziness alone) keeps the claim's
    "positive" unsaid; a "positive" before a sign, a test or a manoeuvre ("positive straight leg raise",
    "Lyme titer: positive") is a result the note must state."""
    if text != "positive":
        return False

    def symptom(word: Word) -> bool:
        lower = word.text.lower()
        return lower in symptoms or analyser.noun(lower) in symptoms

    named = [w for w in words if symptom(w)]
    stated = {analyser.normal(w.text.lower()) for s in premise_sentences for w in s.words if w.status == Status.AFFIRMED}
    return (any(w.text.lower() == text and w.status == Status.AFFIRMED and symptom(words[k + 1])
                for k, w in enumerate(words[:-1]))
            and all(analyser.normal(w.text.lower()) in stated for w in named))


def missing_words(analyser: Analyser, words: list[Word], key: set[str], index: dict,
                  premise_sentences: list[Sentence], signs: Collection[str] = frozenset(),
                  symptoms: Collection[str] = frozenset()) -> list[str]:
    """The claim's words (lower case, once each) the premise does not use, nor says in other words
    (an abbreviation written out, a finding a normal one says is absent, a site named by its noun
    or adjective, v11: the one site of the claim's finding, v15: a normal examination the note gives
    as its normal findings, :func:`examined_normal`, v16: a review of systems' "positive" for a
    symptom the note names, :func:`reported_positive`); the ``key`` words
    (:func:`~doclens.evaluators.rules.analysis.section_key_words`) are never missing; ``signs`` and
    ``symptoms``: the examination signs and the symptoms of clinical_concepts.json."""
    said_normal_by_findings = examined_normal(analyser, words, premise_sentences, signs)  # v15
    return [w for w in dict.fromkeys(w.text.lower() for w in words)
            if analyser.normal(w) not in index and not abbreviation_found(analyser, w, words, index)
            and w not in key and not said_absent(analyser, w, words, premise_sentences)
            and not said_denied(analyser, w, words, premise_sentences)
            and not site_named(analyser, w, premise_sentences) and not own_site(analyser, w, words)
            and w not in said_normal_by_findings and not reported_positive(analyser, w, words, premise_sentences, symptoms)]


def said_otherwise(missing: list[str], words: list[Word], first: dict[str, tuple[int, Word, Sentence]],
                   best: Sentence | None, premise_sentences: list[Sentence]) -> tuple[list[Finding], list[str], list[str]]:
    """``(findings, kept, absent)`` for the ``missing`` words: the note's prefixed opposite
    (:func:`opposite`; one that says the same, "not controlled" for "uncontrolled", is not
    missing), another qualifier of the scale in ``best``, the sentence the claim is about
    (:func:`other_qualifier`), or a polar word the note does not say; ``kept``: the other missing
    words, left to the paraphrase tolerance; ``absent``: every missing word but those said the same."""
    problems: list[Finding] = []
    kept: list[str] = []
    absent: list[str] = []
    for m in missing:
        verdict = opposite(m, words, first, premise_sentences)
        if verdict == "same" or (verdict is None and said_normal(m, words, premise_sentences)):
            continue  # "not controlled" = "uncontrolled"; v10: "normal" = "unremarkable"
        absent.append(m)
        if verdict is not None:
            problems.append(Finding(FindingKind.OPPOSITE, verdict, conflict=True))
        elif SPELLINGS.get(m, m) in POLAR:  # v10: "3rd" is the qualifier "third"
            word = SPELLINGS.get(m, m)
            other = (other_qualifier(word, best) or qualifies_otherwise(word, words, premise_sentences)
                     or called_normal(word, words, premise_sentences))
            problems.append(Finding(FindingKind.QUALIFIER, f"note says {other}, claim says {word}", conflict=True) if other
                            else Finding(FindingKind.POLAR, f"note does not say {word}"))
        else:
            kept.append(m)
    return problems, kept, absent


def not_mentioned(kept: list[str], premise_sentences: list[Sentence], drug_names: Container[str]) -> list[Finding]:
    """The missing words no rule forgave: a drug the note does not name (with those it does), other
    words; ``drug_names``: the lexicon's (:func:`~doclens.evaluators.rules.words.is_drug`)."""
    problems: list[Finding] = []
    drugs = [m for m in kept if is_drug(m, drug_names)]
    others = [m for m in kept if not is_drug(m, drug_names)]
    if drugs:
        present = sorted({w.text.lower() for s in premise_sentences for w in s.words
                          if is_drug(w.text.lower(), drug_names)})
        said = f"; note mentions {', '.join(present[:4])}" if present else ""
        problems.append(Finding(FindingKind.DRUG, f"note does not mention {', '.join(drugs)} (drug){said}"))
    if others:
        problems.append(Finding(FindingKind.MISSING, f"note does not mention: {', '.join(others[:6])}"))
    return problems
