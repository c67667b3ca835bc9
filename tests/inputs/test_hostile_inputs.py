"""Hostile input for every command: malformed, missing, non-UTF-8, wrongly typed, huge and deeply
nested files and odd option values. Each case must end in one clear error (no traceback, no
"internal error") naming the file and the line, instance or field, with the documented exit code.

Most cases run ``main([...])`` in-process (fast); a few need a real process: SIGTERM to a running
``score``, and a closed standard output.

The kit grows beside this file (issue 47): what users do by mistake — outputs written over inputs,
swapped tables, malformed labelled files, a damaged ACI-BENCH folder, ids checked before anything is
spent — in ``tests/inputs/test_user_mistakes.py``; damaged, read-only, foreign and crafted caches in
``tests/evaluators/test_hostile_caches.py``.
"""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from doclens import DocLens, Report
from doclens.cli import main
from doclens.core.errors import EXIT_ERROR, EXIT_INCOMPLETE, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE
from doclens.evaluators.rules.overlap import OverlapEvaluator
from tests.conftest import REPO

ROWS = [{"id": f"i{k}", "prediction": f"The patient has fever {k} [0]. He coughs [1].", "reference": "Fever, cough.",
         "source": ["[patient] fever", "[patient] cough"], "reference_claims": ["The patient has fever."],
         "prediction_claims": [f"The patient has fever {k}."]} for k in range(3)]
DEEP = "[" * 100_000 + "]" * 100_000


def run(argv, capsys):
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and "internal error" not in captured.err, captured.err
    return code, captured.out, captured.err


def write_jsonl(path, rows):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def good_scores(tmp_path):
    path = tmp_path / "good.json"
    DocLens(OverlapEvaluator()).score(ROWS, progress=False).save(path)
    return path


def scores_variant(tmp_path, good_scores, name, change) -> "os.PathLike":
    data = json.loads(good_scores.read_text())
    change(data)
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _set(path_parts, value):
    def change(data):
        node = data
        for part in path_parts[:-1]:
            node = node[part]
        node[path_parts[-1]] = value
    return change


#: (name, change, field the message names)
TYPE_CONFUSED = [
    ("entailed-string", _set(["instances", 1, "reference_claims", 0, "entailed"], "false"),
     "reference_claims[0].entailed"),
    ("cited-string", _set(["instances", 0, "statements", 0, "cited"], "0"), "statements[0].cited"),
    ("id-int", _set(["instances", 2, "id"], 7), "'id'"),
    ("id-object", _set(["instances", 2, "id"], {"a": 1}), "'id'"),
    ("id-empty", _set(["instances", 2, "id"], ""), "'id'"),
    ("task-int", _set(["instances", 0, "task"], 3), "'task'"),
    ("claim-text-list", _set(["instances", 0, "prediction_claims", 0, "text"], ["x"]), "prediction_claims[0].text"),
    ("explanation-int", _set(["instances", 0, "reference_claims", 0, "explanation"], 5),
     "reference_claims[0].explanation"),
    ("cited-negative", _set(["instances", 0, "statements", 0, "cited"], [-1]), "statements[0].cited[0]"),
    ("signature-int", _set(["signature"], 12345), "'signature'"),
    ("score-above-one", _set(["scores", "claim_recall"], 1.5), "scores.claim_recall"),
    ("id-repeated", _set(["instances", 2, "id"], "i0"), "repeats the id"),
    ("instances-object", _set(["instances"], {"a": 1}), "not a DocLens scores file"),
]
NON_FINITE = [("nan-score", '"claim_recall": NaN', "scores.claim_recall"),
              ("infinity-score", '"claim_recall": Infinity', "scores.claim_recall"),
              ("overflow-score", '"claim_recall": 1e999', "scores.claim_recall")]


def broken_scores_files(tmp_path, good_scores):
    """``[(path, words the message must hold)]``: one file per way a scores file can be hostile."""
    files = [(scores_variant(tmp_path, good_scores, name, change), [field])
             for name, change, field in TYPE_CONFUSED]
    text = good_scores.read_text()
    marker = f'"claim_recall": {json.loads(text)["scores"]["claim_recall"]}'
    assert marker in text
    for name, replacement, field in NON_FINITE:
        path = tmp_path / f"{name}.json"
        path.write_text(text.replace(marker, replacement, 1))
        files.append((path, [field, "finite"]))
    raw = tmp_path / "nonutf8.json"
    raw.write_bytes(text.replace('"The patient has fever."', '"The patient has f\xe9ver."', 1).encode("latin-1"))
    line = text[:text.index("The patient has fever.")].count("\n") + 1
    files.append((raw, [f"line {line}", "not UTF-8"]))
    deep = tmp_path / "deep.json"
    deep.write_text('{"format": "doclens-report/1", "config": ' + DEEP + "}")
    files.append((deep, ["line 1", "nested too deeply"]))
    digits = tmp_path / "digits.json"
    digits.write_text(text.replace('"cited": [\n            0', '"cited": [\n            ' + "9" * 5000, 1))
    assert digits.read_text() != text
    files.append((digits, ["statements[0].cited[0]", "5000 digits"]))
    dup = tmp_path / "dup.json"
    dup.write_text(text.replace('"task": "general"', '"task": "general", "task": "note_generation"', 1))
    files.append((dup, ["'task' is given more than once"]))
    # not scores files at all: validate reads them as "some JSON file" and says what is wrong with it
    for name, content, words in (("empty", "", ["expected '{'"]), ("not-json", "{nope", ["not valid JSON"]),
                                 ("array", "[1, 2]", ["not a DocLens scores file"]),
                                 ("truncated", text[: len(text) // 2], ["not valid JSON"]),
                                 ("submission", json.dumps({"format": "doclens-submission/1"}),
                                  ["not a DocLens report"])):
        path = tmp_path / f"{name}.json"
        path.write_text(content)
        files.append((path, words, ["INVALID"]))
    files.append((tmp_path / "missing.json", ["cannot read", "No such file"], ["No such file"]))
    return [entry if len(entry) == 3 else (*entry, entry[1]) for entry in files]


def test_every_scores_reader_refuses_every_broken_file_naming_file_and_field(tmp_path, good_scores, capsys):
    human = tmp_path / "human.csv"
    human.write_text("id,q\n" + "".join(f"i{k},{k}\n" for k in range(3)))
    for path, words, validate_words in broken_scores_files(tmp_path, good_scores):
        for argv in (["report", path, "-o", tmp_path / "r.html", "--resamples", 20],
                     ["leaderboard", good_scores, path, "--resamples", 20],
                     ["compare", good_scores, path, "--resamples", 20],
                     ["compare", path, good_scores, "--json", "--resamples", 20],
                     ["agreement", path, human, "--human-column", "q"],
                     ["agreement", f"a={good_scores}", f"b={path}", tmp_path / "prefs.csv"]):
            if argv[0] == "agreement" and "prefs.csv" in str(argv[-1]):
                (tmp_path / "prefs.csv").write_text("id,system_a,system_b,preferred\ni0,a,b,a\n")
            code, out, err = run(argv, capsys)
            assert code == EXIT_USAGE, (argv, out, err)
            assert str(path) in err and all(w in err for w in words), (argv, err)
        code, out, err = run(["validate", path], capsys)
        assert code == EXIT_USAGE, (path, out, err)
        assert str(path) in out + err and all(w.strip("'") in out + err for w in validate_words), (path, out, err)
    assert not (tmp_path / "r.html").exists()


def test_huge_strings_in_a_scores_file_are_read_and_escaped(tmp_path, good_scores, capsys):
    big = "<b>" + "x" * 5_000_000
    path = scores_variant(tmp_path, good_scores, "big", _set(["instances", 0, "reference_claims", 0, "explanation"],
                                                            big))
    assert run(["validate", path], capsys)[0] == EXIT_OK
    assert run(["report", path, "-o", tmp_path / "r.html", "--resamples", 20], capsys)[0] == EXIT_OK
    html = (tmp_path / "r.html").read_text()
    assert "&lt;b&gt;" + "x" * 1000 in html and "<b>x" not in html


MUTATIONS = [None, "x", "", 1, 1.5, -1, True, [], {}, ["x"], [-1], [True]]


def _mutants(node, parts=(), depth=100):
    """Every copy of ``node`` with one value (at any depth) or one added key replaced."""
    import copy

    yield parts, None  # marker: the unmutated node
    children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in list(children):
        for value in MUTATIONS:
            mutant = copy.deepcopy(node)
            mutant[key] = value
            yield (*parts, key), mutant
        for path, mutant in (_mutants(child, (*parts, key), depth - 1) if depth > 1 else ()):
            if mutant is not None:
                whole = copy.deepcopy(node)
                whole[key] = mutant
                yield path, whole
    if isinstance(node, dict):
        mutant = dict(node, unexpected_key="x")
        yield (*parts, "unexpected_key"), mutant


def test_fast_schema_check_agrees_with_jsonschema(good_scores):
    """The reader's compiled check is a filter in front of jsonschema: it must never accept what
    jsonschema refuses (that would let bad data through) and should not refuse what it accepts."""
    from doclens.reports.scores_files import _validators

    instance_checker, header_checker = _validators()
    assert instance_checker.fast is not None and header_checker.fast is not None
    data = json.loads(good_scores.read_text())
    instance = data["instances"][0]
    header = {k: v for k, v in data.items() if k != "instances"}
    checked = disagreements = 0
    for checker, document, depth in ((instance_checker, instance, 100), (header_checker, header, 2)):
        for path, mutant in _mutants(document, depth=depth):
            mutant = document if mutant is None else mutant
            fast, slow = checker.fast(mutant), checker.validator.is_valid(mutant)
            checked += 1
            if fast != slow:
                disagreements += 1
                assert not fast, f"the fast check accepts what jsonschema refuses at {path}: {mutant}"
    assert checked > 800 and disagreements == 0


def test_fast_schema_check_is_fastjsonschema_and_leaves_the_shipped_schema_alone(good_scores):
    """fastjsonschema rewrites each $ref of the schema it compiles into an absolute URI; the reader
    gives it a copy, so jsonschema (which writes the messages) still resolves the shipped schema's
    local refs without trying to fetch its $id from the network."""
    import copy

    from doclens.reports.json_checks import load_schema
    from doclens.reports.scores_files import _Checker

    schema = load_schema("scores")
    before = copy.deepcopy(schema)
    checker = _Checker(schema)
    assert schema == before
    header = {k: v for k, v in json.loads(good_scores.read_text()).items() if k != "instances"}
    header["scores"] = dict(header["scores"], claim_recall=2)  # checked through "#/$defs/score"
    assert not checker.fast(header)
    messages = [error.message for error in checker.iter_errors(header)]
    assert any("2 is greater than the maximum of 1" in m for m in messages), messages


@pytest.mark.parametrize("value", [1.0, -0.0, 2 ** 70, 10 ** 400, 1e308, 5e-324, True, False, "0", None])
@pytest.mark.parametrize("where", [("statements", 0, "index"), ("statements", 0, "cited", 0),
                                   ("scores", "claim_recall")])
def test_fast_schema_check_agrees_on_numbers_the_libraries_could_read_differently(good_scores, value, where):
    """fastjsonschema and jsonschema each decide what an integer or a number is: floats that are
    whole, huge integers, bools; the two must agree on each (bools are never numbers), and a
    number the decoder refused (NaN, overflow) is reported once, as refused, not also as a type."""
    from doclens.reports.scores_files import _BadNumber, _validators, schema_messages

    checker = _validators()[0]
    instance = json.loads(good_scores.read_text())["instances"][0]
    node = instance
    for part in where[:-1]:
        node = node[part]
    node[where[-1]] = value
    assert checker.fast(instance) == checker.validator.is_valid(instance)
    node[where[-1]] = _BadNumber("NaN", "not a finite number")
    assert not checker.fast(instance) and schema_messages(checker, instance) == []


def test_scores_reader_names_the_instance_and_its_line(tmp_path, good_scores, capsys):
    path = scores_variant(tmp_path, good_scores, "entailed", _set(["instances", 1, "reference_claims", 0, "entailed"],
                                                                  "false"))
    data = json.loads(path.read_text())
    path.write_text(json.dumps(data, indent=1))
    lines = path.read_text().splitlines()
    opening = [n for n, text in enumerate(lines) if '"id": "i1"' in text][0]  # the '{' is the line before: 1-based n
    assert lines[opening - 1].strip() == "{"
    code, out, err = run(["leaderboard", path], capsys)
    assert code == EXIT_USAGE
    assert f"instance 'i1' (#1, line {opening})" in err and "field 'reference_claims[0].entailed'" in err
    assert "'false' is not of type 'boolean', 'null'" in err
    with pytest.raises(ValueError, match=r"instance 'i1' \(#1, line \d+\)"):
        Report.load(path)
    # a valid file passes every reader, and score's own output passes validate
    assert run(["validate", good_scores], capsys)[0] == EXIT_OK
    assert run(["leaderboard", good_scores, "--resamples", 20], capsys)[0] == EXIT_OK


@pytest.mark.parametrize("line, words", [
    ({"prediction": "x", "reference": "y"}, ["line 2", "missing required field 'id'"]),
    ({"id": "", "prediction": "x", "reference": "y"}, ["line 2", "field 'id' is empty"]),
    ({"id": {"a": 1}, "prediction": "x", "reference": "y"}, ["line 2", "'id'", "JSON object"]),
    ('{"id": NaN, "prediction": "x", "reference": "y"}', ["line 2", "'id'", "NaN"]),
    ({"id": 1.5, "prediction": "x", "reference": "y"}, ["line 2", "'id'", "1.5"]),
    ({"id": True, "prediction": "x", "reference": "y"}, ["line 2", "'id'", "true"]),
    ({"id": "e", "prediction": "x", "reference": "y", "reference_claims": ["ok", ""]},
     ["line 2", "instance 'e'", "reference_claims[1]", "empty claim"]),
    ({"id": "e", "prediction": "x", "reference": "y", "prediction_claims": {"plan": ["  "]}},
     ["line 2", "instance 'e'", "prediction_claims", "empty claim"]),
    ({"id": "e", "prediction": 5, "reference": "y"}, ["line 2", "instance 'e'", "'prediction'"]),
    ('{"id": "e", "prediction": ' + DEEP + ', "reference": "y"}', ["line 2", "nested too deeply"]),
    ('{"id": ' + "7" * 5000 + ', "prediction": "x", "reference": "y"}', ["line 2", "not valid JSON"]),
    ("[1, 2, 3]", ["line 2", "expected a JSON object"]),
    ('"just a string"', ["line 2", "expected a JSON object"]),
    ("{truncated", ["line 2", "not valid JSON"]),
])
def test_score_refuses_bad_lines_naming_file_line_and_field(tmp_path, capsys, line, words):
    """A line whose id cannot be read (missing, empty, mistyped; not JSON; not an object) is found
    before anything is scored (issue 47: ids are checked before the judge loads), so nothing is
    written; a line whose other fields are bad is found as it is scored, and what was scored
    before it is kept."""
    data = write_jsonl(tmp_path / "in.jsonl", [ROWS[0], line, ROWS[1]])
    code, out, err = run(["score", data, "--evaluator", "overlap", "-q", "-o", tmp_path / "s.json",
                          "--chunk-size", 1], capsys)
    assert code == EXIT_USAGE, err
    assert str(data) in err and all(w in err for w in words), err
    if "instance 'e'" not in words:  # the id pass: nothing scored, nothing written
        assert not (tmp_path / "s.json").exists() and not (tmp_path / "s.journal.jsonl").exists()
        return
    report = Report.load(tmp_path / "s.json")  # what was scored before the bad line is kept
    assert report.partial and [r.id for r in report.instances] == ["i0"]


def test_errors_found_while_scoring_name_file_line_instance_and_field(tmp_path, capsys):
    bad_source = dict(ROWS[1], id="big", source="preamble [0] the patient has a fever.")
    data = write_jsonl(tmp_path / "in.jsonl", [ROWS[0], bad_source])
    code, out, err = run(["score", data, "--evaluator", "overlap", "-q", "-o", tmp_path / "s.json",
                          "--chunk-size", 1], capsys)
    assert code == EXIT_USAGE
    assert f"{data} line 2: instance 'big': field 'source'" in err and "before its '[0]' marker" in err, err
    assert [r.id for r in Report.load(tmp_path / "s.json").instances] == ["i0"]


def test_a_citation_id_of_5000_digits_is_an_invalid_citation_not_an_error(tmp_path, capsys):
    # beside a valid citation: a note whose every bracketed number names no source unit has no citation style
    # and cites nothing (doclens.parsing.statements.citation_style); here the huge id is a citation that fails
    huge_citation = dict(ROWS[1], id="big", prediction="Fever [" + "9" * 5000 + "]. Cough [0].")
    data = write_jsonl(tmp_path / "in.jsonl", [ROWS[0], huge_citation])
    code, out, err = run(["score", data, "--evaluator", "overlap", "-q", "-o", tmp_path / "s.json"], capsys)
    assert code == EXIT_OK, err
    big = next(r for r in Report.load(tmp_path / "s.json").instances if r.id == "big")
    assert big.statements[0].invalid and not big.statements[0].precise and not big.statements[0].recall_hit


def test_score_refuses_a_non_utf8_file_before_scoring(tmp_path, capsys):
    data = tmp_path / "in.jsonl"
    good = "".join(json.dumps(r) + "\n" for r in ROWS)
    data.write_bytes(good.encode() + b'{"id": "z", "prediction": "caf\xe9", "reference": "x"}\n')
    code, out, err = run(["score", data, "--evaluator", "tests.inputs.test_hostile_inputs:CountingEvaluator", "-q",
                          "-o", tmp_path / "s.json"], capsys)
    assert code == EXIT_USAGE and f"{data} line 4: not UTF-8" in err and "0xe9" in err
    assert CountingEvaluator.calls == 0 and not (tmp_path / "s.json").exists()


def test_integer_ids_become_strings_and_scores_pass_validate(tmp_path, capsys):
    data = write_jsonl(tmp_path / "in.jsonl", [dict(ROWS[0], id=7), dict(ROWS[1], id="b")])
    code, out, err = run(["score", data, "--evaluator", "overlap", "-q", "-o", tmp_path / "s.json"], capsys)
    assert code == EXIT_OK, err
    assert [r.id for r in Report.load(tmp_path / "s.json").instances] == ["7", "b"]
    assert run(["validate", tmp_path / "s.json"], capsys)[0] == EXIT_OK


class CountingEvaluator(OverlapEvaluator):
    """The overlap judge, counting its batches (class-wide, so the CLI-built instance is seen)."""

    calls = 0

    def entail_batch(self, pairs):
        type(self).calls += 1
        return super().entail_batch(pairs)


@pytest.mark.parametrize("argv, words", [
    (["compare", "{good}", "{good}", "--resamples", "-5"], ["--resamples", "at least 1"]),
    (["compare", "{good}", "{good}", "--resamples", "0"], ["--resamples"]),
    (["compare", "{good}", "{good}", "--confidence", "2"], ["--confidence", "strictly between 0 and 1"]),
    (["compare", "{good}", "{good}", "--confidence", "nan"], ["--confidence", "finite"]),
    (["leaderboard", "{good}", "--seed", "-1"], ["--seed"]),
    (["leaderboard", "{good}", "--resamples", "many"], ["--resamples", "'many'"]),
    (["report", "{good}", "--resamples", "-1"], ["--resamples"]),
    (["report", "{good}", "--confidence", "1"], ["--confidence"]),
    (["score", "{rows}", "--evaluator", "overlap", "--chunk-size", "0"], ["--chunk-size"]),
    (["score", "{rows}", "--evaluator", "overlap", "--threshold", "2"], ["--threshold", "between 0 and 1"]),
    (["score", "{rows}", "--evaluator", "overlap", "--concurrency", "-3"], ["--concurrency"]),
    (["score", "{rows}", "--evaluator", "overlap", "--timeout", "inf"], ["--timeout", "finite"]),
    (["score", "{rows}", "--evaluator", "overlap", "--max-citations", "-1"], ["--max-citations"]),
    (["score", "{rows}", "--evaluator", "overlap", "--evaluator-arg", "nonsense"], ["--evaluator-arg"]),
    (["score", "{rows}", "--evaluator", "overlap", "--evaluator-arg", "no_such_option=1"], ["no_such_option"]),
    (["score", "{rows}", "--evaluator", "no.such.module:Thing"], ["no.such.module"]),
    (["nonsense-command"], ["invalid choice"]),
])
def test_odd_option_values_are_usage_errors(tmp_path, good_scores, capsys, argv, words):
    rows = write_jsonl(tmp_path / "in.jsonl", ROWS)
    argv = [a.format(good=good_scores, rows=rows) for a in argv]
    code, out, err = run(argv + (["-q", "-o", str(tmp_path / "s.json")] if argv[0] == "score" else []), capsys)
    assert code == EXIT_USAGE, err
    assert all(w in err for w in words), err
    assert not (tmp_path / "s.json").exists()


def test_missing_and_unreadable_inputs_of_every_command(tmp_path, good_scores, capsys):
    missing = tmp_path / "nope.jsonl"
    nonutf = tmp_path / "latin1.csv"
    nonutf.write_bytes(b"id,q\ni0,1\ni1,caf\xe9\n")
    nonutf_jsonl = tmp_path / "latin1.jsonl"
    nonutf_jsonl.write_bytes(b'{"id": "i0"}\n{"id": "caf\xe9"}\n')
    deep_jsonl = tmp_path / "deep.jsonl"
    deep_jsonl.write_text('{"id": ' + DEEP + "}\n")
    refs = write_jsonl(tmp_path / "refs.jsonl", [{"id": "i0"}, {"prediction": "no id"}])
    huge_field = tmp_path / "huge.csv"
    huge_field.write_text("id,q\ni0,\"" + "x" * 200_000 + "\"\n")
    cases = [
        (["score", missing, "--evaluator", "overlap", "-q"], [str(missing), "No such file"]),
        (["validate", good_scores, "--references", missing], [str(missing), "No such file"]),
        (["validate", good_scores, "--references", nonutf_jsonl], [str(nonutf_jsonl), "line 2", "not UTF-8"]),
        (["validate", good_scores, "--references", deep_jsonl], [str(deep_jsonl), "line 1", "nested too deeply"]),
        (["validate", good_scores, "--references", refs], [str(refs), "line 2", "missing required field 'id'"]),
        (["report", good_scores, "--input", missing, "-o", tmp_path / "r.html"], [str(missing), "No such file"]),
        (["agreement", good_scores, missing, "--human-column", "q"], [str(missing), "No such file"]),
        (["agreement", good_scores, nonutf, "--human-column", "q"], [str(nonutf), "line 3", "not UTF-8"]),
        (["agreement", good_scores, huge_field, "--human-column", "q"], [str(huge_field), "line"]),
        (["install-metric", "--modules-cache", good_scores], ["install-metric", "cannot write"]),
    ]
    for argv, words in cases:
        code, out, err = run(argv, capsys)
        assert code == EXIT_USAGE, (argv, err)
        assert all(w in err for w in words), (argv, err)


def test_report_input_lines_that_cannot_be_read_are_named(tmp_path, good_scores, capsys):
    inputs = tmp_path / "in.jsonl"
    inputs.write_bytes(b'{"id": "i0", "prediction": "x", "reference": "y"}\n{"id": "i1", "prediction": "caf\xe9"}\n'
                       b"{oops\n")
    code, out, err = run(["report", good_scores, "--input", inputs, "-o", tmp_path / "r.html"], capsys)
    assert code == EXIT_USAGE and "2 scored instance(s) not found" in err
    assert "line 2: not UTF-8" in err and "line 3: not valid JSON" in err


def test_nan_human_scores_are_refused(tmp_path, good_scores, capsys):
    human = tmp_path / "h.csv"
    human.write_text("id,q\ni0,1\ni1,nan\n")
    code, out, err = run(["agreement", good_scores, human, "--human-column", "q"], capsys)
    assert code == EXIT_USAGE and "line 3: column 'q' is not finite" in err


def test_output_paths_are_checked_before_any_scoring(tmp_path, good_scores, capsys):
    rows = write_jsonl(tmp_path / "in.jsonl", ROWS)
    CountingEvaluator.calls = 0
    evaluator = "tests.inputs.test_hostile_inputs:CountingEvaluator"
    for output, words in ((tmp_path / "no" / "such" / "s.json", ["does not exist"]), (tmp_path, ["is a folder"])):
        code, out, err = run(["score", rows, "--evaluator", evaluator, "-q", "-o", output], capsys)
        assert code == EXIT_USAGE and str(output) in err and all(w in err for w in words), err
    assert CountingEvaluator.calls == 0
    code, out, err = run(["report", good_scores, "-o", tmp_path / "missing" / "r.html"], capsys)
    assert code == EXIT_USAGE and "does not exist" in err
    code, out, err = run(["leaderboard", good_scores, "-o", tmp_path], capsys)
    assert code == EXIT_USAGE and "is a folder" in err and "table 1" not in out


def test_a_partial_report_never_replaces_a_complete_one(tmp_path, capsys):
    output = tmp_path / "s.json"
    rows = write_jsonl(tmp_path / "in.jsonl", ROWS)
    assert run(["score", rows, "--evaluator", "overlap", "-q", "-o", output], capsys)[0] == EXIT_OK
    complete = output.read_bytes()
    bad = write_jsonl(tmp_path / "bad.jsonl", [ROWS[0], {"id": "x", "reference": "no prediction"}])
    code, out, err = run(["score", bad, "--evaluator", "overlap", "-q", "-o", output, "--chunk-size", 1], capsys)
    assert code == EXIT_USAGE
    assert output.read_bytes() == complete
    partial = tmp_path / "s.partial.json"
    assert str(partial) in err and Report.load(partial).partial
    # nothing scored at all: no report anywhere
    bad = write_jsonl(tmp_path / "bad2.jsonl", [{"id": "x", "reference": "no prediction"}])
    partial.unlink()
    code, out, err = run(["score", bad, "--evaluator", "overlap", "-q", "-o", output], capsys)
    assert code == EXIT_USAGE and "nothing was scored" in err
    assert output.read_bytes() == complete and not partial.exists()


def test_a_failed_save_writes_the_finished_report_to_a_named_fallback(tmp_path, capsys, monkeypatch):
    rows = write_jsonl(tmp_path / "in.jsonl", ROWS)
    output = tmp_path / "s.json"
    import doclens.engines.sink as sink

    real_write = sink.write_atomically

    def full_disk(path, write, *args):
        if str(path) == str(output):
            raise OSError(28, "No space left on device")
        return real_write(path, write, *args)

    monkeypatch.setattr(sink, "write_atomically", full_disk)
    monkeypatch.chdir(tmp_path)
    code, out, err = run(["score", rows, "--evaluator", "overlap", "-q", "-o", output], capsys)
    assert code == EXIT_ERROR and "No space left on device" in err
    fallback = err.split("written to ")[1].split(" instead")[0]
    assert os.path.dirname(fallback) == str(tmp_path)
    assert len(Report.load(fallback).instances) == 3


def test_a_lone_surrogate_in_the_input_is_repaired_saved_and_read_back(tmp_path, capsys):
    rows = write_jsonl(tmp_path / "in.jsonl", [dict(ROWS[0], reference_claims=["fever \ud800 here"],
                                                    prediction="Fever \udc00 [0].")])
    assert "\\ud800" in rows.read_text()  # json.dumps escapes it: the file itself is valid UTF-8
    output = tmp_path / "s.json"
    code, out, err = run(["score", rows, "--evaluator", "overlap", "-o", output], capsys)
    assert code == EXIT_OK, err
    assert "line 1: instance 'i0': 2 lone surrogate(s)" in err and "'prediction', 'reference_claims'" in err
    assert Report.load(output).instances[0].reference_claims[0].text == "fever \ufffd here"
    assert run(["validate", output], capsys)[0] == EXIT_OK
    assert run(["report", output, "-o", tmp_path / "r.html", "--resamples", 20], capsys)[0] == EXIT_OK
    assert "fever \ufffd here" in (tmp_path / "r.html").read_text(encoding="utf-8")


class EncodingEvaluator(OverlapEvaluator):
    """The overlap judge, encoding every text as UTF-8 first as spaCy, tokenizers and HTTP clients
    do; with ``$DOCLENS_TEST_RAISE`` set it crashes on the instance whose text says "fever 5"."""

    def entail_batch(self, pairs):
        for premise, hypothesis in pairs:
            (premise + hypothesis).encode("utf-8")
            if os.environ.get("DOCLENS_TEST_RAISE") and "fever 5" in premise + hypothesis:
                raise RuntimeError("boom")
        return super().entail_batch(pairs)


def _rows_with_a_surrogate(tmp_path, at):
    rows = [dict(ROWS[0], id=f"i{k}", prediction=f"The patient has fever {k} [0]. He coughs [1].",
                 prediction_claims=[f"The patient has fever {k}."]) for k in range(10)]
    rows[at] = dict(rows[at], prediction="Fever \ud800 [0].", prediction_claims=["Fever \udc00 today."])
    return write_jsonl(tmp_path / "in.jsonl", rows)


def test_a_lone_surrogate_in_one_row_is_repaired_naming_line_and_instance_and_the_rest_scores(tmp_path, capsys):
    path = _rows_with_a_surrogate(tmp_path, 3)
    output = tmp_path / "s.json"
    code, out, err = run(["score", path, "--evaluator", "tests.inputs.test_hostile_inputs:EncodingEvaluator",
                          "--chunk-size", 2, "-o", output], capsys)
    assert code == EXIT_OK, err
    assert "line 4: instance 'i3'" in err and "'prediction'" in err and "U+FFFD" in err and "\ud800" not in err
    report = Report.load(output)
    assert [r.id for r in report.instances] == [f"i{k}" for k in range(10)] and not report.partial
    assert report.instances[3].prediction_claims[0].text == "Fever \ufffd today."


def test_the_api_repairs_a_lone_surrogate_in_a_dict_or_an_instance_and_scores_the_rest():
    """Issue 41 item 6 through the API: DocLens.score given dicts or Instance objects (no file
    reader between) repairs the text per instance, naming it, instead of stopping in the judge."""
    from doclens import DocLens, Instance
    from doclens.evaluators import load_evaluator

    rows = [dict(ROWS[0], id=f"i{k}", prediction=f"The patient has fever {k} [0]. He coughs [1].",
                 prediction_claims=[f"The patient has fever {k}."]) for k in range(4)]
    rows[1] = dict(rows[1], prediction="Fever \ud800 [0].", prediction_claims=["Fever \udc00 today."])
    items = [rows[0], Instance.from_dict(rows[1]), *rows[2:]]
    scorer = DocLens(load_evaluator("tests.inputs.test_hostile_inputs:EncodingEvaluator"))
    with pytest.warns(UserWarning, match=r"instance 'i1': 2 lone surrogate\(s\) in prediction, prediction_claims"):
        report = scorer.score(items, progress=False)
    assert [r.id for r in report.instances] == ["i0", "i1", "i2", "i3"]
    assert report.instances[1].prediction_claims[0].text == "Fever \ufffd today."


def test_resume_goes_past_a_row_with_a_lone_surrogate(tmp_path, capsys, monkeypatch):
    path = _rows_with_a_surrogate(tmp_path, 7)
    output = tmp_path / "s.json"
    argv = ["score", path, "--evaluator", "tests.inputs.test_hostile_inputs:EncodingEvaluator", "-q", "--chunk-size", 2,
            "-o", output]
    monkeypatch.setenv("DOCLENS_TEST_RAISE", "crash")
    code, out, err = run(argv, capsys)
    assert code == EXIT_INCOMPLETE and len(Report.load(output).instances) == 4, err
    monkeypatch.delenv("DOCLENS_TEST_RAISE")
    code, out, err = run([*argv, "--resume"], capsys)
    assert code == EXIT_OK, err
    report = Report.load(output)
    assert sorted(r.id for r in report.instances) == sorted(f"i{k}" for k in range(10)) and not report.partial


def test_dash_output_writes_the_report_to_stdout(tmp_path, capsys):
    rows = write_jsonl(tmp_path / "in.jsonl", ROWS)
    monkey_dir = tmp_path / "cwd"
    monkey_dir.mkdir()
    os.chdir(monkey_dir)
    try:
        code, out, err = run(["score", rows, "--evaluator", "overlap", "-o", "-"], capsys)
    finally:
        os.chdir(REPO)
    assert code == EXIT_OK and json.loads(out)["format"] == "doclens-report/1"
    assert "claim_recall" in err and not (monkey_dir / "-").exists()


def test_presets_and_help_exit_cleanly(capsys):
    assert run(["presets"], capsys)[0] == EXIT_OK
    assert run(["--version"], capsys)[0] == EXIT_OK
    assert run([], capsys)[0] == EXIT_USAGE


class FailingEvaluator(OverlapEvaluator):
    """The overlap judge, except on the last instance of ``ROWS`` (its text says "fever 2"), where
    it raises what ``$DOCLENS_TEST_RAISE`` names."""

    def entail_batch(self, pairs):
        if any("fever 2" in premise + hypothesis for premise, hypothesis in pairs):
            raise {"interrupt": KeyboardInterrupt, "crash": RuntimeError}[os.environ["DOCLENS_TEST_RAISE"]]("boom")
        return super().entail_batch(pairs)


@pytest.mark.parametrize("what, expected", [("crash", EXIT_INCOMPLETE), ("interrupt", EXIT_INTERRUPTED)])
def test_a_run_stopped_mid_way_keeps_a_partial_report(tmp_path, capsys, monkeypatch, what, expected):
    monkeypatch.setenv("DOCLENS_TEST_RAISE", what)
    rows = write_jsonl(tmp_path / "in.jsonl", ROWS)
    code, out, err = run(["score", rows, "--evaluator", "tests.inputs.test_hostile_inputs:FailingEvaluator", "-q",
                          "--chunk-size", 1, "-o", tmp_path / "s.json"], capsys)
    assert code == expected, err
    report = Report.load(tmp_path / "s.json")
    assert report.partial and [r.id for r in report.instances] == ["i0", "i1"] and "PARTIAL report" in err


# ---- real processes ------------------------------------------------------------------------------
class SlowEvaluator(OverlapEvaluator):
    """The overlap judge, sleeping per batch; touches $DOCLENS_TEST_STARTED after its first batch."""

    def entail_batch(self, pairs):
        time.sleep(0.2)
        marker = os.environ.get("DOCLENS_TEST_STARTED")
        if marker:
            open(marker, "a").close()
        return super().entail_batch(pairs)


def _env():
    return {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def test_sigterm_leaves_a_partial_report_and_exits_130(tmp_path):
    rows = write_jsonl(tmp_path / "in.jsonl", [dict(ROWS[0], id=f"r{k}") for k in range(400)])
    output, started = tmp_path / "s.json", tmp_path / "started"
    process = subprocess.Popen([sys.executable, "-m", "doclens.cli", "score", str(rows), "--evaluator",
                                "tests.inputs.test_hostile_inputs:SlowEvaluator", "--chunk-size", "1", "-q", "-o",
                                str(output)], env={**_env(), "DOCLENS_TEST_STARTED": str(started)},
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
    deadline = time.monotonic() + 120
    while not started.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # a few chunks finish
    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=120)
    assert process.returncode == EXIT_INTERRUPTED, err
    assert "Traceback" not in err and "terminated" in err
    report = Report.load(output)
    assert report.partial and 0 < len(report.instances) < 400


def test_a_closed_stdout_ends_quietly(tmp_path):
    rows = write_jsonl(tmp_path / "in.jsonl", [dict(ROWS[0], id=f"r{k}") for k in range(300)])
    errors = tmp_path / "err.txt"
    script = (f"{sys.executable} -m doclens.cli score {rows} --evaluator overlap -q -o - 2>{errors} | head -c 100 "
              ">/dev/null; echo ${PIPESTATUS[0]}")
    done = subprocess.run(["bash", "-c", script], env=_env(), capture_output=True, text=True, timeout=120, cwd=REPO)
    err = errors.read_text()
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in err and "BrokenPipeError" not in err and "Exception ignored" not in err, err
    assert done.stdout.strip() == str(EXIT_ERROR)


# ---- HTML: a crafted scores file executes nothing --------------------------------------------
PAYLOAD = "<img src=x onerror=\"document.body.setAttribute('data-pwned','1')\">" \
          "<script>document.body.setAttribute('data-pwned','2')</script>"


def crafted_scores(tmp_path, good_scores):
    """A scores file that passes the schema with the payload in every string field it has."""
    data = json.loads(good_scores.read_text())
    data["signature"] = f"doclens:{PAYLOAD}|{PAYLOAD}"
    data["version"] = data["error"] = PAYLOAD
    data["warnings"] = [PAYLOAD]
    data["config"]["system"] = PAYLOAD
    for k, instance in enumerate(data["instances"]):
        instance["id"] = f"{PAYLOAD}{k}"
        instance["task"] = PAYLOAD
        for claim in instance["reference_claims"] + instance["prediction_claims"]:
            claim.update(text=PAYLOAD, explanation=PAYLOAD, section=PAYLOAD, raw=PAYLOAD)
        for statement in instance["statements"]:
            statement.update(text=PAYLOAD, explanation=PAYLOAD, section=PAYLOAD, raw=PAYLOAD)
    path = tmp_path / f"{PAYLOAD[:4]}crafted.json"
    path.write_text(json.dumps(data))
    return path, data


def test_crafted_scores_file_executes_nothing_in_chromium(tmp_path, good_scores, capsys):
    from doclens.views.html import content_security_policy
    from tests.views.test_leaderboard import open_in_chromium

    path, data = crafted_scores(tmp_path, good_scores)
    assert run(["validate", path], capsys)[0] == EXIT_OK  # schema-valid: only escaping and the CSP stand
    inputs = write_jsonl(tmp_path / "in.jsonl", [dict(r, id=i["id"], prediction=PAYLOAD, source=[PAYLOAD])
                                                 for r, i in zip(ROWS, data["instances"])])
    page, board = tmp_path / "report.html", tmp_path / "board.html"
    assert run(["report", path, "--input", inputs, "-o", page, "--resamples", 20], capsys)[0] == EXIT_OK
    assert run(["leaderboard", path, good_scores, "-o", board, "--resamples", 20], capsys)[0] == EXIT_OK
    for html_file in (page, board):
        html = html_file.read_text()
        assert "<img" not in html and html.count("<script>") == 1 and "unsafe-inline" not in html
        assert "base-uri 'none'" in html and "form-action 'none'" in html and "'sha256-" in html
        dom, errors = open_in_chromium(html_file, tmp_path)
        assert 'data-pwned="' not in dom and "<img" not in dom, html_file  # no attribute set, no element made
        assert "setAttribute('data-pwned','1')" in dom  # the payload is there, as text
        assert errors == [], errors
    assert "&lt;img src=x onerror=" in page.read_text()

    # the check can see an execution: the same payload unescaped, without a CSP, runs ...
    control = tmp_path / "control.html"
    control.write_text(f"<!DOCTYPE html><html><head><title>t</title></head><body>{PAYLOAD}</body></html>")
    dom, _ = open_in_chromium(control, tmp_path)
    assert 'data-pwned="' in dom
    # ... and under the pages' policy it does not, even unescaped; the page's own hashed script does run
    own = "document.body.setAttribute('data-own-script','ran');"
    guarded = tmp_path / "guarded.html"
    guarded.write_text(f'<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" '
                       f'content="{content_security_policy(own)}"><title>t</title></head><body>{PAYLOAD}'
                       f"<script>{own}</script></body></html>")
    dom, _ = open_in_chromium(guarded, tmp_path)
    assert 'data-pwned="' not in dom and 'data-own-script="ran"' in dom


def test_type_confused_crafted_file_is_refused_before_any_html(tmp_path, good_scores, capsys):
    path, data = crafted_scores(tmp_path, good_scores)
    data["instances"][0]["statements"][0]["cited"] = [PAYLOAD]
    path.write_text(json.dumps(data))
    code, out, err = run(["report", path, "-o", tmp_path / "r.html"], capsys)
    assert code == EXIT_USAGE and "statements[0].cited[0]" in err and not (tmp_path / "r.html").exists()
