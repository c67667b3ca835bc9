"""``doclens`` command line: one module per command (``doclens.cli.score`` …), each with an
``add_parser(sub)`` and a ``run(args)``; :mod:`doclens.cli.common` holds what they share.

    doclens score notes.jsonl --output scores.json   # offline default judge: clinical-rules
    doclens install-metric            # makes evaluate.load("doclens") work offline
    doclens presets                   # lists evaluators and extractors
    doclens validate submission.json --references benchmark.jsonl
    doclens compare a.json b.json     # paired bootstrap difference B − A
    doclens agreement scores.json human.csv --human-column completeness
    doclens report scores.json --input notes.jsonl -o report.html
    doclens leaderboard scores/*.json -o board.html
    doclens baselines notes.jsonl --baselines rouge   # ROUGE / BERTScore / MEDCON alone, no judge
    doclens judge-check --evaluator clinical-rules    # a judge measured on labelled items
    doclens judge-fit ours.csv --group-column site -o model.json   # clinical-rules' decision refitted

Exit codes: :data:`doclens.core.errors.EXIT_CODES` says what each means (docs/reference/exit-codes.md
is generated from it). A partial report never replaces a complete one: it goes beside it as
``<name>.partial.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import os
import sys
import warnings
from collections.abc import Callable, Collection, Iterator

from doclens.cli.common import COMMANDS, Terminated
from doclens.core.errors import EXIT_ERROR, EXIT_INTERRUPTED, EXIT_USAGE, DocLensError, DocLensWarning
from doclens.version import __version__

logger = logging.getLogger("doclens")


def chosen_command(argv: list[str] | None) -> str | None:
    """The command ``argv`` names: its first word that is not an option (the global options take
    no value), or None (no command, or an unknown one: argparse then says so)."""
    words = [word for word in (sys.argv[1:] if argv is None else argv) if not word.startswith("-")]
    return words[0] if words and words[0] in COMMANDS else None


def build_parser(commands: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The ``doclens`` parser. Every command is listed with its one-line help (:data:`COMMANDS`);
    only those in ``commands`` (None: all, for the reference pages) have their module imported
    and their options added. :func:`main` passes the one command it runs, or none for
    ``doclens --help``, so that ``doclens score`` does not import what ``report`` or
    ``leaderboard`` need."""
    parser = argparse.ArgumentParser(
        prog="doclens", description="Fact-level evaluation of medical text generation.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n"
               "  doclens score examples/notes.jsonl -o scores.json   # offline default judge (clinical-rules)\n"
               "  doclens report scores.json --input examples/notes.jsonl -o report.html\n"
               "  doclens compare a.json b.json\n"
               "  doclens leaderboard scores/*.json -o board.html\n"
               "  doclens COMMAND --help                              # each command's options and examples")
    parser.add_argument("--version", action="version", version=f"doclens {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="-v: say what is being done (info) and show libraries' deprecation notices, -vv: debug "
                             "detail, tracebacks and where each warning came from (DEBUG may print instance text; "
                             "nothing above it does)")
    parser.add_argument("-q", "--quiet", dest="global_quiet", action="store_true",
                        help="errors only on stderr: no warnings, no progress bar, no library's progress bars or "
                             "notices (as 'score -q'); one line still says when items were unparsed or failed")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (module, summary) in COMMANDS.items():
        if commands is None or name in commands:
            importlib.import_module(f"doclens.cli.{module}").add_parser(sub)
        else:
            sub.add_parser(name, help=summary)
    return parser


def _on_sigterm(signum, frame):
    raise Terminated("terminated (SIGTERM)")


def _quiet_stdout() -> None:
    """After a closed stdout (``doclens … | head``): point stdout at /dev/null so that the
    interpreter's final flush cannot fail again (the Python docs' recipe for SIGPIPE)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # not a real file descriptor (an in-process capture)
        pass


def _lean_for_presets(args: argparse.Namespace) -> None:
    """A command that names no ``module:Class`` judge or extractor runs DocLens's own components
    only: spaCy may come without torch (:mod:`doclens.core.imports`)."""
    if not any(":" in str(getattr(args, name, None) or "") for name in ("evaluator", "extractor")):
        from doclens.core.imports import lean_imports

        lean_imports()


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns its exit code (:mod:`doclens.core.errors`: 0 ok, 1 internal error,
    2 bad input or option, 3 scored but incomplete, 130 interrupted). No user input ends in a
    traceback: bad files and values are one ``doclens: error:`` line naming the file, line,
    instance and field; an unexpected error names its type (``-vv`` logs the traceback)."""
    command = chosen_command(argv)
    parser = build_parser([command] if command else [])
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help, --version (0) or a usage error (2)
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    if args.global_quiet and hasattr(args, "quiet"):
        args.quiet = True
    verbosity = -1 if args.global_quiet or getattr(args, "quiet", False) else min(args.verbose, 2)
    with _command_context(verbosity):
        for note in getattr(args, "deprecated_options", None) or []:
            logger.warning("%s", note)
        _lean_for_presets(args)
        code = _run_command(args)
    if argv is None:  # the command line (the console script, python -m doclens): the process ends next
        _before_exit()
    return code


def _before_exit() -> None:
    """The objects a run made are moved out of the collector's sight (``gc.freeze``) once its
    command is done, its files written and closed: the interpreter's last collection at exit
    traverses every object still alive (a cold 40-note run's readings, vectors and reports: about
    0.45 s of CPU, issue 49), to free memory the process gives back anyway. Only where
    :func:`main` runs as the command (``argv`` not given): a caller that runs commands in its own
    process (tests, ``doclens.cli.main([...])``) keeps its collector as it was."""
    import gc

    gc.freeze()


@contextlib.contextmanager
def _command_context(verbosity: int) -> Iterator[None]:
    """What one command runs inside, undone when it ends: the log handler at ``verbosity``,
    quiet third-party libraries under ``-q``, the SIGTERM handler (main thread only) and the
    current folder on ``sys.path``."""
    import signal
    import threading

    handler, previous_level, shown = _log_to_stderr(verbosity)
    restore_third_party = _quiet_third_party() if verbosity < 0 else None
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    # module:Class judges import from the current folder, as `python -m` would (the console
    # script puts only its own folder on sys.path)
    added_cwd = os.getcwd() not in sys.path and "" not in sys.path
    if added_cwd:
        sys.path.insert(0, os.getcwd())
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        if added_cwd and os.getcwd() in sys.path:
            sys.path.remove(os.getcwd())
        logger.removeHandler(handler)
        logger.setLevel(previous_level)
        warnings.showwarning = shown
        if restore_third_party is not None:
            restore_third_party()


def _run_command(args: argparse.Namespace) -> int:
    """``args.func(args)``'s exit code; every error as one line on stderr and its exit code."""
    try:
        return args.func(args)
    except DocLensError as exc:
        print(f"doclens: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt as exc:
        print(f"doclens: {'terminated' if isinstance(exc, Terminated) else 'interrupted'}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        _quiet_stdout()
        return EXIT_ERROR
    except RecursionError:
        print("doclens: error: input nested too deeply to read", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:  # a bug: say so in one line; -vv shows the traceback
        logger.debug("internal error", exc_info=True)
        print(f"doclens: internal error: {type(exc).__name__}: {exc} (run with -vv for the traceback and "
              "please report it)", file=sys.stderr)
        return EXIT_ERROR


#: What ``-q`` sets for the libraries judges load: their progress bars (transformers' weight
#: loading, the GGUF de-quantising bar, Hub downloads) and advisory warnings are not about the
#: user's data. Read when those libraries are imported; :func:`_quiet_third_party` also tells
#: libraries already imported.
QUIET_ENVIRONMENT = {"TQDM_DISABLE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1", "TRANSFORMERS_VERBOSITY": "error",
                     "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1", "HF_DATASETS_DISABLE_PROGRESS_BARS": "1"}


def _quiet_third_party():
    """Silence third-party progress bars and logs for one command; returns what undoes it."""
    saved = {name: os.environ.get(name) for name in QUIET_ENVIRONMENT}
    os.environ.update(QUIET_ENVIRONMENT)
    undo: list[Callable[[], None]] = []
    if "transformers" in sys.modules:
        from transformers.utils import logging as transformers_logging

        level, bars = transformers_logging.get_verbosity(), transformers_logging.is_progress_bar_enabled()
        transformers_logging.set_verbosity_error()
        transformers_logging.disable_progress_bar()

        def restore_transformers() -> None:
            transformers_logging.set_verbosity(level)
            if bars:
                transformers_logging.enable_progress_bar()

        undo.append(restore_transformers)
    if "huggingface_hub" in sys.modules:
        from huggingface_hub.utils import are_progress_bars_disabled, disable_progress_bars, enable_progress_bars

        if not are_progress_bars_disabled():
            disable_progress_bars()
            undo.append(enable_progress_bars)

    def restore() -> None:
        for step in undo:
            step()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value

    return restore


class _Formatter(logging.Formatter):
    """``doclens: warning: …`` (the level in lower case, as the error lines read); at ``-vv``
    also the logger's name."""

    def __init__(self, detailed: bool):
        super().__init__()
        self.detailed = detailed

    def format(self, record: logging.LogRecord) -> str:
        where = f" [{record.name}]" if self.detailed else ""
        text = f"doclens: {record.levelname.lower()}{where}: {record.getMessage()}"
        if record.exc_info and self.detailed:
            text += "\n" + self.formatException(record.exc_info)
        return text


def _is_library_advice(category, filename: str) -> bool:
    """A deprecation or future-change notice raised outside DocLens (transformers'
    ``past_key_values`` FutureWarning): shown from ``-v`` on, never as a DocLens warning."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    outside = not os.path.abspath(filename).startswith(package + os.sep)
    return outside and issubclass(category, (DeprecationWarning, PendingDeprecationWarning, FutureWarning))


def _log_to_stderr(verbosity: int):
    """Send the ``doclens`` logger to stderr at the level ``-q`` (-1: errors only), nothing (0:
    warnings), ``-v`` (1: info) or ``-vv`` (2: debug, which may show instance text) asks for, and
    Python warnings (the report's warnings, a missing price …) through it as one line each,
    without the source line ``warnings`` would print; ``-vv`` adds where a warning came from.
    Returns the handler, the logger's previous level and the previous ``warnings.showwarning``,
    restored when the command ends."""
    level = {-1: logging.ERROR, 0: logging.WARNING, 1: logging.INFO}.get(verbosity, logging.DEBUG)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_Formatter(detailed=verbosity >= 2))
    handler.setLevel(level)  # -q filters what reaches stderr only: other handlers still get warnings
    previous_level = logger.level
    logger.addHandler(handler)
    if level < logger.getEffectiveLevel():
        logger.setLevel(level)
    shown = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        # DocLens's own categories are for code that filters them; people read the message alone
        kind = "" if category is UserWarning or issubclass(category, DocLensWarning) else f" ({category.__name__})"
        if _is_library_advice(category, filename):  # a library's note to its own users, not about the data
            (logger.info if verbosity >= 1 else logger.debug)("%s%s [%s:%s]", message, kind, filename, lineno)
            return
        logger.warning("%s%s", message, kind)
        logger.debug("the warning above came from %s:%s", filename, lineno)

    warnings.showwarning = show
    return handler, previous_level, shown
