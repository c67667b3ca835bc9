"""v14 (issue 46): a claim's clinical **subject** that the note never names.

v12's rule (:mod:`~doclens.evaluators.rules.concepts`) decides a claim whose head clinical concept
the note never names, but it leaves out three kinds of subject, which the decision model then weighed
as rewording when the claim's other words ("look good today", "to monitor the kidneys", "was
performed") were the note's (blind placement readings, docs/changelog.md):

* **a vital sign, or the vital signs** ("Vitals look good today.", "Her temperature is normal."):
  none of these is in ``clinical_concepts.json``. A claim names the vital signs (:data:`CLAIM_VITALS`),
  and the note names none of them, neither by name nor by a reading, nor by a word that says one
  (:data:`NOTE_VITALS`: "BP 120/80", "afebrile", "hypertension", "regular rate", "SpO2 98 %";
  MedlinePlus, "Vital signs"). A note that names any vital sign names "the vital signs" by their parts
  (whether it supports "the vital signs are normal" is :mod:`~doclens.evaluators.rules.vitals`'s
  question, not this rule's).
* **a test or an imaging study by its abbreviation** ("We will order an MRI of the knee.", "An EKG was
  done."): v12 leaves every abbreviation out, because a note may write it out in a way the rules do
  not expand. An abbreviation ``clinical_concepts.json`` lists as a test or a study
  (:data:`~doclens.evaluators.rules.concepts.STUDY_CATEGORIES`)
  has its expansions in the rules' abbreviation table, which the note index already reads
  (:func:`~doclens.evaluators.rules.content.missing_words`: "CT" is found in "computed tomography",
  "x-ray" in "radiograph" through ``clinical_equivalents.json``); it is a subject like any other.
* **an examined body system** ("A neurological exam was performed.") in a claim that speaks of an
  examination: the note names neither the system nor an organ or finding of it (:data:`SYSTEM_PARTS`,
  the review of systems' organ systems with the organs and findings Bates' Guide examines under each).

In each case the word must also have no equivalent among the note's words by MiniLM (the same
closeness, :data:`~doclens.evaluators.rules.concepts.EQUIVALENT_COSINE`, as v12's). The finding is
v12's (:func:`~doclens.evaluators.rules.concepts.concept_finding`, a :class:`FindingKind.CONCEPT`
that decides): "note never names "vitals", what the claim is about, nor an equivalent".

**A framing line** ("Examination of the following areas was performed.", "Findings are as follows.")
introduces what follows it and states no clinical word (:func:`framing_only`): a template's line with
no finding of its own, which decides "not supported" as a claim with nothing to check does
(:class:`FindingKind.EMPTY`). Measured (docs/changelog.md): the wider class, any claim with no
clinical content word at all, rejected many right rewordings ("She also enjoys coffee.", "We
discussed the nature of his pain.") on every labelled half, so it is left to the decision model;
only the line that introduces what follows decides.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from types import MappingProxyType

from doclens.evaluators.rules.concepts import EQUIVALENT_COSINE
from doclens.evaluators.rules.sentences import Word
from doclens.evaluators.rules.words import is_content

#: How a claim names the vital signs, or one of them (words only: "BP" and "HR" are abbreviations
#: with other expansions, "pulse" is also the examination's peripheral pulse and v12's concept).
CLAIM_VITALS: Mapping[str, re.Pattern[str]] = MappingProxyType({
    "vitals": re.compile(r"\bvital(?:s| signs?)\b", re.I),
    "blood pressure": re.compile(r"\bblood pressures?\b", re.I),
    "heart rate": re.compile(r"\b(?:heart|pulse) rates?\b", re.I),
    "respiratory rate": re.compile(r"\b(?:respiratory|respiration|breathing) rates?\b", re.I),
    "temperature": re.compile(r"\btemperatures?\b", re.I),
    "oxygen saturation": re.compile(r"\b(?:oxygen|o2) saturations?\b", re.I),
})
#: How a note names each vital sign: its name, its abbreviation, its reading's unit or a word that
#: says its state (MedlinePlus, "Vital signs": a fever is a temperature, hypertension a blood pressure).
NOTE_VITALS: Mapping[str, re.Pattern[str]] = MappingProxyType({
    "blood pressure": re.compile(r"\b(?:blood pressures?|bps?|hypertensi\w*|hypotensi\w*|htn|systolic|diastolic|"
                                 r"mm ?hg|\d{2,3}\s*/\s*\d{2,3})\b", re.I),
    "heart rate": re.compile(r"\b(?:heart rates?|pulses?|pulse rates?|hr|bpm|tachycard\w*|bradycard\w*|"
                             r"(?:regular|irregular|normal) rate|rate and rhythm|rrr)\b", re.I),
    "respiratory rate": re.compile(r"\b(?:respiratory rates?|respirations?|rr|breaths? (?:per|a|/) ?min\w*|"
                                   r"tachypn\w*|bradypn\w*)\b", re.I),
    "temperature": re.compile(r"\b(?:temperatures?|temps?|afebrile|febrile|fevers?|tmax)\b", re.I),
    "oxygen saturation": re.compile(r"\b(?:oxygen|o2|spo2|sats?|saturations?|pulse ox\w*|oximetry|hypox\w*)\b", re.I),
})
#: v17: the words of the vital signs' names ("blood pressure", "heart rate"; not "oxygen", also a
#: treatment): alone, a claim of them names a measurement and gives no reading (:func:`states_no_fact`).
VITAL_NAME_WORDS = frozenset(w for name in CLAIM_VITALS for w in name.split()) - frozenset({"oxygen"})
_ANY_VITAL = re.compile(r"\bvitals?\b", re.I)

#: Words by which a claim speaks of an examination.
_EXAMINED = re.compile(r"\b(?:exam|exams|examination|examinations|examined)\b", re.I)
#: The review of systems' organ systems a claim may say were examined, each with the words by which a
#: note names it (itself, its organs and the findings Bates' Guide examines under it).
SYSTEM_PARTS: Mapping[str, frozenset[str]] = MappingProxyType({system: frozenset(parts.split()) for system, parts in {
    "neurological": "neuro neurologic neurological nerve nerves cranial reflex reflexes sensation sensory strength "
                    "gait coordination oriented alert romberg motor",
    "cardiovascular": "cardiovascular cv cardiac heart murmur murmurs rhythm rrr pulses pulse gallop rub edema",
    "respiratory": "respiratory pulmonary lung lungs breath breathing wheeze wheezes wheezing rales rhonchi crackles "
                   "auscultation",
    "gastrointestinal": "gastrointestinal gi abdomen abdominal bowel bowels tender tenderness liver spleen",
    "musculoskeletal": "musculoskeletal msk joint joints muscle muscles extremity extremities motion spine back "
                       "tenderness strength",
    "genitourinary": "genitourinary gu urinary bladder kidney kidneys genital pelvic",
    "psychiatric": "psychiatric psych mood affect judgment insight behavior",
    "skin": "skin integumentary rash rashes lesion lesions wound",
}.items()})
_SYSTEM_SPELLINGS = MappingProxyType({"neurologic": "neurological", "neuro": "neurological", "cardiac": "cardiovascular",
                                      "pulmonary": "respiratory", "integumentary": "skin",
                                      # v16: a note's "Key:" line names a system by its abbreviation ("CV: …")
                                      "cv": "cardiovascular", "gi": "gastrointestinal", "resp": "respiratory",
                                      "msk": "musculoskeletal", "gu": "genitourinary", "psych": "psychiatric"})


def unnamed_vitals(claim: str, kept: list[str], premise: str) -> list[str]:
    """The vital signs the claim names (:data:`CLAIM_VITALS`), a word of which is missing (``kept``),
    that the note names in no way (:data:`NOTE_VITALS`; for "vitals": no vital sign at all)."""
    missing = set(kept)
    found = []
    for kind, pattern in CLAIM_VITALS.items():
        match = pattern.search(claim)
        if match is None or not missing & set(re.findall(r"[a-z0-9]+", match.group(0).lower())):
            continue
        named = ([p for p in NOTE_VITALS.values()] + [_ANY_VITAL]) if kind == "vitals" else [NOTE_VITALS[kind]]
        if not any(p.search(premise) for p in named):
            found.append(match.group(0).lower())
    return found


def unnamed_subjects(claim: str, kept: list[str], words: list[Word], premise: str, studies: Collection[str],
                     closeness: Callable[[list[str]], list[float]]) -> list[str]:
    """The claim's subjects the note never names (module docstring): vital signs, a test or study
    by its abbreviation, an examined body system; ``kept``: the claim's missing words (lower case)
    that v12's rule left; ``studies``: those of them that are a test or study of the lexicon written as an
    abbreviation (v12 leaves those out); ``closeness``: each word's
    cosine with its closest equivalent in the note."""
    found = unnamed_vitals(claim, kept, premise)
    taken = {w for phrase in found for w in phrase.split()}
    note: set[str] = set()  # the note's words, read when a candidate is a body system (most claims have none)

    def note_words() -> set[str]:
        if not note:
            note.update(re.findall(r"[a-z0-9]+", premise.lower()))
        return note

    candidates = [m for m in kept if m not in taken and any(w.text.lower() == m for w in words) and (
        m in studies or _unnamed_system(m, claim, note_words))]
    if candidates:
        found += [m for m, cosine in zip(candidates, closeness(candidates)) if cosine < EQUIVALENT_COSINE]
    return found


def is_system(word: str) -> bool:
    """Whether ``word`` (lower case) names a body system of :data:`SYSTEM_PARTS`."""
    return _SYSTEM_SPELLINGS.get(word, word) in SYSTEM_PARTS


#: v15: the organ whose examination is its system's ("Heart: regular rate and rhythm" is the
#: cardiovascular examination, "Lungs: clear" the respiratory one), each one of :data:`SYSTEM_PARTS`' parts.
SYSTEM_ORGANS: Mapping[str, str] = MappingProxyType({"heart": "cardiovascular", "lung": "respiratory",
                                                     "abdomen": "gastrointestinal", "skin": "skin"})


def system_of(word: str, noun: str = "") -> str | None:
    """The body system of :data:`SYSTEM_PARTS` that ``word`` (lower case; ``noun`` its noun lemma)
    names, in any spelling ("neuro", "neurologic": neurological) or by its organ (:data:`SYSTEM_ORGANS`),
    else ``None``."""
    system = _SYSTEM_SPELLINGS.get(word, word)
    if system in SYSTEM_PARTS:
        return system
    return SYSTEM_ORGANS.get(noun or word)


def _unnamed_system(word: str, claim: str, note: Callable[[], set[str]]) -> bool:
    """Whether ``word`` is a body system a claim that speaks of an examination names, of which the
    note names neither the system nor an organ or finding (:data:`SYSTEM_PARTS`); ``note()``: the
    note's words (lower case)."""
    system = _SYSTEM_SPELLINGS.get(word, word)
    return system in SYSTEM_PARTS and bool(_EXAMINED.search(claim)) and not SYSTEM_PARTS[system] & note()


#: A claim that introduces what follows it ("Examination of the following areas was performed.",
#: "Findings are as follows:"): a template's framing line.
_FORWARD = re.compile(r"\b(?:the following|as follows|as below|listed below|noted below|see below)\b", re.I)


def framing_only(claim: str, kept: list[str], clinical: Callable[[str], bool]) -> bool:
    """Whether the claim is only a template's framing line: it introduces what follows
    (:data:`_FORWARD`), states no clinical word (``clinical``: a concept, a body site or system, a
    drug, a number) and has a word the note does not use (``kept``). Such a line states no finding of
    its own; the note's framing (or its absence) says nothing of it."""
    return bool(kept) and bool(_FORWARD.search(claim)) and not any(
        clinical(w) for w in re.findall(r"[A-Za-z0-9][A-Za-z0-9'\-]*", claim))


#: Words that deny or deny of: a claim with one states an absence ("No rubs.", "Denies fevers."), a fact.
_DENYING = frozenset("no not denies denied deny without never none".split())
#: The words a fragment's qualifiers or headings may be joined by ("Assessment and plan", "History of").
_JOINING = frozenset("a an the and or of".split())
#: Words that name the patient: a qualifier beside one is said of the patient ("New patient.").
_PERSONS = frozenset("patient patients pt".split())
#: The words of a fragment's explanation, by what its words are.
_NOTHING_SAID = MappingProxyType({"qualifier": "only a word that qualifies nothing",
                                  "heading": "only a heading, topic or place"})


def states_no_fact(claim: str, qualifier: Callable[[str], bool], heading: Callable[[str], bool],
                   premise: str = "") -> str | None:
    """v17 (issue 46): what a claim that states no fact is, or ``None`` for one that states one. A
    note's problem list, plan or examination writes a finding, a condition or a drug alone
    ("Hypertension.", "Lisinopril 10 mg", "No rubs."), and the reader takes it as said of the patient:
    the patient has it, takes it, has no rubs. A fragment of at most three content words says nothing
    of the kind where its words are only

    * words that **qualify nothing** (``qualifier``: an adjective or a level, with no noun it is
      said of: "Cognitive", "Abnormal.", "Good."): a dangling adjective names no finding, condition,
      drug or value; or
    * a **heading, a topic or a place** (``heading``: a note's section, a topic heading such as
      "Diet" or "Medications", a body part or system, a vital sign's name: "Examination of abdomen",
      "Diet", "Kidney", "Blood pressure"), with nothing said of it: no finding, no reading.

    A number, a denial or any other word (a concept, a drug, a verb) makes it a statement, left to
    the other rules; so does a qualifier beside a heading or a place ("Normal cervix.", "SKIN:
    Healthy."). What such a claim asserts, the note cannot state: it decides "not supported" as a claim
    with nothing to check does (:class:`FindingKind.EMPTY`). Where the note (``premise``) writes the
    same fragment as a part of its own (between stops, commas or semicolons), the rule leaves it to
    the others, as :func:`framing_only` does a framing line the note uses: a note's own clause is the
    note's, whatever it says (docs/design.md, "Judging real notes")."""
    if any(c.isdigit() for c in claim):
        return None
    tokens = [t.lower().strip("'-") for t in re.findall(r"[A-Za-z][A-Za-z'\-]*", claim)]
    content = _content(claim)
    if (any(t in _DENYING for t in tokens) or not content or len(content) > 3
            or any(t not in _JOINING and (t in _PERSONS or not heading(t)) for t in tokens if not is_content(t))):
        return None  # a denial ("No rubs."), or said of someone ("New patient.", "She is healthy.")
    kind = ("qualifier" if all(qualifier(t) for t in content)
            else "heading" if all(heading(t) for t in content) else None)
    if kind is None or content in _fragments(premise):
        return None
    return (f"claim is {_NOTHING_SAID[kind]} (\"{' '.join(content)}\"): it states no finding, condition, drug, "
            f"value or action to check")


def _fragments(premise: str) -> list[list[str]]:
    """The content words of each part of ``premise``: its clauses as the clause extractor cuts them
    (a claim of the note's own is one of them), and its parts between stops, commas and line ends."""
    from doclens.extraction.extractors import clinician_claims

    parts = clinician_claims(premise) + re.split(r"[.,;!?\n]+", premise)
    return [_content(part) for part in parts]


def _content(text: str) -> list[str]:
    """``text``'s content words, lower case, in order."""
    return [t for t in (w.lower().strip("'-") for w in re.findall(r"[A-Za-z][A-Za-z'\-]*", text)) if is_content(t)]
