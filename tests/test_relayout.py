"""tools/relayout.py, the layout move of issue 28: its rewrites, its mapping against this tree, and
one whole run on a small git repository (moved, rewritten, checked, idempotent)."""

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))
import relayout  # noqa: E402

MOVES = {"doclens.io.jsonl": "doclens.inputs.jsonl", "doclens.scoring.engine_ray": "doclens.engines.ray",
         "doclens.scoring.report": "doclens.reports.report"}


def test_dotted_names_are_rewritten_only_whole():
    text = ('from doclens.io.jsonl import read\n"doclens.scoring.engine_ray:run"\n'
            'patch("doclens.io.jsonl.open")\nmydoclens.io.jsonl doclens.io.jsonlx doclens.scoring.report_x\n')
    assert relayout.rewrite_dotted(text, MOVES) == (
        'from doclens.inputs.jsonl import read\n"doclens.engines.ray:run"\n'
        'patch("doclens.inputs.jsonl.open")\nmydoclens.io.jsonl doclens.io.jsonlx doclens.scoring.report_x\n')
    assert relayout.rewrite_dotted(relayout.rewrite_dotted(text, MOVES), MOVES) == relayout.rewrite_dotted(text, MOVES)


def test_paths_keep_their_prefix():
    text = "see `doclens/io/jsonl.py` and scoring/engine_ray.py, not other/io/jsonl.py or io/jsonl.pyc"
    assert relayout.rewrite_paths(text, MOVES) == (
        "see `doclens/inputs/jsonl.py` and engines/ray.py, not other/io/jsonl.py or io/jsonl.pyc")


def test_from_package_imports_follow_the_module():
    source = "from doclens.io import jsonl\nfrom doclens.scoring import engine_ray as er, report\n"
    new, problems = relayout.rewrite_from_imports(source, {**MOVES, "doclens.scoring.report": "doclens.engines.report"})
    assert new == "from doclens.inputs import jsonl\nfrom doclens.engines import ray as engine_ray, report\n".replace(
        "ray as engine_ray", "ray as er")
    assert problems == []
    mixed, problems = relayout.rewrite_from_imports("from doclens.scoring import engine_ray, report\n", MOVES)
    assert mixed == "from doclens.scoring import engine_ray, report\n"  # two new packages: by hand
    assert problems and "line 1" in problems[0]


def test_relative_imports_of_a_moving_module_become_absolute():
    source = "from .report import Report\nfrom ..core import types\nfrom . import run\n"
    new = relayout.absolutise_relative(source, "doclens.scoring.engine_ray", False, MOVES, moving=True)
    assert new == ("from doclens.scoring.report import Report\nfrom doclens.core import types\n"
                   "from doclens.scoring import run\n")
    still = relayout.absolutise_relative("from .types import X\n", "doclens.core.metrics", False, MOVES, moving=False)
    assert still == "from .types import X\n"  # neither side moves: left alone


def test_the_mapping_fits_this_tree():
    """Each move is either still to do (old file here) or done (new file here), never half; the
    targets are distinct and no target is another move's source."""
    assert len(set(relayout.MOVES.values())) == len(relayout.MOVES)
    assert not set(relayout.MOVES.values()) & set(relayout.MOVES)
    states = {(REPO / relayout.module_path(old)).is_file() for old in relayout.MOVES}
    news = {(REPO / relayout.module_path(new)).is_file() for new in relayout.MOVES.values()}
    assert len(states) == 1 and len(news) == 1 and states != news, "the tree is half moved"
    for new in relayout.MOVES.values():
        for depth in range(2, new.count(".") + 1):
            package = ".".join(new.split(".")[:depth])
            assert package in relayout.NEW_PACKAGES or (REPO / package.replace(".", "/") / "__init__.py").is_file()


NAMED = "`inputs/jsonl.py`, `reports/helpers.py`, `reports/report.py`, `views/show.py`"


def _git(root, *args):
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


@pytest.fixture
def small_repo(tmp_path):
    files = {
        "doclens/__init__.py": "", "doclens/io/__init__.py": '"""io"""\n',
        "doclens/io/jsonl.py": "from .report_helpers import x\n",
        "doclens/io/report_helpers.py": "x = 1\n",
        "doclens/scoring/__init__.py": "", "doclens/scoring/report.py": "from doclens.io import jsonl\n",
        "doclens/views/__init__.py": "", "doclens/views/show.py": "def f():\n    import doclens.scoring.report\n",
        "README.md": ("Read `doclens/io/jsonl.py`.\n\n```\ndoclens/          library\n  io/             files\n"
                      "  scoring/        scorer\n  views/          views\n```\n"),
        "setup.cfg": "[options]\npackages =\n    doclens\n    doclens.io\n    doclens.prompts\npackage_dir =\n"
                     "    doclens.prompts = prompts\n",
        "tests/test_layers.py": "LAYERS = (\n    (\"io\", (\"doclens.io\",)),\n)\nKNOWN_UPWARD = {\n}\nREST = 1\n",
        "docs/design.md": "# D\n## 6. Layout\nold\n### Shipped files\nkept\n",
        "tools/relayout_design_layout.md": "## 6. Layout\n" + NAMED + "\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "before the move")
    return tmp_path


def test_a_whole_run_on_a_small_repository(small_repo):
    moves = {"doclens.io.jsonl": "doclens.inputs.jsonl", "doclens.io.report_helpers": "doclens.reports.helpers",
             "doclens.scoring.report": "doclens.reports.report"}
    packages = {"doclens.inputs": "inputs", "doclens.reports": "reports"}
    before = relayout.Relayout(small_repo, moves=moves, new_packages=packages)
    assert before.leftovers()  # --check sees the old paths
    assert before.run() == []
    read = lambda name: (small_repo / name).read_text(encoding="utf-8")  # noqa: E731
    assert not (small_repo / "doclens/io").exists()
    assert read("doclens/inputs/jsonl.py") == "from doclens.reports.helpers import x\n"
    assert read("doclens/reports/report.py") == "from doclens.inputs import jsonl\n"
    assert read("doclens/views/show.py") == "def f():\n    import doclens.reports.report\n"
    assert read("doclens/inputs/__init__.py") == '"""inputs"""\n'
    assert "`doclens/inputs/jsonl.py`" in read("README.md") and "  io/" not in read("README.md")
    assert "    doclens.inputs\n" in read("setup.cfg") and "doclens.io\n" not in read("setup.cfg")
    assert read("setup.cfg").rstrip().endswith("doclens.prompts = prompts")
    assert read("tests/test_layers.py").startswith(relayout.LAYERS_BLOCK) and "REST = 1" in read("tests/test_layers.py")
    assert read("docs/design.md") == "# D\n## 6. Layout\n" + NAMED + "\n\n### Shipped files\nkept\n"
    again = relayout.Relayout(small_repo, moves=moves, new_packages=packages)
    assert again.run() == [] and again.done == []  # idempotent
    assert again.leftovers() == []
    (small_repo / "doclens/views/new.py").write_text("", encoding="utf-8")
    assert again.leftovers() == ["docs/design.md: layout section does not name views/new.py"]


def test_a_module_the_mapping_misses_stops_the_move(small_repo):
    with pytest.raises(SystemExit, match="doclens.io.report_helpers: in doclens/io/"):
        relayout.Relayout(small_repo, moves={"doclens.io.jsonl": "doclens.inputs.jsonl"},
                          new_packages={"doclens.inputs": "inputs"}).run()
    assert (small_repo / "doclens/io/jsonl.py").is_file()  # nothing was touched
