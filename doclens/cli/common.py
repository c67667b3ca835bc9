"""What every command shares: checked number types, the bootstrap options, output checks and
the one way to read a scores file."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from doclens.core.arguments import (  # noqa: F401  (re-exported: every command's number types)
    NON_NEGATIVE_FLOAT,
    NON_NEGATIVE_INT,
    POSITIVE_FLOAT,
    POSITIVE_INT,
    number,
)
from doclens.core.errors import InputError
from doclens.core.paths import same_file

PROBABILITY = number(float, 0, 1, what="a number between 0 and 1")

CONFIDENCE = number(float, 0, 1, low_open=True, high_open=True, what="a number strictly between 0 and 1")


def bootstrap_options(parser: argparse.ArgumentParser, allow_none: bool = False, old_seed: bool = True) -> None:
    """``--resamples``, ``--bootstrap-seed`` and ``--confidence``; ``old_seed``: also the deprecated
    spelling ``--seed`` (not where a judge's ``--judge-seed`` holds it too: judge-check)."""
    from doclens.stats.bootstrap import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED

    group = parser.add_argument_group("bootstrap")
    group.add_argument("--resamples", type=NON_NEGATIVE_INT if allow_none else POSITIVE_INT,
                       default=DEFAULT_RESAMPLES,
                       help=f"bootstrap resamples (default {DEFAULT_RESAMPLES}"
                            + ("; 0: no intervals)" if allow_none else ")"))
    if old_seed:
        group.add_argument("--bootstrap-seed", "--seed", dest="seed", type=NON_NEGATIVE_INT, default=DEFAULT_SEED,
                           action=deprecated_alias("--seed", "--bootstrap-seed"),
                           help=f"seed of the bootstrap resampling (default {DEFAULT_SEED}; --seed: deprecated "
                                "spelling)")
    else:
        group.add_argument("--bootstrap-seed", dest="bootstrap_seed", type=NON_NEGATIVE_INT, default=DEFAULT_SEED,
                           help=f"seed of the bootstrap resampling (default {DEFAULT_SEED})")
    group.add_argument("--confidence", type=CONFIDENCE, default=DEFAULT_CONFIDENCE,
                       help=f"interval confidence level (default {DEFAULT_CONFIDENCE})")


def deprecated_alias(old: str, new: str):
    """An argparse action that stores its value (as ``store`` does) and, when the spelling ``old``
    was used, notes it in ``namespace.deprecated_options`` (the command warns about it once
    logging is set up), so that each option name keeps one meaning: ``--seed`` was the decoding
    seed under ``score`` and the bootstrap seed elsewhere; now they are ``--judge-seed`` and
    ``--bootstrap-seed``. Built on argparse's public :class:`argparse.Action`."""

    class DeprecatedAlias(argparse.Action):
        def __call__(self, parser, namespace, values, option_string=None):
            if option_string == old:
                notes = list(getattr(namespace, "deprecated_options", None) or [])
                notes.append(f"{old} is deprecated here: it is now {new} (same meaning)")
                namespace.deprecated_options = notes
            setattr(namespace, self.dest, values)

    return DeprecatedAlias


#: The commands, in the order ``doclens --help`` lists them: name -> (module under
#: :mod:`doclens.cli`, one-line help). Read without importing the modules: ``doclens score``
#: imports only :mod:`doclens.cli.score` (:func:`doclens.cli.build_parser`).
COMMANDS = {
    "score": ("score", "score generated texts: JSONL, JSON, CSV, Parquet, a saved or Hub dataset"),
    "install-metric": ("install_metric", "make evaluate.load('doclens') work offline"),
    "presets": ("presets", "list evaluator and extractor presets, and the baselines"),
    "validate": ("validate", "check submissions or scores files against their JSON Schemas"),
    "compare": ("compare", "paired bootstrap difference between two scores files (B − A)"),
    "agreement": ("agreement", "agreement of DocLens scores with human judgements"),
    "report": ("report", "a static HTML page of one scores file, instance by instance"),
    "leaderboard": ("leaderboard", "rank scores files with intervals, one table per signature"),
    "baselines": ("baselines", "ROUGE / BERTScore / MEDCON alone, without a judge"),
    "judge-check": ("judge_check", "measure a judge on labelled (claim, premise, label) items"),
    "judge-fit": ("judge_fit", "refit clinical-rules' decision model on labelled items"),
}


def command_parser(sub, name: str, *, examples: str, description: str = ""):
    """A command's parser whose ``--help`` ends with ``examples`` (kept as written: one command
    per line) and whose description (wrapped) defaults to its one-line help (:data:`COMMANDS`)."""
    import textwrap

    summary = COMMANDS[name][1]
    text = "\n\n".join(textwrap.fill(p, 90) for p in (description or summary).split("\n\n"))
    epilog = "examples:\n" + textwrap.indent(textwrap.dedent(examples).strip("\n"), "  ")
    return sub.add_parser(name, help=summary, description=text, epilog=epilog,
                          formatter_class=argparse.RawDescriptionHelpFormatter)


def check_output_path(path: str, flag: str = "--output") -> None:
    """Refuse an output path that cannot be written, before any work starts: its folder must
    exist and be writable, and the path must not be a folder. ``-`` (stdout) is always fine."""
    if path == "-":
        return
    target = Path(path)
    parent = target.parent if str(target.parent) else Path(".")
    if target.is_dir():
        raise InputError(f"{flag} {path}: is a folder; give a file name", field=flag)
    if not parent.exists():
        raise InputError(f"{flag} {path}: the folder {str(parent)!r} does not exist", field=flag)
    if not parent.is_dir():
        raise InputError(f"{flag} {path}: {str(parent)!r} is not a folder", field=flag)
    if target.exists() and not os.access(target, os.W_OK):
        raise InputError(f"{flag} {path}: the file is not writable", field=flag)
    if not target.exists() and not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(f"{flag} {path}: the folder {str(parent)!r} is not writable", field=flag)


def refuse_overwriting_inputs(outputs, inputs) -> None:
    """The one check that no command writes over one of its own inputs: ``outputs`` are
    ``(flag, path)`` pairs of every file the command would write (``-``, stdout, and ``None`` are
    skipped), ``inputs`` the paths it reads (files; ``None`` and ``-`` skipped). An
    :class:`InputError` (exit 2, before any work) names the option, the output and the input it
    would destroy (``docs/design.md`` §3, "No command writes over its inputs")."""
    read = [path for path in inputs if path and path != "-"]
    for flag, path in outputs:
        if not path or path == "-":
            continue
        for source in read:
            if same_file(str(path), str(source)):
                alias = "" if os.path.abspath(path) == os.path.abspath(source) else " (the same file by another path)"
                raise InputError(f"{flag} {path}: is the input {source}{alias}; writing there would destroy it: "
                                 "choose another output path", field=flag)


def scores_inputs(paths) -> list[str]:
    """The files a command reading the scores files ``paths`` reads: each, and the results file
    a summary may name beside it (``scores.instances.jsonl`` / ``.parquet``)."""
    from doclens.reports.results_files import instances_path

    return [part for path in paths if path and path != "-"
            for part in (path, instances_path(path, "jsonl"), instances_path(path, "parquet"))]


def stderr_is_terminal() -> bool:
    """Whether stderr is a terminal (where a progress bar is drawn)."""
    import sys

    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced or closed stderr
        return False


def load_report(path: str):
    """A scores file read through the one checked reader (:meth:`doclens.Report.load`); its
    :class:`InputError` names the file, the instance and the field."""
    from doclens.reports.report import Report

    return Report.load(path)


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C would be so that the same code writes the partial report."""
