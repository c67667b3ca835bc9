"""Small helpers shared by the baseline modules of this package."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version


def package_version(distribution: str) -> str | None:
    """Installed version of ``distribution``, or None when it is not installed."""
    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


def progress_bar(iterable, *, total: int, desc: str, enabled: bool):
    """Wrap ``iterable`` in a tqdm bar when ``enabled``."""
    if not enabled:
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc)
