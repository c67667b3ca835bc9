"""The layer rule of docs/design.md §6: a module imports only from its own layer or lower ones.

Every module under ``doclens/`` is parsed with ``ast`` and every ``import`` in it is checked,
imports inside functions included (a lazy import is still a dependency).
"""

import ast
import os
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "doclens"

#: lowest first; a module may import from its own layer and the ones before it
LAYERS = (
    ("core", ("doclens.version", "doclens.core")),
    ("families", ("doclens.families",)),
    ("parsing", ("doclens.parsing",)),
    ("inputs", ("doclens.inputs", "doclens.datasets")),
    ("judges", ("doclens.extraction", "doclens.evaluators", "doclens.retrieval")),
    ("baselines", ("doclens.baselines",)),
    ("reports", ("doclens.reports",)),
    ("scoring", ("doclens.scoring", "doclens.engines")),
    ("stats", ("doclens.stats",)),
    ("views", ("doclens.views",)),
    ("rewards", ("doclens.rewards",)),
    ("cli", ("doclens.cli", "doclens.__main__")),  # python -m doclens runs the command line
    ("tools", ("doclens.tools",)),  # maintainers' tools: the reference pages read the parser
)
#: (module, imported module) → why this import may still go up; each entry must still be needed
KNOWN_UPWARD = {
    ("doclens.inputs.references", "doclens.reports.submissions"):
        "read_submission checks a submission with the validator 'doclens validate' runs (reports/submissions.py, "
        "beside the scores-file checks it shares reports/json_checks.py with); the submission checks belong in "
        "inputs/ once they are split from 'doclens validate'",
}
#: folders of shipped files (symbolic links in a checkout), not code of the package
RESOURCE_FOLDERS = {"prompts", "cards", "metric", "schemas"}


def layer_of(module: str):
    """The rank of a ``doclens.…`` module name; ``None`` for the top-level ``doclens`` package."""
    for rank, (_, prefixes) in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return rank
    return None


def package_modules():
    """``(module name, path)`` of every Python file of the package, resource folders excluded."""
    found = []
    for folder, subfolders, files in os.walk(PACKAGE):
        subfolders[:] = [s for s in subfolders if s not in RESOURCE_FOLDERS and s != "__pycache__"]
        for name in files:
            if name.endswith(".py"):
                path = Path(folder) / name
                parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
                if parts[-1] == "__init__":
                    parts = parts[:-1]
                found.append((".".join(parts), path))
    return sorted(found)


def imported_modules(module: str, path: Path):
    """``(line, imported doclens module)`` for every import in the file, relative ones resolved.
    ``from doclens.x import y`` counts as importing ``doclens.x.y`` when that is a module, else
    ``doclens.x``; the difference matters only for ``from doclens import …``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    is_package = path.name == "__init__.py"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "doclens" or alias.name.startswith("doclens."):
                    yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target == "doclens":  # from doclens import x: x may be a subpackage
                for alias in node.names:
                    yield node.lineno, f"doclens.{alias.name}"
            elif target.startswith("doclens."):
                yield node.lineno, target


MODULES = package_modules()


def test_every_module_has_a_layer():
    orphans = [name for name, _ in MODULES if name != "doclens" and layer_of(name) is None]
    assert not orphans, f"modules outside every layer (add them to LAYERS and docs/design.md §6): {orphans}"
    assert len(MODULES) > 40  # the walk found the package


@pytest.mark.parametrize("module,path", MODULES, ids=[name for name, _ in MODULES])
def test_imports_respect_the_layers(module, path):
    if module == "doclens":
        pytest.skip("doclens/__init__.py is the public API: it gathers names from every layer")
    own = layer_of(module)
    violations = []
    allowed = {target for (importer, target) in KNOWN_UPWARD if importer == module}
    used = set()
    for line, target in imported_modules(module, path):
        rank = layer_of(target)
        if target in allowed:
            used.add(target)
        elif rank is None:  # from doclens import X / import doclens: the public API, which imports everything
            violations.append(f"line {line}: imports {target} (the top-level package; import the module instead)")
        elif rank > own:
            violations.append(f"line {line}: imports {target} ({LAYERS[rank][0]}, above {LAYERS[own][0]})")
    assert not violations, f"{module} ({LAYERS[own][0]}): " + "; ".join(violations)
    assert used == allowed, f"{module}: no longer imports {sorted(allowed - used)}: remove it from KNOWN_UPWARD"


def test_the_checker_sees_a_violation(tmp_path):
    """The parser of imports is what the rule rests on: a lazy import of a higher layer inside a
    function, a relative import and ``from doclens import`` are all seen."""
    source = tmp_path / "bad.py"
    source.write_text("def f():\n    from doclens.cli import main\n    from ..views import html\n"
                      "    from doclens import __version__\n", encoding="utf-8")
    found = [target for _, target in imported_modules("doclens.core.bad", source)]
    assert found == ["doclens.cli", "doclens.views", "doclens.__version__"]
    assert layer_of("doclens.cli") > layer_of("doclens.core.types")
    assert layer_of("doclens.__version__") is None


def import_graph() -> dict[str, set[str]]:
    """Module → the package modules it imports (lazy imports inside functions included), each
    import resolved to the module it names (``from doclens.x import y``: ``doclens.x.y`` when that
    is a module, else ``doclens.x``)."""
    names = {name for name, _ in MODULES}
    graph: dict[str, set[str]] = {}
    for module, path in MODULES:
        targets = set()
        for _, target in imported_modules(module, path):
            while target not in names and "." in target:  # doclens.x.name → doclens.x
                target = target.rsplit(".", 1)[0]
            if target in names and target != module:
                targets.add(target)
        graph[module] = targets
    return graph


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm): each is an
    import circle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                circles.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return circles


def test_no_import_circle():
    """No two modules of the package import each other, directly or around a loop, lazy imports
    included (the public API ``doclens/__init__.py``, which gathers names, is left out)."""
    graph = {module: targets - {"doclens"} for module, targets in import_graph().items() if module != "doclens"}
    assert import_circles(graph) == []


def test_the_circle_finder_sees_a_circle():
    assert import_circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert import_circles({"a": {"b"}, "b": set()}) == []


# Function length (at most 70 lines from def to end) and complexity are measured by .ci/baselines.py
# (radon, against .ci/complexity-baseline.txt) and tests/project/test_ci_baselines.py.
