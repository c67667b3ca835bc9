"""Small helpers shared by the baseline modules of this package."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from doclens.core.errors import DocLensError


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


class BaselineUnavailableError(DocLensError, RuntimeError):
    """A baseline cannot run here: its model cannot be loaded (offline and not in the local
    cache, a missing folder, out of memory). The message names what is missing and how to
    provide it. ``doclens score`` records it in the report's baselines part and keeps the judged
    scores (exit code 3, incomplete)."""
