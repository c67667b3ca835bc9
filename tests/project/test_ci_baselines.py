""".ci/baselines.py, the measuring half of .ci/lint: a function over the limits that the baseline
does not list fails, a listed one that grew fails, one that shrank is recorded smaller and never
larger; mypy counts per file the same way."""

import importlib.util

import pytest

from tests.conftest import REPO

spec = importlib.util.spec_from_file_location("ci_baselines", REPO / ".ci" / "baselines.py")
baselines = importlib.util.module_from_spec(spec)
spec.loader.exec_module(baselines)


def test_radon_counts_boolean_operators_and_lines_from_def_to_end(tmp_path):
    source = tmp_path / "m.py"
    conditions = " and ".join(f"x{i}" for i in range(25))
    source.write_text(f"def f(x):\n    '''doc'''\n    if {conditions}:\n        return 1\n" + "    y = 1\n" * 70
                      + "    def g():\n        return 2\n    return g\n", encoding="utf-8")
    assert dict((name, (cc, lines)) for name, cc, lines in baselines._functions(source)) == {
        "f": (26, 77), "f.g": (1, 2)}  # 24 and-s, the if, the function


def test_a_new_violator_fails_and_a_listed_one_may_only_shrink():
    listed = {"doclens/a.py:f": {"cc": 30}, "doclens/a.py:g": {"lines": 90}, "doclens/a.py:gone": {"cc": 25}}
    measured = {"doclens/a.py:f": {"cc": 31}, "doclens/a.py:g": {"lines": 80}, "doclens/b.py:new": {"lines": 71}}
    failures, better, shrunk = baselines.compare_complexity(measured, listed)
    assert len(failures) == 2
    assert failures[0].startswith("doclens/a.py:f: cc=31, was cc=30") and "only shrink" in failures[0]
    assert failures[1].startswith("doclens/b.py:new: lines=71") and "not in the baseline" in failures[1]
    assert better == ["doclens/a.py:g: lines=80, was lines=90", "doclens/a.py:gone: now within the limits"]
    assert shrunk == {"doclens/a.py:f": {"cc": 30}, "doclens/a.py:g": {"lines": 80}}  # never raised, never added


def test_a_listed_function_that_also_grows_past_the_other_limit_fails():
    failures, _, _ = baselines.compare_complexity({"doclens/a.py:f": {"cc": 25, "lines": 75}},
                                                  {"doclens/a.py:f": {"cc": 25}})
    assert failures == ["doclens/a.py:f: lines=75, was lines=70 in the baseline: it may only shrink"]


def test_mypy_counts_per_file_may_only_shrink():
    failures, better, shrunk = baselines.compare_mypy({"doclens/a.py": 3, "doclens/b.py": 1, "doclens/c.py": 1},
                                                      {"doclens/a.py": 4, "doclens/c.py": 1, "doclens/d.py": 2})
    assert failures == ["doclens/b.py: 1 mypy error(s), 0 in the baseline: it may only shrink (mypy doclens/b.py "
                        "shows them)"]
    assert better == ["doclens/a.py: 3 mypy error(s), was 4", "doclens/d.py: no mypy error now, was 2"]
    assert shrunk == {"doclens/a.py": 3, "doclens/c.py": 1}


def test_the_package_is_within_its_complexity_baseline():
    pytest.importorskip("radon", reason="the [dev] extra's radon measures complexity")
    listed = {k: baselines._figures(v) for k, v in baselines.read_baseline(baselines.COMPLEXITY_BASELINE).items()}
    failures, _, _ = baselines.compare_complexity(baselines.measure_complexity(), listed)
    assert failures == []
