"""The rewording generator (benchmarks/rewording_generator.py, issue 46): each variant differs from its
source claim in exactly its declared span, by one rewrite of one equivalence of its kind, so it says
the same fact; the output is deterministic; the unread halves are measured by aggregate only. The
judge's acceptance of the variants is measured by the script, not asserted here."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from benchmarks import rewording_generator as rw
from doclens.datasets.labelled import read_labelled

SCRIPT = Path(rw.__file__)

# (claim, kind, a variant that must be made)
MADE = [
    ("He has had the pain for two weeks.", "number_word", "He has had the pain for 2 weeks."),
    ("Follow up in 2 weeks.", "number_word", "Follow up in two weeks."),
    ("Symptoms started one month ago.", "number_word", "Symptoms started 1 month ago."),
    ("He drinks 2-3 beers a week.", "range", "He drinks 2 to 3 beers a week."),
    ("Ibuprofen 800 mg three times a day.", "frequency", "Ibuprofen 800 mg 3 times daily."),
    ("Ibuprofen 800 mg three times a day.", "frequency", "Ibuprofen 800 mg TID."),
    ("Take metformin 500 mg twice a day.", "frequency", "Take metformin 500 mg BID."),
    ("Take metformin 500 mg twice a day.", "frequency", "Take metformin 500 mg two times per day."),
    ("Check sugars once a week.", "frequency", "Check sugars once weekly."),
    ("He smokes 2 packs a day.", "frequency", "He smokes 2 packs per day."),
    ("She is a 45-year-old female.", "age", "She is a 45 year old female."),
    ("The patient is 45 years old.", "age", "The patient is 45 years of age."),
    ("The patient is a 62-year-old male.", "sex", "The patient is a 62-year-old man."),
    ("She is a 38 year old woman.", "sex", "She is a 38 year old female."),
    ("Weight is 180 lbs.", "unit", "Weight is 180 pounds."),
    ("Ejection fraction of 55%.", "unit", "Ejection fraction of 55 percent."),
    ("Her EF is 55 percent.", "unit", "Her EF is 55%."),
    ("He smokes half a pack a day.", "fraction", "He smokes 0.5 pack a day."),
    ("He smokes 0.5 packs a day.", "fraction", "He smokes half a pack a day."),
    ("He smokes one and a half packs a day.", "fraction", "He smokes 1.5 packs a day."),
    ("Over the past couple of days he has had a cough.", "couple", "Over the past 2 days he has had a cough."),
]

# (claim, a variant that must NOT be made, why)
NOT_MADE = [
    ("One of her children has asthma.", "1 of her children has asthma.", "'one of' is no count"),
    ("Two of the three tests were normal.", "2 of the three tests were normal.", "'two of' is no count of things"),
    ("Pain is 7/10.", "Pain is seven/10.", "a score is no count"),
    ("He takes 0.5 mg of lorazepam.", "He takes half a mg of lorazepam.", "a dose stays a number"),
    ("The male patient reports pain.", "The man patient reports pain.", "'male' is an adjective there"),
    ("He will take it daily activities.", "He will take it once daily activities.", "a bare 'daily' is not rewritten"),
]

#: equivalences restated independently of the module, by kind: the pair (before, after) must say one thing
_WORDS = {"one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8",
          "nine": "9", "ten": "10", "eleven": "11", "twelve": "12"}
_UNITS = {"lbs": "lb", "pounds": "lb", "lb": "lb", "pound": "lb", "kg": "kg", "kilograms": "kg", "kilogram": "kg",
          "%": "%", "percent": "%", "bpm": "bpm", "beats per minute": "bpm", "mg": "mg", "milligrams": "mg",
          "milligram": "mg", "cm": "cm", "centimeters": "cm", "centimeter": "cm", "mm": "mm", "millimeters": "mm",
          "millimeter": "mm"}
_SEX = {"male": "m", "man": "m", "gentleman": "m", "males": "m", "men": "m", "female": "f", "woman": "f", "lady": "f",
        "females": "f", "women": "f"}


def _per_day(text: str) -> tuple[int, str] | None:
    """(count, period) of a frequency phrase, read independently ("BID" 2 a day, "3 times weekly" 3 a week)."""
    t = text.lower().strip()
    abbrev = {"bid": (2, "day"), "tid": (3, "day"), "qid": (4, "day")}
    if t in abbrev:
        return abbrev[t]
    m = re.fullmatch(r"(once|twice|one|two|three|four|\d)(?: times?)? (?:a |per )?(day|daily|week|weekly)", t)
    if not m:
        return None
    count = {"once": 1, "twice": 2}.get(m.group(1)) or int(_WORDS.get(m.group(1), m.group(1)))
    return count, "week" if m.group(2).startswith("week") else "day"


def _same(kind: str, before: str, after: str) -> bool:
    b, a = before.strip().lower(), after.strip().lower()
    if kind == "number_word":
        return _WORDS.get(b, b) == _WORDS.get(a, a)
    if kind == "range":
        return re.split(r"-| to ", b) == re.split(r"-| to ", a)
    if kind == "frequency":
        return (b in ("a", "per") and a in ("a", "per")) or (_per_day(b) is not None and _per_day(b) == _per_day(a))
    if kind == "age":
        return re.sub(r"\D", "", b) == re.sub(r"\D", "", a) and all("old" in x or "age" in x for x in (b, a))
    if kind == "sex":
        return _SEX[b] == _SEX[a]
    if kind == "unit":
        return _UNITS[b.strip()] == _UNITS[a.strip()]
    if kind == "fraction":
        value = {"half a ": 0.5, "half an ": 0.5, "0.5 ": 0.5, "one and a half": 1.5, "1.5": 1.5}
        return value.get(before.lower()) == value.get(after.lower()) or (
            before.startswith("0.5") and after.startswith("half a"))
    return kind == "couple" and "couple" in b and "2" in a


def check_variant(claim: str, variant: str, kind: str, before: dict, after: dict) -> None:
    assert kind in rw.KINDS
    assert claim[before["start"]:before["end"]] == before["text"]
    assert variant == claim[:before["start"]] + after["text"] + claim[before["end"]:]
    assert after["text"] != before["text"] and variant != claim
    assert _same(kind, before["text"], after["text"]), (kind, before["text"], after["text"])


def _spans(claim: str, edit: rw.Edit) -> tuple[dict, dict]:
    return ({"start": edit.start, "end": edit.end, "text": claim[edit.start:edit.end]},
            {"start": edit.start, "end": edit.start + len(edit.after), "text": edit.after})


@pytest.mark.parametrize("claim, kind, expected", MADE)
def test_hand_written_variant_made(claim, kind, expected):
    made = {text: edit for edit, text in rw.variants_of(claim)}
    assert expected in made, sorted(made)
    assert made[expected].kind == kind and made[expected].rule
    check_variant(claim, expected, kind, *_spans(claim, made[expected]))


@pytest.mark.parametrize("claim, refused, why", NOT_MADE)
def test_hand_written_variant_refused(claim, refused, why):
    assert refused not in [text for _, text in rw.variants_of(claim)], why


def test_every_hand_written_variant_says_the_same():
    for claim, *_ in MADE + NOT_MADE:
        for edit, text in rw.variants_of(claim):
            check_variant(claim, text, edit.kind, *_spans(claim, edit))


def test_one_kind_at_a_time_gives_only_that_kind():
    for claim, kind, _ in MADE:
        assert {e.kind for e, _ in rw.variants_of(claim, [kind])} == {kind}


def test_generator_reads_nothing_of_the_judge():
    """Independence from the judge: at module level the generator imports the standard library and the
    near-miss generator's sources only; the judge is imported inside measure() alone, to judge."""
    tree = ast.parse(SCRIPT.read_text(encoding="utf-8"))
    top = {n.module for n in tree.body if isinstance(n, ast.ImportFrom)}
    assert {m for m in top if m and m.split(".")[0] in ("doclens", "benchmarks")} == {"benchmarks.near_miss_generator"}
    nested = {n.module for fn in ast.walk(tree) if isinstance(fn, ast.FunctionDef)
              for n in ast.walk(fn) if isinstance(n, ast.ImportFrom)}
    assert {m for m in nested if m and m.startswith("doclens")} == {"doclens.evaluators.rules.clinical_rules"}
    for name in ("rules.lexicons", "rules.words", "WORD_NUMBERS", "clinical_equivalents"):
        assert name not in SCRIPT.read_text(encoding="utf-8")


def test_sealed_half_is_refused_and_unread_halves_are_not_written(shared_data, tmp_path):
    with pytest.raises(SystemExit, match="sealed half is never read"):
        rw.read_sources(["sealed"], shared_data / "aci_bench_systems")
    with pytest.raises(SystemExit) as exit_info:
        rw.main(["--halves", "fresh", "--write", str(tmp_path / "x.jsonl")])
    assert exit_info.value.code == 2 and not (tmp_path / "x.jsonl").exists()


@pytest.fixture(scope="module")
def real_slice(shared_data):
    sources = rw.read_sources(["held-out", rw.PROBE], shared_data / "aci_bench_systems")
    picked = sources[::3]
    return picked, rw.generate(picked)


def test_real_items_keep_the_invariants(real_slice):
    sources, variants = real_slice
    assert len(variants) > 20
    assert {v.half for v in variants} <= {"held-out", rw.PROBE}
    for v in variants:
        assert v.id.startswith(v.source_id + "#" + v.kind)
        check_variant(v.source_claim, v.claim, v.kind, v.before, v.after)


def test_output_is_deterministic(real_slice):
    sources, variants = real_slice
    again = rw.generate(list(sources))
    assert [(v.id, v.claim, v.rule) for v in again] == [(v.id, v.claim, v.rule) for v in variants]


def test_written_variants_read_back_as_supported_items(real_slice, tmp_path, shared_data):
    sources, variants = real_slice
    path = tmp_path / "rewordings.jsonl"
    rw.write_jsonl(variants[:10], str(path))
    items = read_labelled(str(path), aci_bench_dir=shared_data / "aci_bench_systems").items
    premise = {s.id: s.premise for s in sources}
    assert [i.claim for i in items] == [v.claim for v in variants[:10]]
    assert all(i.label for i in items)
    assert [i.premise for i in items] == [premise[v.source_id] for v in variants[:10]]


def test_cli_counts(shared_data, capsys):
    assert rw.main(["--halves", "held-out", "--kinds", "frequency", "--limit", "5",
                    "--aci-bench-dir", str(shared_data / "aci_bench_systems")]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["variants"] == 5 and report["per_kind"]["frequency"] == 5


@pytest.mark.slow
def test_measuring_mode_runs_on_a_slice(real_slice):
    """Smoke: the default judge on 20 variants and their sources; the figures are measured, not asserted."""
    sources, variants = real_slice
    some = rw.sample(variants, 20)  # type: ignore[arg-type]
    report = rw.measure(some, sources, show=2)
    assert report["variants"]["variants"] == 20
    assert sum(k["variants"] for k in report["per_kind"].values()) == 20
    assert report["kept"]["variants"] <= 20 and report["kept"]["accepted"] <= report["kept"]["variants"]
    assert report["control"]["sources"] == len({v.source_id for v in some})
    for kind, examples in report.get("rejected", {}).items():
        assert kind in rw.KINDS and len(examples) <= 2
        assert all(e["half"] in rw.READ_SOURCES and e["explanation"] for e in examples)
