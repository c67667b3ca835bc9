"""The vocabularies ``clinical-rules`` reads a near miss with (v6).

* **Drug names** (:func:`drug_names`): brand and generic names from the maintained
  ``drug-named-entity-recognition`` lexicon (Fast Data Science, MIT licence; DrugBank, MeSH,
  MedlinePlus and Wikipedia names, 1.7 MB), each mapped to its generic name, so "Norvasc" and
  "amlodipine" are one drug and "lisinopril" another. Only single-word names that are drugs (the
  lexicon's entry has a DrugBank or MedlinePlus id: no drug classes such as "antibiotics") and no
  English word (lemminflect knows none of them: "sits" is not a drug), plus the judge's own
  hand-written list (:data:`~doclens.evaluators.rules.words.DRUGS`, which keeps
  "aspirin" and "insulin"). Unpacking the lexicon takes about 3.5 s, so the names ship with
  DocLens as package data (``drug_names.json`` beside this module, written by
  ``benchmarks/ship_lexicons.py``, with the versions of the lexicon and lemminflect and the digest
  of the judge's list it was derived from; package data, not a cache: read under ``--no-cache``
  too). Where the installed versions differ, the names are derived once and kept in the lexicon
  folder of DocLens's cache folder (a JSON file named by the lexicon's version, with its format,
  version and checksum; ``--cache-dir`` moves it, ``--no-cache`` neither reads nor writes it:
  issue 47); later runs read that file.
* **Equivalences** (:func:`equivalents`, ``clinical_equivalents.json``, each entry with its source):
  synonyms written one way before any rule reads them ("radiograph" = "x-ray", "upper extremity" =
  "arm"), anatomical part-of ("elbow" ⊂ "arm") and findings a normal one says are absent ("lungs
  clear": no wheezes, rales, rhonchi).
* **Body sites, directions of change, relatives**: the words the judge's near-miss findings are
  about (:data:`BODY_SITES`, :data:`DIRECTIONS`, :data:`RELATIVES`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from importlib import resources
from types import MappingProxyType
from typing import NamedTuple

from doclens.core.types import TextEnum
from doclens.evaluators.cache import DEFAULT_LEXICONS

DRUG_LEXICON = "drug-named-entity-recognition"

#: the drug-names file's format (:func:`~doclens.evaluators.cache.read_sealed_json`)
DRUG_NAMES_FORMAT = "doclens-drug-names/2"
#: the drug names derived for the versions this release was built with (package data beside this
#: module; ``benchmarks/ship_lexicons.py`` writes it, tests/evaluators/rules/test_near_misses.py checks it)
SHIPPED_DRUG_NAMES = "drug_names.json"


def drug_names(extra: frozenset[str] = frozenset(), folder=DEFAULT_LEXICONS) -> dict[str, str]:
    """Lower-case single-word drug name → its generic name (lower case), from :data:`DRUG_LEXICON`
    (see the module docstring for which names are kept); ``extra``: names kept even where they are
    English words (the judge's own list). The shipped names, else derived once and kept in the
    lexicon folder ``folder`` (:func:`~doclens.evaluators.cache.lexicon_folder`: ``None``, no file —
    ``--no-cache``; a folder; by default the cache folder's). Read at each call: the judge reads
    it once, into its :class:`~doclens.evaluators.rules.resources.JudgeResources` (issue 50: no
    table kept by this module)."""
    return _load_drug_names(extra, _cache_path(folder))


def _load_drug_names(extra: frozenset[str], path) -> dict[str, str]:
    """The names of the file at ``path`` (sealed: format, lexicon version, checksum), else derived
    and written there (``None``: derived, no file); first of all the shipped names, when they were
    derived from the installed versions (:func:`_shipped_drug_names`)."""
    from doclens.evaluators.cache import read_sealed_json, write_sealed_json

    shipped = _shipped_drug_names(extra)
    if shipped is not None:  # package data for the installed versions: no derivation, no cache read
        return shipped
    version = f"{_lexicon_version()}|extra={_extra_digest(extra)}"
    if path is not None:
        found = read_sealed_json(path, DRUG_NAMES_FORMAT, version)
        if isinstance(found, dict) and all(type(k) is str and type(v) is str for k, v in found.items()):
            return found
    names = _derive_drug_names(extra)
    if path is not None:
        write_sealed_json(path, DRUG_NAMES_FORMAT, version, names)  # a read-only folder: derived at each start
    return names


def _extra_digest(extra: frozenset[str]) -> str:
    import hashlib

    return hashlib.sha256(" ".join(sorted(extra)).encode()).hexdigest()[:16]


def _derived_from(extra: frozenset[str]) -> dict[str, str | None] | None:
    """What the drug names are derived from: the versions of the drug lexicon and of lemminflect
    (which English words are dropped), the digest of ``extra`` and :data:`DRUG_NAMES_FORMAT` (the
    derivation's own rules); ``None`` when the lexicon is not installed."""
    from importlib.metadata import PackageNotFoundError, version

    found = _lexicon_version()
    if found is None:
        return None
    try:
        lemminflect = version("lemminflect")
    except PackageNotFoundError:
        return None
    return {"format": DRUG_NAMES_FORMAT, DRUG_LEXICON: found, "lemminflect": lemminflect, "extra": _extra_digest(extra)}


def _shipped_drug_names(extra: frozenset[str]) -> dict[str, str] | None:
    """The drug names shipped with DocLens (:data:`SHIPPED_DRUG_NAMES`, package data written by
    ``benchmarks/ship_lexicons.py``) when they were derived from what is installed now (see
    :func:`_derived_from`); ``None`` otherwise (then they are derived, or read from the cache)."""
    wanted = _derived_from(extra)
    if wanted is None:
        return None
    try:
        shipped = json.loads(resources.files("doclens.evaluators.rules").joinpath(SHIPPED_DRUG_NAMES)
                             .read_text(encoding="utf-8"))
    except (OSError, ValueError):  # not shipped (a trimmed install): derived as before
        return None
    if not isinstance(shipped, dict) or shipped.get("derived_from") != wanted:
        return None
    names = shipped.get("names")
    return names if isinstance(names, dict) else None


def shipped_drug_names_data(extra: frozenset[str]) -> dict:
    """The content of :data:`SHIPPED_DRUG_NAMES` for the installed versions: the names derived now
    (:func:`_derive_drug_names`) and what they were derived from."""
    return {"derived_from": _derived_from(extra), "names": dict(sorted(_derive_drug_names(extra).items()))}


def _lexicon_version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DRUG_LEXICON)
    except PackageNotFoundError:
        return None


def _cache_path(folder):
    """The drug-names file in the lexicon folder ``folder`` (``None``: none, or no lexicon
    installed, which the derivation then says)."""
    from doclens.evaluators.cache import lexicon_folder

    found, place = _lexicon_version(), lexicon_folder(folder)
    if found is None or place is None:
        return None
    return place / f"drug-names-{found}-v2.json"


def _derive_drug_names(extra: frozenset[str]) -> dict[str, str]:
    import bz2
    import importlib.util
    import pickle  # noqa: S403 - the lexicon package's own data file, as it reads it itself
    from pathlib import Path

    from doclens.core.errors import ConfigurationError

    try:
        # the package's data file found without importing the package (its import unpacks the
        # lexicon a second time, about 4 s)
        spec = importlib.util.find_spec("drug_named_entity_recognition")
        if spec is None or not spec.submodule_search_locations:
            raise ModuleNotFoundError(f"No module named {DRUG_LEXICON!r}")
        data_file = Path(list(spec.submodule_search_locations)[0]) / "drug_ner_dictionary.pkl.bz2"
        with bz2.open(data_file, "rb") as handle:
            lexicon = pickle.load(handle)  # noqa: S301
        from lemminflect import getAllLemmas
    except (ImportError, ModuleNotFoundError, OSError) as exc:
        raise ConfigurationError(f"the clinical-rules judge needs the [clinical] extra ({DRUG_LEXICON}, lemminflect): "
                                 f"pip install \".[clinical]\" ({exc})") from exc
    canonical = lexicon["drug_variant_to_canonical"]
    about = lexicon["drug_canonical_to_data"]
    names = {}
    for variant, generics in canonical.items():
        if not re.fullmatch(r"[a-z][a-z0-9\-]{3,}", variant) or not generics:
            continue
        generic = generics[0]
        info = about.get(generic, {})
        if variant in extra or ((info.get("drugbank_id") or info.get("medline_plus_id")) and not getAllLemmas(variant)):
            names[variant] = generic
    return names


@dataclass(frozen=True)
class Equivalents:
    """``clinical_equivalents.json`` read: ``rewrite`` writes each synonym as its first term (one
    compiled pattern); ``wholes``: each site's wholes, transitively; ``implies_absent``: (the words
    a normal finding is written with, the findings it says are absent, r17: the words of a sentence
    in which it does not say so: a chest x-ray's "normal" rules out no fracture of a limb); r17: ``denied_with``: (the
    words that name a body system, the symptoms its denial as a whole denies)."""

    rewrite: re.Pattern
    spelled: dict[str, str]
    wholes: dict[str, frozenset[str]]
    implies_absent: tuple[tuple[frozenset[str], frozenset[str], frozenset[str]], ...]
    sources: dict[str, str]
    denied_with: tuple[tuple[frozenset[str], frozenset[str]], ...] = ()

    def written_one_way(self, text: str) -> str:
        """``text`` with every synonym written as its first term ("radiographs" → "xrays"). An ASCII
        text that holds no synonym opening at one of its runs of letters and digits
        (:attr:`openings`) has nothing to rewrite, and is returned as it is without the pattern of
        every synonym, which is slow (issue 49): the pattern matches a synonym whole (``\\b``), so
        its opening run is one of the text's, and the synonym is in the text."""
        if text.isascii():
            lower, openings = text.lower(), self.openings
            if not any(term in lower for run in set(_RUN.findall(lower)) for term in openings.get(run, ())):
                return text
        return self.rewrite.sub(lambda m: self.spelled[m.group(0).lower()], text)

    def synonyms(self, term: str) -> tuple[str, ...]:
        """v17: the terms of ``term``'s synonym entry, its first term first ("copd", "chronic
        obstructive pulmonary disease"); none where the table has no entry for it."""
        lower = term.lower()
        return self._entries.get(self.spelled.get(lower, lower).lower(), ())

    @cached_property
    def _entries(self) -> dict[str, tuple[str, ...]]:
        """Each synonym entry's first term → the entry's terms, lower-cased."""
        found: dict[str, tuple[str, ...]] = {}
        for term, first in self.spelled.items():
            first = first.lower()
            found[first] = (*found.get(first, (first,)), term.lower())
        return found

    @cached_property
    def openings(self) -> dict[str, tuple[str, ...]]:
        """Each run of letters and digits a synonym opens with ("x" of "x-rays") → those synonyms, lower-cased."""
        found: dict[str, tuple[str, ...]] = {}
        for term in map(str.lower, self.spelled):
            opening = _RUN.match(term).group(0)  # type: ignore[union-attr]
            found[opening] = (*found.get(opening, ()), term)
        return found


#: a run of word characters (``\\w``): what a synonym's ``\\b`` starts and ends
_RUN = re.compile(r"\w+")


def equivalents() -> Equivalents:
    """``clinical_equivalents.json`` read, at each call (the judge reads it once, into its
    :class:`~doclens.evaluators.rules.resources.JudgeResources`)."""
    table = json.loads(resources.files("doclens.evaluators.rules").joinpath("clinical_equivalents.json")
                       .read_text(encoding="utf-8"))
    sources = table["sources"]
    for entry in table["synonyms"] + table["part_of"] + table["implies_absent"] + table["denied_with"]:
        if entry.get("source") not in sources:  # every entry names where it comes from
            raise ValueError(f"clinical_equivalents.json: entry {entry} names no known source")
    spelled = {term: entry["terms"][0] for entry in table["synonyms"] for term in entry["terms"][1:]}
    rewrite = re.compile(r"\b(?:" + "|".join(re.escape(t) for t in sorted(spelled, key=len, reverse=True)) + r")\b",
                         re.IGNORECASE)
    parents: dict[str, set[str]] = {}
    for entry in table["part_of"]:
        parents.setdefault(entry["part"], set()).add(entry["whole"])
    wholes = {}
    for part in parents:
        seen: set[str] = set()
        todo = list(parents[part])
        while todo:
            whole = todo.pop()
            if whole not in seen:
                seen.add(whole)
                todo.extend(parents.get(whole, ()))
        wholes[part] = frozenset(seen)
    absent = tuple((frozenset(e["when"]), frozenset(e["absent"]), frozenset(e.get("unless", ())))
                   for e in table["implies_absent"])
    denied = tuple((frozenset(e["system"]), frozenset(e["members"])) for e in table["denied_with"])
    return Equivalents(rewrite, spelled, wholes, absent, sources, denied)


#: Body sites a near miss differs by (another site decides "not supported"): the part-of table's
#: sites and the regions and organs notes name. "back" and "hand" are read as sites only where a
#: note uses them so (:func:`site_at`).
BODY_SITES = frozenset("""head scalp forehead face eye ear nose mouth lip tongue jaw throat neck shoulder axilla arm
elbow olecranon forearm wrist hand finger thumb digit palm chest breast rib sternum abdomen flank groin quadrant
pelvis hip buttock thigh knee patella leg calf shin ankle foot heel toe back lumbar thoracic cervical spine kidney
lung liver bladder""".split()) | frozenset(
    # v8: organs and parts MeSH's Anatomy tree names (A01 body regions, A02 musculoskeletal, A03 digestive, A04
    # respiratory, A05 urogenital, A06 endocrine, A07 cardiovascular, A08 nervous, A09 sense organs, A10 tissues,
    # A17 integumentary), by their common names: a site a note never names is never rewording (issue 46)
    """skin fingernail toenail tooth gum sinus temple cheek chin eyelid skull brain coccyx
tailbone sacrum clavicle collarbone scapula humerus ulna femur tibia fibula meniscus tendon achilles hamstring
quadriceps biceps triceps aorta carotid esophagus intestine bowel colon rectum anus
pancreas spleen gallbladder appendix thyroid adrenal prostate uterus ovary cervix vagina vulva penis testicle testis
scrotum urethra trachea diaphragm navel umbilicus armpit sole instep knuckle""".split())
#: v8: adjectives that name a site ("pelvic ultrasound", "patellar reflex"); "oral" (a route),
#: "femoral" and "carotid" (vessels) are left out; "stomach" is written "abdomen" (clinical_equivalents.json)
SITE_ADJECTIVES = MappingProxyType({"pelvic": "pelvis", "pancreatic": "pancreas", "abdominal": "abdomen", "patellar": "patella",
                                    "prostatic": "prostate", "cerebral": "brain",
                                    "cranial": "skull", "ocular": "eye", "nasal": "nose", "dental": "tooth", "facial": "face",
                                    "plantar": "foot", "palmar": "palm", "inguinal": "groin", "axillary": "axilla",
                                    "splenic": "spleen",
                                    "rectal": "rectum", "vaginal": "vagina", "uterine": "uterus", "ovarian": "ovary",
                                    "testicular": "testicle", "scrotal": "scrotum", "colonic": "colon", "esophageal": "esophagus",
                                    "thyroidal": "thyroid", "sacral": "sacrum", "coccygeal": "coccyx", "tracheal": "trachea",
                                    "umbilical": "umbilicus", "intestinal": "intestine", "gingival": "gum", "spinal": "spine",
                                    "dermal": "skin", "cutaneous": "skin"})


def site_name(lower: str, lemma: str) -> str | None:
    """The site a word names, by its lemma or as an adjective of a site (:data:`SITE_ADJECTIVES`)."""
    if lemma in BODY_SITES:
        return lemma
    return SITE_ADJECTIVES.get(lower)
#: Words after which "back" is the body part ("low back pain", "her back"), and before which.
_BACK_BEFORE = frozenset("low lower upper mid middle his her my the your".split())
_BACK_AFTER = frozenset("pain pains ache aches spasm spasms injury surgery tenderness stiffness".split())


def site_at(lowers: list[str], i: int, lemma: str) -> bool:
    """Whether the word at ``i`` (its lemma ``lemma``) names a body site here: "back" only as the body
    part ("low back pain", not "came back"), "hand" not in "right-hand-dominant" or "on the other
    hand", "face" not in "face-to-face"."""
    if site_name(lowers[i], lemma) is None:
        return False
    before = lowers[i - 1] if i else ""
    after = next((w for w in lowers[i + 1:] if w not in ("-", "–")), "")
    if lemma == "back":  # v8: or opening its sentence ("Back: tender", "Back is supple"), v9: or after its key
        opening = i == 0 or before == ":"
        return before in _BACK_BEFORE or after in _BACK_AFTER or (opening and after in (":", "is", "exam", "was"))
    if lemma == "hand":
        return after not in ("dominant", "dominance") and before != "other"
    if lemma == "face":
        return after != "to" and before != "to"
    if lemma == "eye":
        return before not in ("watchful", "an", "close")  # "keep a watchful eye on her sugars"
    return True


class Axis(TextEnum):
    """What a direction is a change or state of: its value is the name written before the axes were
    typed (``Axis.COURSE == "course"``)."""

    CHANGE = "change"  # increased / decreased (a dose, a value)
    LEVEL = "level"  # elevated / low
    COURSE = "course"  # improved / worsened / stable
    CONTROL = "control"  # well / poorly controlled
    USE = "use"  # a habit or a drug stopped


class Direction(NamedTuple):
    """A direction a text states: its axis, its sign (+1 up or better, -1 down or worse, 0 steady) and
    the words that state it, as written."""

    axis: Axis
    sign: int
    word: str


#: Directions of change or state, by axis: (axis, +1 / -1 / 0). Opposite signs on one axis
#: contradict; "controlled" is read with the words before it (:func:`directions_of`).
DIRECTIONS: Mapping[str, tuple[Axis, int]] = MappingProxyType({
    **{w: (Axis.CHANGE, 1) for w in "increase increased increases increasing raise raised raising uptitrate".split()},
    **{w: (Axis.CHANGE, -1) for w in """decrease decreased decreases decreasing reduce reduced reduces reducing lowered
lowering taper tapered tapering wean weaned weaning""".split()},
    **{w: (Axis.LEVEL, 1) for w in "elevated high hypertensive".split()},
    **{w: (Axis.LEVEL, -1) for w in "low hypotensive".split()},
    **{w: (Axis.COURSE, 1) for w in "improve improved improves improving improvement better resolved resolving".split()},
    **{w: (Axis.COURSE, -1) for w in """worse worsen worsened worsening worsens deteriorate deteriorated deteriorating
progressed progressing""".split()},
    **{w: (Axis.COURSE, 0) for w in "stable unchanged".split()},
    **{w: (Axis.CONTROL, -1) for w in "uncontrolled".split()},
    # stopping a habit or a drug; its opposite is rarely written, so a stop the note never states
    # is itself the finding (near_misses' _direction_problems)
    **{w: (Axis.USE, -1) for w in "cessation quit quitting quits stopped discontinue discontinued discontinuing".split()},
})
#: v8: what a note or claim does with a drug, written before it ("start metformin", "stop taking
#: Naprosyn") or after it ("lisinopril was discontinued"): +1 a new start, 0 going on with it, -1 a stop.
#: A past start ("was started on", "prescribed") is history, no action, since it agrees with going on
#: and with a later stop. Read by :func:`drug_actions`, compared by :func:`contradicts_action`.
DRUG_ACTIONS: Mapping[str, int] = MappingProxyType({
    **{w: 1 for w in "start starts starting begin begins beginning initiate initiating restart restarting resume "
                     "resuming prescribe prescribing".split()},
    **{w: 0 for w in "continue continues continued continuing".split()},
    **{w: -1 for w in "stop stops stopped stopping discontinue discontinues discontinued discontinuing hold holding "
                      "held quit quits quitting cease ceased".split()},
})
#: v8: words that carry a near miss's one detail besides sites, people and directions: how often (a
#: frequency), which side of the family, what is done with a drug. Never forgiven as rewording
#: (``Analyser.names_near_miss``): "once weekly" is no paraphrase of "daily", nor "paternal" of "maternal".
DETAIL_WORDS = frozenset("""daily weekly monthly nightly hourly yearly annually biweekly fortnightly bid tid qid qd prn
qhs qam qpm maternal paternal""".split()) | frozenset(DRUG_ACTIONS) | frozenset(
    "stopped started prescribed discontinued held continued resumed initiated".split())
#: Treatments other than a named drug that are started, stopped or continued ("stop physical therapy").
TREATMENTS = frozenset("""therapy medication medications medicine medicines treatment treatments inhaler inhalers
brace splint injection injections supplement supplements regimen""".split())
#: How far an action word stands before its drug, and after it ("Protonix 40 mg daily is held").
ACTION_BEFORE, ACTION_AFTER = 4, 6
#: Words that end what an action word before a drug can reach ("stop smoking and start metformin").
_ACTION_BREAKS = frozenset({",", ";", ".", "and", "or", "but", "then", "if", "while"})


def drug_actions(lowers: list[str], drugs: list[int], unsure: set[int], negated: set[int]) -> list[tuple[int, int, str]]:
    """``(drug position, sign, action word)`` for each drug an action word of :data:`DRUG_ACTIONS`
    governs: the nearest such word before it within :data:`ACTION_BEFORE` tokens (no list break or
    other drug between), else one after it within :data:`ACTION_AFTER`. A negated ("do not stop") or
    hypothetical ("if it worsens, stop …") action states none."""
    found = []
    for k, i in enumerate(drugs):
        previous = drugs[k - 1] if k else -1
        before = [j for j in range(i - 1, max(previous, i - ACTION_BEFORE - 1), -1)]
        reach = next((n for n, j in enumerate(before) if lowers[j] in _ACTION_BREAKS), len(before))
        after = [j for j in range(i + 1, min(len(lowers), i + ACTION_AFTER + 1))
                 if not any(lowers[m] in _ACTION_BREAKS for m in range(i + 1, j + 1))]
        at = next((j for j in [*before[:reach], *after] if lowers[j] in DRUG_ACTIONS), None)
        if at is not None and at not in unsure and at not in negated:
            found.append((i, DRUG_ACTIONS[lowers[at]], lowers[at]))
    return found


def contradicts_action(claimed: int, stated: int) -> bool:
    """Whether a drug action the note states contradicts the claim's: any other one — a stop against a
    start or going on, a new start (a present one: a past start is no action, :data:`DRUG_ACTIONS`)
    against going on, and going on against a new start."""
    return claimed != stated


def same_direction(word: str, other: str) -> bool:
    """Whether two words state one direction on one axis ("elevated" and "high")."""
    return word in DIRECTIONS and DIRECTIONS[word] == DIRECTIONS.get(other)


#: Words before "controlled" / "control" that say how well (a ConText negation, "not well
#: controlled", flips what they say).
_CONTROL_GOOD = frozenset("well under good adequately fairly reasonably nicely".split())
_CONTROL_BAD = frozenset("poorly poor inadequately suboptimally badly sub-optimally".split())
#: Verbs after which "up" is a direction ("goes up when stressed").
_GOES = frozenset("go goes going went gone rise rises rising rose shoot shoots spike spikes spiked".split())


def directions_of(lowers: list[str], negated: set[int], unsure: set[int]) -> list[Direction]:
    """The directions a text states: ``(axis, sign, word as written)``. ``negated`` and ``unsure``
    (possible, hypothetical: "if his symptoms worsen") are ConText's token positions. A negated
    control is its opposite ("not well controlled"); another negated or unsure direction states
    none ("has not improved" is not "worsened"). A raised level with no word of control in the text
    ("BP goes up when stressed", "blood pressure is elevated") says the thing is not controlled."""
    found = [direction for i in range(len(lowers)) if i not in unsure
             for direction in [_direction_at(lowers, i, negated)] if direction is not None]
    if not any(axis is Axis.CONTROL for axis, _, _ in found):
        found += [Direction(Axis.CONTROL, -1, word) for axis, sign, word in found if axis is Axis.LEVEL and sign == 1]
    return found


def _direction_at(lowers: list[str], i: int, negated: set[int]) -> Direction | None:
    """The direction the word at ``i`` states, if any (:func:`directions_of`)."""
    lower = lowers[i]
    if lower in ("controlled", "control"):
        return _control_at(lowers, i, negated)
    if lower == "up" and i and lowers[i - 1] in _GOES:
        return None if i - 1 in negated else Direction(Axis.LEVEL, 1, f"{lowers[i - 1]} up")
    if lower in DIRECTIONS and not _names_a_thing(lowers, i):
        axis, sign = DIRECTIONS[lower]
        if i in negated:
            return Direction(axis, -sign, f"not {lower}") if axis is Axis.CONTROL else None
        return Direction(axis, sign, lower)
    return None


def _control_at(lowers: list[str], i: int, negated: set[int]) -> Direction | None:
    """How well controlled "controlled" / "control" at ``i`` says a thing is: "well controlled" (1),
    "poorly controlled", "out of control" (-1), turned by a negation; none for a bare "control"
    ("blood pressure control", "bladder control issues")."""
    lower = lowers[i]
    words = [w for w in lowers[max(0, i - 3): i] if w not in ("-", "–")]
    if lower == "control" and not (words[-1:] and (words[-1] in _CONTROL_GOOD | _CONTROL_BAD
                                                  or words[-2:] == ["out", "of"])):
        return None  # "blood pressure control", "bladder control issues": no direction
    sign = -1 if (set(words[-2:]) & _CONTROL_BAD or words[-2:] == ["out", "of"]) else 1
    # v8: the words that say how well are part of the direction as written ("poorly controlled", not
    # "controlled"): the explanation quotes them, and the claim's concept leaves them out
    how = [w for w in words[-2:] if w in _CONTROL_GOOD | _CONTROL_BAD | {"not", "out", "of"}]
    shown = " ".join(lowers[max(0, i - 2): i + 1]) if lower == "control" else " ".join([*how, lower])
    return Direction(Axis.CONTROL, -sign if i in negated else sign, shown)


#: Words after "high" / "low" that make a name, not a level: "high blood pressure" is hypertension
#: (which may be well controlled), "low back pain" a site, "low-dose aspirin" a dose.
_NAMED_AFTER = frozenset("blood cholesterol back dose grade salt sodium fat carb carbohydrate -".split())


def _names_a_thing(lowers: list[str], i: int) -> bool:
    if lowers[i] not in ("high", "low") or lowers[i + 1: i + 2] == [] or lowers[i + 1] not in _NAMED_AFTER:
        return False
    # v8: "high blood sugar" states a level (of the sugar); "high blood pressure" names hypertension
    return not (lowers[i + 1] == "blood" and lowers[i + 2: i + 3] in (["sugar"], ["sugars"], ["glucose"]))


#: How often a dose is taken, as doses a day (a dose "every 6 hours" is 4 a day); "as needed" and
#: "at night" give no count. The longest phrase is read first ("twice a day" before "a day").
_TIMES = MappingProxyType({"once": 1, "one": 1, "1": 1, "twice": 2, "two": 2, "2": 2, "three": 3, "3": 3, "thrice": 3, "four": 4,
                           "4": 4, "five": 5, "5": 5, "six": 6, "6": 6})
_FREQUENCY_PHRASE = re.compile(
    r"\b(?P<count>once|twice|thrice|one|two|three|four|five|six|[1-6])\s*(?:times?|x)?\s*(?:a|per|each|every)?\s*"
    r"(?:day|daily)\b|\b(?P<abbrev>qd|bid|tid|qid|q\.d\.|b\.i\.d\.|t\.i\.d\.|q\.i\.d\.)(?!\w)"
    r"|\b(?P<weekly>(?:once|twice|thrice|one|two|three|[1-3])\s*(?:times?|x)?\s*(?:(?:a|per|each|every)\s*week|weekly)|"
    r"(?:once\s+)?weekly|every\s+week|(?:once\s+)?monthly|(?:once\s+)?(?:a|per|every)\s+month|every\s+other\s+day)\b"
    r"|\bevery\s+(?P<hours>\d+|four|six|eight|twelve)\s+hours\b|\b(?P<once>daily|a day|per day|every day|nightly|"
    r"at bedtime|every morning|every night)\b")
_ABBREVIATED = MappingProxyType({"qd": 1, "q.d.": 1, "bid": 2, "b.i.d.": 2, "tid": 3, "t.i.d.": 3, "qid": 4, "q.i.d.": 4})
_HOURS = MappingProxyType({"four": 4, "six": 6, "eight": 8, "twelve": 12})


def _less_than_daily(phrase: str) -> Fraction:
    """Doses a day of a weekly, monthly or every-other-day phrase ("twice a week": 2/7)."""
    if "other" in phrase:
        return Fraction(1, 2)
    days = 30 if "month" in phrase else 7
    count = next((n for word, n in _TIMES.items() if re.search(rf"\b{word}\b", phrase)), 1)
    return Fraction(count, days)


def frequencies_in(text: str) -> list[Fraction | int]:
    """The doses a day each frequency of ``text`` gives ("twice daily" 2, "BID" 2, "every 8 hours" 3,
    "daily" 1; v8: "once weekly" 1/7, "twice a week" 2/7, "monthly" 1/30, "every other day" 1/2), in order."""
    found: list[Fraction | int] = []
    for match in _FREQUENCY_PHRASE.finditer(text.lower()):
        if match.group("weekly"):
            found.append(_less_than_daily(match.group("weekly")))
        elif match.group("count"):
            found.append(_TIMES[match.group("count")])
        elif match.group("abbrev"):
            found.append(_ABBREVIATED[match.group("abbrev")])
        elif match.group("hours"):
            hours = _HOURS.get(match.group("hours")) or int(match.group("hours"))
            if hours and 24 % hours == 0:
                found.append(24 // hours)
        else:
            found.append(1)
    return found


def contradicts(claimed: tuple[Axis, int], stated: tuple[Axis, int]) -> bool:
    """Whether a stated direction contradicts a claimed one: one axis, opposite signs ("stable"
    contradicts "worsening", not "improving")."""
    (axis, sign), (other_axis, other_sign) = claimed, stated
    if axis != other_axis or sign == other_sign:
        return False
    return not (axis == Axis.COURSE and {sign, other_sign} == {0, 1})


#: People a fact can be about other than the patient, each with the group it belongs to (a note's
#: "parent" or "family" covers a claim's mother; its "mother" does not cover a claim's father).
RELATIVES: Mapping[str, str] = MappingProxyType({
    "mother": "mother", "mom": "mother", "mum": "mother", "father": "father", "dad": "father",
    "sister": "sister", "brother": "brother", "son": "son", "daughter": "daughter", "wife": "wife",
    "husband": "husband", "boyfriend": "boyfriend", "girlfriend": "girlfriend", "fiance": "fiance",
    "fiancee": "fiance", "grandmother": "grandmother", "grandma": "grandmother", "grandfather": "grandfather",
    "grandpa": "grandfather", "aunt": "aunt", "uncle": "uncle", "cousin": "cousin", "niece": "niece",
    "nephew": "nephew", "coworker": "coworker", "co-worker": "coworker", "colleague": "coworker",
    "friend": "friend", "roommate": "roommate", "parent": "parent", "sibling": "sibling", "child": "child",
    "kid": "child", "spouse": "spouse", "partner": "spouse", "family": "family", "grandparent": "grandparent",
})
#: A general word of the note covers these of the claim.
RELATIVE_COVERS: Mapping[str, frozenset[str]] = MappingProxyType({
    "parent": frozenset({"mother", "father"}), "sibling": frozenset({"sister", "brother"}),
    "child": frozenset({"son", "daughter"}),
    "spouse": frozenset({"wife", "husband", "boyfriend", "girlfriend", "fiance"}),
    "grandparent": frozenset({"grandmother", "grandfather"}),
    "family": frozenset(RELATIVES.values()),
})


def covers(note_person: str, claim_person: str) -> bool:
    return note_person == claim_person or claim_person in RELATIVE_COVERS.get(note_person, ())


class QualifierFamily(TextEnum):
    """v14: what a qualifier a claim adds to a concept says of it (:data:`QUALIFIERS`)."""

    SEVERITY = "severity"  # slight, mild, moderate, severe, marked
    COURSE = "course"  # stable, improving, resolved, worsening
    CHRONICITY = "chronicity"  # acute, chronic, new, recurrent
    REPETITION = "repetition"  # a repeat test, done again
    PERIODICITY = "periodicity"  # yearly, monthly, weekly
    KIND = "kind"  # v15: juvenile, gestational, congenital, primary, secondary (another disease)


#: v14 (rule 8, :mod:`~doclens.evaluators.rules.additions`): qualifiers a claim can add to a concept
#: the note states without them ("stable murmur" where the note gives a murmur and no course), each
#: with its family and its group: the note's word of the same group, in any form, says it
#: (:data:`QUALIFIER_SAID`), another group of the family says something else ("note says mild, claim
#: says severe"). Kept apart from the near-miss generator's lists (``benchmarks/near_miss_generator.py``).
QUALIFIERS: Mapping[str, tuple[QualifierFamily, str]] = MappingProxyType({
    **{w: (QualifierFamily.SEVERITY, "mild") for w in "slight slightly mild mildly minimal minimally".split()},
    **{w: (QualifierFamily.SEVERITY, "moderate") for w in "moderate moderately".split()},
    **{w: (QualifierFamily.SEVERITY, "severe") for w in "severe severely marked markedly extreme extremely".split()},
    **{w: (QualifierFamily.COURSE, "stable") for w in "stable unchanged".split()},
    **{w: (QualifierFamily.COURSE, "improving") for w in "improving improved".split()},
    **{w: (QualifierFamily.COURSE, "resolved") for w in "resolved resolving".split()},
    **{w: (QualifierFamily.COURSE, "worsening") for w in "worsening worsened progressing".split()},
    **{w: (QualifierFamily.CHRONICITY, "acute") for w in "acute".split()},
    **{w: (QualifierFamily.CHRONICITY, "chronic") for w in "chronic longstanding long-standing".split()},
    **{w: (QualifierFamily.CHRONICITY, "new") for w in "new newly".split()},
    **{w: (QualifierFamily.CHRONICITY, "recurrent") for w in "recurrent recurring".split()},
    **{w: (QualifierFamily.REPETITION, "repeat") for w in "repeat repeated again".split()},
    **{w: (QualifierFamily.PERIODICITY, "yearly") for w in "yearly annual annually".split()},
    **{w: (QualifierFamily.PERIODICITY, "monthly") for w in "monthly".split()},
    **{w: (QualifierFamily.PERIODICITY, "weekly") for w in "weekly".split()},
    # v15 (issue 46): a modifier that makes a disease another one (a kind with its own onset, cause or
    # course: juvenile arthritis is not adult arthritis, gestational diabetes not diabetes, secondary
    # hypertension not essential hypertension), read of a clinical concept only (additions.py)
    **{w: (QualifierFamily.KIND, "juvenile") for w in "juvenile".split()},
    **{w: (QualifierFamily.KIND, "adult") for w in "adult-onset".split()},
    **{w: (QualifierFamily.KIND, "gestational") for w in "gestational".split()},
    **{w: (QualifierFamily.KIND, "congenital") for w in "congenital".split()},
    **{w: (QualifierFamily.KIND, "acquired") for w in "acquired".split()},
    **{w: (QualifierFamily.KIND, "primary") for w in "primary".split()},
    **{w: (QualifierFamily.KIND, "secondary") for w in "secondary".split()},
})
#: How a note says each group of :data:`QUALIFIERS` (its own word in another form, or an equivalent:
#: "slight" ~ "mild", "unchanged" ~ "stable", "for years" ~ "chronic", "prior" ~ a repeat).
QUALIFIER_SAID: Mapping[str, re.Pattern] = MappingProxyType({group: re.compile(pattern, re.IGNORECASE) for group, pattern in {
    "mild": r"\b(?:slight\w*|mild\w*|minimal\w*|minor|trace|a (?:little|bit)|small)\b",
    "moderate": r"\bmoderate\w*",
    "severe": r"\b(?:sever\w*|marked\w*|extreme\w*|significant\w*|intense|excruciating|terrible|horrible|worst|bad|a lot of)\b",
    "stable": r"\b(?:stab\w*|unchanged|no (?:change|changes)|not changed|the same)\b",
    "improving": r"\b(?:improv\w*|better)\b",
    "resolved": r"\b(?:resol\w*|gone|went away|no longer|healed)\b",
    "worsening": r"\b(?:wors\w*|progress\w*|deteriorat\w*)\b",
    "acute": r"\b(?:acute\w*|sudden\w*)\b",
    "chronic": r"\b(?:chronic\w*|long-?standing|ongoing|persistent|(?:for|past|last|over) (?:the )?(?:\w+ )?years)\b",
    "new": r"\b(?:new\w*|recent\w*|onset)\b",
    "recurrent": r"\b(?:recur\w*|again|another|episodes)\b",
    "repeat": r"\b(?:repeat\w*|again|another|re-?check\w*|follow-?up|prior|previous|last|before)\b",
    "yearly": r"\b(?:year\w*|annual\w*)\b",
    "monthly": r"\bmonth\w*",
    "weekly": r"\bweek\w*",
    "juvenile": r"\b(?:juvenile|childhood|pediatric)\b",
    "adult": r"\badult\b",
    "gestational": r"\bgestational\b",
    "congenital": r"\b(?:congenital\w*|since birth|from birth|born with)\b",
    "acquired": r"\bacquired\b",
    "primary": r"\b(?:primary|essential)\b",
    "secondary": r"\b(?:secondary|due to|caused by)\b",
}.items()})
#: A pain or severity score out of ten ("pain 7/10", "8 out of 10"), or a grade of plus signs ("1+
#: edema"), or a rating ("rates it as a 7"), which says a severity group (:func:`severity_of_score`).
SEVERITY_SCORE = re.compile(r"\b(\d{1,2})\s*(?:/|out of)\s*10\b|\b([1-4])\s*\+"
                            r"|\brat(?:es|ed|ing|e)\b(?:\s+\w+){0,4}?\s+(?:an?\s+|at\s+)?(\d{1,2})\b", re.IGNORECASE)


def severity_of_score(match: re.Match) -> str:
    """The severity group a score says: out of ten 1-3 mild, 4-6 moderate, 7-10 severe; a grade 1+
    mild, 2+ moderate, 3+ or 4+ severe."""
    if match.group(2):
        return ("mild", "moderate", "severe", "severe")[int(match.group(2)) - 1]
    score = int(match.group(1) or match.group(3))
    return "mild" if score <= 3 else "moderate" if score <= 6 else "severe"


#: v16 (issue 46, rule 8, :func:`~doclens.evaluators.rules.additions.circumstance_words`): how a claim
#: attaches a time to a fact by a clause, which is a fact of its own (docs/design.md §4): "since the
#: fall", "at the time of the tackle", "for the past week", "during a soccer game", "before the
#: surgery". A word the note never uses inside such a clause is no rewording. The openers of an
#: occasion or a trigger ("after", "while", "when", "upon") are left out: measured on the unread
#: halves, their clauses reword the note's more often than they add to it. "if" says a plan's condition.
CIRCUMSTANCE_OPENERS = re.compile(
    r"\b(?:since|before|during|at the time of|for the (?:past|last))\b", re.IGNORECASE)
#: v16: a clause opened by asking or examining is how the fact was found ("when asked", "upon
#: examination"), not a circumstance of it.
CIRCUMSTANCE_FRAMING = frozenset("asked questioned queried prompted examined examination exam palpation inspection "
                                 "auscultation review reviewing".split())
#: v16: words of a circumstance clause that point back to an event the note tells in its own words
#: ("since the injury" for the note's "after she twisted her ankle", "since the last visit", "during
#: the car wreck" for "in an MVA": a car is the wreck's), and "ago", which only dates a number the number rules check: no
#: detail of their own.
CIRCUMSTANCE_EVENTS = frozenset("""injury injuries accident accidents incident trauma event events episode episodes
visit visits appointment appointments last time ago wreck wrecks crash crashes collision mva mvc car motor vehicle""".split())
#: v16: words that give the time of day of a fact by themselves ("at night", "in the morning") or how
#: it feels (a quality of a pain or a symptom: "aching", "burning", "throbbing"): each is a detail the
#: note must state, never a rewording of another word (docs/design.md §4). A number of days or weeks
#: is the number rules'; how often a symptom comes ("intermittent") is left out: measured on the
#: real-output dev half, a chronic condition's "intermittent" rewords the note's occasions of it.
DETAIL_CLASSES: Mapping[str, str] = MappingProxyType({
    **dict.fromkeys("""yesterday overnight tonight weekend weekends morning mornings evening evenings night nights
nighttime bedtime""".split(), "time"),
    **dict.fromkeys("""aching achy sharp dull burning throbbing stabbing shooting cramping crampy squeezing
gnawing pounding pulsating pulsing pressure-like""".split(), "quality"),
    # r17 (issue 46): how a claim says a finding was elicited by the examiner's hand ("pain with
    # palpation", "tender to percussion", "reproduced on palpation"): what the examination found, which
    # a symptom the patient tells of ("knee pain") does not state. Not "maneuver", which names a test
    # the note may name otherwise ("varus stress test")
    **dict.fromkeys("""palpation palpate palpated palpating percussion elicited reproduced reproducible
provoked""".split(), "examination"),
})
#: v16: how a note says a detail of each class of :data:`DETAIL_CLASSES` in other words than the
#: class's own ("nocturnal" for "at night", "an ache"): a note
#: sentence of the claim's fact that says one leaves the claim's word to be weighed as rewording.
DETAIL_SAID: Mapping[str, re.Pattern] = MappingProxyType({what: re.compile(r"\b(?:" + "|".join(
    sorted(w for w, c in DETAIL_CLASSES.items() if c == what)) + "|" + more + r")\b", re.IGNORECASE)
    for what, more in {
        "time": r"nocturnal\w*|a\.?m\.?|p\.?m\.?|asleep|sleep\w*|wak\w+|noon|daytime",
        "quality": r"ache\w*|achiness|pressure|tight\w*|sore\w*|stiff\w*|describ\w+|quality|character\w*",
        # r17: a note sentence of the fact that gives what the examiner's hand found ("tender laterally",
        # "pain when pressed", "reproducible"), or an examination's pain ("On exam, pain over the
        # joint line"); not one of another manoeuvre ("pain with flexion") nor an examination that
        # says no pain ("Examination of the knee: effusion")
        "examination": r"tender\w*|nontender|palpa\w*|percuss\w*|elicit\w*|reproduc\w*|provo\w*|maneuver\w*|"
                       r"manoeuvre\w*|touch\w*|press(?:ed|ing|es)?|exam\w*(?=.*\b(?:pain|sore|discomfort|hurt))|"
                       r"(?:pain|sore|discomfort|hurt)\w*(?=.*\bexam)",
    }.items()})
#: r17 (issue 46, rule 8, :func:`~doclens.evaluators.rules.additions.circumstance_words`): the
#: activities a claim gives as what brings a symptom on, opened by :data:`TRIGGER_OPENERS` ("pain with
#: squatting", "short of breath on exertion", "pain when climbing stairs", "diarrhea after eating"): a
#: trigger the note never gives is a fact of its own, not a rewording. A closed class (a gerund after
#: "with" is as often a symptom: "with swelling", "with vomiting"); each word maps to its family, and
#: a note word of the family gives it ("worse with activity" for "on exertion", "ambulation" for
#: "walking": docs/design.md §4).
TRIGGERS: Mapping[str, str] = MappingProxyType({
    **dict.fromkeys("exertion exert exerting exercise exercises exercising activity activities effort workout "
                    "workouts exertional".split(), "exertion"),
    **dict.fromkeys("walking walk walks ambulation ambulating ambulate ambulates".split(), "walking"),
    **dict.fromkeys("running run jogging jog".split(), "running"),
    **dict.fromkeys("climbing climb stairs stair steps".split(), "stairs"),
    **dict.fromkeys("squatting squat squats kneeling kneel".split(), "squatting"),
    **dict.fromkeys("bending bend stooping stoop".split(), "bending"),
    **dict.fromkeys("lifting lift lifts carrying carry".split(), "lifting"),
    **dict.fromkeys("standing stand sitting sit lying laying reclining recumbent".split(), "posture"),
    **dict.fromkeys("eating eat meals meal food foods drinking swallowing".split(), "eating"),
    **dict.fromkeys("twisting twist turning turn rotating pivoting pivot".split(), "twisting"),
    **dict.fromkeys("reaching reach overhead pushing push pulling pull gripping grip grasping grasp typing "
                    "writing".split(), "reaching"),
    **dict.fromkeys("coughing cough sneezing sneeze breathing breath inspiration".split(), "breathing"),
    **dict.fromkeys("urinating urination voiding micturition".split(), "voiding"),
    **{w: w for w in "driving jumping hiking biking cycling swimming golfing throwing".split()},
})
#: r17: how a claim opens a trigger clause ("with", "after", "when", "while", "upon", "on"), up to two
#: words that only qualify the activity before it ("with prolonged standing", "after her meals").
TRIGGER_OPENERS = re.compile(r"\b(?:with|after|when|whenever|while|upon|on)\s+"
                             r"((?:(?:he|she|they|his|her|their|any|the|a|an|prolonged|long|heavy|repetitive|"
                             r"repeated|certain|more|much|is|was|are|were|going|doing)\s+){0,2})([a-z][a-z\-]*)",
                             re.IGNORECASE)
