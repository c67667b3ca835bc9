"""Rewordings at scale, made by a program (issue 46): typed one-span rewrites of claims labelled
supported that say the same fact by construction, the mirror of ``benchmarks/near_miss_generator.py``.

The near-miss generator guards the judge against false acceptances; this one guards it against
false rejections. Each variant rewrites one span of a supported claim by a known equivalence of
English or of clinical writing, so the variant is supported whenever its source is:

* ``number_word``: a small count in words or digits ("two weeks" <-> "2 weeks", "one month" <-> "1 month");
* ``range``: a range with a hyphen or with "to" ("2-3 beers" <-> "2 to 3 beers");
* ``frequency``: one dosing frequency in another form ("twice daily" / "twice a day" / "BID" / "two
  times per day"; "3 times daily" / "three times a day" / "TID"; "once a week" / "once weekly"), or a
  rate's "a day" / "per day" ("2 packs a day" <-> "2 packs per day");
* ``age``: an age in another form ("45-year-old" / "45 year old"; "45 years old" <-> "45 years of age");
* ``sex``: a person's sex as a noun after an age ("year-old male" <-> "year-old man", "female" <-> "woman",
  "gentleman" -> "man", "lady" -> "woman");
* ``unit``: a unit spelled out or abbreviated ("lbs" <-> "pounds", "%" <-> "percent", "kg" <-> "kilograms",
  "bpm" <-> "beats per minute", "mg" <-> "milligrams");
* ``fraction``: a half in words or digits ("half a pack" <-> "0.5 pack", "one and a half" <-> "1.5");
* ``couple``: "a couple of days" -> "2 days" (a couple is two; the one approximate rewrite, reported
  apart so that it cannot hide the exact kinds).

**Equal by construction.** Every rewrite is one entry of this module's own tables (:data:`REWRITES`),
each an equivalence stated once, with the reason it holds; a rewrite changes no other word of the
claim. The variant keeps its source's label (supported), its note and its id with ``#<kind><n>``.

**Independent of the judge.** The tables are this generator's own; nothing here reads the
clinical-rules judge's lexicons or tables (``docs/design.md``, "Near-misses made by a program": the
same rule for both probes). Sources are the supported claims of the read halves ``dev`` and
``held-out`` and the near-miss probe's supported items; ``fresh`` and ``fresh-2`` may be measured,
by aggregate only (their variants are never shown), and ``sealed`` is never read.

    python -m benchmarks.rewording_generator                        # variants per kind and half
    python -m benchmarks.rewording_generator --measure --show 5     # the default judge's acceptance
    python -m benchmarks.rewording_generator --write variants.jsonl

``--write`` writes one labelled item per line (``label`` true), readable by ``doclens judge-check FILE``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from benchmarks.near_miss_generator import PROBE, Source, VariantFields, _rate, counts, read_sources, sample  # noqa: E402
from benchmarks.near_miss_generator import write_jsonl as _write_items  # noqa: E402

KINDS = ("number_word", "range", "frequency", "age", "sex", "unit", "fraction", "couple")
#: the halves whose variants may be read (shown); fresh and fresh-2 are measured by aggregate only
READ_SOURCES = ("dev", "held-out", PROBE)
MEASURED_ONLY = ("fresh", "fresh-2")

# ----------------------------------------------------------------------------------------- tables
# Written for this probe from general English and clinical abbreviation usage (the Joint Commission's
# and ISMP's lists of dosing abbreviations for BID/TID/QID; SI and US customary unit names).

_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
            "ten": 10, "eleven": 11, "twelve": 12}
_NUMBER_WORD = {v: k for k, v in _NUMBERS.items()}
#: "one" / "1" are rewritten only before a unit of time ("one of", "the one" are no counts)
_TIME_UNITS = "day|days|week|weeks|month|months|year|years|hour|hours|minute|minutes"
#: words after a number that make it no count of things ("2 of them", "two or three", "2 to 3")
_NOT_COUNTED = "of|or|and|to|times|x|mg|mcg|g|ml|cm|mm|kg|lb|lbs|percent"

#: forms of one frequency; any form of a group may be rewritten into any other of the same group
FREQUENCY_GROUPS = {
    "once a day": ["once daily", "once a day", "once per day", "one time a day"],
    "twice a day": ["twice daily", "twice a day", "twice per day", "two times a day", "two times per day",
                    "2 times a day", "2 times daily", "BID"],
    "three times a day": ["three times daily", "three times a day", "three times per day", "3 times a day",
                          "3 times daily", "3 times per day", "TID"],
    "four times a day": ["four times daily", "four times a day", "four times per day", "4 times a day",
                         "4 times daily", "QID"],
    "once a week": ["once a week", "once weekly", "once per week", "one time a week"],
    "twice a week": ["twice a week", "twice weekly", "twice per week", "two times a week", "2 times a week"],
    "three times a week": ["three times a week", "three times weekly", "three times per week", "3 times a week",
                           "3 times weekly"],
}

#: (pattern, replacement) of a unit written two ways; each is applied in both directions
UNIT_PAIRS = [
    (r"(?<=\d) ?lbs\b", " pounds"), (r"(?<=\d) ?lb\b", " pound"), (r"(?<=\d) ?kg\b", " kilograms"),
    (r"(?<=\d) ?%", " percent"), (r"(?<=\d) ?bpm\b", " beats per minute"), (r"(?<=\d) ?mg\b", " milligrams"),
    (r"(?<=\d) ?cm\b", " centimeters"), (r"(?<=\d) ?mm\b", " millimeters"),
]
_UNIT_BACK = [(r"(?<=\d) pounds\b", " lbs"), (r"(?<=\d) pound\b", " lb"), (r"(?<=\d) kilograms?\b", " kg"),
              (r"(?<=\d) percent\b", "%"), (r"(?<=\d) beats per minute\b", " bpm"), (r"(?<=\d) milligrams?\b", " mg"),
              (r"(?<=\d) centimeters?\b", " cm"), (r"(?<=\d) millimeters?\b", " mm")]

_SEX = {"male": "man", "man": "male", "female": "woman", "woman": "female", "gentleman": "man", "lady": "woman",
        "males": "men", "men": "males", "females": "women", "women": "females"}


@dataclass(frozen=True)
class Edit:
    """One rewrite: ``claim[start:end]`` becomes ``after``; ``rule`` names the equivalence used."""

    kind: str
    start: int
    end: int
    after: str
    rule: str


@dataclass(frozen=True)
class Variant(VariantFields):
    rule: str


def _case(model: str, text: str) -> str:
    """``text`` with ``model``'s leading capital (abbreviations keep their own case)."""
    if model[:1].isupper() and text[:1].islower():
        return text[:1].upper() + text[1:]
    if model[:1].islower() and text[:1].isupper() and not text.isupper():
        return text[:1].lower() + text[1:]
    return text


def _sub(kind: str, claim: str, pattern: str, replace: Callable[[re.Match], str | None], rule: str,
         flags: int = re.IGNORECASE) -> Iterator[Edit]:
    for m in re.finditer(pattern, claim, flags):
        after = replace(m)
        if after is not None and after != m.group():
            yield Edit(kind, m.start(), m.end(), _case(m.group(), after), rule)


# -------------------------------------------------------------------------------------------- kinds


def number_word(claim: str) -> Iterator[Edit]:
    """A count of 2-12 in words <-> in digits before a noun; "one" <-> "1" before a unit of time."""
    words = "|".join(w for w in _NUMBERS if w != "one")
    yield from _sub("number_word", claim, rf"(?<![\w./-])({words})(?= (?!(?:{_NOT_COUNTED})\b)[a-z])",
                    lambda m: str(_NUMBERS[m.group(1).lower()]), "a count in words is the same count in digits")
    yield from _sub("number_word", claim, rf"(?<![\w./-])([2-9]|1[012])(?= (?!(?:{_NOT_COUNTED})\b)[a-z])",
                    lambda m: _NUMBER_WORD[int(m.group(1))], "a count in digits is the same count in words")
    yield from _sub("number_word", claim, rf"(?<![\w./-])one(?= (?:{_TIME_UNITS})\b)", lambda m: "1",
                    "one of a unit of time is 1 of it")
    yield from _sub("number_word", claim, rf"(?<![\w./-])1(?= (?:{_TIME_UNITS})\b)", lambda m: "one",
                    "1 of a unit of time is one of it")


def range_(claim: str) -> Iterator[Edit]:
    """A range of two counts written "N-M" <-> "N to M" (before a word, not a date or a score)."""
    yield from _sub("range", claim, r"(?<![\w./-])(\d{1,3})-(\d{1,3})(?= [a-z])(?!\S*/)",
                    lambda m: f"{m.group(1)} to {m.group(2)}" if int(m.group(1)) < int(m.group(2)) else None,
                    "N-M is N to M")
    yield from _sub("range", claim, r"(?<![\w./-])(\d{1,3}) to (\d{1,3})(?= [a-z])",
                    lambda m: f"{m.group(1)}-{m.group(2)}" if int(m.group(1)) < int(m.group(2)) else None,
                    "N to M is N-M")


def _frequency_forms() -> list[tuple[str, str, list[str]]]:
    """(form, group, the group's other forms), longest form first (so "3 times a day" before "a day")."""
    out = [(form, group, [f for f in forms if f.lower() != form.lower()])
           for group, forms in FREQUENCY_GROUPS.items() for form in forms]
    return sorted(out, key=lambda x: -len(x[0]))


def frequency(claim: str) -> Iterator[Edit]:
    """One frequency in each other form of its group; a rate's "a day" <-> "per day" after a count."""
    taken: list[tuple[int, int]] = []
    for form, group, others in _frequency_forms():
        for m in re.finditer(rf"(?<![\w-]){re.escape(form)}(?![\w-])", claim, re.IGNORECASE):
            if any(s < m.end() and m.start() < e for s, e in taken):
                continue
            taken.append((m.start(), m.end()))
            for other in others:
                yield Edit("frequency", m.start(), m.end(), _case(m.group(), other), f"{form} is {group}")
    rate = r"(?:\d|\bhalf a|\bhalf|\b(?:" + "|".join(_NUMBERS) + r")) (?:[a-z]+ ){1,2}?(a|per) (day|week|month)\b"
    for m in re.finditer(rate, claim, re.IGNORECASE):
        if any(s < m.end() and m.start() < e for s, e in taken) or re.search(r"\btimes?\b", m.group(), re.I):
            continue
        start = m.start(1)
        yield Edit("frequency", start, m.end(1), "per" if m.group(1).lower() == "a" else "a",
                   "N things a day is N things per day")


def age(claim: str) -> Iterator[Edit]:
    """An age: "N-year-old" <-> "N year old"; "N years old" <-> "N years of age"."""
    yield from _sub("age", claim, r"\b(\d{1,3})-year-old\b", lambda m: f"{m.group(1)} year old", "N-year-old is N year old")
    yield from _sub("age", claim, r"\b(\d{1,3}) year old\b", lambda m: f"{m.group(1)}-year-old", "N year old is N-year-old")
    yield from _sub("age", claim, r"\b(\d{1,3}) years old\b", lambda m: f"{m.group(1)} years of age",
                    "N years old is N years of age")
    yield from _sub("age", claim, r"\b(\d{1,3}) years of age\b", lambda m: f"{m.group(1)} years old",
                    "N years of age is N years old")


def sex(claim: str) -> Iterator[Edit]:
    """A person's sex as the noun after an age ("year-old male" <-> "year-old man")."""
    for m in re.finditer(r"\byear[- ]old ((?:gentle)?m[ae]n|(?:fe)?males?|wom[ae]n|lady)\b(?! (?:patient|child))",
                         claim, re.IGNORECASE):
        word = m.group(1)
        yield Edit("sex", m.start(1), m.end(1), _case(word, _SEX[word.lower()]), f"{word.lower()} is {_SEX[word.lower()]}")


def unit(claim: str) -> Iterator[Edit]:
    """A unit abbreviated <-> spelled out after a number."""
    for pattern, after in UNIT_PAIRS + _UNIT_BACK:
        yield from _sub("unit", claim, pattern, lambda m, a=after: a, f"{after.strip()} (one unit)", re.IGNORECASE)


def _singular(noun: str) -> str:
    return noun[:-1] if noun.endswith("s") and not noun.endswith("ss") else noun


def fraction(claim: str) -> Iterator[Edit]:
    """A half in words <-> in digits: "half a pack" <-> "0.5 pack"; "one and a half" <-> "1.5"."""
    yield from _sub("fraction", claim, r"\bhalf an? (?=[a-z])", lambda m: "0.5 ", "half a thing is 0.5 thing")
    yield from _sub("fraction", claim, r"(?<![\w.])0\.5 ([a-z]+)\b",
                    lambda m: f"half a {_singular(m.group(1))}" if m.group(1).lower() not in ("mg", "ml", "mcg", "cm", "mm", "g")
                    else None, "0.5 thing is half a thing")
    yield from _sub("fraction", claim, r"\bone and a half\b", lambda m: "1.5", "one and a half is 1.5")
    yield from _sub("fraction", claim, r"(?<![\w.])1\.5(?= [a-z])", lambda m: "one and a half", "1.5 is one and a half")


def couple(claim: str) -> Iterator[Edit]:
    """"a couple (of) days" -> "2 days" (a couple is two)."""
    yield from _sub("couple", claim, rf"\b(?:a|the past|the last) couple(?: of)? (?=(?:{_TIME_UNITS})\b)",
                    lambda m: ("the past 2 " if m.group().lower().startswith("the past") else
                               "the last 2 " if m.group().lower().startswith("the last") else "2 "),
                    "a couple is two")


GENERATORS: dict[str, Callable[[str], Iterator[Edit]]] = {
    "number_word": number_word, "range": range_, "frequency": frequency, "age": age, "sex": sex, "unit": unit,
    "fraction": fraction, "couple": couple}
REWRITES = {kind: fn.__doc__ for kind, fn in GENERATORS.items()}


def variants_of(claim: str, kinds: Iterable[str] = KINDS) -> list[tuple[Edit, str]]:
    """Every rewording of ``claim``: ``(edit, variant text)``, one per distinct text, in a fixed order."""
    out, seen = [], {claim}
    for kind in kinds:
        for edit in GENERATORS[kind](claim):
            text = claim[:edit.start] + edit.after + claim[edit.end:]
            if text not in seen:
                seen.add(text)
                out.append((edit, text))
    return out


def generate(sources: Iterable[Source], kinds: Iterable[str] = KINDS) -> list[Variant]:
    """The variants of every source, in source order; ids ``<source id>#<kind><n>``."""
    kinds = tuple(kinds)
    out = []
    for src in sources:
        counts: Counter = Counter()
        for edit, text in variants_of(src.claim, kinds):
            counts[edit.kind] += 1
            out.append(Variant(f"{src.id}#{edit.kind}{counts[edit.kind]}", src.id, src.half, edit.kind, src.claim, text,
                               {"start": edit.start, "end": edit.end, "text": src.claim[edit.start:edit.end]},
                               {"start": edit.start, "end": edit.start + len(edit.after), "text": edit.after},
                               src.premise_ref, src.side, edit.rule))
    return out


# ------------------------------------------------------------------------------------------ measuring


def measure(variants: list[Variant], sources: list[Source], show: int = 0, judge=None) -> dict:
    """The default judge on every variant and on its source claim: acceptance per kind (all variants,
    and ``kept``: among variants whose source the judge accepts, the share it still accepts, the
    figure a rewording can only lose); with ``show`` up to ``show`` rejected variants per kind whose
    source is accepted, from the read halves only, with the judge's explanation."""
    if judge is None:
        from doclens.evaluators.rules.clinical_rules import ClinicalRulesJudge

        judge = ClinicalRulesJudge()
    premise = {s.id: s.premise for s in sources}
    by_id = {s.id: s for s in sources}
    used = sorted({v.source_id for v in variants})
    started = time.time()
    verdicts = judge.entail_batch([(premise[v.source_id], v.claim) for v in variants])
    control = dict(zip(used, judge.entail_batch([(by_id[i].premise, by_id[i].claim) for i in used])))
    seconds = time.time() - started
    total, acc, kept_n, kept = Counter(), Counter(), Counter(), Counter()
    for v, ok in zip(variants, verdicts):
        total[v.kind] += 1
        acc[v.kind] += ok
        if control[v.source_id]:
            kept_n[v.kind] += 1
            kept[v.kind] += ok
    report = {
        "judge": "clinical-rules",
        "variants": _rate(sum(verdicts), len(variants)),
        "kept": _rate(sum(kept.values()), sum(kept_n.values())),
        "per_kind": {k: {**_rate(acc[k], total[k]), "kept": _rate(kept[k], kept_n[k])} for k in KINDS if total[k]},
        "control": {"sources": len(used), "accepted": sum(control.values()),
                    "rate": round(sum(control.values()) / len(used), 4) if used else None},
        "judge_seconds": round(seconds, 1),
    }
    if show:
        report["rejected"] = _rejected_examples(variants, verdicts, control, premise, judge, show)
    return report


def _rejected_examples(variants, verdicts, control, premise, judge, show: int) -> dict:
    """Up to ``show`` variants per kind rejected although their source is accepted (read halves only)."""
    out: dict[str, list] = defaultdict(list)
    lost = {v.id for v, ok in zip(variants, verdicts) if not ok and control[v.source_id] and v.half in READ_SOURCES}
    for v in sample(variants, len(variants), "rewording"):  # type: ignore[arg-type]
        if v.id in lost and len(out[v.kind]) < show:
            out[v.kind].append({"id": v.id, "half": v.half, "source_claim": v.source_claim, "variant": v.claim,
                                "rule": v.rule, "explanation": judge.explain(premise[v.source_id], v.claim)[1]})
    return dict(out)


def write_jsonl(variants: list[Variant], path: str) -> None:
    """One labelled item per variant (``label`` true), readable by ``read_labelled`` with its premise reference."""
    _write_items(variants, path, label=True, extra="rule")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--halves", default=",".join(READ_SOURCES),
                        help=f"comma-separated, from {', '.join(READ_SOURCES + MEASURED_ONLY)} (default the read "
                             "halves; fresh and fresh-2 by aggregate only; sealed is never read)")
    parser.add_argument("--kinds", default=",".join(KINDS), help="comma-separated kinds (default all)")
    parser.add_argument("--aci-bench-dir", default=None, help="the folder of ACI-BENCH system outputs")
    parser.add_argument("--measure", action="store_true", help="judge every variant with the default judge")
    parser.add_argument("--show", type=int, default=0,
                        help="with --measure: list N rejected variants per kind (read halves only)")
    parser.add_argument("--limit", type=int, default=0, help="only N variants, drawn deterministically")
    parser.add_argument("--write", metavar="FILE", help="write the variants as JSONL labelled items (read halves only)")
    args = parser.parse_args(argv)
    kinds = [k for k in args.kinds.split(",") if k]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        parser.error(f"unknown kind(s) {', '.join(unknown)}; choose from {', '.join(KINDS)}")
    halves = [h for h in args.halves.split(",") if h]
    if args.write and set(halves) & set(MEASURED_ONLY):
        parser.error("--write is for the read halves only (fresh and fresh-2 are measured by aggregate)")
    sources = read_sources(halves, args.aci_bench_dir)
    variants = generate(sources, kinds)
    if args.limit:
        variants = sample(variants, args.limit)  # type: ignore[arg-type]
    if args.write:
        write_jsonl(variants, args.write)
    report = measure(variants, sources, args.show) if args.measure else counts(variants, sources, KINDS)
    json.dump(report, sys.stdout, indent=1, ensure_ascii=False)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
