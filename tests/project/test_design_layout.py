"""docs/design.md's layout section names every module of ``doclens/``, and every module it names
exists: the one lasting check of the spent layout move (issue 28's ``tools/relayout.py``)."""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "doclens"


def _layout_section() -> str:
    text = (REPO / "docs" / "design.md").read_text(encoding="utf-8")
    match = re.search(r"^## \d+\. Layout\n.*?(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    assert match, "docs/design.md has no '## N. Layout' section"
    return match.group()


def _named() -> set[str]:
    return set(re.findall(r"`((?:[a-z_]+/)*[a-z_]+\.py)`", _layout_section()))


def _modules() -> set[str]:
    return {p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py")
            if not any(q.is_symlink() for q in p.parents) and p.name not in ("__init__.py", "__main__.py")}


def test_the_layout_section_names_every_module():
    assert sorted(_modules() - _named()) == []


def test_every_module_the_layout_section_names_exists():
    assert sorted(m for m in _named() if not (PACKAGE / m).is_file() and not (REPO / m).is_file()) == []
