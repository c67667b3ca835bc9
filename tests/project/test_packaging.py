"""The wheel carries prompts, cards and the evaluate module, and the core pulls no torch."""

import configparser
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def test_core_requirements_have_no_torch():
    config = configparser.ConfigParser()
    config.read(REPO / "setup.cfg")
    core = config["options"]["install_requires"].lower()
    assert "torch" not in core and "transformers" not in core
    extras = config["options.extras_require"]
    assert {"local", "baselines", "medcon", "dev", "all"} <= set(extras)
    # torch as a range in every extra that takes it, so a user's own build stays (the exact version
    # CI runs is in .ci/constraints.txt and .ci/run only)
    for name in ("local", "baselines", "clinical", "retrieval"):
        assert "torch>=2.6,<3" in extras[name], name
    assert not [name for name, requirements in extras.items() if "torch==" in requirements]
    # [all]: every user-facing extra, none of the test-only ones
    everything = extras["all"].split("doclens[", 1)[1].split("]", 1)[0].split(",")
    assert sorted(everything) == sorted(set(extras) - {"all", "dev", "server-tests"})


def test_checkout_reads_resources_through_importlib_resources():
    """In a checkout the resource packages resolve, through importlib.resources, to the
    repository's top-level folders (doclens/prompts … are symbolic links to them)."""
    import importlib.resources

    from doclens.core.resources import PACKAGES, read_resource, resource_root

    folders = {"prompts": "prompts", "cards": "cards", "metric": "metrics/doclens", "schemas": "schemas"}
    assert set(PACKAGES) == set(folders)
    for kind, folder in folders.items():
        link = REPO / "doclens" / PACKAGES[kind].split(".")[1]
        assert link.is_symlink() and link.resolve() == (REPO / folder).resolve(), link
        root = importlib.resources.files(PACKAGES[kind])
        files = [path.relative_to(REPO / folder) for path in (REPO / folder).rglob("*")
                 if path.is_file() and "__pycache__" not in path.parts]
        assert files
        for relative in files:  # every file of the folder, read through the package, as it is on disk
            node = root
            for part in relative.parts:
                node = node / part
            assert node.read_bytes() == (REPO / folder / relative).read_bytes(), relative
    assert "DocLens" in read_resource("cards", "doclens.md")
    with pytest.raises(FileNotFoundError, match="no card named 'missing.md'"):
        read_resource("cards", "missing.md")
    with pytest.raises(ValueError, match="unknown resource kind"):
        resource_root("models")


def test_setup_cfg_packages_every_subpackage():
    """Every folder of doclens/ with an __init__.py is listed in setup.cfg's packages (a missing
    one would be absent from the wheel while the checkout still works)."""
    config = configparser.ConfigParser()
    config.read(REPO / "setup.cfg")
    listed = set(config["options"]["packages"].split())
    found = {".".join(path.parent.relative_to(REPO).parts) for path in (REPO / "doclens").rglob("__init__.py")
             if not any(part in ("prompts", "cards", "metric", "schemas") for part in path.parts)}
    assert found <= listed, found - listed
    assert config["metadata"]["version"] == "attr: doclens.version.__version__"


@pytest.mark.slow
def test_wheel_installs_into_fresh_venv_and_reads_resources(tmp_path):
    dist = tmp_path / "dist"
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w",
                            str(dist), str(REPO)], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-2000:]
    wheel = next(dist.glob("doclens-*.whl"))
    # A PYTHONPATH pointing at a checkout would shadow the wheel: the fresh venv runs without it.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    install = subprocess.run([str(python), "-m", "pip", "install", "--no-deps", "--no-index", str(wheel)],
                             capture_output=True, text=True, env=env)
    assert install.returncode == 0, install.stderr[-2000:]
    probe = ("import doclens, importlib.resources, importlib.util\n"
             "from doclens.evaluators.llm.prompting import load_prompt\n"
             "from doclens.core.resources import read_card, resource_root\n"
             "p = load_prompt('extract/note_generation.subjective')\n"
             "assert p.version and '${text}' in p.messages[-1][1], p\n"
             "assert 'DocLens' in read_card('doclens.md')\n"
             "assert (resource_root('metric') / 'doclens.py').is_file()\n"
             "from doclens.reports.submissions import load_schema\n"
             "assert load_schema('scores')['type'] == 'object'\n"
             "assert (importlib.resources.files('doclens.views') / 'templates' / 'report.html').is_file()\n"
             "shipped = importlib.resources.files('doclens.datasets') / 'real_outputs'\n"
             "assert (shipped / 'DATASHEET.md').is_file() and (shipped / 'labels_test3_round2.jsonl').is_file()\n"
             "assert 'site-packages' in str(resource_root('prompts')), resource_root('prompts')\n"
             "assert importlib.util.find_spec('torch') is None\n"
             "from doclens.evaluators.rules.context import DEFAULT_RULES_PATH\n"
             "assert 'site-packages' in str(DEFAULT_RULES_PATH) and DEFAULT_RULES_PATH.is_file()\n"
             "assert (importlib.resources.files('doclens.evaluators.rules') / 'clinical_equivalents.json').is_file()\n"
             "import json\n"
             "drugs = json.loads((importlib.resources.files('doclens.evaluators.rules') / 'drug_names.json').read_text())\n"
             "assert drugs['names']['norvasc'] == 'amlodipine' and drugs['derived_from'], drugs['derived_from']\n"
             "from doclens.inputs.known_references import known_sets\n"
             "assert len(known_sets()['aci-bench-test2'][1]) == 40, known_sets()\n"
             "from doclens.evaluators.rules.adapter import ADAPTER_DIR, ADAPTER_FILES\n"
             "assert 'site-packages' in str(ADAPTER_DIR) and all((ADAPTER_DIR / n).is_file() for n in ADAPTER_FILES)\n"
             "print(doclens.__file__)\n")
    result = subprocess.run([str(python), "-c", probe], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    assert str(env_dir) in result.stdout  # the installed copy, not the source tree
