"""Rule 4 of ``clinical-rules``, **assertion**: each claim word's status (affirmed, negated,
possible, hypothetical, historical, planned, a relative's) is compatible with the word's status
where the premise speaks of the claim's concept most closely."""

from __future__ import annotations

import re

from doclens.evaluators.rules.findings import Finding, FindingKind, short
from doclens.evaluators.rules.lexicons import site_name
from doclens.evaluators.rules.sentences import Sentence, Side, Status, Word
from doclens.evaluators.rules.words import RESULT_WORDS


def reports_result(claim: str) -> bool:
    return any(w in RESULT_WORDS for w in re.findall(r"[a-z]+", claim.lower()))


def _compatible(claim_status: Status, premise_status: Status, reports_result: bool = False) -> bool:
    """Whether a claim word's status is supported by the premise word's. ``reports_result``: the
    claim says what a test found (:func:`reports_result`), which a planned test does not support."""
    if claim_status == premise_status:
        return True
    if Status.NEGATED in (claim_status, premise_status) or Status.FAMILY in (claim_status, premise_status):
        return False
    if Status.PLANNED in (claim_status, premise_status):
        # "MRI of the lumbar spine" in a plan is the note's "will order an MRI"; "the MRI showed a
        # tear" is not
        return claim_status == Status.PLANNED or not (reports_result and claim_status in (Status.AFFIRMED, Status.HISTORICAL))
    if claim_status in (Status.POSSIBLE, Status.HYPOTHETICAL):
        return premise_status in (Status.AFFIRMED, Status.POSSIBLE, Status.HYPOTHETICAL)
    # history and the present are one fact in a note ("history of hypertension" / "has
    # hypertension"; a header or "past medical history" elsewhere in a sentence marks all of it)
    return {claim_status, premise_status} == {Status.HISTORICAL, Status.AFFIRMED}
    # claim affirmed: a possible or hypothetical premise does not assert it


def _covers(premise_word: Word, claim_stems: set[str]) -> bool:
    """Whether a negated premise word negates as much as the claim: every word of its item is the
    claim's ("no pain" says more than "no pain with dorsiflexion": the latter does not support
    "denies any pain")."""
    return premise_word.status == Status.NEGATED and premise_word.phrase <= claim_stems


def _negates(sentence: Sentence, negated: list[Word], claim_stems: set[str]) -> bool:
    """Whether ``sentence`` negates the claim's first negated word, or half its negated words, no
    more narrowly than the claim (:func:`_covers`)."""
    there = {w.stem for w in sentence.words if _covers(w, claim_stems)}
    stems = list(dict.fromkeys(w.stem for w in negated))
    return stems[0] in there or 2 * len(there.intersection(stems)) >= len(stems)


#: v10: a negation written on a predicate ("the pain was not all the time", "is not described as"):
#: ConText gives it no content word to negate (:func:`predicate_negation_problems`)
_PREDICATE_NOT = re.compile(r"\b(?:not|never)\b|n't\b", re.IGNORECASE)
#: any negation a note sentence may write (a cue word, or a negated word: :func:`predicate_negation_problems`)
_ANY_NEGATION = re.compile(r"\b(?:no|not|never|none|nor|neither|without|denies|denied|deny|negative)\b|n't\b",
                           re.IGNORECASE)
#: v11: a negation a note writes on a predicate ("is not constant", "never", "no longer there"): the only
#: kind that words a claim's "not" on a predicate; a denial of findings ("no swelling", "denies
#: numbness") in a sentence about the claim's facts does not (:func:`predicate_negation_problems`)
_NOTE_PREDICATE_NOT = re.compile(r"\b(?:not|never|no longer)\b|n't\b", re.IGNORECASE)
#: words that say a finding is normal, which a denial of abnormal findings may reword (:func:`_denial_never_made`)
_NORMAL = re.compile(r"\b(?:normal|unremarkable|intact|clear|negative|benign|stable|fine|well)\b", re.IGNORECASE)
#: a comparison ("not as functional as it used to be") states a change, not a denial
_COMPARISON = re.compile(r"\bnot\s+(?:as|so)\b", re.IGNORECASE)
#: a negation in a condition or an idiom states no fact ("if it does not improve", "not only")
_NO_FACT = re.compile(r"\b(?:if|unless|whether|until|not only|or not)\b", re.IGNORECASE)


def predicate_negation_problems(sentence: Sentence, concept: set[str], premise_sentences: list[Sentence],
                                about: list[Sentence]) -> list[Finding]:
    """v10: a claim sentence whose "not" negates none of its content words ("She said that the pain
    was not all the time.") says its facts are otherwise than stated: where the note speaks of them
    (``about``, the note sentences sharing the most of its content words) the note must negate
    something. A note sentence that shares a content word with it and says what the "not" is said of,
    as written and with no negation ("the pain is there all the time"), contradicts it; when none of
    the sentences about its facts writes a negation, the claim's is its own: a ``denial`` finding.
    v11: nor when they write only denials of findings ("Knee pain, no swelling" for "the knee pain
    was not there all the time"): a "not" on a predicate is worded by a note's own "not", "never" or
    "no longer" (:data:`_NOTE_PREDICATE_NOT`). Both decide. A condition or idiom ("if it does not improve", "not only") is no
    statement (:data:`_NO_FACT`)."""
    if (not about or not _PREDICATE_NOT.search(sentence.text) or _NO_FACT.search(sentence.text)
            or _COMPARISON.search(sentence.text) or sentence.directions
            or any(w.status == Status.NEGATED for w in sentence.words)):
        return []
    # what the "not" is said of, as written ("all the time"): a note sentence about the claim's facts
    # that says it with no negation states what the claim denies
    said = _PREDICATE_NOT.split(sentence.text, maxsplit=1)[1]
    said = " ".join(re.split(r"[,;.:]", said, maxsplit=1)[0].lower().split())
    stating = next((s for s in premise_sentences if s.stems & concept and len(said.split()) >= 2
                    and _says_unnegated(" ".join(s.text.lower().split()), said)), None)
    if stating is not None:
        return [Finding(FindingKind.ASSERTION, f"note says \"{short(stating.text)}\" (affirmed), claim says not "
                        f"{said}", conflict=True)]
    if any(_NOTE_PREDICATE_NOT.search(s.text) for s in about):
        return []
    return [Finding(FindingKind.DENIAL, f"note does not write the claim's \"not\" (\"{short(about[0].text)}\")")]


#: v10: a family history denied ("negative family history of …", "no family history of …", "denies any
#: family history", "family history is negative") and one stated (:func:`family_history_problems`)
_FAMILY_HISTORY = re.compile(r"\bfamily (?:medical )?history\b", re.IGNORECASE)
_FAMILY_DENIED = re.compile(r"\b(?:no|negative|denies|denied|without|not)\b(?:\s+\w+){0,2}\s+family (?:medical )?history\b|"
                            r"\bfamily (?:medical )?history\b\W*(?:\w+\W+){0,2}(?:negative|none|noncontributory|"
                            r"non-contributory|unremarkable|unknown)\b", re.IGNORECASE)


def family_history_problems(sentence: Sentence, premise_sentences: list[Sentence]) -> list[Finding]:
    """v10: a claim that denies a family history ("He has a negative family history of gallbladder
    disease") against a note that states one and denies none: the note's family history is not
    negative, whatever it names (a ``denial`` finding, which decides). A note that denies any family
    history ("No family history of cancer") leaves the claim to the other rules."""
    if not _FAMILY_DENIED.search(sentence.text):
        return []
    histories = [s for s in premise_sentences if _FAMILY_HISTORY.search(s.text)]
    if not histories or any(_FAMILY_DENIED.search(s.text) or _ANY_NEGATION.search(s.text) for s in histories):
        return []
    return [Finding(FindingKind.DENIAL, f"note does not deny a family history (\"{short(histories[0].text)}\")")]


def _says_unnegated(text: str, said: str) -> bool:
    """Whether ``text`` says ``said`` with no negation in the three words before it."""
    at = text.find(said)
    return at >= 0 and not _ANY_NEGATION.search(" ".join(text[:at].split()[-3:]))


def _describe(status: Status) -> str:
    return {Status.NEGATED: "negated", Status.FAMILY: "about a family member", Status.HYPOTHETICAL: "hypothetical",
            Status.PLANNED: "only planned", Status.POSSIBLE: "only possible", Status.HISTORICAL: "as history",
            Status.AFFIRMED: "affirmed"}[status]


#: v15: a condition a claim states its fact under ("… is discussed if the symptoms do not improve",
#: "unless", "in case"): :func:`conditional`
_CONDITION = re.compile(r"\b(?:if|unless|in case)\b", re.IGNORECASE)


def conditional(claim: str) -> bool:
    """v15 (issue 46): whether a claim states its fact under a condition of its own. ConText's "if"
    reaches only forward, so the fact a condition governs from before it ("An MRI is discussed if
    the pain does not improve") reads as affirmed, and a note that writes the same fact under the
    same condition the other way round ("If her pain does not improve, I will order an MRI":
    hypothetical) contradicted it. In a conditional claim an affirmed word the note gives as
    hypothetical, possible or planned (:data:`_UNDER_CONDITION`) is no contradiction
    (:func:`assertion_problems`); one the note negates, or gives as a relative's, still is."""
    return bool(_CONDITION.search(claim))


#: v15: the statuses a note gives a fact that a conditional claim states affirmed (:func:`conditional`)
_UNDER_CONDITION = frozenset({Status.HYPOTHETICAL, Status.POSSIBLE, Status.PLANNED})


def assertion_problems(words: list[Word], index: dict, reports_result: bool = False,
                       located: frozenset[str] = frozenset(), conditional: bool = False) -> list[Finding]:
    """Claim words the premise gives only with an incompatible status (negated, a relative's, a
    planned test for a claim that reports its result: ``reports_result``, :func:`_compatible`).
    A negation is checked on its concept, not on every word in its scope: "no fracture on
    his knee x-ray" is the note's "x-rays did not reveal any fractures" (the knee and the x-ray
    are not negated there); it holds when one note sentence negates the first negated word, or
    half the negated words, of the claim."""
    claim_stems = {w.stem for w in words}
    # r15 (issue 46): a denial the note limits to a site of one side is no denial everywhere
    one_side = _denied_only_on_one_side(words, index, located)
    denied_stated: list[Finding] = []
    if _negation_holds(words, index, claim_stems):
        # v14: what the note names only as qualifying its denied finding ("No knee swelling.", "no pain
        # with walking") is not denied: a claim that denies the finding there names it unnegated ("His
        # knee is not swollen.", "She is walking without pain")
        denied = {w.stem for w in words if w.status == Status.NEGATED}
        words = [w for w in words if w.status != Status.NEGATED and not _qualifier_of_denial(w, index, denied)]
    else:
        denied_stated = _denial_stated_otherwise(words, index, located)
    denied_stated += one_side
    conflicts: dict[tuple[str, Status, Status, bool], list[str]] = {}
    shared: dict[int, int] = {}  # :func:`_shared` of each note sentence met, by its id (alive in ``index``)
    for word in words:
        occurrence = _conflicting_occurrence(word, index, claim_stems, reports_result, shared)
        if occurrence is not None:
            premise_word, sentence, about_claim = occurrence
            if conditional and word.status == Status.AFFIRMED and premise_word.status in _UNDER_CONDITION:
                continue  # v15: the claim's own condition governs its affirmed words (:func:`conditional`)
            conflicts.setdefault((sentence.text, premise_word.status, word.status, about_claim), []).append(word.text.lower())
    found = [_finding(text, premise_status, claim_status, list(dict.fromkeys(conflicting)), about_claim)
             for (text, premise_status, claim_status, about_claim), conflicting in conflicts.items()]
    return found + [f for f in denied_stated if all(f.text != other.text for other in found)]


#: Words that say a finding is gone: a note that states it with one does not contradict its denial
#: ("the chest pain has resolved" for "denies chest pain").
_GONE = frozenset("resolved resolving resolution gone cleared subsided stopped".split())


def _holds(sentence: Sentence, item: frozenset[str], conditions: frozenset[str]) -> bool:
    """Whether a note sentence states a denied item: the item and where it is, and half its other
    conditions ("with prolonged standing")."""
    return item <= sentence.stems and 2 * len(conditions & sentence.stems) >= len(conditions)


def _denial_stated_otherwise(words: list[Word], index: dict, located: frozenset[str] = frozenset()) -> list[Finding]:
    """v8: a claim that denies a finding the note states and never denies: "She denies drinking more
    coffee" against "She enjoys coffee", "no bruising on his right shoulder" against "right shoulder
    pain and bruising" (issue 46's generated negation flips). What the claim denies is its negated
    item's head (:attr:`Word.head`); when the note gives that word (affirmed, possible, planned, as
    history), never negated and not as gone, the claim's denial is its own: a contradiction where a
    note sentence holds the denied item and where it is (a site, side or position qualifying it) and the
    note states half its other conditions, in that sentence or another ("denies stomach pain with burning
    sensations" against "stomach pain" and, elsewhere, "a burning sensation"), else a ``denial`` finding,
    which decides too (``decision.DECISIVE``): for an item nothing qualifies ("denies fever"), and since
    v9 for a qualified one ("no ecchymosis over the lateral malleolus" against "There is associated
    ecchymosis") when half its conditions are in the note and no note sentence denies something where
    the item is (:func:`_denies_there`)."""
    # what an item must be stated with: its own words, and of the words that qualify it, where it is
    # (``located``: the claim's sites, sides and positions: "on his right shoulder", "of the lateral knee")
    items = {w.head: (w.concept | {w.head} | (w.phrase & located), w.phrase - w.concept - {w.head} - located,
                      w.qualified) for w in words
             if w.status == Status.NEGATED and not w.dependent and w.head}
    found = []
    for head, (phrase, conditions, qualified) in sorted(items.items()):
        stated = _stated_never_denied(index, head)
        if not stated:
            found += _denial_never_made(index, head, phrase | conditions) or _denied_only_as_part(words, index, head)
            continue
        holding = [(w, s) for w, s in stated if phrase <= s.stems]  # the item and where it is
        word, sentence = next(((w, s) for w, s in holding if _holds(s, phrase, conditions)),
                              (holding or stated)[0])
        # the note states the denied item where the claim denies it, and half its conditions anywhere
        # half its conditions, the head counted among them as stated (v8's reading, kept)
        half = 2 * (1 + sum(c in index for c in conditions)) >= len(conditions) + 1
        if holding and half:
            found.append(Finding(FindingKind.ASSERTION, f"note says \"{short(sentence.text)}\" "
                                 f"({_describe(word.status).removeprefix('only ')}), claim states {word.text.lower()} "
                                 "negated", conflict=True))
        elif not qualified or (half and not _denies_there(index, phrase - {head})):
            # it gives the finding, never denies it: the denial is the claim's alone
            found.append(Finding(FindingKind.DENIAL, f"note does not deny {word.text.lower()} (\"{short(sentence.text)}\")"))
    return found


def _denial_never_made(index: dict, head: str, item: frozenset[str]) -> list[Finding]:
    """v10: a denial the note never makes, of an item whose head it does not state as the patient's
    ("no pain behind the kneecaps" where the note never names the kneecaps; "not required to check
    his blood pressure"; "no symptoms similar to a cold" where only a relative's symptoms are named):
    when the note sentences holding the most of the item's other words (at least half of them) write no
    negation, normal finding or gone one and give those words as the patient's, and the note negates
    neither the head nor anything that shares half the item's words, the denial is the claim's alone
    (a ``denial`` finding, which decides). A head the note states in any form,
    negated or gone included, is read by :func:`_denial_stated_otherwise` as before."""
    said = [w for w, _ in index.get(head) or [] if w.stem == head]
    others = item - {head}
    if not others or any(w.status != Status.FAMILY for w in said):
        return []
    # each of the item's other words where the note gives it (an abbreviation for its expansion's words)
    occurrences = [(stem, w, s) for stem in sorted(others) for w, s in index.get(stem) or []]
    if any(w.status == Status.NEGATED and 2 * len(w.phrase & item) >= len(item) for _, w, _ in occurrences):
        return []  # the note denies something like the item, in its own words
    holding: dict[str, tuple[Sentence, set[str]]] = {}
    for stem, _, s in occurrences:
        holding.setdefault(s.text, (s, set()))[1].add(stem)
    best = max((len(stems) for _, stems in holding.values()), default=0)
    if 2 * best < len(others):
        return []
    closest = [s for s, stems in holding.values() if len(stems) == best]
    if not all(_states_plainly(s, others) for s in closest):
        return []
    return [Finding(FindingKind.DENIAL, f"note does not deny {', '.join(sorted(others))} (\"{short(closest[0].text)}\")")]


def _denied_only_on_one_side(words: list[Word], index: dict, located: frozenset[str] = frozenset()) -> list[Finding]:
    """r15 (issue 46): a claim that denies a finding with no site ("No edema.", "Denies any pain.")
    where the note denies it only in sentences that name a site of one side ("no swelling of the
    right knee", "Right knee: no effusion or swelling.", "denies left knee pain"). A denial the note
    limits to one side's body part says nothing of the rest of the body: the general denial is the
    claim's alone (a ``denial`` finding, which decides). The mirror holds as before: a claim that
    limits its denial to a site ("no swelling of the right knee") is what the note's general denial
    ("No swelling.") says (:func:`_covers`). It applies only where the claim names no site, side or
    position at all (``located``), the note states the finding nowhere (other rules read that), and
    every note sentence that denies it names a side with its body part: a note that denies it in a
    sentence with no side ("Extremities: no edema.", "no edema in the lower extremities") denies it
    as a whole."""
    if located:
        return []
    found = []
    heads = dict.fromkeys(w.head for w in words if w.status == Status.NEGATED and not w.dependent and w.head)
    for head in heads:
        said = [(w, s) for w, s in index.get(head) or [] if w.stem == head or w.head == head]
        denials = [(w, s) for w, s in said if w.status == Status.NEGATED and w.head == head]
        if not denials or len(denials) < len(said):
            continue  # the note never denies it, or states it somewhere (other rules read both)
        sides = [_one_side_of(w, s) for w, s in denials]
        side = sides[0]
        if side is None or None in sides:
            continue
        sentence = denials[0][1]
        found.append(Finding(FindingKind.DENIAL, f"note denies {_item_text(sentence, denials[0][0])} only of the "
                             f"{side.phrase.lower()} (\"{short(sentence.text)}\"), claim denies it with no site"))
    return found


def _one_side_of(word: Word, sentence: Sentence) -> Side | None:
    """The side of one body part that a negated note word's item itself names ("swelling of the right
    knee", "left knee pain": the knee is in the item), ``None`` when its item names none."""
    return next((side for side in sentence.sides if side.side in ("left", "right") and side.head is not None
                 and side.head in word.phrase and side.head != word.head), None)


def _denied_only_as_part(words: list[Word], index: dict, head: str) -> list[Finding]:
    """v14: a claim that denies what the note denies only as a part of another finding: "She has no
    maxillary sinuses" against "No frontal or maxillary sinus tenderness", "denies exertion" against
    "Negative for chest pain on exertion". The note's negation is bound to its item's head (the
    tenderness, the pain: :attr:`Word.head`); a word that only qualifies it (:func:`_qualifies`) is not
    denied. When every note occurrence of the claim's negated head qualifies another head so, the
    claim's whole negated item lies within that item, and the claim names that head nowhere, the denial
    is the claim's alone (a ``denial`` finding, which decides). A claim that denies the note's head ("no
    tenderness over the sinuses") is read as before (docs/design.md, "Judging real notes")."""
    said = [(w, s) for w, s in index.get(head) or [] if w.stem == head]
    claim_stems = {w.stem for w in words}
    item = [w for w in words if w.status == Status.NEGATED and w.head == head]
    phrase = frozenset().union(*(w.phrase for w in item)) if item else frozenset({head})
    if not said or not all(_qualifies_another(w, s, head, phrase, claim_stems) for w, s in said):
        return []
    word, sentence = said[0]
    named = next((w.text.lower() for w in sentence.words if w.phrase == word.phrase and w.stem == word.head), word.head)
    return [Finding(FindingKind.DENIAL, f"note denies \"{_item_text(sentence, word)}\", not \"{_item_text(None, *item)}\": "
                    f"{word.text.lower()} there only qualifies {named}")]


def _qualifies_another(word: Word, sentence: Sentence, head: str, phrase: frozenset[str], claim_stems: set[str]) -> bool:
    """Whether a note word (the claim's negated ``head``) is negated only as what qualifies another
    head, one naming a thing the claim never names, in an item holding the claim's whole ``phrase``."""
    return (word.status == Status.NEGATED and word.head in word.concept and word.head != head
            and word.head not in claim_stems and phrase <= word.phrase and _qualifies(word, sentence))


def _qualifies(word: Word, sentence: Sentence) -> bool:
    """Whether a negated note word only qualifies its item's head: it comes after the head, joined by
    "on", "with", "to" … ("chest pain on exertion": :attr:`Word.dependent`), or it is the body site
    written right before it ("maxillary sinus tenderness", "knee swelling"); a symptom written before
    another with no comma ("no fever chills") is a list, not a qualifier. A word written before such a
    site qualifies the head as well (the maxillary of "maxillary sinus tenderness")."""
    if word.dependent:
        return True
    item = sorted((w for w in sentence.words if w.status == Status.NEGATED and w.phrase == word.phrase),
                  key=lambda w: w.position)
    heads = [w.position for w in item if w.stem == word.head and w.position > word.position]
    if not heads:
        return False
    chain = [w for w in item if word.position <= w.position < heads[0]]
    contiguous = [w.position for w in chain] == list(range(word.position, heads[0]))
    return contiguous and any(_names_site(w, sentence) for w in chain)


def _names_site(word: Word, sentence: Sentence) -> bool:
    """Whether a note word is one of the body sites its sentence names (:attr:`Sentence.sites`, by
    lemma: "sinuses" is the sinus) or an adjective of a site ("cervical", "abdominal")."""
    lower = word.text.lower()
    forms = {lower, word.stem, lower.removesuffix("s"), lower.removesuffix("es")}
    return bool(forms & sentence.sites) or site_name(lower, lower) is not None


def _qualifier_of_denial(word: Word, index: dict, denied: set[str]) -> bool:
    """v14: whether the note negates ``word`` only as what qualifies a head the claim denies too
    (:func:`_qualifies`): "knee" of "No knee swelling." for "His knee is not swollen."."""
    said = [(w, s) for w, s in index.get(word.stem) or [] if w.stem == word.stem and w.status == Status.NEGATED]
    return bool(said) and all(w.head in denied and w.head != w.stem and _qualifies(w, s) for w, s in said)


def _item_text(sentence: Sentence | None, *words: Word) -> str:
    """A negated item as written: its words in order, "…" where words between them are left out
    ("chest pain … exertion"). With ``sentence``, the whole item of its one word."""
    if sentence is not None:
        words = tuple(w for w in sentence.words if w.status == Status.NEGATED and w.phrase == words[0].phrase)
    text, last = "", None
    for w in sorted(words, key=lambda w: w.position):
        text += ("" if last is None else " " if w.position == last + 1 else " … ") + w.text.lower()
        last = w.position
    return text


def _states_plainly(sentence: Sentence, stems: frozenset[str]) -> bool:
    """Whether a note sentence states ``stems`` as the patient's, writing no negation, normal finding or
    gone one ("x-rays of the right knee are normal" may be the note's "no abnormalities on the knee
    x-rays")."""
    if _ANY_NEGATION.search(sentence.text) or _NORMAL.search(sentence.text) or _said_gone(sentence):
        return False
    return not any(w.status in (Status.NEGATED, Status.FAMILY, Status.HYPOTHETICAL) for w in sentence.words
                   if w.stem in stems)


def _said_gone(sentence: Sentence) -> bool:
    return bool({x.text.lower() for x in sentence.words} & _GONE)


def _denies_there(index: dict, where: frozenset[str]) -> bool:
    """Whether a note sentence denies something where the claim's qualified denial is (half the
    item's other words negated with it): "denies tenderness to palpation of the right lateral
    ligament" may be the note's wording of "no pain with palpation of the right lateral knee"."""
    negated = {frozenset(w.phrase) for found in map(index.get, where) for w, _ in (found or [])
               if w.status == Status.NEGATED}
    return any(2 * len(phrase & where) >= len(where) for phrase in negated)


def _stated_never_denied(index: dict, head: str) -> list[tuple[Word, Sentence]]:
    """Where the note gives ``head`` itself (no expansion) as present, not as gone, a relative's or a
    hypothesis, provided it never negates it anywhere; empty otherwise."""
    said = [(w, s) for w, s in index.get(head) or [] if w.stem == head]
    if not said or any(w.status == Status.NEGATED for w, _ in said):
        return []
    return [(w, s) for w, s in said if not {x.text.lower() for x in s.words} & _GONE
            and w.status not in (Status.FAMILY, Status.HYPOTHETICAL) and not dated_past(s)]


def _finding(text: str, premise_status: Status, claim_status: Status, words: list[str], about_claim: bool) -> Finding:
    """A contradiction where the note speaks of the claim's concept (it decides); else the words the
    note states only where it speaks of something else, said without naming a contradiction (the
    decision model weighs it: a supported verdict may print it, docs/design.md §7)."""
    if about_claim:
        return Finding(FindingKind.ASSERTION, f"note says \"{short(text)}\" ({_describe(premise_status)}), claim "
                       f"states {', '.join(words)} {_describe(claim_status)}", conflict=True)
    return Finding(FindingKind.ASSERTION, f"{', '.join(words)}: stated {_describe(premise_status).removeprefix('only ')} "
                   f"only where the note speaks of something else (\"{short(text)}\")")


def _negation_holds(words: list[Word], index: dict, claim_stems: set[str]) -> bool:
    """Whether the claim's negation holds where the note speaks of the negated concept most closely:
    "denies numbness in his right foot" is not supported by "no numbness in the hands" when the
    note says "reports numbness … in his right foot"."""
    negated = [w for w in words if w.status == Status.NEGATED]
    if not negated:
        return False
    about = [sentence for found in map(index.get, {w.stem for w in negated}) for _, sentence in (found or [])]
    best = max((len(sentence.stems & claim_stems) for sentence in about), default=0)
    return any(_negates(sentence, negated, claim_stems) for sentence in about if len(sentence.stems & claim_stems) == best)


def _conflicting_occurrence(word: Word, index: dict, claim_stems: set[str], reports_result: bool,
                            shared: dict[int, int] | None = None) -> tuple[Word, Sentence, bool] | None:
    """The premise occurrence whose status conflicts with ``word``'s, read where the note speaks of
    the claim's concept, and whether that sentence is about the claim (v7: only then is the other
    status a contradiction; a word the note gives only in a sentence about something else, "I do
    not expect to see anything significant on x-ray" for "pressing caused significant pain", is not
    stated as the claim states it, and the decision model weighs that); ``None`` when none
    conflicts. ``shared``: :func:`_shared`'s counts for this claim, by sentence id, kept across
    its words (a claim's words meet the same note sentences again: issue 49)."""
    if word.dependent:
        return None  # "no problems with the knee" says nothing of the knee's status
    if word.text.lower() in ("controlled", "control"):
        return None  # its negation is a direction ("not well controlled" = "poorly controlled"): near_misses
    # v8: a word the note negates only as part of another concept is no statement of the word: the
    # heart of "no extra heart sounds", the palpation of "no tenderness to palpation"
    every = index.get(word.stem, [])
    found = [(w, s) for w, s in every if not _negated_elsewhere(w, word, claim_stems, s)]
    if not found:
        # the note negates the word only within other concepts: not stated as the claim states it,
        # and no contradiction either (weighed: status_elsewhere); v10: unless the word is all the
        # claim states ("He reports fever." against "without any pain or fever episodes"): a finding
        # the note names only inside its denials is denied, whatever its denial's item names
        return (*every[0], claim_stems == {word.stem}) if every else None
    # the word's status where the note speaks of the claim's concept: the occurrences in
    # the sentences with the most claim keys ("reports numbness in his right foot" against
    # "denies numbness … in his right foot", whatever numbness the note affirms elsewhere)
    common = _shared_counts([sentence for _, sentence in found], claim_stems, {} if shared is None else shared)
    best = max(common)
    closest = [(w, sentence) for (w, sentence), n in zip(found, common) if n == best]
    if word.status == Status.NEGATED:
        closest = _stated_against_negation(word, closest, claim_stems)
        # v8: what is left states the very concept the claim denies ("She has a fever." for "no
        # fever today"): a contradiction, however few other words the sentence shares
        return (*closest[0], True) if closest else None
    if any(_compatible(word.status, w.status, reports_result) for w, _ in closest):
        return None
    # v8: a negation left (_negated_elsewhere) denies exactly the claim's concept ("No rubs." for
    # "her cardiac exam reveals rubs"): on the claim's concept however short the sentence
    about_claim = best >= min(2, len(claim_stems)) or any(w.status == Status.NEGATED for w, _ in closest)
    if not about_claim and any(_compatible(word.status, w.status, reports_result) for w, _ in found):
        return None
    return (*closest[0], about_claim)


#: v10: the shortest claim stem read as the last part of a compound note word (:func:`_shared`)
COMPOUND_PART = 5


def _shared_counts(sentences: list[Sentence], claim_stems: set[str], memo: dict[int, int]) -> list[int]:
    """:func:`_shared` of each sentence, read from ``memo`` (by sentence id, for one claim) when counted before."""
    counts = []
    for sentence in sentences:
        count = memo.get(id(sentence))
        if count is None:
            count = memo[id(sentence)] = _shared(sentence, claim_stems)
        counts.append(count)
    return counts


def _shared(sentence: Sentence, claim_stems: set[str]) -> int:
    """How many claim stems a note sentence holds, a stem counted also as the last part of a compound
    word ("urinary" of "Genitourinary: Denies bladder issues.", "intestinal" of "gastrointestinal"): where
    the note speaks of "urinary issues" (v10)."""
    stems = sentence.stems
    held = len(stems & claim_stems)
    unheld = [c for c in claim_stems - stems if len(c) >= COMPOUND_PART]
    if not unheld:
        return held
    longer = [s for s in stems if len(s) > COMPOUND_PART]  # a stem a part ends can only be longer than the part
    return held + sum(1 for c in unheld if any(len(s) > len(c) and s.endswith(c) for s in longer))


def _negated_elsewhere(premise_word: Word, claim_word: Word, claim_stems: set[str], sentence: Sentence) -> bool:
    """Whether the note negates ``premise_word`` only as a part of another concept than the claim's:
    a word that qualifies the negated item (:attr:`Word.dependent`), or one of an item that holds
    words the claim does not use and names something the claim does not (:attr:`Word.head`: the heart
    of "no extra heart sounds" for "her heart is regular"); v15, an *other* one (:func:`_denies_others`).
    A claim that negates the word too reads the note's negation as before (:func:`_stated_against_negation`)."""
    if premise_word.status != Status.NEGATED or claim_word.status == Status.NEGATED:
        return False
    if premise_word.dependent or _denies_others(premise_word, sentence):
        return True
    # the item names another concept: it holds words the claim does not use, and its last word, what
    # it names, is not the claim's ("no extra heart sounds" names sounds; "denies Cetaphil lotion" lotion)
    return not premise_word.concept <= claim_stems and premise_word.head not in claim_stems


def _denies_others(premise_word: Word, sentence: Sentence) -> bool:
    """v15 (issue 46): whether the note negates ``premise_word`` only as an *other* one ("She denies
    any other joint pain", "no other signs of infection", "to rule out any other injuries"): a denial
    of others than the one the note speaks of, which presupposes it, so no contradiction of a claim
    that states it ("presents for joint pain"). A claim that denies the word reads the note's
    negation as before (:func:`_negated_elsewhere`)."""
    return re.search(rf"\bother\s+(?:[\w-]+\s+){{0,3}}{re.escape(premise_word.text)}\b", sentence.text,
                     re.IGNORECASE) is not None


def _stated_against_negation(word: Word, closest: list[tuple[Word, Sentence]],
                             claim_stems: set[str]) -> list[tuple[Word, Sentence]]:
    """The occurrences that contradict a negated claim word. A narrower negation ("denies left knee
    pain" for "denies any pain") neither supports the claim nor contradicts it (none); a stated
    finding contradicts the claim's negation only when it is the claim's whole negated concept:
    "heart sounds are regular" says nothing of "no extra heart sounds"."""
    if any(_covers(w, claim_stems) for w, _ in closest):
        return []
    return [(w, sentence) for w, sentence in closest
            if w.status != Status.NEGATED and (word.phrase or {word.stem}) <= sentence.stems and not dated_past(sentence)]


#: v15: a time that dates what a sentence tells months or years back ("two years ago", "six months
#: prior"), and a word that brings it to the present ("now", "again", "still", "unchanged"): :func:`dated_past`
_LONG_AGO = re.compile(r"\b(?:months?|years?|decades?)\s+(?:ago|prior|before|earlier)\b", re.IGNORECASE)
_NOW = re.compile(r"\b(?:now|today|currently|current|again|still|since|ongoing|recurr\w*|persist\w*|continu\w*|"
                  r"unchanged|stable|same)\b", re.IGNORECASE)


def dated_past(sentence: Sentence) -> bool:
    """v15 (issue 46): whether a note sentence tells of a past episode only: it dates what it says
    months or years back ("She had chest pain two years ago") and nothing in it brings that to the
    present ("now", "again", "still", "since", "unchanged" …). A claim's current denial ("Denies chest pain") is
    not contradicted by it, as it is not by a finding gone (:data:`_GONE`); a recent time ("two days
    ago") is part of the present illness and still is."""
    return bool(_LONG_AGO.search(sentence.text)) and not _NOW.search(sentence.text)
