#!/usr/bin/env python3
"""The measuring half of the habit gate (issue 40): function size and types over all of ``doclens/``,
each against a recorded baseline that may only shrink.

* **complexity**: radon's cyclomatic complexity (which, unlike ruff's McCabe count, counts every
  ``and`` / ``or``) at most :data:`MAX_COMPLEXITY` per function, and at most :data:`MAX_LINES` lines
  from ``def`` to the function's last line. The functions over either limit when the gate came are
  listed in ``.ci/complexity-baseline.txt`` with their figures; the gate fails on a function over a
  limit that is not listed, and on a listed one whose figure grew.
* **mypy**: the package's whole type check (the settings of pyproject.toml), errors counted per
  file against ``.ci/mypy-baseline.txt``; the gate fails when a file's count grows or a file not
  listed has errors.

A listed function or file that got better is reported; ``--write`` records the better figures and
drops what is now within the limits. It never adds an entry or raises a figure: a new violator is
fixed, not recorded. Run from the repository root (``.ci/lint`` does)::

    python .ci/baselines.py            # check both; exit 1 on any new or worse finding
    python .ci/baselines.py --write    # shrink the baselines to what is measured now
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "doclens"
COMPLEXITY_BASELINE = ROOT / ".ci" / "complexity-baseline.txt"
MYPY_BASELINE = ROOT / ".ci" / "mypy-baseline.txt"
MAX_COMPLEXITY = 20
MAX_LINES = 70

#: (figure name, limit) in the order a baseline line shows them
LIMITS = (("cc", MAX_COMPLEXITY), ("lines", MAX_LINES))


def _functions(path: Path):
    """(qualified name, complexity, lines from def to end) of every function and method of ``path``,
    nested ones included (each counted on its own: radon adds no closure to its parent)."""
    from radon.complexity import cc_visit
    from radon.visitors import Class, Function

    def walk(blocks, prefix):
        for block in blocks:
            name = f"{prefix}{block.name}"
            if isinstance(block, Class):
                yield from walk(block.methods + block.inner_classes, f"{name}.")
            elif isinstance(block, Function):
                yield name, block.complexity, block.endline - block.lineno + 1
                yield from walk(block.closures, f"{name}.")

    blocks = [b for b in cc_visit(path.read_text(encoding="utf-8"))
              if isinstance(b, Class) or (isinstance(b, Function) and not b.is_method)]
    yield from walk(blocks, "")


def measure_complexity() -> dict[str, dict[str, int]]:
    """``module:function`` → the figures over a limit (``cc``, ``lines``), for every function over one."""
    over: dict[str, dict[str, int]] = {}
    # os.walk follows links: doclens/metric is a link to metrics/doclens (the evaluate loader's
    # script), which Path.rglob here does not enter, so its functions went unmeasured
    paths = [Path(folder) / name for folder, _, names in os.walk(PACKAGE, followlinks=True)
             for name in names if name.endswith(".py")]
    for path in sorted(paths):
        module = path.relative_to(ROOT).as_posix()
        for name, complexity, lines in _functions(path):
            figures = {"cc": complexity, "lines": lines}
            bad = {k: figures[k] for k, limit in LIMITS if figures[k] > limit}
            if bad:
                key = f"{module}:{name}"
                previous = over.get(key, {})  # two defs of one name (a property's setter): the worse
                over[key] = {k: max(v, previous.get(k, 0)) for k, v in {**previous, **bad}.items()}
    return over


def measure_mypy() -> dict[str, int]:
    """File → its number of mypy errors (files without errors left out)."""
    done = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True)
    if done.returncode not in (0, 1) or "error: " not in done.stdout and done.returncode:
        raise SystemExit(f"mypy did not run: {done.stderr or done.stdout}")
    counts: dict[str, int] = {}
    for line in done.stdout.splitlines():
        match = re.match(r"^(\S+?\.py):\d+(?::\d+)?: error: ", line)
        if match:
            counts[match.group(1)] = counts.get(match.group(1), 0) + 1
    return counts


def read_baseline(path: Path) -> dict[str, str]:
    """Key → the rest of its line, comments and blank lines skipped."""
    entries = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            key, _, rest = line.partition(" ")
            entries[key] = rest.strip()
    return entries


def _figures(text: str) -> dict[str, int]:
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", text)}


def compare_complexity(measured: dict[str, dict[str, int]], listed: dict[str, dict[str, int]]):
    """(failures, improvements, the shrunk baseline)."""
    failures, better, shrunk = [], [], {}
    for key, figures in sorted(measured.items()):
        if key not in listed:
            failures.append(f"{key}: {_show(figures)} — over the limit (cc <= {MAX_COMPLEXITY}, "
                            f"lines <= {MAX_LINES}) and not in the baseline: cut it along its steps")
            continue
        worse = {k: v for k, v in figures.items() if v > listed[key].get(k, _limit(k))}
        if worse:
            failures.append(f"{key}: {_show(worse)}, was {_show({k: listed[key].get(k, _limit(k)) for k in worse})}"
                            " in the baseline: it may only shrink")
        kept = {k: min(v, listed[key].get(k, v)) for k, v in figures.items()}
        if kept != listed[key]:
            better.append(f"{key}: {_show(kept)}, was {_show(listed[key])}")
        shrunk[key] = kept
    better += [f"{key}: now within the limits" for key in sorted(set(listed) - set(measured))]
    return failures, better, shrunk


def compare_mypy(measured: dict[str, int], listed: dict[str, int]):
    failures, better, shrunk = [], [], {}
    for path, count in sorted(measured.items()):
        if count > listed.get(path, 0):
            failures.append(f"{path}: {count} mypy error(s), {listed.get(path, 0)} in the baseline: it may only shrink"
                            f" (mypy {path} shows them)")
        if count < listed.get(path, 0):
            better.append(f"{path}: {count} mypy error(s), was {listed[path]}")
        shrunk[path] = min(count, listed.get(path, count))
    better += [f"{path}: no mypy error now, was {listed[path]}" for path in sorted(set(listed) - set(measured))]
    return failures, better, {k: v for k, v in shrunk.items() if k in listed}


def _limit(name: str) -> int:
    return dict(LIMITS)[name]


def _show(figures: dict[str, int]) -> str:
    return " ".join(f"{k}={figures[k]}" for k, _ in LIMITS if k in figures)


HEADERS = {
    COMPLEXITY_BASELINE: (f"# Functions of doclens/ over the gate's limits (radon cyclomatic complexity > {MAX_COMPLEXITY}, or\n"
                          f"# more than {MAX_LINES} lines from def to end) and their figures: this list may only shrink.\n"
                          "# Written by .ci/baselines.py --write, which never adds an entry.\n"),
    MYPY_BASELINE: ("# mypy errors per file over the whole package (pyproject.toml's settings): may only shrink.\n"
                    "# Written by .ci/baselines.py --write, which never adds a file or raises a count.\n"),
}


def write(path: Path, lines: list[str]) -> None:
    path.write_text(HEADERS[path] + "".join(line + "\n" for line in lines), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="shrink the baselines to what is measured now")
    parser.add_argument("--init", action="store_true", help=argparse.SUPPRESS)  # the first recording only
    parser.add_argument("--skip-mypy", action="store_true", help="the complexity half only")
    args = parser.parse_args(argv)
    if args.init:
        if COMPLEXITY_BASELINE.exists() or MYPY_BASELINE.exists():
            raise SystemExit("--init records the first baselines only; they exist: --write shrinks them")
        write(COMPLEXITY_BASELINE, [f"{k} {_show(v)}" for k, v in sorted(measure_complexity().items())])
        write(MYPY_BASELINE, [f"{k} {v}" for k, v in sorted(measure_mypy().items())])
        return 0
    listed = {k: _figures(v) for k, v in read_baseline(COMPLEXITY_BASELINE).items()}
    failures, better, shrunk = compare_complexity(measure_complexity(), listed)
    print(f"complexity: {len(shrunk)} function(s) over the limits, all in the baseline" if not failures else
          f"complexity: {len(failures)} new or worse function(s)")
    if args.write:
        write(COMPLEXITY_BASELINE, [f"{k} {_show(v)}" for k, v in sorted(shrunk.items())])
    if not args.skip_mypy:
        mypy_listed = {k: int(v) for k, v in read_baseline(MYPY_BASELINE).items()}
        mypy_measured = measure_mypy()
        mypy_failures, mypy_better, mypy_shrunk = compare_mypy(mypy_measured, mypy_listed)
        print(f"mypy: {sum(mypy_measured.values())} error(s) in {len(mypy_measured)} file(s)"
              + ("" if mypy_failures else ", none over the baseline"))
        failures += mypy_failures
        better += mypy_better
        if args.write:
            write(MYPY_BASELINE, [f"{k} {v}" for k, v in sorted(mypy_shrunk.items()) if v])
    for line in failures:
        print(f"FAIL {line}")
    for line in better:
        print(f"better {line}" + ("" if args.write else " (python .ci/baselines.py --write records it)"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
