import os
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
SHARED_DATA = REPO.parent / "shared" / "data"


#: the smoke tier (``python -m pytest -m smoke``; docs/testing.md), as paths under tests/: one fast file per layer of the
#: package (docs/design.md §5), no model loaded, under 2 minutes on a 2-core machine; CI runs everything
SMOKE_FILES = frozenset({
    "core/test_metrics.py", "families/test_families.py", "families/test_family_homes.py", "core/test_settings.py",
    "parsing/test_statements.py", "parsing/test_source_units.py", "parsing/test_judge_replies.py", "core/test_claim_f1.py",
    "project/test_layers.py", "parsing/test_sections.py",
})


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: takes more than a few seconds (CI still runs it)")
    config.addinivalue_line("markers", "smoke: the smoke tier, python -m pytest -m smoke (docs/testing.md)")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    # the caches' sealing key (doclens/core/sealing.py): one for the session, never the user's
    # own (~/.config/doclens/cache.key); subprocesses of the tests inherit it
    if not os.environ.get("DOCLENS_CACHE_KEY_FILE"):
        import tempfile

        os.environ["DOCLENS_CACHE_KEY_FILE"] = os.path.join(tempfile.mkdtemp(prefix="doclens-key-"), "cache.key")
    # and a cache folder for the session, never the user's (~/.cache/doclens): a module- or
    # session-scoped fixture runs before :func:`_isolated_caches` sets each test's own, and would
    # otherwise write the user's cache sealed with the session's throwaway key (every later run
    # of the user's then warns that the file is not sealed with their key)
    import tempfile

    os.environ["DOCLENS_CACHE"] = tempfile.mkdtemp(prefix="doclens-session-cache-")


def _under_tests(path: Path) -> str:
    """``path`` relative to ``tests/`` (``core/test_metrics.py``), or ``""`` outside it (a doctest's module)."""
    try:
        return path.resolve().relative_to(TESTS).as_posix()
    except ValueError:
        return ""


def pytest_collection_modifyitems(config, items):
    """Mark the tests of :data:`SMOKE_FILES` ``smoke`` (those of them marked ``slow`` stay out)."""
    for item in items:
        if _under_tests(item.path) in SMOKE_FILES and not item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.smoke)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The shared test sets (``../shared/data``); a test needing them is skipped, with the reason, where
    they are absent. Session-scoped so module fixtures can take it too."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared test data not found at {SHARED_DATA} (clone the project beside ../shared)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def _shared_models(tmp_path_factory) -> Path:
    """One folder for the session's ONNX export of MiniLM (made once, by the first test that needs
    it: doclens/evaluators/models/onnx_encoder.py), linked into every test's cache folder."""
    return tmp_path_factory.mktemp("doclens-models")


@pytest.fixture(autouse=True)
def _isolated_caches(tmp_path, tmp_path_factory, monkeypatch, _shared_models):
    """Every test gets its own DocLens cache and HF home: nothing leaks between tests or into ~
    (but the ONNX export of the shipped MiniLM, derived from the installed package alone)."""
    cache = tmp_path_factory.mktemp("doclens-cache")
    (cache / "models").symlink_to(_shared_models, target_is_directory=True)
    monkeypatch.setenv("DOCLENS_CACHE", str(cache))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.delenv("HF_MODULES_CACHE", raising=False)


@pytest.fixture(scope="module")
def t5_dir(tmp_path_factory):
    """A tiny random-weight T5 saved as a model folder (the TRUE judge's shape), once a module."""
    from tests.tiny_models import build_tiny_t5

    return build_tiny_t5(tmp_path_factory.mktemp("models") / "tiny-t5")


@pytest.fixture(scope="module")
def classifier_dir(tmp_path_factory):
    """A tiny random-weight sequence classifier saved as a model folder, once a module."""
    from tests.tiny_models import build_tiny_classifier

    return build_tiny_classifier(tmp_path_factory.mktemp("models") / "tiny-nli")
