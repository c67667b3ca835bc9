"""The word lists ``clinical-rules`` reads text with, and what a word is to its rules.

Hand-written lists (stop words, sides, number words, units, drug names, polar words and qualifier
scales, dosing words, section names …) and the predicates over single words built on them
(:func:`is_content`, :func:`is_number`, :func:`is_drug` …). The maintained vocabularies (the drug
lexicon, clinical_equivalents.json, body sites, directions, relatives) are
:mod:`doclens.evaluators.rules.lexicons`'.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Container
from types import MappingProxyType

from doclens.parsing.tokens import FUNCTION_WORDS

#: Words a claim's content is not checked on (:func:`is_content`): the package's function words
#: (:data:`doclens.parsing.tokens.FUNCTION_WORDS`, ``overlap``'s stop words too) and three lists of
#: this judge's own
STOP_WORDS = FUNCTION_WORDS | frozenset(
    # more function words, and the pieces spaCy's tokeniser splits contractions into ("'s", "n't").
    # Kept out of overlap's list on purpose: there they would change 51 of 8,693 verdicts on three
    # systems of ACI-BENCH test split 2 (issue 40), and scores must not move with a refactor
    """just up out off again further once both all few own too s t don now anything something someone one's upon via
's 'm 're 've 'll 'd n't going gonna""".split()) | frozenset(
    # who speaks and when: the note's register, not the fact ("the patient reports …", "today"),
    # and reporting verbs
    """patient patients pt mr mrs ms miss dr mr. mrs. ms. dr. doctor today currently current presently
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
SIDES = MappingProxyType({"left": "left", "right": "right", "bilateral": "bilateral", "bilaterally": "bilateral"})
WORD_NUMBERS = MappingProxyType({"zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
                                  "seven": "7", "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12",
                                  "fifteen": "15", "twenty": "20", "thirty": "30", "forty": "40", "fifty": "50", "hundred": "100",
                                  "once": "1", "twice": "2",
                                  # v10 (issue 46's generated rewordings): "a couple of days" is 2 days,
                                  # "half a pack" is 0.5 pack
                                  "couple": "2", "half": "0.5"})
#: v10: words that name a person's sex, by the sex they name: "62-year-old male" is "62 year old
#: man" (one person, not a swapped finding), and never "woman".
SEX_WORDS = MappingProxyType({**dict.fromkeys("male males man men gentleman gentlemen".split(), "sex_male"),
                              **dict.fromkeys("female females woman women lady ladies".split(), "sex_female")})
UNITS = MappingProxyType({"mg": "mg", "milligram": "mg", "milligrams": "mg", "mcg": "mcg", "microgram": "mcg", "g": "g",
                           "gram": "g", "grams": "g", "kg": "kg", "kilogram": "kg", "kilograms": "kg", "lb": "lb", "lbs": "lb",
                           "pound": "lb", "pounds": "lb", "ml": "ml", "cc": "ml", "l": "l", "liter": "l", "liters": "l", "%": "%",
                           "percent": "%", "cm": "cm", "mm": "mm", "inch": "inch", "inches": "inch", "unit": "unit",
                           "units": "unit", "mmhg": "mmhg", "bpm": "bpm", "degree": "degree", "degrees": "degree", "day": "day",
                           "days": "day", "week": "week", "weeks": "week", "month": "month", "months": "month", "year": "year",
                           "years": "year", "hour": "hour", "hours": "hour", "minute": "minute", "minutes": "minute",
                           "time": "time", "times": "time", "puff": "puff", "puffs": "puff", "tablet": "tablet",
                           "tablets": "tablet", "pill": "pill", "pills": "pill", "meq": "meq", "iu": "unit"})
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


def is_drug(word: str, names: Container[str]) -> bool:
    """A drug name (lower case): :data:`DRUGS` or ``names``, the maintained lexicon's the judge read
    (:func:`~doclens.evaluators.rules.lexicons.drug_names`, held by its
    :class:`~doclens.evaluators.rules.resources.JudgeResources`)."""
    return word in DRUGS or word in names


#: Words whose presence flips a finding; never forgiven as paraphrase (nor their prefixed forms:
#: normal/abnormal, regular/irregular, remarkable/unremarkable, tender/nontender …).
POLAR = frozenset("""normal abnormal regular irregular remarkable unremarkable tender nontender negative positive
increase increased decrease decreased high low elevated reduced worse better improved worsened stable unstable
present absent controlled uncontrolled febrile afebrile symmetric asymmetric intact able unable""".split()) | frozenset(
    # qualifiers a near miss differs by (docs/design.md §4, Judging real notes): never forgiven as rewording
    """slight mild moderate severe acute chronic new newly repeat recurrent minimal marked trace small large
worsening first second third extra additional""".split()) | frozenset(
    # v10: every ordinal of the digits' spellings (SPELLINGS): "4th finger" is no rewording of the "2nd"
    "fourth fifth sixth seventh eighth ninth tenth".split())
#: v8: a finding called abnormal, and the words a note uses for the same finding found normal: a claim
#: calling abnormal what the note, where it speaks of the claim's finding, calls normal (unremarkable,
#: regular, good …) is contradicted (issue 46's generated normal → abnormal flips: "Chest x-ray:
#: Abnormal" against "X-ray of the chest is unremarkable")
ABNORMAL_WORDS = frozenset("abnormal irregular abnormally".split())
NORMAL_WORDS = frozenset("normal unremarkable normoactive regular good fine clear benign wnl".split())
#: v15 (issue 46): the words an examination's normal findings are written with (Bates' Guide to Physical
#: Examination, the normal findings of each system: "Abdomen: soft, nontender, nondistended", "Neck: supple",
#: "Sensation intact", "Lachman negative", "full range of motion", "alert and oriented"), which a note
#: writes instead of calling the examination of a system normal (content.examined_normal).
NORMAL_FINDINGS = NORMAL_WORDS - frozenset({"good", "fine"}) | frozenset(
    "soft supple nontender nondistended intact symmetric equal full negative alert oriented".split())
POLAR_PREFIXES = ("ab", "ir", "un", "non", "in", "a", "dis")
#: Qualifiers of one scale: a claim's qualifier the note does not say, where the sentence the claim
#: is about says another of the same scale, is a contradiction ("note says trace, claim says
#: severe"), not a rewording.
QUALIFIER_SCALES = tuple(frozenset(scale.split()) for scale in (
    "trace slight minimal mild moderate severe marked significant",
    "small large", "acute chronic subacute", "increase increased decrease decreased reduced elevated",
    "high low elevated", "worse better improved worsened worsening", "negative positive",
    "first second third fourth fifth sixth seventh eighth ninth tenth"))

#: v11: levels a note names by one word, each with its level word and the things it is the level of
#: ("high blood pressure" is written "hypertension" before any rule reads it, clinical_equivalents.json):
#: a claim's "low blood pressure" against the note's "hypertension" is another level of one thing
#: (content.qualifies_otherwise)
NAMED_LEVELS = MappingProxyType({
    "hypertension": ("high", frozenset({"blood", "pressure", "bp"})),
    "hypotension": ("low", frozenset({"blood", "pressure", "bp"})),
    "hyperglycemia": ("high", frozenset({"sugar", "sugars", "glucose"})),
    "hypoglycemia": ("low", frozenset({"sugar", "sugars", "glucose"})),
    "hyperkalemia": ("high", frozenset({"potassium"})),
    "hypokalemia": ("low", frozenset({"potassium"})),
    "hypernatremia": ("high", frozenset({"sodium"})),
    "hyponatremia": ("low", frozenset({"sodium"})),
})
#: Verbs that plan a test, whose result is not known yet: "we will obtain an MRI" does not say
#: what the MRI showed.
PLANNED_VERBS = ("obtain", "schedule", "repeat")
#: One word spelled two ways in notes, read as one ("disk herniation" / "disc herniation": else the
#: closest note sentence to a claim's "acute disc herniation" is another one with "acute" in it).
#: v10: an ordinal written with its digits is the ordinal word ("3rd and 4th fingers" / "third and
#: fourth fingers"; "2nd degree" / "second degree"): one word, two spellings.
#: v11: "ronchi" / "ronchus", the spelling without the h that notes and dictation use for the lung
#: sound rhonchi (Bates' guide spells it rhonchi): one finding, two spellings.
SPELLINGS = MappingProxyType({"disk": "disc", "disks": "discs", "1st": "first", "2nd": "second", "3rd": "third",
                              "4th": "fourth", "5th": "fifth", "6th": "sixth", "7th": "seventh", "8th": "eighth",
                              "9th": "ninth", "10th": "tenth", "ronchi": "rhonchi", "ronchus": "rhonchus",
                              "ronchorous": "rhonchorous"})
#: v15 (issue 46): forms of one word that the stems do not join, each with the word whose key it
#: takes (:meth:`~doclens.evaluators.rules.analysis.Analyser.normal`): "she fell" is "a fall", "he
#: felt dizzy" "he feels dizzy", "was given" "gave", "injured" "an injury". Two kinds: an
#: irregular past form that lemminflect also reads as a noun or adjective of its own, which the key
#: takes first ("fell" a hill, "felt" a cloth, "bent" a bent: lemminflect's getAllLemmas gives each
#: the verb as a VERB lemma, which tests/evaluators/rules/test_word_forms_and_kinds.py checks), and a noun made
#: from a verb whose Porter stem is not the verb's ("injury"/"injure", "diagnosis"/
#: "diagnose", "inflammation"/"inflame", "growth"/"grow", "death"/"die"). Left out: forms whose
#: other reading is a clinical word or a side ("wound" of wind, "left" of leave, "shot" of shoot,
#: "ground", "lay"), "bit", a filler word (:data:`STOP_WORDS`), and "loss" / "lost", which the 21
#: systems' notes use of other things than weight ("feel lost", "would like to lose 25 pounds" read as
#: "weight loss" there). A claim's tense is no fact these
#: keys carry: the rules that read history or a plan read the text, not the stems (statements.py,
#: ConText's HISTORICAL cues).
WORD_FORMS = MappingProxyType({
    **dict.fromkeys(("fell", "fallen"), "fall"), "felt": "feel", "drove": "drive", "bent": "bend", "stuck": "stick",
    "given": "give", "spat": "spit",
    "injury": "injure", "injuries": "injure", "diagnosis": "diagnose",
    "diagnoses": "diagnose", "inflammation": "inflame", "growth": "grow", "death": "die"})
#: v11: findings that only one body site can have, with that site (Bates' guide: the adventitious
#: lung sounds, heard over the lungs; murmurs and gallops, heart sounds): a claim that names the
#: site of such a finding ("the lungs have rhonchi") says no more than the finding, and the note's
#: "Respiratory: Rhonchi bilaterally" need not name the lungs. Another site ("the heart has
#: rhonchi") is still checked.
OWN_SITE = MappingProxyType({**dict.fromkeys("""rhonchi rhonchus ronchi wheeze wheezes wheezing crackle crackles rale
rales""".split(), "lung"), **dict.fromkeys("murmur murmurs gallop gallops".split(), "heart")})
#: v11: prefixes that make another word of the word they open ("prediabetes" is not "diabetes",
#: "postoperative" not "operative"); written with a hyphen or closed up, they are one word
#: (analysis._PREFIXED), and a word and its prefixed form are never each other's rewording.
PREFIXES = ("pre", "post", "re", "anti", "sub", "hyper", "hypo", "intra", "inter", "peri", "multi", "semi", "non")


def prefixed_pair(word: str, other: str) -> bool:
    """v11: whether one of two words is the other with a prefix of :data:`PREFIXES` ("diabetes",
    "prediabetes")."""
    short, long = sorted((word, other), key=len)
    return len(short) >= 4 and long.endswith(short) and long[: len(long) - len(short)] in PREFIXES


#: Subjects of a habitual "used to" ("as it used to be"); "it is used to treat" is the verb use.
PRONOUNS = frozenset("i you he she it we they".split())
#: Words that attach what follows them to the phrase before: "no tenderness *to* palpation".
ATTACHING = frozenset("with on in of at to for from about over during without within along".split())
#: Words that start another item of a list: "no fever*,* chills *or* cough".
LIST_BREAKS = frozenset(", ; and or nor".split())
#: Words after which "once" / "twice" is a frequency ("once a day"), not a conjunction ("once the labs …").
FREQUENCY = frozenset("a an per daily weekly monthly nightly every each or more yearly".split())
#: Frequencies that say "once" by themselves ("daily" is once a day), and words that give a count
#: before them ("three times daily", "2x daily").
ONCE_PER = frozenset("daily nightly weekly monthly yearly annually".split())
COUNTED = frozenset("times time x once twice".split())
#: Latin dosing abbreviations: how often and how a drug is taken, read by frequencies_in.
DOSING_ABBREVIATIONS = frozenset("qd bid tid qid qhs prn po q.d. b.i.d. t.i.d. q.i.d.".split())
#: Units of a drug's dose (:class:`Regimen`).
DOSE_UNITS = frozenset("mg mcg g unit ml meq".split())
#: The words of a claim's leading "Key:" that name a note section or body system
#: (:func:`~doclens.evaluators.rules.analysis.section_key_words`).
SECTION_WORDS = frozenset("""medical reasoning treatment assessment plan neuro neurological neurologic musculoskeletal
msk gastrointestinal gi cardiovascular cv respiratory resp pulmonary hent heent skin integumentary psychiatric psych
constitutional genitourinary gu lymphatic hematologic endocrine allergic immunologic review of systems ros vitals
vital signs general history present illness hpi physical exam examination results impression patient education
and counseling instructions agreements orders social family surgical past additional testing interpretation chief
complaint""".split())
#: v17 (issue 46): topic words a note writes as a heading of its history or plan ("Diet:", "Medications:",
#: "Labs:"), besides its sections' and body systems' (:data:`SECTION_WORDS`): alone, a claim of them
#: states nothing (:func:`~doclens.evaluators.rules.subjects.states_no_fact`).
TOPIC_HEADINGS = frozenset("""diet exercise nutrition lifestyle medications medication allergies labs laboratory
imaging""".split())
#: v10: words that say how a finding was examined; in a claim's leading key ("Auscultation of Heart:",
#: "Examination of Abdomen:") they say where the fact was written, not the fact (the body part stays
#: content: :func:`~doclens.evaluators.rules.analysis.section_key_words`).
EXAMINING = frozenset("auscultation examination exam palpation inspection percussion".split())
#: v10: the words a note calls a finding or a study normal by that mean the same as "normal" (the
#: radiology and exam-report use of "unremarkable"; "WNL", within normal limits): a claim's
#: "normal" is the note's "unremarkable" where the note speaks of the claim's finding, and back.
#: Narrower than :data:`NORMAL_WORDS` ("regular", "clear", "good" say more than "normal").
SAME_AS_NORMAL = frozenset("normal unremarkable wnl".split())
#: Words with which a claim reports what a test found, which a test the note only plans does not
#: support: "the MRI was reviewed today", "x-ray of the elbow is unremarkable".
RESULT_WORDS = frozenset("""show shows showed shown showing reveal reveals revealed revealing demonstrate
demonstrates demonstrated demonstrating review reviews reviewed reviewing unremarkable normal abnormal
negative positive confirm confirms confirmed found finding findings result results""".split())


# the answers of is_content and is_number are kept for 65,536 words (a note's vocabulary recurs:
# every rule asks them of the same words again; issue 49)
@functools.lru_cache(maxsize=65536)
def is_content(lower: str) -> bool:
    """A word the claim's content is checked on (sides, numbers and units have their own rules)."""
    if lower in SIDES or is_number(lower) or lower in UNITS or lower in STOP_WORDS:
        return False
    return bool(_LETTER.search(lower)) and (len(lower) >= 2 or lower == "x")


@functools.lru_cache(maxsize=65536)
def is_number(word: str) -> bool:
    """``20``, ``2.5``, ``1,000``, ``150/95`` (a reading), ``150s`` (v10), or a number word; r17 (issue
    46): numbers of more slashes are numbers too, a date (``06/29/2021``) or a garbled reading
    (``10/20/20``): a claim's value the note does not give is a detail it adds, never a word unread."""
    return bool(_NUMBER.fullmatch(word)) or word in WORD_NUMBERS or bool(_DECADE.fullmatch(word))


_LETTER = re.compile(r"[a-z]")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?(?:/\d+(?:\.\d+)?)*")


#: v10: values in a decade, "in the 150s", hold its round value (a claim's "around 150")
_DECADE = re.compile(r"\d*0'?s")


def number_value(word: str) -> str:
    if _DECADE.fullmatch(word):
        word = word.rstrip("s").rstrip("'")
    word = WORD_NUMBERS.get(word, word).replace(",", "")
    if "." in word and "/" not in word:
        word = word.rstrip("0").rstrip(".") or "0"
    if word.count("/") > 1:  # r17: a date's parts written with or without a leading zero, "06/29" is "6/29"
        parts = [part.lstrip("0") or "0" if part.isdigit() else part for part in word.split("/")]
        if len(parts) == 3 and len(word.split("/")[2]) == 2:  # a year of two digits: "2/5/21" is 2/5/2021
            parts[2] = str((2000 if int(parts[2]) <= TWO_DIGIT_YEARS_AFTER_2000 else 1900) + int(parts[2]))
        word = "/".join(parts)
    return word


#: r17: a date's year written with two digits up to this one is of this century ("3/3/21" is
#: 3/3/2021), a later one of the last ("5/4/61" is 1961).
TWO_DIGIT_YEARS_AFTER_2000 = 30


def unit_after(lowers: list[str], i: int) -> str | None:
    """The unit that follows the number at ``i`` ("20 mg", "20-mg")."""
    # v10: "a couple of days" (2 days)
    followers = lowers[i + 2: i + 4] if lowers[i] == "couple" and lowers[i + 1: i + 2] == ["of"] else lowers[i + 1: i + 3]
    for follower in followers:
        if follower in UNITS:
            return UNITS[follower]
        if follower not in {"-", "/"}:
            return None
    return None
