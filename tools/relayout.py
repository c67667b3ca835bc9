#!/usr/bin/env python3
"""The layout move of issue 28 (item 2): each room of ``doclens/`` holds one kind of thing.

Run once, from a clean checkout, after every branch that touches the package has been merged::

    python tools/relayout.py            # move, rewrite, print what it did
    python tools/relayout.py --check    # list every reference to an old module or path; exit 1 if any
    python tools/relayout.py --dry-run  # print what it would do, change nothing

What it does, in order (a second run changes nothing):

1. refuses to start when the tree is half moved, or when a room it empties (``io/``) holds a
   module :data:`MOVES` does not name (add a line to :data:`MOVES`, then run again);
2. turns relative imports that point at, or sit in, a moved module into absolute ones;
3. ``git mv``\\ s every module of :data:`MOVES` (new packages get the ``__init__.py`` of
   :data:`NEW_PACKAGES`; an emptied room loses its ``__init__.py``);
4. rewrites, in every tracked text file: ``from doclens.pkg import module`` of a moved module,
   dotted names (``doclens.io.jsonl``, also inside strings: ``importlib`` targets, presets,
   ``mock.patch`` targets) and file paths (``doclens/io/jsonl.py``, ``io/jsonl.py``);
5. regenerates setup.cfg's ``packages`` from the tree, replaces ``tests/test_layers.py``'s layer
   rules (:data:`LAYERS_BLOCK`) and splices ``tools/relayout_design_layout.md`` into the layout
   section of ``docs/design.md``.

Modules it does not know (``families/``, ``rewards/``, new commands …) stay where they are and
only get their imports rewritten. Nothing persisted names a module path except the ``class``
entry of a report's config (provenance, not part of any signature or cache key of the shipped
judges), so scores, signatures and cached verdicts are the same before and after.
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

#: old module → new module. Whole-module moves; the one code split it needed (the LLM extractor out
#: of evaluators/chat.py into evaluators/llm_extractor.py) was done as a commit before.
MOVES: dict[str, str] = {
    # inputs/: what is read first — instances from JSONL and tables, a submission's predictions
    "doclens.io.jsonl": "doclens.inputs.jsonl",
    "doclens.io.tables": "doclens.inputs.tables",
    "doclens.io.references": "doclens.inputs.references",
    # reports/: the report type and its files
    "doclens.scoring.report": "doclens.reports.report",
    "doclens.io.files": "doclens.reports.files",
    "doclens.io.scores_files": "doclens.reports.scores_files",
    "doclens.io.results_files": "doclens.reports.results_files",
    "doclens.io.submissions": "doclens.reports.submissions",
    "doclens.io.json_checks": "doclens.reports.json_checks",
    "doclens.scoring.plots": "doclens.reports.plots",
    # engines/: what drives the scorer over chunks and where finished chunks go
    "doclens.scoring.sink": "doclens.engines.sink",
    "doclens.scoring.progress": "doclens.engines.progress",
    "doclens.scoring.engine_ray": "doclens.engines.ray",
    # extraction/: claims out of a text
    "doclens.evaluators.extractors": "doclens.extraction.extractors",
    "doclens.evaluators.llm_extractor": "doclens.extraction.llm",
    # evaluators/ by kind; the contract (base), registry (__init__), cache and usage stay on top
    "doclens.evaluators.chat": "doclens.evaluators.llm.chat",
    "doclens.evaluators.openai_chat": "doclens.evaluators.llm.openai_chat",
    "doclens.evaluators.prompting": "doclens.evaluators.llm.prompting",
    "doclens.evaluators.nli": "doclens.evaluators.models.nli",
    "doclens.evaluators.local_chat": "doclens.evaluators.models.local_chat",
    "doclens.evaluators.torch_utils": "doclens.evaluators.models.torch_utils",
    "doclens.evaluators.nli_runtimes": "doclens.evaluators.models.nli_runtimes",
    "doclens.evaluators.clinical_rules": "doclens.evaluators.rules.clinical_rules",
    "doclens.evaluators.overlap": "doclens.evaluators.rules.overlap",
}

#: package → docstring of its new ``__init__.py``
NEW_PACKAGES: dict[str, str] = {
    "doclens.inputs": "What is read first: instances from JSONL files and tables, and a submission's predictions\n"
                      "joined by id with a references table.",
    "doclens.reports": "A run's report and its files: the ``Report`` type, the checked scores-file reader, the\n"
                       "streamed results files and journal, submissions and their schemas, atomic writes.",
    "doclens.engines": "What drives the scorer over chunks and where finished chunks go: sinks (memory, or the\n"
                       "journal and output files), the progress bar, the Ray engine.",
    "doclens.extraction": "Claim extraction: the extractor contract, sentences and clauses (no model), and the LLM\n"
                          "extractor run on a chat judge's model.",
    "doclens.evaluators.llm": "Chat judges over any chat model: ``ChatJudge`` (prompts, reply matching, re-ask), the\n"
                              "OpenAI-compatible client, and the prompt templates.",
    "doclens.evaluators.models": "Judges run in this process: NLI models, the local chat judge, and the torch and\n"
                                 "transformers helpers they share.",
    "doclens.evaluators.rules": "Rule judges, offline and deterministic: ``clinical-rules`` and ``overlap``.",
}

#: rooms the move empties: a module left there that MOVES does not name stops the move
DISSOLVED = ("doclens.io",)

#: the layer rules of tests/test_layers.py after the move (docs/design.md, layout section)
LAYERS_BLOCK = '''LAYERS = (
    ("core", ("doclens.version", "doclens.core")),
    ("families", ("doclens.families",)),
    ("parsing", ("doclens.parsing",)),
    ("inputs", ("doclens.inputs",)),
    ("judges", ("doclens.extraction", "doclens.evaluators", "doclens.retrieval")),
    ("baselines", ("doclens.baselines",)),
    ("reports", ("doclens.reports",)),
    ("scoring", ("doclens.scoring", "doclens.engines")),
    ("stats", ("doclens.stats",)),
    ("views", ("doclens.views",)),
    ("rewards", ("doclens.rewards",)),
    ("cli", ("doclens.cli", "doclens.__main__")),  # python -m doclens runs the command line
)
#: (module, imported module) → why this import may still go up; each entry must still be needed
KNOWN_UPWARD = {
    ("doclens.inputs.references", "doclens.reports.submissions"):
        "read_submission checks a submission with the validator 'doclens validate' runs, which also reads "
        "scores files (issue 28: the scores_files/submissions circle is being untied; then the submission "
        "checks belong in inputs/)",
}
'''

#: the README's layout tree: these rooms' lines are set, io/'s removed, others kept, all in layer order
README_ROOMS = {
    "inputs": "instance readers (JSONL, tables), a submission's predictions joined with references",
    "extraction": "claim extractors: sentences, clauses, the LLM extractor",
    "evaluators": "the judge contract and presets; llm/ chat judges, models/ in-process, rules/",
    "reports": "Report and its files: scores files, results files and journal, submissions, atomic writes",
    "scoring": "the DocLens scorer, the reduction, the report builder, signatures, dry run",
    "engines": "sinks, the progress bar, the Ray engine",
}
README_GONE = ("io",)

#: this move's own files: they name the old paths on purpose and are never rewritten
OWN_FILES = ("tools/relayout.py", "tools/relayout_design_layout.md", "tests/test_relayout.py")
TEXT_SUFFIXES = {".py", ".md", ".cfg", ".toml", ".txt", ".ini", ".sh", ".yaml", ".yml", ".json", ".rst", ""}
DESIGN_LAYOUT = "tools/relayout_design_layout.md"


def module_path(module: str) -> str:
    """``doclens.io.jsonl`` → ``doclens/io/jsonl.py`` (a package: ``…/__init__.py``)."""
    return module.replace(".", "/") + ".py"


def rewrite_dotted(text: str, moves: dict[str, str]) -> str:
    """Every ``doclens.old.module`` (not followed by more of a name) → its new name."""
    for old in sorted(moves, key=len, reverse=True):
        text = re.sub(r"(?<![\w.])" + re.escape(old) + r"(?![\w])", moves[old], text)
    return text


def rewrite_paths(text: str, moves: dict[str, str]) -> str:
    """``doclens/io/jsonl.py`` and ``io/jsonl.py`` → the new file's path, same prefix kept."""
    for old in sorted(moves, key=len, reverse=True):
        old_short = module_path(old).split("/", 1)[1]
        new_short = module_path(moves[old]).split("/", 1)[1]
        text = re.sub(r"(?<![\w./-])(doclens/)?" + re.escape(old_short) + r"(?![\w])",
                      lambda m, new=new_short: (m.group(1) or "") + new, text)
    return text


def _statement(module: str, names: list[str]) -> str:
    return f"from {module} import {', '.join(names)}"


def rewrite_from_imports(source: str, moves: dict[str, str]) -> tuple[str, list[str]]:
    """``from doclens.pkg import module`` of a moved module → ``from new.pkg import module``
    (``as`` keeps the local name when the file was renamed). Returns the source and the
    statements it could not rewrite (moved and unmoved names mixed, or two new packages)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source, []
    edits, problems = [], []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module):
            continue
        targets = [moves.get(f"{node.module}.{a.name}") for a in node.names]
        if not any(targets):
            continue
        packages = {t.rsplit(".", 1)[0] for t in targets if t}
        if not all(targets) or len(packages) != 1:
            problems.append(f"line {node.lineno}: {ast.get_source_segment(source, node)}")
            continue
        names = []
        for alias, target in zip(node.names, targets):
            leaf = target.rsplit(".", 1)[1]
            local = alias.asname or alias.name
            names.append(leaf if local == leaf else f"{leaf} as {local}")
        edits.append((node, _statement(packages.pop(), names)))
    return _apply(source, edits), problems


def _apply(source: str, edits: list[tuple[ast.AST, str]]) -> str:
    """Replace each node's source text, last first so earlier offsets stay valid."""
    lines = source.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line.encode("utf-8")))
    data = source.encode("utf-8")
    for node, text in sorted(edits, key=lambda e: (e[0].lineno, e[0].col_offset), reverse=True):
        begin = starts[node.lineno - 1] + node.col_offset
        end = starts[node.end_lineno - 1] + node.end_col_offset
        data = data[:begin] + text.encode("utf-8") + data[end:]
    return data.decode("utf-8")


def resolve_relative(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module a relative ``from …x import`` names, seen from ``module``."""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[:len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def absolutise_relative(source: str, module: str, is_package: bool, moves: dict[str, str],
                        moving: bool) -> str:
    """Relative imports of a module that moves, or that name a moved module, made absolute (with
    the old names: the dotted rewrite renames them next)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    edits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            target = resolve_relative(module, is_package, node)
            touched = target in moves or any(f"{target}.{a.name}" in moves for a in node.names)
            if moving or touched:
                names = [a.name if not a.asname else f"{a.name} as {a.asname}" for a in node.names]
                edits.append((node, _statement(target, names)))
    return _apply(source, edits)


@dataclass
class Relayout:
    """One run of the move over the repository at ``root``."""

    root: Path
    moves: dict[str, str] = field(default_factory=lambda: dict(MOVES))
    new_packages: dict[str, str] = field(default_factory=lambda: dict(NEW_PACKAGES))
    dissolved: tuple[str, ...] = DISSOLVED
    dry_run: bool = False
    done: list[str] = field(default_factory=list)

    # ---- the tree ----------------------------------------------------------------------------------
    def git(self, *args: str) -> str:
        return subprocess.run(["git", *args], cwd=self.root, check=True, capture_output=True,
                              text=True).stdout

    def tracked_text_files(self) -> list[Path]:
        """Tracked text files (a symbolic link, such as doclens/prompts, is git's own entry: skipped)."""
        names = [n for n in self.git("ls-files", "-z").split("\0") if n and n not in OWN_FILES]
        paths = [self.root / n for n in names]
        return [p for p in paths if p.suffix in TEXT_SUFFIXES and p.is_file() and not p.is_symlink()]

    def exists(self, module: str) -> bool:
        return (self.root / module_path(module)).is_file()

    def pending(self) -> list[str]:
        """The moves still to do; raises SystemExit when the tree is half moved or inconsistent."""
        todo, wrong = [], []
        for old, new in self.moves.items():
            if self.exists(old) and not self.exists(new):
                todo.append(old)
            elif self.exists(old) == self.exists(new):
                wrong.append(f"{old} → {new}: {'both' if self.exists(old) else 'neither'} exist")
        for room in self.dissolved:
            folder = self.root / room.replace(".", "/")
            for path in sorted(folder.glob("*.py")) if folder.is_dir() else []:
                name = f"{room}.{path.stem}"
                if path.stem != "__init__" and name not in self.moves:
                    wrong.append(f"{name}: in {room.replace('.', '/')}/, which the move empties, but not in MOVES")
        if wrong:
            raise SystemExit("relayout: refusing to start:\n  " + "\n  ".join(wrong))
        return todo

    def write(self, path: Path, text: str, why: str) -> None:
        if path.read_text(encoding="utf-8") != text:
            self.done.append(f"{why}: {path.relative_to(self.root)}")
            if not self.dry_run:
                path.write_text(text, encoding="utf-8")

    # ---- the steps ---------------------------------------------------------------------------------
    def absolutise(self, todo: list[str]) -> None:
        for path in sorted((self.root / "doclens").rglob("*.py")):
            if any(p.is_symlink() for p in path.parents):
                continue
            parts = path.relative_to(self.root).with_suffix("").parts
            is_package = parts[-1] == "__init__"
            module = ".".join(parts[:-1] if is_package else parts)
            text = path.read_text(encoding="utf-8")
            self.write(path, absolutise_relative(text, module, is_package, self.moves, module in todo),
                       "relative imports made absolute")

    def move(self, todo: list[str]) -> None:
        for old in todo:
            new = self.moves[old]
            self.make_packages(new)
            self.done.append(f"git mv {module_path(old)} {module_path(new)}")
            if not self.dry_run:
                self.git("mv", module_path(old), module_path(new))
        for room in self.dissolved:
            init = self.root / room.replace(".", "/") / "__init__.py"
            if init.is_file() and not [p for p in init.parent.glob("*.py") if p.name != "__init__.py"]:
                self.done.append(f"git rm {init.relative_to(self.root)} (the room is empty)")
                if not self.dry_run:
                    self.git("rm", "-q", str(init.relative_to(self.root)))

    def make_packages(self, module: str) -> None:
        parts = module.split(".")
        for depth in range(2, len(parts)):
            package = ".".join(parts[:depth])
            init = self.root / package.replace(".", "/") / "__init__.py"
            if init.is_file() or f"new package {init.relative_to(self.root)}" in self.done:
                continue
            if package not in self.new_packages:
                raise SystemExit(f"relayout: {package} is a new package without a docstring in NEW_PACKAGES")
            self.done.append(f"new package {init.relative_to(self.root)}")
            if not self.dry_run:
                init.parent.mkdir(parents=True, exist_ok=True)
                init.write_text(f'"""{self.new_packages[package]}"""\n', encoding="utf-8")
                self.git("add", str(init.relative_to(self.root)))

    def rewrite_references(self) -> list[str]:
        problems = []
        for path in self.tracked_text_files():
            if not self._is_text(path):
                continue
            new = path.read_text(encoding="utf-8")
            if path.suffix == ".py":
                new, found = rewrite_from_imports(new, self.moves)
                problems += [f"{path.relative_to(self.root)} {p}" for p in found]
            new = rewrite_paths(rewrite_dotted(new, self.moves), self.moves)
            self.write(path, new, "references rewritten")
        return problems

    @staticmethod
    def _is_text(path: Path) -> bool:
        try:
            path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            return False
        return True

    def setup_packages(self) -> None:
        """setup.cfg's ``packages``: every folder of doclens/ with an ``__init__.py``, in layer order,
        then the resource packages as they were."""
        path = self.root / "setup.cfg"
        text = path.read_text(encoding="utf-8")
        match = re.search(r"^packages =\n((?:[ \t]+\S+\n)+)", text, re.MULTILINE)
        if not match:
            raise SystemExit("relayout: setup.cfg has no 'packages =' list")
        listed = match.group(1).split()
        mapped = re.search(r"^package_dir =\n((?:[ \t]+.*\n)+)", text, re.MULTILINE)
        from_elsewhere = {line.split("=")[0].strip() for line in (mapped.group(1).splitlines() if mapped else [])}
        resources = [p for p in listed if p in from_elsewhere]
        code = sorted({".".join(p.parent.relative_to(self.root).parts)
                       for p in (self.root / "doclens").rglob("__init__.py")
                       if not any(q.is_symlink() for q in p.parents)} - set(resources), key=_layer_rank)
        block = "".join(f"    {p}\n" for p in code + resources)
        self.write(path, text[:match.start(1)] + block + text[match.end(1):], "packages listed")

    def layer_rules(self) -> None:
        path = self.root / "tests" / "test_layers.py"
        text = path.read_text(encoding="utf-8")
        match = re.search(r"^LAYERS = \(\n.*?^\)\n(?:(?:#: .*\n)?KNOWN_UPWARD = \{\n.*?^\}\n)?", text,
                          re.MULTILINE | re.DOTALL)
        if not match:
            raise SystemExit("relayout: tests/test_layers.py has no LAYERS block")
        self.write(path, text[:match.start()] + LAYERS_BLOCK + text[match.end():], "layer rules replaced")

    def design_layout(self) -> None:
        """The layout section of docs/design.md (from its heading to the next ``### `` or ``## ``
        heading) replaced by tools/relayout_design_layout.md, which starts with that heading."""
        path = self.root / "docs" / "design.md"
        text = path.read_text(encoding="utf-8")
        section = (self.root / DESIGN_LAYOUT).read_text(encoding="utf-8")
        match = re.search(r"^## \d+\. Layout\n.*?(?=^###? )", text, re.MULTILINE | re.DOTALL)
        if not match:
            raise SystemExit("relayout: docs/design.md has no '## N. Layout' section")
        number = re.match(r"## (\d+)\.", match.group()).group(1)
        section = re.sub(r"^## \d+\.", f"## {number}.", section, count=1)
        self.write(path, text[:match.start()] + section.rstrip("\n") + "\n\n" + text[match.end():],
                   "layout section spliced")

    def readme_tree(self) -> None:
        path = self.root / "README.md"
        text = path.read_text(encoding="utf-8")
        match = re.search(r"^doclens/ +library.*\n((?:  \S+/ +.*\n)+)", text, re.MULTILINE)
        if not match:
            raise SystemExit("relayout: README.md has no layout tree starting 'doclens/   library'")
        rooms = {line.split("/")[0].strip(): line for line in match.group(1).splitlines(keepends=True)}
        for room in README_GONE:
            rooms.pop(room, None)
        width = len(re.match(r"  \S+ +", next(iter(rooms.values()))).group())
        rooms.update({room: f"  {room + '/':<{width - 2}}{what}\n" for room, what in README_ROOMS.items()})
        block = "".join(rooms[r] for r in sorted(rooms, key=lambda r: _layer_rank(f"doclens.{r}")))
        self.write(path, text[:match.start(1)] + block + text[match.end(1):], "layout tree rewritten")

    def sort_imports(self) -> None:
        """New module names change the order of import blocks: ruff's isort rule (the settings of
        pyproject.toml) puts the rewritten files back in order. Without ruff, says so."""
        rewritten = sorted({line.split(": ", 1)[1] for line in self.done if line.endswith(".py")
                            and line.startswith("references rewritten")})
        if not rewritten:
            return
        try:
            subprocess.run(["ruff", "check", "--fix", "--select", "I001", "--quiet", "--exit-zero", *rewritten],
                           cwd=self.root, check=True, capture_output=True)
        except (OSError, subprocess.CalledProcessError) as exc:
            self.done.append(f"imports NOT sorted (ruff: {exc}): run `ruff check --fix --select I001 .`")
        else:
            self.done.append(f"import blocks sorted by ruff in the {len(rewritten)} rewritten Python files")

    def run(self) -> list[str]:
        """The whole move; returns the statements it could not rewrite (fix them by hand)."""
        todo = self.pending()
        self.absolutise(todo)
        self.move(todo)
        problems = self.rewrite_references()
        if not self.dry_run:
            self.sort_imports()
            self.setup_packages()
            self.layer_rules()
            self.design_layout()
            self.readme_tree()
        return problems

    # ---- the check -------------------------------------------------------------------------------
    def leftovers(self) -> list[str]:
        """Every remaining reference to an old module or file: names, paths, files, relative imports."""
        found = [f"{module_path(old)}: still there" for old in self.moves if self.exists(old)]
        olds = list(self.moves) + list(self.dissolved)
        dotted = re.compile(r"(?<![\w.])(?:" + "|".join(re.escape(o) for o in olds) + r")(?![\w])")
        shorts = [module_path(o).split("/", 1)[1] for o in self.moves] + [
            r.replace(".", "/").split("/", 1)[1] + "/" for r in self.dissolved]
        paths = re.compile(r"(?<![\w./-])(?:doclens/)?(?:" + "|".join(re.escape(s) for s in shorts) + r")(?![\w])")
        for path in self.tracked_text_files():
            if not self._is_text(path):
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                for match in [*dotted.finditer(line), *paths.finditer(line)]:
                    found.append(f"{path.relative_to(self.root)}:{number}: {match.group()}")
        return found + self.unnamed_modules()

    def unnamed_modules(self) -> list[str]:
        """Once moved: the modules docs/design.md's layout section does not name (`room/module.py`),
        and the ones it names that do not exist."""
        design = self.root / "docs" / "design.md"
        if any(self.exists(old) for old in self.moves) or not design.is_file():
            return []
        text = design.read_text(encoding="utf-8")
        match = re.search(r"^## \d+\. Layout\n.*?(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
        section = match.group() if match else ""
        modules = [p.relative_to(self.root / "doclens").as_posix() for p in (self.root / "doclens").rglob("*.py")
                   if not any(q.is_symlink() for q in p.parents) and p.name not in ("__init__.py", "__main__.py")]
        named = set(re.findall(r"`((?:[a-z_]+/)*[a-z_]+\.py)`", section))
        gone = [f"docs/design.md: layout section names {m}, which does not exist" for m in sorted(named)
                if not (self.root / "doclens" / m).is_file() and not (self.root / m).is_file()]
        return gone + [f"docs/design.md: layout section does not name {m}" for m in sorted(modules) if m not in named]


def _layer_rank(package: str) -> tuple[int, str]:
    order = re.findall(r'"(doclens[\w.]*)"', LAYERS_BLOCK.split("KNOWN_UPWARD")[0])
    ranks = [i for i, prefix in enumerate(order) if package == prefix or package.startswith(prefix + ".")]
    return (ranks[0] if ranks else -1 if package == "doclens" else len(order), package)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--check", action="store_true", help="list references to old modules and paths; exit 1 if any")
    what.add_argument("--dry-run", action="store_true", help="print what would be done; change nothing")
    args = parser.parse_args(argv)
    relayout = Relayout(args.root.resolve(), dry_run=args.dry_run)
    if args.check:
        left = relayout.leftovers()
        print("\n".join(left) if left else "relayout --check: no reference to an old module or path")
        return 1 if left else 0
    problems = relayout.run()
    print("\n".join(relayout.done) if relayout.done else "relayout: nothing to do (already moved)")
    for problem in problems:
        print(f"relayout: rewrite by hand: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
