"""The tests mirror the package (issue 50, deliverable 5; the rule is docs/testing.md's, "Where a
test lives"): every folder of ``tests/`` is a folder of ``doclens/`` (or of ``benchmarks/``) or one
of the few folders the rule names, no test file is left in ``tests/`` itself, and every test file or
test module that the repository names by path exists, so a move cannot leave a stale pointer."""

import re
from pathlib import Path

from tests.conftest import REPO, SMOKE_FILES, TESTS

#: folders of tests/ that mirror no package folder, each with what it holds (docs/testing.md)
NOT_MIRRORED = {
    "end_to_end": "whole runs from a user's files to a report, no one package part their subject",
    "project": "the repository's own rules: README and docs, cards, the layout, layers, lint, packaging",
    "evaluate_scripts": "copies of Hugging Face evaluate's scripts (not collected; pyproject.toml)",
}
#: top-level packages a tests/ folder may mirror, by the folder's first part
PACKAGES = {"benchmarks": REPO / "benchmarks"}
#: a test file named by path (tests/core/test_metrics.py) or as a module (tests.core.test_metrics)
NAMED_PATH = re.compile(r"\btests/((?:[a-z_0-9]+/)*test_[a-z0-9_]+\.py)")
NAMED_MODULE = re.compile(r"\btests\.((?:[a-z_0-9]+\.)*test_[a-z0-9_]+)\b")


def _test_folders() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*") if p.is_dir() and p.name != "__pycache__"
                  and p.relative_to(TESTS).parts[0] not in NOT_MIRRORED)


def _mirrored(folder: Path) -> Path:
    parts = folder.relative_to(TESTS).parts
    root = PACKAGES.get(parts[0])
    return root.joinpath(*parts[1:]) if root else REPO.joinpath("doclens", *parts)


def test_every_folder_of_tests_mirrors_a_package_folder():
    assert [f.relative_to(TESTS).as_posix() for f in _test_folders() if not _mirrored(f).is_dir()] == []
    assert [n for n in NOT_MIRRORED if not (TESTS / n).is_dir()] == [], "a named folder is gone: drop it from the rule"


def test_no_test_file_is_left_in_the_tests_folder_itself():
    assert sorted(p.name for p in TESTS.glob("test_*.py")) == []


def test_every_folder_of_tests_is_a_package():
    """Each test module gets its folder's name (tests.cli.test_cli), so two folders may hold files of one name."""
    folders = [f for f in _test_folders() if any(f.glob("*.py"))] + [TESTS / "end_to_end", TESTS / "project"]
    assert [f.relative_to(TESTS).as_posix() for f in folders if not (f / "__init__.py").is_file()] == []


def test_the_smoke_tier_names_files_that_exist():
    assert sorted(name for name in SMOKE_FILES if not (TESTS / name).is_file()) == []


def _searched() -> list[Path]:
    files = [REPO / "README.md", REPO / "setup.cfg", REPO / "pyproject.toml"]
    for folder in ("docs", "cards", ".ci", "benchmarks", "tests", "doclens", "metrics"):
        files += [p for p in (REPO / folder).rglob("*") if p.is_file() and p.suffix in {".py", ".md", ".txt", ""}
                  and "__pycache__" not in p.parts]
    return files


def test_every_test_file_the_repository_names_exists():
    stale = set()
    for path in _searched():
        text = path.read_text(encoding="utf-8", errors="replace")
        stale |= {f"{path.relative_to(REPO)}: tests/{m}" for m in NAMED_PATH.findall(text) if not (TESTS / m).is_file()}
        stale |= {f"{path.relative_to(REPO)}: tests.{m}" for m in NAMED_MODULE.findall(text)
                  if not (TESTS / (m.replace(".", "/") + ".py")).is_file()}
    assert sorted(stale) == []


def test_the_stale_finder_finds_a_flat_path(tmp_path):
    """The check above can fail: a flat path of a moved file is found, a mirrored one is not."""
    flat, module = "tests/" + "test_metrics.py", "tests." + "test_hostile_inputs"  # split: this file is searched too
    text = f"see {flat} and {module}:CountingEvaluator; tests/core/test_metrics.py"
    missing = [m for m in NAMED_PATH.findall(text) if not (TESTS / m).is_file()]
    missing += [m for m in NAMED_MODULE.findall(text) if not (TESTS / (m.replace(".", "/") + ".py")).is_file()]
    assert missing == ["test_metrics.py", "test_hostile_inputs"]
