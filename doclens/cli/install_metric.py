"""``doclens install-metric``: put the ``evaluate`` module where ``evaluate.load("doclens")`` finds
it offline."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from doclens.cli.common import command_parser
from doclens.core.errors import InputError


def metric_module_files() -> dict[str, str]:
    """The ``evaluate`` module's files (``doclens.py``, ``README.md``) as shipped."""
    from doclens.core.resources import resource_root

    root = resource_root("metric")
    return {name: (root / name).read_text(encoding="utf-8") for name in ("doclens.py", "README.md")}


def install_metric(hf_modules_cache: str | None = None) -> Path:
    """Put the ``evaluate`` module where ``evaluate.load("doclens")`` finds it offline:
    ``$HF_MODULES_CACHE/evaluate_modules/metrics/evaluate-metric--doclens/<sha256>/doclens.py``."""
    import hashlib

    base = Path(hf_modules_cache or os.environ.get("HF_MODULES_CACHE") or Path(
        os.environ.get("HF_HOME") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "huggingface")
        / "modules")
    files = metric_module_files()
    digest = hashlib.sha256(files["doclens.py"].encode("utf-8")).hexdigest()
    target = base / "evaluate_modules" / "metrics" / "evaluate-metric--doclens" / digest
    target.mkdir(parents=True, exist_ok=True)
    for folder in (base / "evaluate_modules", base / "evaluate_modules" / "metrics",
                   base / "evaluate_modules" / "metrics" / "evaluate-metric--doclens", target):
        (folder / "__init__.py").touch()
    for name, text in files.items():
        (target / name).write_text(text, encoding="utf-8")
    return target


def run(args: argparse.Namespace) -> int:
    try:
        target = install_metric(args.modules_cache)
    except OSError as exc:
        where = getattr(exc, "filename", None) or args.modules_cache or "the HF modules cache"
        raise InputError(f"install-metric: cannot write {where} ({exc.strerror or exc})") from None
    print(f"installed the doclens evaluate module in {target}\n"
          "evaluate.load(\"doclens\") now works offline (evaluate falls back to this copy when the Hub "
          "cannot be reached, and says so; set HF_HUB_OFFLINE=1 to skip the attempt). "
          "evaluate.load(doclens.evaluate_module()) needs no install and asks no Hub")
    return 0


def add_parser(sub) -> None:
    install = command_parser(sub, "install-metric", examples="""
        doclens install-metric
        doclens install-metric --modules-cache /data/hf/modules
        python -c "import evaluate; print(evaluate.load('doclens', 'clinical-rules'))"
        """)
    install.add_argument("--modules-cache", help="HF modules cache (default $HF_MODULES_CACHE or $HF_HOME/modules)")
    install.set_defaults(func=run)
