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

Rule 10 (v12, :mod:`~doclens.evaluators.rules.statements`: what kind of statement a claim makes) is
read here too, so that its findings come with rule 8's.
"""

from __future__ import annotations

import re

from doclens.evaluators.rules.analysis import Analyser
from doclens.evaluators.rules.findings import Finding, FindingKind, short
from doclens.evaluators.rules.sentences import Sentence
from doclens.evaluators.rules.statements import statement_problems
from doclens.evaluators.rules.words import is_content

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

