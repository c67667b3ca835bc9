"""The near-miss generator (benchmarks/near_miss_generator.py, issue 46 point 2): each variant differs
from its source claim in exactly its declared span, has the kind it says, brings in no word the note
holds (or, for a negation flip, turns over what the note says), and the output is deterministic. The
judge's acceptance of the variants is measured by the script, not asserted here."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from benchmarks import near_miss_generator as nm
from doclens.datasets.labelled import read_labelled

SCRIPT = Path(nm.__file__)

# (claim, note, kind, a variant that must be made)
MADE = [
    ("No murmurs, rubs, or gallops.", "Heart: regular rate and rhythm. No murmurs, rubs, or gallops.", "negation",
     "Murmurs, rubs, or gallops."),
    ("She denies fever or chills.", "She denies fever or chills.", "negation", "She reports fever or chills."),
    ("She reports knee pain.", "She reports knee pain for two weeks. Her knee is swollen.", "negation",
     "She denies knee pain."),
    ("The pain is constant.", "The pain is constant and sharp.", "negation", "The pain is not constant."),
    ("Continue lisinopril 10 mg daily.", "Blood pressure is fine. Continue lisinopril 10 mg daily.", "action",
     "Stop lisinopril 10 mg daily."),
    ("Her diabetes is well controlled.", "Her diabetes is well controlled on metformin.", "control",
     "Her diabetes is poorly controlled."),
    ("His reflux has improved.", "His reflux has improved on omeprazole.", "course", "His reflux has worsened."),
    ("Increase metformin to 1000 mg.", "We will increase metformin to 1000 mg.", "amount",
     "Decrease metformin to 1000 mg."),
    ("He will need surgery.", "He will need surgery on the knee.", "need", "He will not need surgery."),
    ("She has pain in her left knee.", "Left knee pain for three weeks after a fall.", "side",
     "She has pain in her right knee."),
    ("She has pain in her left knee.", "Left knee pain for three weeks after a fall.", "side",
     "She has pain in both knees."),
    ("He takes aspirin 81 mg daily.", "He takes aspirin 81 mg daily.", "dose", "He takes aspirin 162 mg daily."),
    ("He takes aspirin 81 mg daily.", "He takes aspirin 81 mg daily.", "dose", "He takes aspirin 81 mcg daily."),
    ("He takes aspirin 81 mg daily.", "He takes aspirin 81 mg daily.", "frequency", "He takes aspirin 81 mg twice daily."),
    ("Her mother has diabetes.", "Family history: her mother has diabetes.", "person", "Her father has diabetes."),
    ("He takes aspirin 81 mg daily.", "He takes aspirin 81 mg daily.", "person", "His father takes aspirin 81 mg daily."),
]

# (claim, note, kind, a variant that must NOT be made, why)
NOT_MADE = [
    ("No edema.", "No edema in the left leg. Trace edema in the right ankle.", "negation", "Edema.",
     "the note affirms edema once"),
    ("She reports knee pain.", "She reports knee pain for two weeks. No knee pain at rest.", "negation",
     "She denies knee pain.", "the note also negates knee pain"),
    ("She has no history of knee problems.", "She denies any previous injuries to her knees.", "negation",
     "She has history of knee problems.", "the note never names the head"),
    ("Continue lisinopril 10 mg daily.", "She stopped metformin last year. Continue lisinopril 10 mg daily.", "action",
     "Stop lisinopril 10 mg daily.", "the note uses 'stop'"),
    ("She has pain in her left knee.", "Left knee pain for three weeks. Right hip is normal.", "side",
     "She has pain in her right knee.", "the note uses 'right' as a side"),
    ("Metformin 500 mg twice daily.", "Metformin 500 mg in the morning and 500 mg at night.", "frequency",
     "Metformin 500 mg once daily.", "'in the morning' is once daily"),
    ("He takes Norvasc 5 mg.", "He takes amlodipine 5 mg and nifedipine was stopped.", "drug",
     "He takes nifedipine 5 mg.", "nifedipine is in the note"),
    ("He takes ibuprofen.", "He takes ibuprofen; Aleve did not help.", "drug", "He takes naproxen.",
     "Aleve is naproxen's brand"),
    ("He will take ibuprofen as needed for pain.", "He will take 400 mg of ibuprofen up to 3 times per day.", "frequency",
     "He will take ibuprofen three times daily for pain.", "'3 times per day' is three times daily"),
    ("The injury occurred about a week ago.", "The injury occurred about a week ago.", "frequency",
     "The injury occurred about once daily ago.", "'a week ago' is no frequency"),
    ("He has a history of smoking.", "He has a family history of scoliosis and a history of smoking.", "person",
     "His father has a history of smoking.", "the note's sentence about smoking names the family"),
]


def _tokens(text: str) -> list[str]:
    return [t.low for t in nm.tokenize(text)]


def check_variant(claim: str, note: str, kind: str, variant: str, before: dict, after: dict) -> None:
    """The construction invariants, restated independently of the kind's own code."""
    assert kind in nm.KINDS
    assert claim[before["start"]:before["end"]] == before["text"]
    assert variant == claim[:before["start"]] + after["text"] + claim[before["end"]:]
    assert variant[after["start"]:after["end"]] == after["text"]
    assert after["text"] != before["text"] and variant != claim
    text = nm.Text(note)
    old = {nm.stem(w) for w in _tokens(before["text"])}
    stop = nm.word_set("stopwords", "words")
    new = [w for w in _tokens(after["text"]) if nm.stem(w) not in old and w.isalpha() and w not in stop]
    if kind == "negation":
        flips = nm.word_set("negation_cues", "words") | {"reports", "reported", "report", "reporting", "with",
                                                         "positive", "negative", "abnormal", "mild", "some"}
        changed = set(_tokens(before["text"])) ^ set(_tokens(after["text"]))
        assert changed & flips or before["text"].lower().startswith(("no ", "never ")), (claim, variant)
    elif kind == "dose":
        number = re.search(r"\d+(?:\.\d+)?", after["text"])
        assert (number and not nm._number_near_units(text, number.group())) or \
            all(not text.has(w) for w in new), (claim, variant)
    elif kind == "frequency":
        classes = {c for _, _, c in nm.frequencies(nm.Text(after["text"]))}
        in_note = {c for _, _, c in nm.frequencies(text)} | nm.implied_frequencies(text)
        assert classes and not classes & in_note, (claim, variant)
    elif kind == "need":
        assert "not" in _tokens(after["text"]) or "not" in _tokens(before["text"]) or "no" in _tokens(before["text"])
    else:
        assert new, (claim, variant)
        assert all(not text.has(w) for w in new), (claim, variant, [w for w in new if text.has(w)])


def _variant_spans(claim: str, edit: nm.Edit, text: str) -> tuple[dict, dict]:
    before = {"start": edit.start, "end": edit.end, "text": claim[edit.start:edit.end]}
    after = {"start": edit.start, "end": edit.start + len(edit.after), "text": edit.after}
    return before, after


@pytest.mark.parametrize("claim, note, kind, expected", MADE)
def test_hand_written_variant_made(claim, note, kind, expected):
    made = {text: edit for edit, text in nm.variants_of(claim, note)}
    assert expected in made, sorted(made)
    assert made[expected].kind == kind
    before, after = _variant_spans(claim, made[expected], expected)
    check_variant(claim, note, kind, expected, before, after)


@pytest.mark.parametrize("claim, note, kind, refused, why", NOT_MADE)
def test_hand_written_variant_refused(claim, note, kind, refused, why):
    made = [text for edit, text in nm.variants_of(claim, note, [kind])]
    assert refused not in made, why


def test_no_detail_changed_in_a_claim_that_denies():
    """"denies any tingling" in the note covers "denies tingling in her calves": a claim that denies
    something gets no side, site, drug, dose, frequency or person variant."""
    claim, note = "She denies any tingling in her right toes.", "She denies any tingling. Numbness in her right toes."
    assert [t for _, t in nm.variants_of(claim, note, nm.DETAIL_KINDS)] == []
    assert nm.variants_of("She has tingling in her right toes.", note, ["site"])


def test_no_site_inside_a_region_the_note_names():
    arm_parts = {"shoulder", "elbow", "wrist", "forearm", "hand"}
    claim = "Pain with flexion of the knee."
    with_arm = {e.after for e, _ in nm.variants_of(claim, "Pain with flexion of the right arm and knee.", ["site"])}
    assert not with_arm & arm_parts
    toe = next(e for e in nm._site_entries() if e["noun"] == "toe")
    assert not nm._site_absent(nm.Text("Pain radiates down his left leg."), toe)  # toe, in the foot, in the leg
    entry = next(e for e in nm._site_entries() if e["noun"] == "shoulder")
    assert nm._site_absent(nm.Text("Knee pain."), entry)
    assert not nm._site_absent(nm.Text("Knee pain. Pain in the right arm."), entry)


def test_every_hand_written_variant_keeps_the_invariants():
    for claim, note, *_ in MADE + NOT_MADE:
        for edit, text in nm.variants_of(claim, note):
            check_variant(claim, note, edit.kind, text, *_variant_spans(claim, edit, text))


def test_one_kind_at_a_time_gives_only_that_kind():
    for claim, note, kind, _ in MADE:
        assert {e.kind for e, _ in nm.variants_of(claim, note, [kind])} == {kind}


def test_stem_joins_inflections():
    assert nm.stem("knees") == nm.stem("knee")
    assert nm.stem("stopped") == nm.stem("stop") == nm.stem("stopping")
    assert nm.stem("increases") == nm.stem("increase") == nm.stem("increased")
    assert nm.Text("She discontinued it.").has("discontinue")
    assert nm.Text("Left-sided weakness.").has("left")


def test_word_lists_say_their_source():
    data = json.loads(nm.WORDS_PATH.read_text(encoding="utf-8"))
    lists = {k: v for k, v in data.items() if not k.startswith("_")}
    assert lists
    for name, entry in lists.items():
        assert isinstance(entry.get("source"), str) and len(entry["source"]) > 20, name


def test_generator_reads_nothing_of_the_judge():
    """Independence from the judge (issue 46): at module level the generator imports only the standard
    library and doclens.datasets.labelled; the judge is imported inside measure() alone, to judge."""
    tree = ast.parse(SCRIPT.read_text(encoding="utf-8"))
    top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    modules = {a.name for n in top if isinstance(n, ast.Import) for a in n.names} | \
        {n.module for n in top if isinstance(n, ast.ImportFrom)}
    assert {m for m in modules if m and m.split(".")[0] == "doclens"} == {"doclens.datasets.labelled"}
    nested = {n.module for fn in ast.walk(tree) if isinstance(fn, ast.FunctionDef)
              for n in ast.walk(fn) if isinstance(n, ast.ImportFrom) and n is not fn}
    assert {m for m in nested if m and m.startswith("doclens")} == {"doclens.evaluators.rules.clinical_rules"}
    source = SCRIPT.read_text(encoding="utf-8") + nm.WORDS_PATH.read_text(encoding="utf-8")
    for name in ("rules.lexicons", "rules.words", "rules.near_misses", "clinical_equivalents", "rules/"):
        assert name not in source


def test_sealed_half_is_refused(shared_data):
    with pytest.raises(SystemExit, match="sealed half is never read"):
        nm.read_sources(["sealed"], shared_data / "aci_bench_systems")


@pytest.fixture(scope="module")
def real_sample(shared_data):
    sources = nm.read_sources(["held-out", nm.PROBE], shared_data / "aci_bench_systems")
    picked = sources[::6]
    return picked, nm.generate(picked)


def test_real_items_keep_the_invariants(real_sample):
    sources, variants = real_sample
    premise = {s.id: s.premise for s in sources}
    assert len(variants) > 50
    assert {v.half for v in variants} == {"held-out", nm.PROBE}
    for v in variants:
        assert v.id.startswith(v.source_id + "#" + v.kind)
        check_variant(v.source_claim, premise[v.source_id], v.kind, v.claim, v.before, v.after)
        split, encounter, note = v.premise_ref.split("/")
        assert split in ("test2", "test3") and note


def test_output_is_deterministic(real_sample):
    sources, variants = real_sample
    again = nm.generate(list(sources))
    assert [(v.id, v.claim, v.checked) for v in again] == [(v.id, v.claim, v.checked) for v in variants]
    assert [v.id for v in nm.sample(variants, 10)] == [v.id for v in nm.sample(again, 10)]


def test_written_variants_read_back_as_labelled_items(real_sample, tmp_path, shared_data):
    sources, variants = real_sample
    path = tmp_path / "variants.jsonl"
    nm.write_jsonl(variants[:25], str(path))
    items = read_labelled(str(path), aci_bench_dir=shared_data / "aci_bench_systems").items
    premise = {s.id: s.premise for s in sources}
    assert [i.claim for i in items] == [v.claim for v in variants[:25]]
    assert not any(i.label for i in items)
    assert [i.premise for i in items] == [premise[v.source_id] for v in variants[:25]]


def test_cli_counts_and_writes(shared_data, tmp_path, capsys):
    out = tmp_path / "fresh2-drugs.jsonl"
    assert nm.main(["--halves", "fresh-2", "--kinds", "drug", "--limit", "5", "--write", str(out),
                    "--aci-bench-dir", str(shared_data / "aci_bench_systems")]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["variants"] == 5 and report["per_kind"]["drug"] == 5
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 5 and {r["kind"] for r in rows} == {"drug"} and {r["half"] for r in rows} == {"fresh-2"}


@pytest.mark.slow
def test_measuring_mode_runs(real_sample):
    """Smoke: the default judge on 20 variants and their sources; the figures are measured, not asserted."""
    sources, variants = real_sample
    some = nm.sample(variants, 20)
    report = nm.measure(some, sources, show=2)
    assert report["variants"]["variants"] == 20
    assert sum(k["variants"] for k in report["per_kind"].values()) == 20
    assert report["control"]["sources"] == len({v.source_id for v in some})
    assert 0 <= report["variants"]["accepted"] <= 20
    for kind, examples in report.get("accepted", {}).items():
        assert kind in nm.KINDS and len(examples) <= 2
        assert all(e["explanation"] for e in examples)
