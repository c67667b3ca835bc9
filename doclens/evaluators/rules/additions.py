"""Rule 8 of ``clinical-rules`` (v11), **claims that say more than the note**: a claim that adds a
reason, a purpose or a basis to a fact ("edema, which may be due to prolonged standing"; "ice to
reduce swelling"; "well controlled based on checks at home"), or that widens a list the note gives
to "other" things ("no other abnormalities"), states something the note never does, however well
the rest of it is covered. Such an addition is not weighed as rewording: it decides "not supported"
(docs/design.md §4, "Judging real notes"; docs/changelog.md, "Claims that say more than the note").

* **A reason, purpose or basis** (:data:`LINKS`: "due to", "secondary to", "because (of)", "caused
  by", "as a result of", "based on", "to reduce / prevent / rule out …") is supported only when one
  note sentence holds what the clause adds (its content words; one may be missing when it has three
  or more) together with the fact it is attached to (a content word of the rest of the claim
  sentence, there or in a sentence beside it) and a link word of its own (:data:`NOTE_LINKS`:
  "likely due to", "from", "to reduce").
* **"Other" things** ("no other X", "any other X", "or other X") are supported only when a note
  sentence says "other" (or "otherwise", "else", "additional", "further") of X itself.
* **A plan read as a state** ("is swimming as tolerated", "has been icing") is supported only when a
  note sentence gives the activity outside a plan (not after an advising or ordering word in its
  clause, nor as an order opening it: "increase swimming as tolerated", "Ice the knee").
* **A sign said to be reported** ("reports tenderness") is supported only when a note sentence that
  holds it is not an examination's (palpation, exam, "reveals" …).
* **A qualifier added to a concept** (v14, :func:`qualifier_problems`; the words in
  :data:`~doclens.evaluators.rules.lexicons.QUALIFIERS`): a severity ("slightly elevated", "severe"),
  a course ("stable murmur", "improving"), a chronicity ("chronic", "new", "recurrent"), a repetition
  ("repeat echocardiogram", "again") or a periodicity ("yearly ultrasound") the claim gives a concept
  the note states without it is supported only when a note sentence holding a word of the concept
  (or the one after it, opening "It …" or with a qualifier: "1. Asthma. Improving.") says the
  qualifier in any form or an equivalent ("slight" ~ "mild", "unchanged" ~ "stable", "for years" ~
  "chronic", a score out of ten or a "2+" grade for a severity, "prior" or an earlier result for a
  repeat, "every year" ~ "yearly"). Where the note's sentences of the concept say another qualifier
  of the family, it is a contradiction (``note says mild of "knee pain", claim says severe``). Left
  out: a qualifier the claim denies ("no acute fracture"), one of a visit ("a new patient"), and a
  severity where the note gives the concept with a value (a reading, a score, a grade: the claim may
  read its severity there).

* **A circumstance or a detail no note word gives** (v16, :func:`circumstance_words`): of the claim's
  words the note never uses and the paraphrase tolerance did not forgive, one inside a clause that
  gives the fact's time (:data:`~doclens.evaluators.rules.lexicons.CIRCUMSTANCE_OPENERS`: "since a
  trip to Mexico", "at the time of a tackle", "during long drives"), or one that gives a time or a
  quality by itself (:data:`~doclens.evaluators.rules.lexicons.DETAIL_CLASSES`: "yesterday",
  "aching"), is a fact the note does not state, not a rewording: it decides. The
  framing words (who reports, how it was found: "reports", "states", "when asked") are never missing
  words at all (:data:`~doclens.evaluators.rules.words.STOP_WORDS`). r17: so does a finding the
  examiner elicited ("pain with palpation": the class "examination" of ``DETAIL_CLASSES``) where no
  note sentence of the fact gives what the examiner's hand found (a symptom the patient tells of is
  not it), and a trigger (:func:`trigger_words`: "pain with squatting", "on exertion", "after
  eating") the note gives no activity of its family for.

Rule 10 (v12, :mod:`~doclens.evaluators.rules.statements`: what kind of statement a claim makes) is
read here too, so that its findings come with rule 8's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from doclens.evaluators.rules.analysis import Analyser
from doclens.evaluators.rules.findings import Finding, FindingKind, short
from doclens.evaluators.rules.lexicons import (
    CIRCUMSTANCE_EVENTS,
    CIRCUMSTANCE_FRAMING,
    CIRCUMSTANCE_OPENERS,
    DETAIL_CLASSES,
    DETAIL_SAID,
    QUALIFIER_SAID,
    QUALIFIERS,
    SEVERITY_SCORE,
    TRIGGER_OPENERS,
    TRIGGERS,
    QualifierFamily,
    severity_of_score,
)
from doclens.evaluators.rules.sentences import Sentence, Status, Word
from doclens.evaluators.rules.statements import statement_problems
from doclens.evaluators.rules.words import PRONOUNS, is_content

#: Words that attach a reason, a purpose or a basis to a fact. "since" is left out: it is mostly a
#: time ("limping since the injury").
LINKS = re.compile(
    r"\b(?:due to|secondary to|because(?: of)?|caused by|as a result of|attributed to|attributable to|"
    r"based on|in order to|to (?:reduce|prevent|rule out|relieve|decrease|lessen|avoid))\b"
    r"|\bfor (?=(?:[a-z]+ ){0,2}(?:reduction|prevention)\b(?!\s+[a-z]))",
    re.IGNORECASE)
#: A link said in the note's own sentence ("likely due to", "from", "to reduce"): the note links two facts.
NOTE_LINKS = re.compile(
    r"\b(?:due to|secondary to|because|caus\w*|result(?:s|ed)? (?:of|from|in)|from|attributed|"
    r"based on|related|reduce|prevent|rule out|relieve|decrease|help|since|likely|may be)\b",
    re.IGNORECASE)
#: What every assessment rests on: a basis of these words only ("based on the patient's symptoms and
#: exam") adds nothing to check.
GENERIC = frozenset({"patient", "patients", "symptoms", "symptom", "exam", "examination", "examinations", "physical",
                     "findings", "finding", "history", "results", "result", "today", "evaluation", "assessment",
                     "imaging", "presentation", "discussion", "information", "review"})
#: A clause ends at a comma, semicolon, colon or the end of the sentence.
_CLAUSE_END = re.compile(r"[,;:.!?]|\bbut\b|\bwhich\b", re.IGNORECASE)
#: "no other X", "any other X", "or other X", "and other X" (an X the note never widens to).
OTHERS = re.compile(r"\b(?:no|any|or|and|nor|without|all)\s+(?:any\s+)?other\s+((?:[a-z][a-z'\-]*\s*){1,3})",
                    re.IGNORECASE)
#: How a note says "other": the words that widen its own list.
NOTE_OTHERS = re.compile(r"\b(?:other|others|otherwise|else|additional|further)\b", re.IGNORECASE)
#: The words of an "other" phrase that end it ("no other joints are affected": joints).
_OTHER_STOP = frozenset({"are", "is", "was", "were", "noted", "seen", "present", "found", "reported", "on", "in",
                         "of", "at", "with", "to", "that", "than", "then", "and", "or", "but", "has", "have"})


def addition_problems(analyser: Analyser, claim_sentences: list[Sentence],
                      premise_sentences: list[Sentence]) -> list[Finding]:
    """Rule 8's findings (module docstring): each a :class:`FindingKind.ADDITION`, an absence that
    decides (:data:`~doclens.evaluators.rules.decision.DECISIVE`)."""
    problems: list[Finding] = []
    for sentence in claim_sentences:
        problems += _link_problems(analyser, sentence, premise_sentences)
        problems += _other_problems(analyser, sentence.text, premise_sentences)
        problems += _plan_problems(analyser, sentence.text, premise_sentences)
        problems += _reported_sign_problems(analyser, sentence.text, premise_sentences)
        problems += qualifier_problems(analyser, sentence, premise_sentences)
    problems += statement_problems(analyser, claim_sentences, premise_sentences)  # rule 10 (statements.py)
    return list(dict.fromkeys(problems))


def _stems(analyser: Analyser, text: str) -> set[str]:
    return {analyser.normal(w) for w in re.findall(r"[A-Za-z][A-Za-z'\-]*", text.lower()) if is_content(w)}


def _link_problems(analyser: Analyser, sentence: Sentence, premise_sentences: list[Sentence]) -> list[Finding]:
    """A reason, purpose or basis the note does not give with the fact (module docstring). The words
    checked are those the analysis reads as content in the claim's sentence (as it reads the note's)."""
    problems = []
    text, own = sentence.text, sentence.stems
    for link in LINKS.finditer(text):
        end = _CLAUSE_END.search(text, link.end())
        clause = text[link.end(): end.start() if end else len(text)]
        added = _stems(analyser, " ".join(w for w in re.findall(r"[A-Za-z][A-Za-z'\-]*", clause)
                                          if w.lower().split("'")[0] not in GENERIC)) & own
        if not added:
            continue
        if link.start() == 0 or not text[: link.start()].strip(" ,"):  # "Based on X, Y": the fact follows
            fact = _stems(analyser, text[end.end():] if end else "") & own
        else:
            fact = _stems(analyser, text[: link.start()]) & own
        said_link = " ".join(link.group(0).lower().split())
        if not any(_holds(premise_sentences, k, added, fact, said_link) for k in range(len(premise_sentences))):
            said = f"{link.group(0).strip()} {clause.strip()}".strip()
            problems.append(Finding(FindingKind.ADDITION, f"note does not give the claim's \"{short(said, 60)}\""))
    return problems


def _holds(premise_sentences: list[Sentence], k: int, added: set[str], fact: set[str], said_link: str) -> bool:
    """Whether note sentence ``k`` gives what a link adds with a link of its own, and it or a sentence
    beside it the fact the link is attached to ("… an upper respiratory infection. Most likely it is a
    virus that is causing her symptoms."); the claim's own link words are one too."""
    sentence = premise_sentences[k]
    stems = sentence.stems | set(sentence.keys)
    if len(added & stems) < len(added) - (1 if len(added) >= 3 else 0):
        return False
    if not (NOTE_LINKS.search(sentence.text) or said_link in " ".join(sentence.text.lower().split())):
        return False
    around = premise_sentences[max(k - 1, 0): k + 2]
    return not fact or any(fact & (s.stems | set(s.keys)) for s in around)


def _other_problems(analyser: Analyser, text: str, premise_sentences: list[Sentence]) -> list[Finding]:
    """"Other" things the note never names as other (module docstring)."""
    problems = []
    for match in OTHERS.finditer(text):
        words = []
        for word in match.group(1).lower().split():
            if word in _OTHER_STOP:
                break
            words.append(word)
        things = _stems(analyser, " ".join(words))
        if not things:
            continue
        if not any(NOTE_OTHERS.search(s.text) and things <= (s.stems | set(s.keys)) for s in premise_sentences):
            said = f"other {' '.join(words)}"
            problems.append(Finding(FindingKind.ADDITION, f"note does not speak of \"{short(said, 60)}\""))
    return problems


#: A claim that something is being or has been done ("is walking", "has been icing", "reports receiving").
DOING = re.compile(r"\b(?:is|are|was|were|has been|have been|had been|reports?|reported|states?|notes?)\s+"
                   r"(?:\w+ly\s+)?([a-z]+ing)\b", re.IGNORECASE)
#: Gerunds that name no activity of a plan ("is having pain", "has been feeling").
_NO_ACTIVITY = frozenset({"having", "being", "doing", "feeling", "going", "getting", "experiencing", "noticing",
                          "complaining", "reporting", "seeing", "trying", "starting", "improving", "worsening",
                          "increasing", "decreasing", "following", "presenting", "coming", "ongoing"})
#: What makes a note's sentence a plan or an advice, not a state: an advising or ordering word before
#: the activity ("increase walking as tolerated", "advised to ice", "we will start").
_PLAN_CUES = re.compile(r"\b(?:recommend\w*|advis\w*|encourag\w*|instruct\w*|will|should|plan\w*|increase|"
                        r"start|begin|try|consider|may|can|prescrib\w*|order\w*|refer\w*)\b", re.IGNORECASE)


def _plan_problems(analyser: Analyser, text: str, premise_sentences: list[Sentence]) -> list[Finding]:
    """An activity a claim says is done, which the note gives only as a plan or an advice."""
    problems = []
    for match in DOING.finditer(text):
        gerund = match.group(1).lower()
        if gerund in _NO_ACTIVITY or not is_content(gerund):
            continue
        stem = analyser.normal(gerund)
        holding = [s for s in premise_sentences if stem in s.stems]
        if holding and all(_planned(analyser, s, stem) for s in holding):
            problems.append(Finding(FindingKind.ADDITION, f"note has \"{gerund}\" only as a plan or an advice"))
    return problems


def _planned(analyser: Analyser, sentence: Sentence, stem: str) -> bool:
    """Whether ``stem`` stands in ``sentence`` as a plan: its clause opens with it (an order, "Ice the
    knee") or a plan cue comes before it in its clause."""
    text = sentence.text
    for word in re.finditer(r"[A-Za-z][A-Za-z'\-]*", text):
        if analyser.normal(word.group(0)) != stem:
            continue
        clause = re.split(r"[,;:]", text[: word.start()])[-1]
        if not clause.strip() or _PLAN_CUES.search(clause):
            continue
        return False
    return True


#: Signs found by examining, not told by the patient.
EXAM_SIGNS = frozenset({"tenderness", "effusion", "crepitus", "murmur", "murmurs", "rales", "rhonchi", "bruit",
                        "bruits", "laxity", "ecchymosis", "induration"})
#: A claim that the patient tells of something ("reports tenderness", "complains of crepitus").
_TELLS = re.compile(r"\b(?:reports?|reported|complains?|complained|endorses?|endorsed|describes?|admits?)\b",
                    re.IGNORECASE)
#: What marks a note's sentence as an examination's.
_EXAMINED = re.compile(r"\b(?:exam\w*|palpat\w*|auscultat\w*|reveal\w*|shows?|noted|elicited|inspection)\b",
                       re.IGNORECASE)


def _reported_sign_problems(analyser: Analyser, text: str, premise_sentences: list[Sentence]) -> list[Finding]:
    """A sign the claim says the patient tells of, which the note gives only from its examination."""
    tells = _TELLS.search(text)
    if not tells:
        return []
    problems = []
    for word in re.findall(r"[a-z]+", text[tells.end():].lower()):
        if word not in EXAM_SIGNS:
            continue
        stem = analyser.normal(word)
        holding = [s for s in premise_sentences if stem in s.stems]
        if holding and all(_EXAMINED.search(s.text) for s in holding):
            problems.append(Finding(FindingKind.ADDITION, f"note has \"{word}\" only from its examination"))
    return problems


#: Words that point back to something said before ("It is mild."): never a concept of their own.
_POINTERS = frozenset("it this these those they he she there".split())
#: Words between a qualifier and the concept it qualifies that say neither ("very mild", "more
#: severe", "a grade 2/6 murmur").
_QUALIFIER_FILLER = frozenset("very more most much rather quite fairly somewhat a an the her his their grade".split())
#: Words that end the concept a qualifier reaches: a clause's break, a preposition, a conjunction, a verb of being.
_CONCEPT_BREAKS = frozenset("""of in on at with to for from by about since over under after before during and or but nor
which that who is are was were be been being has have had remains remained remain seems seem appears appear became
become now still overall clinically currently""".split()) | _POINTERS
#: A word after a course word that makes it a verb with an object ("improving her strength").
_OBJECT_OPENS = frozenset("her his their the its my your our a an".split())
#: Concepts a qualifier of a visit is about, not a finding ("a new patient").
_NOT_CONCEPTS = frozenset("patient patients visit visits appointment appointments".split())
#: A sentence that opens by pointing back to the one before ("It is mild.", "This has been stable.").
_POINTS_BACK = re.compile(r"\W*(?:it|this|these|they|that|which|both|the latter)\b", re.IGNORECASE)
_TOKENS = re.compile(r"[a-z][a-z0-9'\-]*|\d+(?:[./]\d+)?|[,;:.!?()]")
#: What stands before a qualifier said of a concept before it ("the murmur is stable", "pain, improved").
_PREDICATE_OPENS = frozenset(", is are was were be been being remains remained remain seems seem appears appear "
                             "became become has have had now still".split())


def qualifier_problems(analyser: Analyser, sentence: Sentence, premise_sentences: list[Sentence]) -> list[Finding]:
    """v14: a qualifier the claim adds to a concept the note states without it (module docstring):
    a severity, course, chronicity, repetition or periodicity (:data:`~doclens.evaluators.rules.lexicons.QUALIFIERS`).
    The concept is the content words the qualifier stands before (up to two), else those it is said
    of ("the murmur is stable", "echo again"). Where no note sentence holds the concept, another rule
    speaks; where one holds it with the qualifier's group (:data:`~doclens.evaluators.rules.lexicons.QUALIFIER_SAID`),
    it is supported; where the note's sentences of the concept give another group of the family, it
    is contradicted; else the qualifier is an addition, which decides."""
    tokens = _TOKENS.findall(sentence.text.lower())
    problems = []
    read: list[tuple[Sentence, set[str]]] = []  # the note's sentences with their stems, read once a claim sentence
    for i, token in enumerate(tokens):
        if token not in QUALIFIERS or not _affirmed(sentence, token):
            continue
        concept = _qualified(tokens, i)
        if not concept or _NOT_CONCEPTS.intersection(concept):
            continue
        if QUALIFIERS[token][0] is QualifierFamily.KIND and not (
                i + 1 < len(tokens) and tokens[i + 1] in concept and any(analyser.is_concept(w) for w in concept)):
            continue  # v15: a kind is read before a disease it names ("primary care", "secondary to" are not)
        read = read or [(s, _note_stems(analyser, s)) for s in premise_sentences]
        finding = _qualifier_finding(analyser, token, concept, read)
        if finding is not None:
            problems.append(finding)
    return problems


def _affirmed(sentence: Sentence, token: str) -> bool:
    """Whether the claim states its qualifier (not negated, hypothetical nor possible): "no acute
    fracture" says less than the note's "no fracture"."""
    said = [w for w in sentence.words if w.text.lower() == token]
    return not said or any(w.status in (Status.AFFIRMED, Status.PLANNED, Status.HISTORICAL) for w in said)


def _qualified(tokens: list[str], i: int) -> list[str]:
    """The content words the qualifier at ``i`` qualifies: up to two after it, else up to two before
    it in its clause (:func:`qualifier_problems`)."""
    qualifier = tokens[i]
    after = [] if qualifier == "again" else _reach(tokens[i + 1:])
    if after and QUALIFIERS[qualifier][0] is QualifierFamily.COURSE and tokens[i + 1] in _OBJECT_OPENS:
        return []  # "improving her strength": a verb
    if after:
        return after
    family = QUALIFIERS[qualifier][0]
    if not (qualifier == "again" or (i and tokens[i - 1] in _PREDICATE_OPENS)
            or (family in (QualifierFamily.COURSE, QualifierFamily.PERIODICITY) and _ends_clause(tokens, i))):
        return []  # said of nothing the claim names ("a 60-year-old new patient")
    before = tokens[:i]
    while before and (before[-1] == "," or before[-1] in _CONCEPT_BREAKS - _POINTERS):
        before.pop()
    return _reach(before[::-1])[::-1]


def _ends_clause(tokens: list[str], i: int) -> bool:
    """Whether the qualifier at ``i`` ends its clause ("her pain improved.", "ultrasound yearly")."""
    return i + 1 == len(tokens) or tokens[i + 1] in _CONCEPT_BREAKS or not tokens[i + 1][0].isalnum()


def _reach(tokens: list[str]) -> list[str]:
    """Up to two content words from the start of ``tokens`` before a break (:data:`_CONCEPT_BREAKS`),
    passing over fillers, numbers and other qualifiers."""
    found: list[str] = []
    for token in tokens:
        if token in _CONCEPT_BREAKS or not token[0].isalnum():
            break
        if token in _NOT_CONCEPTS:
            return [token]
        if token in _QUALIFIER_FILLER or token in QUALIFIERS or not is_content(token):
            continue
        found.append(token)
        if len(found) == 2:
            break
    return found


def _qualifier_finding(analyser: Analyser, qualifier: str, concept: list[str],
                       read: list[tuple[Sentence, set[str]]]) -> Finding | None:
    """The finding for a claim's ``qualifier`` of ``concept`` (:func:`qualifier_problems`), or ``None``;
    ``read``: the note's sentences with their stems (:func:`_note_stems`)."""
    family, group = QUALIFIERS[qualifier]
    stems = {analyser.normal(w) for w in concept}
    holding = [s for s, said in read if stems <= said]
    if not holding:
        return None
    if _said_of(stems, group, read, analyser.written_one_way):
        return None
    if family is QualifierFamily.SEVERITY and any(s.stated for s in holding):
        return None  # a value read with it (a reading, a score, a grade): the claim may read its severity there
    if family is QualifierFamily.REPETITION and any(_result_given(s, stems) for s in holding):
        return None  # the note gives an earlier one's result: a plan of the test again is a repeat
    shown = " ".join(w for w in concept)
    others = sorted({other for s in holding for other in _groups_said(s.text, family)} - {group})
    if others:
        return Finding(FindingKind.QUALIFIER, f"note says {others[0]} of \"{shown}\", claim says {qualifier}",
                       conflict=True)
    return Finding(FindingKind.ADDITION, f"claim adds \"{qualifier}\" to \"{shown}\", which the note states "
                                         f"without it (\"{short(holding[0].text, 60)}\")")


def _said_of(stems: set[str], group: str, read: list[tuple[Sentence, set[str]]],
             one_way: Callable[[str], str] = str) -> bool:
    """Whether the note says ``group`` of the concept (``stems``): in a sentence holding a word of it,
    or in the sentence after one that opens by pointing back to it ("A rash on the arm. It is mild.")
    or with a qualifier ("1. Hypertension. Stable."). ``read``: the note's sentences with their stems
    (:func:`_note_stems`); ``one_way``: the sentence as the judge reads it, its synonyms written one
    way ("CKD" says "chronic")."""
    about = False
    for sentence, said in read:
        opening = _TOKENS.findall(sentence.text.lower())[:1]
        follows = about and (bool(_POINTS_BACK.match(sentence.text)) or bool(opening) and any(
            _says_group(opening[0], other) for other in QUALIFIER_SAID))
        about = bool(stems & said)
        if (about or follows) and (_says_group(sentence.text, group) or _says_group(one_way(sentence.text), group)):
            return True
    return False


def _result_given(sentence: Sentence, stems: set[str]) -> bool:
    """Whether a note sentence gives the concept as done (a result, not a plan: no plan cue in it, as
    :data:`_PLAN_CUES`): an earlier one."""
    return not _PLAN_CUES.search(sentence.text) and any(
        w.stem in stems and w.status in (Status.AFFIRMED, Status.HISTORICAL) for w in sentence.words)


def _note_stems(analyser: Analyser, sentence: Sentence) -> set[str]:
    """A note sentence's stems as read, with those of its words as written (before equivalents):
    made once a sentence (:meth:`~doclens.evaluators.rules.analysis.Analyser.of_sentence`)."""
    return analyser.of_sentence("_note_stems", sentence, lambda: sentence.stems | set(sentence.keys) | {
        analyser.normal(t) for t in _TOKENS.findall(sentence.text.lower()) if t[0].isalpha()})


def _says_group(text: str, group: str) -> bool:
    """Whether a note sentence says a qualifier group, in any form or by a score out of ten."""
    if QUALIFIER_SAID[group].search(text):
        return True
    return any(severity_of_score(m) == group for m in SEVERITY_SCORE.finditer(text))


def _groups_said(text: str, family: QualifierFamily) -> set[str]:
    """The groups of ``family`` a note sentence says, in any form (:func:`_says_group`)."""
    return {group for fam, group in set(QUALIFIERS.values()) if fam is family and _says_group(text, group)}


def circumstance_words(kept: list[str], claim: str, words: list[Word], premise_sentences: list[Sentence]) -> dict[str, str]:
    """v16 (module docstring): of ``kept``, the missing words the paraphrase tolerance did not forgive
    (lower case), those that carry a circumstance or a detail of the claim's fact, each with what it
    gives: ``"occasion"`` (:func:`_occasion_words`), or its class in
    :data:`~doclens.evaluators.rules.lexicons.DETAIL_CLASSES` (a time of day, a quality) where no note
    sentence of the claim's fact (one holding a stem of the claim's ``words`` the note uses) says a
    detail of that class (:func:`_said_in_a_form`: "aching" for "achy", "nocturnal" for "at night")."""
    if not kept:
        return {}
    found = {w: "occasion" for w in _occasion_words(kept, claim)}
    found.update({w: "trigger" for w in trigger_words(kept, claim, premise_sentences) if w not in found})
    found.update({w: DETAIL_CLASSES[w] for w in kept if w in DETAIL_CLASSES and w not in found})
    stems = {w.stem for w in words if w.text.lower() not in kept}
    about = [s for s in premise_sentences if s.stems & stems]
    keys = {w.text.lower(): w.stem for w in words}
    return {w: what for w, what in found.items()
            if what in ("occasion", "trigger") or not _said_in_a_form(w, keys.get(w, w), what, about)}


def trigger_words(kept: list[str], claim: str, premise_sentences: list[Sentence]) -> list[str]:
    """r17 (issue 46): the words of ``kept`` that give what brings the fact on, an activity of
    :data:`~doclens.evaluators.rules.lexicons.TRIGGERS` right after a
    :data:`~doclens.evaluators.rules.lexicons.TRIGGER_OPENERS` opener ("pain with squatting", "when
    climbing stairs", "on exertion"), where the note gives no activity of its family (a word of the
    family, or another form of one: "activity" for "exertion", "ambulation" for "walking", "climbs"
    for "climbing"), and every content word of its clause is missing (the note's trigger reworded
    keeps a word of it: "when going up stairs" for "when climbing stairs"). Not after a plan
    (:data:`_PLAN_CUES`: "will follow up after exercising"). Read before the paraphrase tolerance,
    which forgives no such word (a missing trigger is no rewording of the note's other words)."""
    found: list[str] = []
    for opener in TRIGGER_OPENERS.finditer(claim):
        word = opener.group(2).lower()
        family = TRIGGERS.get(word)
        if family is None or word not in kept or _PLAN_CUES.search(claim[: opener.start()]):
            continue
        end = _TIME_CLAUSE_END.search(claim, opener.start(2))
        clause = re.findall(r"[A-Za-z][A-Za-z'\-]*", claim[opener.start(2): end.start() if end else len(claim)].lower())
        if not all(w in kept for w in dict.fromkeys(clause[:4]) if is_content(w)):
            continue
        if any(_family_said(family, sentence) for sentence in premise_sentences):
            continue
        found += [w for w in dict.fromkeys(clause[:4]) if is_content(w) and w not in found]
    return found


def _family_said(family: str, sentence: Sentence) -> bool:
    """Whether a note sentence gives an activity of a trigger family (a word of it, or another form
    of one: the two share their first letters, all but the last of the shorter, at least four and at
    most five: "climbs" for "climbing", not "knee" for "kneel")."""
    for w in sentence.words:
        other = w.text.lower()
        if TRIGGERS.get(other) == family:
            return True
        for word, fam in TRIGGERS.items():
            n = min(5, len(word) - 1, len(other) - 1)
            if fam == family and n >= 4 and word[:n] == other[:n]:
                return True
    return False


#: v16: where a time clause ends: where a clause does, at a relative word that opens what is said
#: of the fact ("for the last two weeks that starts in his flank"), or at a conjunction that opens
#: another predicate ("during the accident and was told it was a contusion").
_TIME_CLAUSE_END = re.compile(_CLAUSE_END.pattern + r"|\b(?:that|who|where)\b"
                              r"|\b(?:and|or)\s+(?:was|were|is|are|has|have|had|will|did|does)\b", re.IGNORECASE)


def _occasion_words(kept: list[str], claim: str) -> list[str]:
    """The words of ``kept`` in a clause :data:`~doclens.evaluators.rules.lexicons.CIRCUMSTANCE_OPENERS`
    opens, up to the clause's end (:data:`_TIME_CLAUSE_END`): not one opened by asking or examining ("when asked about it"), nor
    "since" before a pronoun (mostly a reason: "since he has not improved"); not an adverb, which says
    how rather than what the time is ("since injured initially"), nor a word that points back to
    an event the note tells in its own words (:data:`~doclens.evaluators.rules.lexicons.CIRCUMSTANCE_EVENTS`:
    "since the injury"); only where at least half the clause's content words are missing (the occasion
    the claim's own rather than the note's reworded), and where the claim puts no plan before it (a
    :data:`_PLAN_CUES` word: "will follow up after the MRI" says when to act)."""
    found: list[str] = []
    for opener in CIRCUMSTANCE_OPENERS.finditer(claim):
        end = _TIME_CLAUSE_END.search(claim, opener.end())
        clause = re.findall(r"[A-Za-z][A-Za-z'\-]*", claim[opener.end(): end.start() if end else len(claim)].lower())
        if not clause or clause[0] in CIRCUMSTANCE_FRAMING or (opener.group(0).lower() == "since" and clause[0] in PRONOUNS):
            continue
        if _PLAN_CUES.search(claim[: opener.start()]):
            continue
        content = [w for w in dict.fromkeys(clause) if is_content(w) and w not in CIRCUMSTANCE_EVENTS
                   and (w in DETAIL_CLASSES or not w.endswith("ly"))]
        added = [w for w in content if w in kept]
        if 2 * len(added) >= len(content):
            found += [w for w in added if w not in found]
    return found


def _said_in_a_form(word: str, key: str, what: str, premise_sentences: list[Sentence]) -> bool:
    """Whether the note says a detail of ``word``'s class ``what`` (:data:`~doclens.evaluators.rules.lexicons.DETAIL_SAID`:
    "nocturnal" for "at night"), or a note word is another form of it (``key``, its key:
    :func:`_forms_of_one_word`: "achy" and "aching", "mornings" and "morning"; v17: not a word that
    only opens with its letters, "more" for "morning", "over" for "overnight")."""
    said = DETAIL_SAID[what]
    return any(said.search(sentence.text) or any(_forms_of_one_word(key, w.stem) for w in sentence.words)
               for sentence in premise_sentences)


def _forms_of_one_word(key: str, other: str) -> bool:
    """v17: whether two keys (:meth:`~doclens.evaluators.rules.analysis.Analyser.normal`: the Porter stem
    of a word's lemma, which joins "aching", "ached", "aches") are one word's: the same, or one the
    other's adjective in -y, whose y Porter writes i ("achi" of "achy", "ach" of "aching"; "crampy",
    "cramping")."""
    short, long = sorted((key, other), key=len)
    return key == other or (len(short) >= 3 and long == short + "i")


def circumstance_finding(words: dict[str, str], claim: str, words_of_claim: Sequence[Word],
                         premise_sentences: Sequence[Sentence]) -> Finding:
    """The :class:`FindingKind.ADDITION` for :func:`circumstance_words`' words (an absence that decides);
    r17: with ``claim`` it quotes the claim and the note's sentence of its fact (the one holding most
    of the claim's other stems), where there is one."""
    said = ", ".join(f"{w} ({what})" for w, what in list(words.items())[:6])
    text = f"note does not give the claim's detail: {said}"
    if claim:
        stems = {w.stem for w in words_of_claim if w.text.lower() not in words}
        fact = max(premise_sentences, key=lambda s: len(s.stems & stems), default=None)
        text += f" (claim: \"{short(claim, 80)}\"" + (f"; note: \"{short(fact.text, 80)}\")"
                                                     if fact is not None and fact.stems & stems else ")")
    return Finding(FindingKind.ADDITION, text)
