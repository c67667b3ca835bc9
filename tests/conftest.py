import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: takes more than a few seconds (CI still runs it)")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared test data not found at {SHARED_DATA} (clone the project beside ../shared)")
    return SHARED_DATA


@pytest.fixture(autouse=True)
def _isolated_caches(tmp_path, monkeypatch):
    """Every test gets its own DocLens cache and HF home: nothing leaks between tests or into ~."""
    monkeypatch.setenv("DOCLENS_CACHE", str(tmp_path / "doclens-cache"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.delenv("HF_MODULES_CACHE", raising=False)
