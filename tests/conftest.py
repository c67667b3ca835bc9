import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: takes more than a few seconds (CI still runs it)")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    # the caches' sealing key (doclens/core/sealing.py): one for the session, never the user's
    # own (~/.config/doclens/cache.key); subprocesses of the tests inherit it
    if not os.environ.get("DOCLENS_CACHE_KEY_FILE"):
        import tempfile

        os.environ["DOCLENS_CACHE_KEY_FILE"] = os.path.join(tempfile.mkdtemp(prefix="doclens-key-"), "cache.key")


@pytest.fixture
def shared_data() -> Path:
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
