"""Rule 10 of ``clinical-rules`` (v12), **what kind of statement a claim makes**: a claim can use
every word of the note and still state another kind of fact about it — a new start where the note
goes on with a drug, a plan where the note says what was done, a test's result where the note only
orders the test, a hedge the other way round. Each decides "not supported", quoting both texts'
words (docs/design.md §4, "Judging real notes"; docs/changelog.md, v12 "What kind of statement").

* **A start where the note goes on (and the reverse).** A claim that a drug or treatment was
  started ("He was started on metformin", "lisinopril was initiated", "newly prescribed") states a
  new start, which the labelling rule counts as timing ("newly", ``doclens/datasets/real_outputs/
  DATASHEET.md``): where every note sentence naming the drug says it goes on ("Continue
  metformin", "He takes metformin") and none starts it, the claim is contradicted (``direction``).
  A claim that the patient takes or is on a drug ("He takes lisinopril") where every note sentence
  naming it starts or prescribes it ("We will start lisinopril") is contradicted the same way. v13
  (issue 46): "is currently taking" (an adverb between) is such a claim, a start the claim plans now
  ("will start", "we will prescribe") is a start, and a note's restart or "resume" is one.
* **A state read as a plan.** A claim that plans or goes on with something ("continue Tylenol", "she
  will take Tylenol", "will continue to check her blood pressure") is supported only where a note
  sentence holding the thing gives it as a plan (an advising, ordering or continuing word, "as
  needed", a plan heading); a note that only says it was done before ("She took Tylenol yesterday",
  "tried", "… ago") does not plan it (``addition``). A present habit ("he checks his blood pressure
  weekly") is no past: the labellers read "will continue" as supported by one. A
  test the claim orders or plans ("will obtain a repeat echo") where every note sentence naming it
  gives its result and plans nothing ("Echo showed a reduced ejection fraction") is one too.
* **A result where the note only orders the test.** A claim that gives a test's result ("Lipid
  panel: elevated cholesterol", "the x-ray revealed no fracture") is not supported where every note
  sentence naming the test orders, plans or schedules it and none gives a result (``addition``).
* **A hedge reversed.** A claim that a diagnosis is unlikely or excluded ("less likely", "unlikely",
  "ruled out", "doubt") where every hedged note sentence about it leans towards it ("consistent
  with", "concern for", "likely", "suspicious for"), or the reverse, is contradicted
  (``assertion``); so is a hedge against a diagnosis that every note sentence about it states
  outright, with no word of doubt or denial ("Assessment: Acute bronchitis.").
* **A current regimen against a planned change, and the reverse** (v14, issue 46). A claim that the
  patient takes or is on a drug at a dose ("He takes lisinopril 20 mg") where every note sentence
  giving the drug that dose gives it as the dose of a change the note plans ("increase his
  lisinopril to 20 mg", "titrate …", "switch from X to Y", "change X to …"): the note's dose is the
  new one (or it cannot tell which), so the current dose is not the note's (``direction``). A dose
  after "from" ("increase from 10 mg to 20 mg"), or written before the change ("takes X 10 mg; we
  will increase it"), or in a change already made ("was increased to 20 mg") is the current one.
  The reverse: a claim that plans a change the direction words do not hold ("titrate", "switch",
  "change", "adjust" X, X among the four words after) where the note goes on with X ("Continue X 5
  mg"), no sentence naming it changes, starts or stops it and the note never uses the claim's word;
  a negated change ("no change to", "not going to change") or a noun ("a change in") is none.
* **Adherence the note does not state** (v14, issue 46). A claim that the patient missed doses of,
  ran out of, skipped, forgot, stopped taking, is not taking or is noncompliant with a drug, where
  the note names the drug and no note sentence about it (or about no other drug: "she ran out of
  it") states anything of the kind (``addition``). "Not taking her blood pressure readings" is about
  a measurement: only a drug among the four words after counts (two after "off").
* **Adherence or control said where the note says neither** (v16, issue 46). A claim that the
  patient takes something as prescribed ("she has been compliant with her medication", "reports
  adherence to her diet", "is taking it as directed") is a fact of its own: a note that only lists,
  plans or prescribes the drug ("Continue metoprolol", "we will start losartan") does not state it.
  The claim is supported only where some note sentence states adherence in any words, or that the
  patient goes on taking, using or following something ("he continues to take his metformin", "is
  still taking Keppra", "follows a low-salt diet"), which readers take for it; being "on" a drug
  says it is prescribed, not taken (``addition`` otherwise). Advice or a valuation of adherence ("continue taking it as
  prescribed", "the importance of adherence", "adherence is essential") claims none. Likewise a
  claim that a condition is well controlled ("her asthma is well controlled", "under control",
  "doing well with regard to her heart failure") where the note calls nothing well controlled and
  its sentences about the condition say nothing of how it is: no control, course or level word, no
  reading, no word of how it fares ("stable", "no recent issues", "not a problem") (``addition``);
  a good control as an aim or a possibility ("to get her sugars under control", "can be controlled")
  is none, and a note that calls the condition poorly controlled is rule 7's contradiction.
* **A refill or prescription the note does not write** (v17, issue 46). A claim that a drug is
  refilled or renewed, or that a prescription for it is written, sent or given ("a refill of Keppra
  was ordered", "I provided a prescription for tacrolimus") states an act of the visit: where the
  note names the drug and says only that it is taken or gone on with ("Continue Keppra 500 mg twice
  a day", "she uses tacrolimus"), with no sentence naming it that refills, prescribes, starts or adds
  it and none that refills or prescribes drugs unnamed ("Refills were sent"), it is an absence
  (``addition``). v17 also reads a test's order against the note's sentences that name the test word
  as well as the word before it ("right elbow x-ray", not every sentence of the elbow), a result after
  the test's name and a colon ("Right elbow x-ray: no fracture") as a result, and a claim that the
  test "was reviewed" as saying it was done.
"""

from __future__ import annotations

import re
from functools import partial

from doclens.evaluators.rules.analysis import Analyser
from doclens.evaluators.rules.findings import Finding, FindingKind, short
from doclens.evaluators.rules.lexicons import Axis
from doclens.evaluators.rules.near_misses import sentences_about
from doclens.evaluators.rules.sentences import Sentence, Status
from doclens.evaluators.rules.words import DOSE_UNITS, is_content, is_number, number_value, unit_after

_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]*")
#: Treatments other than a named drug that are started or gone on with.
TREATMENTS = frozenset("""therapy medication medications medicine medicines treatment inhaler brace splint injection
injections supplement supplements regimen""".split())

# --- (a) a start where the note goes on ------------------------------------------------------------------
#: A claim that something was started: a past start, in the passive or with a subject ("was started on",
#: "we initiated", "newly prescribed", "started taking").
CLAIM_STARTED = re.compile(
    r"\b(?:was|were|been|being|got|get|gets)\s+(?:\w+ly\s+)?(?:started|initiated|begun|placed|put)\b"
    r"|\b(?:we|i|they|he|she|doctor|physician)\s+(?:\w+ly\s+)?(?:started|initiated|began)\b"
    r"|\bnew(?:ly)?\s+(?:started|initiated|prescribed|prescription)\b"
    r"|\b(?:started|initiated|began)\s+(?:taking|using|on)\b"
    # v13: a start planned now ("will start", "we will prescribe", "plan to initiate", "will be started on")
    r"|\b(?:will|to|plans?\s+to|going\s+to)\s+(?:\w+ly\s+)?(?:be\s+)?(?:start|started|initiate|initiated|begin|"
    r"prescribe|prescribed)\b", re.IGNORECASE)
#: A claim that the patient takes or is on something now ("He takes lisinopril", "is currently on";
#: v13: an adverb between, "is currently taking", "currently takes").
CLAIM_TAKES = re.compile(r"\b(?:takes|(?:is|has been|are|have been)\s+(?:\w+ly\s+)?(?:taking|using|on)|uses|"
                         r"remains on|still on|currently (?:on|takes|uses|taking|using))\b", re.IGNORECASE)
#: How a note starts a drug (a present or future start, a prescription; v13: a restart, "resume") and
#: how it goes on with one.
NOTE_STARTS = re.compile(r"\b(?:start\w*|restart\w*|resum\w*|initiat\w*|begin\w*|began|begun|new|newly|prescrib\w*|"
                         r"placed on|put on)\b", re.IGNORECASE)
NOTE_GOES_ON = re.compile(r"\b(?:continu\w*|takes|taking|took|currently|current|still|remains?|uses|using|"
                          r"(?:is|was|been) on|refill\w*|home medications?|medications? include)\b", re.IGNORECASE)

# --- (b) a state read as a plan -----------------------------------------------------------------------
#: A claim that plans or goes on with something: "continue X", "will take X", "should continue to check".
CLAIM_PLANS = re.compile(
    r"(?:^|[:;.]\s*|\b(?:will|should|to|can|may|must|plans? to|going to|advised to|instructed to)\s+)"
    r"(?:\w+ly\s+)?(?:continue|keep)\s+(?:on\s+|with\s+|to\s+|taking\s+|using\s+)?"
    r"|\b(?:will|should|plans? to|going to)\s+(?:\w+ly\s+)?(?:take|use)\s+", re.IGNORECASE)
#: What makes a note's sentence a plan for what it holds: a continuing, advising or ordering word, "as
#: needed", a plan heading.
NOTE_PLANS = re.compile(r"\b(?:continu\w*|will|should|recommend\w*|advis\w*|encourag\w*|instruct\w*|plan\w*|"
                        r"prescrib\w*|start\w*|can|may|as needed|prn|refill\w*|increase|decrease|resume|keep|"
                        r"treatment|order\w*|schedul\w*|try|consider|need\w*|must|going to|want\w*|discuss\w*|"
                        r"agree\w*|goal)\b", re.IGNORECASE)

#: What says a thing was done before (b's note side), and what says it goes on.
DONE_BEFORE = re.compile(r"\b(?:took|used|tried|given|received|applied|wore|had|did|completed|finished|ago|yesterday|"
                         r"last|previously|prior|in the past|earlier|once)\b", re.IGNORECASE)
GOING_ON = re.compile(r"\b(?:takes|taking|uses|using|currently|still|continu\w*|has been|have been|daily|every|each|"
                      r"nightly|weekly|routinely|regularly|is on|remains)\b", re.IGNORECASE)

# --- (c) a result where the note only orders the test ------------------------------------------------------
#: Tests whose result a claim can state.
TESTS = frozenset("""x-ray x-rays xray xrays radiograph radiographs mri ct scan ultrasound echo echocardiogram ekg ecg
labs lab panel profile a1c hemoglobin culture biopsy urinalysis cbc bmp cmp swab imaging test tests bloodwork
mammogram colonoscopy""".split())
#: Words before a test that do not name it ("repeat echo", "her x-ray").
_NOT_NAMING = frozenset("repeat new another further follow-up initial baseline additional recent prior previous".split())
#: What a claim writes of a test's result.
RESULTS = re.compile(r"\b(?:show\w*|reveal\w*|demonstrat\w*|normal|abnormal|unremarkable|negative|positive|"
                     r"elevated|high|low|decreased|increased|within normal limits|wnl|confirm\w*|found|"
                     r"significant for|notable for|consistent with|no evidence)\b", re.IGNORECASE)
#: How a note writes that a result is known, besides :data:`RESULTS` ("reviewing the radiographic findings").
NOTE_RESULTS = re.compile(r"\b(?:review\w*|findings?|results?|read|interpret\w*|came back|returned)\b", re.IGNORECASE)
#: How a note plans a test rather than reports it.
TEST_PLANNED = re.compile(r"\b(?:order\w*|will|plan\w*|obtain|get|getting|schedul\w*|recommend\w*|check|draw|send|"
                          r"refer\w*|consider\w*|repeat|pending|to be|would like|going to|request\w*)\b",
                          re.IGNORECASE)

# --- (d) a hedge reversed ----------------------------------------------------------------------------
#: A hedge against a diagnosis (-1) and one towards it (+1).
HEDGE_AGAINST = re.compile(r"\b(?:less likely|unlikely|not likely|ruled out|doubt\w*|low suspicion|"
                           r"not consistent with|not suggestive of|not concerning for|excluded)\b", re.IGNORECASE)
HEDGE_TOWARDS = re.compile(r"\b(?:(?<!less )(?<!not )likely|consistent with|concern\w* (?:for|of)|suspicious (?:for|of)|"
                           r"suspect\w*|suggestive of|compatible with|probabl[ey]|indicative of|high suspicion)\b",
                           re.IGNORECASE)
#: Any word of doubt or denial in a note sentence (:func:`_states_outright`).
_DOUBT = re.compile(r"\b(?:no|not|never|denies|denied|without|negative|possible|possibly|may|might|could|likely|"
                    r"unlikely|probabl[ey]|suspect\w*|suspicious|concern\w*|consistent|rule out|ruled out|versus|vs|"
                    r"differential|if|whether|question\w*|doubt\w*|less|r/o)\b|\?", re.IGNORECASE)
#: Words of a hedge that name nothing hedged.
_HEDGE_WORDS = frozenset("""likely unlikely less consistent concern concerning concerned suspicious suspect suspected
suspicion ruled rule doubt doubtful excluded suggestive compatible probable probably indicative symptoms symptom
findings finding presentation picture this it low high""".split())


def statement_problems(analyser: Analyser, claim_sentences: list[Sentence],
                       premise_sentences: list[Sentence]) -> list[Finding]:
    """Rule 10's findings (module docstring); each decides (``decision.DECISIVE``)."""
    problems: list[Finding] = []
    for sentence in claim_sentences:
        problems += _start_problems(analyser, sentence, premise_sentences)
        problems += _plan_problems(analyser, sentence, premise_sentences)
        problems += _result_problems(analyser, sentence, premise_sentences)
        problems += _hedge_problems(analyser, sentence, premise_sentences)
        problems += _change_problems(analyser, sentence, premise_sentences)
        problems += _adherence_problems(analyser, sentence, premise_sentences)
        problems += _unstated_status_problems(analyser, sentence, premise_sentences)
        problems += _renewal_problems(analyser, sentence, premise_sentences)
    return problems


def _stems(analyser: Analyser, text: str) -> list[str]:
    return [analyser.normal(w) for w in _WORD.findall(text.lower()) if is_content(w)]


def _treated(analyser: Analyser, sentence: Sentence) -> list[tuple[str, str]]:
    """The drugs and treatments a sentence names: (key, as written)."""
    return list(dict.fromkeys((analyser.normal(w), w) for w in _WORD.findall(sentence.text)
                              if analyser.is_drug(w.lower()) or w.lower() in TREATMENTS))


def _naming(premise_sentences: list[Sentence], key: str) -> list[Sentence]:
    return [s for s in premise_sentences if key in s.stems or any(r.drug == key for r in s.regimens)]


def _start_problems(analyser: Analyser, sentence: Sentence, premise_sentences: list[Sentence]) -> list[Finding]:
    """(a): a start the note never makes where it goes on with the drug, and the reverse."""
    started, takes = CLAIM_STARTED.search(sentence.text), CLAIM_TAKES.search(sentence.text)
    if not started and not takes:
        return []
    problems = []
    for key, written in _treated(analyser, sentence):
        naming = _naming(premise_sentences, key)
        goes_on = [s for s in naming if NOTE_GOES_ON.search(s.text)]
        starts = [s for s in naming if NOTE_STARTS.search(s.text)]
        claimed = started or takes
        assert claimed is not None
        if started and goes_on and not starts:
            note = goes_on[0]
        elif takes and not started and starts and not goes_on:
            note = starts[0]
        else:
            continue
        problems.append(Finding(FindingKind.DIRECTION, f"note says \"{short(note.text, 70)}\", claim says "
                                f"\"{_span(sentence.text, claimed, written)}\"", conflict=True))
    return problems


def _span(text: str, cue: re.Match, written: str) -> str:
    """The claim's words from its cue to the drug it names ("started on amlodipine", "Atorvastatin 40 mg
    nightly was initiated"), or the two apart when they stand far from each other."""
    lower, word = text.lower(), written.lower()
    at = lower.find(word, cue.start())
    at = at if at >= 0 else lower.rfind(word, 0, cue.start())
    start, end = min(cue.start(), at), max(cue.end(), at + len(written))
    if at < 0 or end - start > 60:
        return f"{' '.join(cue.group(0).split())} {written}"
    return " ".join(text[start:end].split())


def _plan_problems(analyser: Analyser, sentence: Sentence, premise_sentences: list[Sentence]) -> list[Finding]:
    """(b): a plan or going on that the note never plans, where it says the thing was or is done."""
    problems = []
    for match in CLAIM_PLANS.finditer(sentence.text):
        rest = re.split(r"[,;:.]|\b(?:and|but|for|as|to|because|which|until|if)\b", sentence.text[match.end():],
                        maxsplit=1, flags=re.IGNORECASE)[0]
        thing = [s for s in _stems(analyser, rest) if s in sentence.stems][:3]
        if not thing:
            continue
        holding = [s for s in premise_sentences if thing[0] in s.stems and 2 * len(set(thing) & s.stems) >= len(thing)]
        if holding and not any(NOTE_PLANS.search(s.text) or not _done_before(s.text) for s in holding):
            problems.append(Finding(FindingKind.ADDITION, f"claim plans \"{short(rest.strip(), 40)}\", which the note "
                                    f"has only as done (\"{short(holding[0].text, 70)}\"), never as a plan"))
    return problems


def _done_before(text: str) -> bool:
    """Whether a note sentence says something was done before, and not that it goes on ("She took
    Tylenol yesterday", not "She takes Norvasc daily")."""
    return bool(DONE_BEFORE.search(text)) and not GOING_ON.search(text)


def _result_problems(analyser: Analyser, sentence: Sentence, premise_sentences: list[Sentence]) -> list[Finding]:
    """(c): a test's result where every note sentence naming the test only orders or plans it; and (b)
    for a test: an order or plan where every note sentence naming it gives its result and none plans it."""
    lowers = _WORD.findall(sentence.text.lower())
    tests = [i for i, w in enumerate(lowers) if w in TESTS]
    if not tests:
        return []
    at = tests[0]
    named, keys, test, holding = _test_named(analyser, lowers, at, premise_sentences)
    if not holding:
        return []
    planned = TEST_PLANNED.search(sentence.text)
    # v17: a claim that the test was reviewed ("The MRI of the lumbar spine was reviewed") says it is done
    result = RESULTS.search(sentence.text) or NOTE_RESULTS.search(sentence.text)
    if not planned and result and all(_only_planned(s, keys, analyser) for s in holding):
        return [Finding(FindingKind.ADDITION, f"note only orders or plans the {' '.join(named)} "
                        f"(\"{short(holding[0].text, 70)}\"), claim gives its result (\"{result.group(0)}\")")]
    if planned and not result and all(_only_reported(s, test, analyser) for s in holding):
        said = _span(sentence.text, planned, lowers[at])
        return [Finding(FindingKind.ADDITION, f"claim plans the {' '.join(named)} (\"{said}\"), which the note has "
                        f"only as done (\"{short(holding[0].text, 70)}\"), never as a plan")]
    return []


def _test_named(analyser: Analyser, lowers: list[str], at: int,
                premise_sentences: list[Sentence]) -> tuple[list[str], set[str], set[str], list[Sentence]]:
    """The test at ``at`` as named (the test word and the content word before it: "lipid panel",
    "chest x-ray"), the keys of its first word and of the test word, and the note's sentences that
    name both (v17, issue 46: not every sentence of the body site, "right elbow x-ray": the exam's
    "elbow" sentences name no test)."""
    named = [w for w in lowers[max(at - 1, 0): at + 1] if is_content(w) and w not in _NOT_NAMING] or [lowers[at]]
    keys, test = _keys(analyser, named[0]), _keys(analyser, lowers[at])
    return named, keys, test, [s for s in premise_sentences if keys & s.stems and test & s.stems]


def _keys(analyser: Analyser, word: str) -> set[str]:
    """A test word's keys ("x-ray" is read "xray")."""
    return {analyser.normal(word), analyser.normal(word.replace("-", ""))}


def _only_reported(sentence: Sentence, test: set[str], analyser: Analyser) -> bool:
    """Whether a note sentence gives a test's result and plans nothing ("Echo showed a reduced ejection
    fraction"; v17: "the x-ray was reviewed", or the result after the test's name and a colon, "Right
    elbow x-ray: no fracture")."""
    text = sentence.text
    headed = any(_keys(analyser, w.group(0)) & test and re.match(r"\s*:\s*\w", text[w.end():])
                 for w in _WORD.finditer(text))
    return bool(RESULTS.search(text) or NOTE_RESULTS.search(text) or headed) and not (
        TEST_PLANNED.search(text) or NOTE_PLANS.search(text))


def _only_planned(sentence: Sentence, keys: set[str], analyser: Analyser) -> bool:
    """Whether a note sentence names the test (``keys``) only as planned: each time it is written, a
    planning word before it in its clause or after it ("x-ray pending"), and no result or review of
    one (a sentence that names it otherwise, "radiographic" for "x-ray", tells nothing)."""
    text = sentence.text
    written = [w for w in _WORD.finditer(text)
               if {analyser.normal(w.group(0)), analyser.normal(w.group(0).replace("-", ""))} & keys]
    for word in written:
        clause = re.split(r"[,;:]", text[: word.start()])[-1]
        after = re.split(r"[,;:.]", text[word.end():])[0]
        if not (TEST_PLANNED.search(clause) or re.search(r"\b(?:pending|ordered|scheduled|to be)\b", after, re.IGNORECASE)):
            return False
    # v17: nor a sentence that says it was done before ("you did get a chest x-ray prior to coming")
    return bool(written) and not RESULTS.search(text) and not NOTE_RESULTS.search(text) and not DONE_BEFORE.search(text)


def _hedge_problems(analyser: Analyser, sentence: Sentence, premise_sentences: list[Sentence]) -> list[Finding]:
    """(d): a hedge the note gives the other way round where it speaks of the same diagnosis; or, for a
    hedge against it, a note that states the diagnosis outright there ("Assessment: Viral pharyngitis."
    for "viral pharyngitis is less likely")."""
    hedged = _hedged(analyser, sentence)
    if hedged is None:
        return []
    hedge, against, thing = hedged
    about = [s for s in premise_sentences if 2 * len(thing & s.stems) >= len(thing)]
    same = HEDGE_AGAINST if against else HEDGE_TOWARDS
    other = HEDGE_TOWARDS if against else HEDGE_AGAINST
    if not about or any(same.search(s.text) for s in about):
        return []
    opposite = [s for s in about if other.search(s.text)]
    if opposite:
        said = other.search(opposite[0].text)
        assert said is not None
        return [Finding(FindingKind.ASSERTION, f"note says \"{said.group(0)}\" (\"{short(opposite[0].text, 70)}\"), "
                        f"claim says \"{hedge.group(0)}\"", conflict=True)]
    if against and all(_states_outright(s, thing) for s in about):
        return [Finding(FindingKind.ASSERTION, f"note says \"{short(about[0].text, 70)}\" (affirmed), claim says "
                        f"\"{hedge.group(0)}\"", conflict=True)]
    return []


def _hedged(analyser: Analyser, sentence: Sentence) -> tuple[re.Match, bool, set[str]] | None:
    """A claim sentence's one-way hedge, whether it is against the diagnosis, and what it hedges (its
    content stems but the hedge's words); ``None`` without one, or with hedges both ways."""
    against, towards = HEDGE_AGAINST.search(sentence.text), HEDGE_TOWARDS.search(sentence.text)
    hedge = against or towards
    if hedge is None or (against and towards):
        return None
    thing = {s for s in _stems(analyser, sentence.text) if s not in {analyser.normal(w) for w in _HEDGE_WORDS}}
    return (hedge, bool(against), thing) if thing else None


def _states_outright(sentence: Sentence, thing: set[str]) -> bool:
    """Whether a note sentence states the claim's diagnosis with no hedge and no negation: each of its
    words there affirmed, and no other word of doubt in the sentence."""
    words = [w for w in sentence.words if w.stem in thing]
    return (bool(words) and all(w.status == Status.AFFIRMED for w in words)
            and not _DOUBT.search(sentence.text))


# --- (e) a current regimen against a planned change ----------------------------------------------------
#: A change of a drug's dose or of the drug that a text plans (a past "was increased" is made: its
#: dose is the current one). "change" after "no" ("no change to") plans none.
PLANNED_CHANGE = re.compile(
    r"\b(?:(?:will|to|should|would|can)\s+be\s+(?:\w+ly\s+)?(?:increased|decreased|titrated|switched|changed|adjusted|"
    r"reduced|raised|lowered|tapered|weaned|doubled)|increase|increasing|decrease|decreasing|titrate|titrating|"
    r"uptitrate|switch|switching|(?<!no )change|changing|adjust|adjusting|reduce|reducing|raise|lower|taper|"
    r"wean|double|bump)\b", re.IGNORECASE)
#: Any change of a drug a note can write: planned, made, or a start or stop (a switch is both).
ANY_CHANGE = re.compile(r"\b(?:increas\w*|decreas\w*|titrat\w*|uptitrat\w*|switch\w*|chang\w*|adjust\w*|reduc\w*|"
                        r"rais\w*|lower\w*|taper\w*|wean\w*|doubl\w*|bump\w*|instead|replac\w*|substitut\w*|"
                        r"transition\w*|convert\w*|higher|dose|dosage|start\w*|stop\w*|discontinu\w*|hold|held|"
                        r"resum\w*|restart\w*|initiat\w*|prescrib\w*)\b", re.IGNORECASE)
#: A claim's planned change the direction words (rule 7) do not hold.
CLAIM_CHANGE = re.compile(r"\b(?:titrate|titrating|uptitrate|switch|switching|change|changing|adjust|adjusting)\b",
                          re.IGNORECASE)
_TOKEN = re.compile(r"\d+(?:[.,]\d+)?|[a-z][a-z'\-]*")


def _doses_at(lowers: list[str]) -> list[tuple[int, str]]:
    """The doses a text writes, each with its number's position ("20 mg", as :class:`Regimen` keeps them)."""
    return [(i, f"{number_value(w)} {unit_after(lowers, i)}") for i, w in enumerate(lowers)
            if is_number(w) and unit_after(lowers, i) in DOSE_UNITS]


#: Words after a change word that say it changes a drug's dose ("increase *his* lisinopril", "increase
#: *the dose*", "switch *from*", "titrate *up to*"), not something else ("to lower her blood pressure").
_CHANGE_OBJECT = frozenset("his her their the its it dose dosage doses from to up down by".split())
#: Words that give the dose after them as the one taken now ("continue lisinopril 20 mg").
_TAKEN_NOW = frozenset("continue continued continues continuing takes taking currently current remain remains "
                       "remaining stay stays keep".split())


def _change_at(lower: str, lowers: list[str], drug_at: set[int]) -> set[int]:
    """The token positions of the changes a sentence plans to a drug's dose (:data:`PLANNED_CHANGE`,
    governing a drug, a dose or :data:`_CHANGE_OBJECT` in the next three words)."""
    found = set()
    for match in PLANNED_CHANGE.finditer(lower):
        at = len(_TOKEN.findall(lower[: match.end()])) - 1
        ahead = range(at + 1, min(at + 4, len(lowers)))
        if any(j in drug_at or lowers[j] in _CHANGE_OBJECT or is_number(lowers[j]) for j in ahead):
            found.add(at)
    return found


def _changed_doses(analyser: Analyser, text: str) -> tuple[set[str], set[str]]:
    """A note sentence's doses as the new dose of a change it plans, and as current doses: read back
    from the dose, the first of a planned change (:func:`_change_at`), "from" (before any "to": "switch
    from amlodipine 5 mg to losartan 50 mg") or a word of going on (:data:`_TAKEN_NOW`) says which; a
    dose with none before it, or followed by "to" and another dose ("10 mg to 20 mg"), is current."""
    lower = text.lower()
    lowers = _TOKEN.findall(lower)
    drug_at = {i for i, w in enumerate(lowers) if analyser.is_drug(w)}
    changes = _change_at(lower, lowers, drug_at)
    doses = _doses_at(lowers)
    changed, current = set(), set()
    for i, dose in doses:
        new, to_seen = False, False
        for j in range(i - 1, -1, -1):
            if j in changes:
                new = True
            elif lowers[j] == "to":
                to_seen = True
                continue
            elif not ((lowers[j] == "from" and not to_seen) or lowers[j] in _TAKEN_NOW):
                continue
            break
        if new and not (lowers[i + 2: i + 3] == ["to"] and any(k > i + 2 for k, _ in doses)):
            changed.add(dose)
        else:
            current.add(dose)
    return changed, current


#: A negation just before a claim's change ("no change to", "not going to change", "without changing").
_NOT_BEFORE = re.compile(r"\b(?:no|not|n't|never|without|nor)\b(?:\s+\S+){0,2}\s*$", re.IGNORECASE)


def _reach(text: str, cue: re.Match, words: int) -> list[str]:
    """The first ``words`` words after ``cue`` in its clause (:data:`_CLAUSE_END`)."""
    return _WORD.findall(_CLAUSE_END.split(text[cue.end():], maxsplit=1)[0])[:words]


def _governed(analyser: Analyser, text: str, cue: re.Match, words: int, treatments: bool = False) -> list[tuple[str, str]]:
    """The drugs (and with ``treatments`` the treatments, :data:`TREATMENTS`) among the first ``words``
    words after ``cue`` in its clause: what the cue says is done to (key, as written)."""
    return [(analyser.normal(w), w) for w in _reach(text, cue, words)
            if analyser.is_drug(w.lower()) or (treatments and w.lower() in TREATMENTS)]


def _change_problems(analyser: Analyser, sentence: Sentence, premise_sentences: list[Sentence]) -> list[Finding]:
    """(e): a current dose where the note gives the dose only as a planned change's, and a planned
    change the note never makes where it goes on with the drug."""
    takes, plans = CLAIM_TAKES.search(sentence.text), PLANNED_CHANGE.search(sentence.text)
    problems = []
    if takes and not plans:
        for regimen in sentence.regimens:
            note = _only_changed(analyser, regimen.drug, regimen.doses, premise_sentences)
            if note is not None:
                problems.append(Finding(FindingKind.DIRECTION, f"note says \"{short(note.text, 70)}\" (a planned "
                                        f"change), claim says \"{_span(sentence.text, takes, regimen.name)}\" "
                                        f"{', '.join(sorted(regimen.doses))} as taken now",
                                        conflict=True))
    for claimed in CLAIM_CHANGE.finditer(sentence.text) if not takes else ():
        if _NOT_BEFORE.search(sentence.text[: claimed.start()]) or re.match(r"\s+(?:in|of)\b", sentence.text[claimed.end():]):
            continue  # "no change to her metformin", "not going to change", "a change in medication"
        if any(analyser.normal(claimed.group(0).lower()) in s.stems for s in premise_sentences):
            continue  # the note's own "adjust" or "titrate", of whatever it names ("adjust accordingly")
        for key, written in _governed(analyser, sentence.text, claimed, 4, treatments=True)[:1]:
            naming = _naming(premise_sentences, key)
            goes_on = [s for s in naming if NOTE_GOES_ON.search(s.text)]
            if goes_on and not any(ANY_CHANGE.search(s.text) for s in naming):
                problems.append(Finding(FindingKind.DIRECTION, f"note says \"{short(goes_on[0].text, 70)}\", claim "
                                        f"says \"{_span(sentence.text, claimed, written)}\"", conflict=True))
    return problems


def _only_changed(analyser: Analyser, drug: str, doses: frozenset, premise_sentences: list[Sentence]) -> Sentence | None:
    """The first note sentence that gives ``drug`` one of ``doses`` as a planned change's new dose,
    where no note sentence gives it one of them as current; ``None`` otherwise."""
    found = None
    for s in premise_sentences:
        held = doses & frozenset().union(*(r.doses for r in s.regimens if r.drug == drug))
        if not held:
            continue
        changed, current = analyser.of_sentence("_changed_doses", s, partial(_changed_doses, analyser, s.text))
        if held & current or not held & changed:
            return None
        found = found or s
    return found


# --- (f) adherence the note does not state -------------------------------------------------------------
#: A claim that the patient does not take a drug as prescribed, the drug after it ("missed doses of",
#: "ran out of", "not taking her", "noncompliant with"); "denies missing" or "has not missed" states none.
NOT_ADHERENT = re.compile(
    r"(?<!not )(?<!never )(?<!denies )(?<!denied )(?<!no )\b(?:miss\w*|skipp\w*|ran out|run out|running out|"
    r"out of|forg[eo]t\w*|stopped taking|stopped using|not (?:been )?(?:taking|using)|off (?:of )?|"
    r"non-?complian\w*|non-?adheren\w*|not (?:been )?(?:compliant|adherent))\b", re.IGNORECASE)
#: How a note writes that a drug is not taken as prescribed (any of them: the note need not use the
#: claim's words, "has been out of her amlodipine" for "ran out of").
NOTE_NOT_ADHERENT = re.compile(
    r"\b(?:miss\w*|skip\w*|ran out|run out|running out|out of|forg[eo]t\w*|stop\w*|discontinu\w*|quit\w*|off|"
    r"not (?:been )?(?:taking|using)|not taken|n't (?:been )?(?:taking|using|taken)|non-?complian\w*|non-?adheren\w*|"
    r"not (?:compliant|adherent)|adheren\w*|complian\w*|no longer|without|afford\w*|cost|refill\w*|hold\w*|held|"
    r"intermittent\w*|inconsistent\w*|sporadic\w*|occasionally|avoid\w*)\b", re.IGNORECASE)
#: What ends the reach of a claim's adherence words ("missed her appointment, and takes lisinopril").
_CLAUSE_END = re.compile(r"[,;:.]|\b(?:and|but|because|since|which|who|while)\b", re.IGNORECASE)
#: Words of when, which name no thing a patient runs out of ("she ran out last week").
_WHEN = frozenset("""last week weeks month months day days year years ago yesterday today recently lately past few
several couple now times time occasionally sometimes""".split())
#: Generic words for a patient's drugs ("her medications"), which name any of them.
_ANY_DRUG = re.compile(r"\b(?:medications?|medicines?|meds|pills?|doses?|prescriptions?|it|them)\b", re.IGNORECASE)


def _adherence_problems(analyser: Analyser, sentence: Sentence, premise_sentences: list[Sentence]) -> list[Finding]:
    """(f): a drug the claim says is not taken as prescribed where the note names it and never says so."""
    problems = []
    for cue in NOT_ADHERENT.finditer(sentence.text):
        # the drug it is said of, next to it after "off" ("off of his amlodipine", not "off your headache")
        for key, written in _governed(analyser, sentence.text, cue, 2 if cue.group(0).lower().startswith("off") else 4)[:1]:
            naming = _naming(premise_sentences, key)
            if naming and not any(_states_not_adherent(analyser, s, key) for s in premise_sentences):
                problems.append(Finding(FindingKind.ADDITION, f"claim has the patient \"{_span(sentence.text, cue, written)}\", "
                                        f"which the note never states (it has \"{short(naming[0].text, 70)}\")"))
    return problems


def _states_not_adherent(analyser: Analyser, sentence: Sentence, key: str) -> bool:
    """Whether a note sentence says a drug is not taken as prescribed that may be ``key``: it names
    ``key`` beside such words, or the words govern a generic word for drugs ("ran out of *them*", "off
    her *medications*"), or nothing at all where the sentence names no drug ("she ran out last week");
    not what they govern otherwise ("he ran out of test strips", "missed his appointment")."""
    if key in sentence.stems or any(r.drug == key for r in sentence.regimens):
        return bool(NOTE_NOT_ADHERENT.search(sentence.text))
    names_drug = any(analyser.is_drug(w.lower()) for w in _WORD.findall(sentence.text))
    for cue in NOTE_NOT_ADHERENT.finditer(sentence.text):
        reach = _reach(sentence.text, cue, 6)
        if _ANY_DRUG.search(" ".join(reach)):
            return True
        if not names_drug and not [w for w in reach if is_content(w.lower()) and w.lower() not in _WHEN]:
            return True
    return False


# --- (g) adherence or control the note does not state ---------------------------------------------------
#: A claim that the patient takes or does something as prescribed; a denial before it ("not
#: compliant", "poor adherence") makes it (f)'s instead, and "noncompliant" is (f)'s word.
ADHERENT = re.compile(
    r"(?<!non)(?<!non-)\b(?:complian(?:t|ce|cy)|adheren(?:t|ce)|adher(?:es|ing)|"
    r"(?:has|have) not missed|without missing|never miss(?:es|ed)?|religiously|faithfully)\b"
    # "as prescribed" of what the patient does, not of an instruction ("continue metformin as prescribed")
    r"|\b(?:taking|takes|took|using|uses|used)\b[^,.;:]{0,40}?\bas (?:prescribed|directed)\b", re.IGNORECASE)
#: Words just before :data:`ADHERENT` that deny or weaken it ("not compliant", "poor compliance").
_ADHERENCE_DENIED = re.compile(r"\b(?:not|no|poor|poorly|non|never|lack|lacks|difficulty|inconsistent|"
                               r"partial|partially|variable|limited|n't)\b(?:\s+\S+)?\s*$", re.IGNORECASE)
#: How a note states that something is taken or done as prescribed (any one of them supports a
#: claim of adherence, whatever words it uses: "takes them regularly" for "compliant").
NOTE_ADHERENT = re.compile(
    r"\b(?:complian\w*|adheren\w*|adher\w*|as (?:prescribed|directed|instructed)|regularly|consistently|religiously|"
    r"faithfully|(?:has|have|had) not missed|n't missed|never miss\w*|without missing|good about|"
    r"remembers?|every (?:day|night|morning|evening)|on a daily basis)\b", re.IGNORECASE)
#: How a note says the patient goes on taking, using or following something now ("he continues to
#: take his metformin", "she is still taking Keppra", "follows a low-salt diet"), which readers take
#: for adherence; a plan's imperative ("Continue metformin") is no such statement, nor is being on a
#: drug ("the medication she is on may be a factor": prescribed, not said to be taken).
NOTE_GOES_ON_TAKING = re.compile(
    r"\b(?:continues? to (?:take|use|follow)|(?:is|are|has been|have been) (?:\w+ly |still |also |now )?"
    r"(?:taking|using|following)|takes|uses|applies|wears|follows)\b", re.IGNORECASE)
#: Words before a claim's adherence that make it advice, a hope or a question, not a state ("continue
#: taking it as prescribed", "the importance of adherence", "to determine if she is compliant").
_ADHERENCE_ADVISED = re.compile(r"\b(?:continue|continuing|should|will|would|advis\w*|encourag\w*|instruct\w*|"
                                r"recommend\w*|remind\w*|importance|important|educat\w*|counsel\w*|discuss\w*|"
                                r"help|helps|if|whether|determine|must|need|needs|to take|to use)\b", re.IGNORECASE)
#: A claim that a condition is faring well ("doing well with regard to her heart failure"), besides a
#: good control (rule 7's directions: "well controlled", "under control").
DOING_WELL = re.compile(r"\bdoing (?:well|fine|good|great)\s+(?:with regards? to|in regards? to|regarding|"
                        r"with respect to|in terms of|from (?:a|an|the) \w+ standpoint)\b", re.IGNORECASE)
#: Words before a good control that make it an aim, not a state ("to get her blood pressure under control").
_CONTROL_AIMED = re.compile(r"\b(?:get|gets|getting|got|bring|bringing|keep|keeping|achieve|achieving|goal|help|can|"
                            r"could|may|might|would|if|whether|hope|hopefully|expect\w*|"
                            r"helps|important|gain|gaining|maintain|maintaining|ensure|better)\b(?:\s+\S+){0,4}\s*$",
                            re.IGNORECASE)
#: Words after a claim's adherence that value it, not state it ("adherence to the plan is essential").
_ADHERENCE_VALUED = re.compile(r"(?:\s+\S+){0,6}?\s+(?:is|are|remains?) (?:\w+ )?(?:essential|important|key|"
                               r"crucial|critical|necessary|vital)\b", re.IGNORECASE)
#: A good control the note states of anything, in any words ("under adequate control", "well
#: controlled"): a claim's good control is then left to rule 7, which compares it where the note
#: speaks of the claim's condition.
NOTE_CONTROLLED = re.compile(r"(?<!un)(?<!poorly )(?<!not )(?<!poor )\b(?:(?:well|adequately|reasonably|fairly|nicely)"
                             r"[- ]controlled|under (?:\w+ )?control)\b", re.IGNORECASE)
#: How a note says how a condition fares, besides the directions of rule 7 (control, course, level)
#: and a reading (a number).
NOTE_STATUS = re.compile(r"\b(?:well|good|fine|great|normal|normotensive|stable|controlled|control|managed|"
                         r"goal|asymptomatic|symptom-free|better|resolv\w*|"
                         r"no (?:\w+ )?(?:issues|problems|complaints|symptoms|flares?)|"
                         r"not (?:been )?(?:a |an )?(?:\w+ )?(?:problem|issue))\b",
                         re.IGNORECASE)
#: A reading that tells how a condition is ("132/84", "7.2", "6 %", "in the 140s", "90 mmHg"), not an age
#: or a dose.
READING = re.compile(r"\b\d+/\d+\b|\b\d+\.\d+\b|\d\s*%|\b\d+s\b|\b\d+\s*(?:mg/dl|mmhg|bpm)\b", re.IGNORECASE)
#: Claim words that frame a status and name no condition ("she reports her asthma is well controlled").
_STATUS_FRAME = frozenset("""well good fine great doing control controlled under regard regards regarding respect terms
standpoint reports reported report states stated says said feels feel notes noted today currently overall medical
reasoning patient she he her his their has have been is are remains remain continues also otherwise""".split())


def _unstated_status_problems(analyser: Analyser, sentence: Sentence, premise_sentences: list[Sentence]) -> list[Finding]:
    """(g): an adherence, or a good control of a condition, the note never states."""
    return _adherence_unstated(sentence, premise_sentences) + _control_unstated(analyser, sentence, premise_sentences)


def _adherence_unstated(sentence: Sentence, premise_sentences: list[Sentence]) -> list[Finding]:
    """(g): the claim's first adherence (not denied, advised or valued) where no note sentence states
    adherence or that the patient goes on taking, using or following something."""
    cue = ADHERENT.search(sentence.text)
    if cue is None:
        return []
    before = _CLAUSE_END.split(sentence.text[: cue.start()])[-1]
    after = _CLAUSE_END.split(sentence.text[cue.end():])[0]
    if (_ADHERENCE_DENIED.search(sentence.text[: cue.start()]) or _ADHERENCE_ADVISED.search(before)
            or _ADHERENCE_VALUED.match(after)):
        return []
    if any(NOTE_ADHERENT.search(s.text) or NOTE_GOES_ON_TAKING.search(s.text) for s in premise_sentences):
        return []
    return [Finding(FindingKind.ADDITION, f"claim has the patient \"{cue.group(0)}\", which the note never states "
                    f"of anything")]


def _control_unstated(analyser: Analyser, sentence: Sentence, premise_sentences: list[Sentence]) -> list[Finding]:
    """(g): a good control the claim states (not as an aim) where the note calls nothing well
    controlled and its sentences about the claim's condition say nothing of how it fares."""
    lower = sentence.text.lower()
    controlled = [word for axis, sign, word in sentence.directions if axis is Axis.CONTROL and sign > 0
                  and not _CONTROL_AIMED.search(sentence.text[: max(lower.find(word.split()[-1]), 0)])]
    doing_well = DOING_WELL.search(sentence.text)
    if controlled:
        written = controlled[0]
    elif doing_well is not None:
        written = " ".join(doing_well.group(0).split()[:2])
    else:
        return []
    if any(NOTE_CONTROLLED.search(s.text) or any(axis is Axis.CONTROL and sign > 0 for axis, sign, _ in s.directions)
           for s in premise_sentences):
        return []
    frame = {analyser.normal(w) for w in _STATUS_FRAME}
    said = sentences_about({s for s in _stems(analyser, sentence.text) if s not in frame}, premise_sentences)
    if not said or any(s.directions or NOTE_STATUS.search(s.text) or READING.search(s.text) for s in said):
        return []
    return [Finding(FindingKind.ADDITION, f"claim has it \"{written}\", which the note never states "
                    f"(it has \"{short(said[0].text, 70)}\")")]


# --- (h) a refill or prescription the note does not write ------------------------------------------------
#: A claim that a drug is refilled or renewed, or that a prescription for it is written, sent or given
#: ("Lisinopril was refilled", "will refill her EpiPen", "a refill of Keppra was ordered", "I provided a
#: prescription for tacrolimus"): an act of the visit of its own. Having a prescription ("she has a
#: prescription for it") is no such act.
CLAIM_RENEWS = re.compile(
    r"\b(?:refill\w*|re-?fill\w*|renew\w*)\b"
    r"|\b(?:provid\w*|gave|given|giv\w*|sen[dt]\w*|wr[io]te|written|writ\w*|called in|call\w* in|issu\w*|"
    r"e-?prescrib\w*)\b[^,.;:]{0,25}?\bprescriptions?\b"
    r"|\bprescriptions?\b[^,.;:]{0,30}?\b(?:was|were|will be|has been|have been|is being|are being)\s+(?:\w+ly\s+)?"
    r"(?:provided|given|sent|written|called in|issued)\b", re.IGNORECASE)
#: How a note writes that a drug is refilled or prescribed, in any words, besides a start
#: (:data:`NOTE_STARTS`) or an addition to the regimen ("adding tacrolimus"), which prescribe it too: a
#: new prescription and a refill differ in time, which is no part of this rule; what it rejects is a
#: note that only says the drug is taken or gone on with.
NOTE_RENEWS = re.compile(r"\b(?:refill\w*|re-?fill\w*|renew\w*|prescri\w*|scripts?|rx|e-?prescrib\w*|"
                         r"sen[dt] (?:\w+ )?(?:to|in)\b|call\w* in|pharmacy|supply|add|adds|added|adding)\b",
                         re.IGNORECASE)


def _renewal_problems(analyser: Analyser, sentence: Sentence, premise_sentences: list[Sentence]) -> list[Finding]:
    """(h): a refill or prescription of a drug where the note names the drug and no note sentence
    refills or prescribes it (nor refills the patient's medications unnamed, "refills were sent for her
    medications"): the note says only that the drug is taken, gone on with or something else of it
    ("Continue Keppra 500 mg twice a day" does not write a refill)."""
    cue = CLAIM_RENEWS.search(sentence.text)
    if cue is None or _NOT_BEFORE.search(sentence.text[: cue.start()]):
        return []
    if any(NOTE_RENEWS.search(s.text) and (_ANY_DRUG.search(s.text) or not any(analyser.is_drug(w.lower())
                                                                              for w in _WORD.findall(s.text)))
           for s in premise_sentences):
        return []  # the note refills or prescribes unnamed drugs ("Refills were provided.")
    problems = []
    for key, written in _treated(analyser, sentence):
        if not analyser.is_drug(written.lower()):
            continue  # "medications", "inhaler": what it refills is named elsewhere, if at all
        naming = _naming(premise_sentences, key)
        if naming and not any(NOTE_RENEWS.search(s.text) or NOTE_STARTS.search(s.text) for s in naming):
            problems.append(Finding(FindingKind.ADDITION, f"claim has \"{_span(sentence.text, cue, written)}\", which "
                                    f"the note never writes: it has \"{short(naming[0].text, 70)}\""))
    return problems
