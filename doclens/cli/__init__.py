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

Exit codes (``doclens.core.errors``): 0 success; 1 an unexpected internal error; 2 bad input file,
option or value (a partial report is written when anything was scored); 3 scored, but
incomplete (some model calls failed for good, most replies were unreadable, the circuit breaker
or ``--deadline`` stopped the run, or it failed mid-way: a partial report is written); 130
interrupted (Ctrl-C or SIGTERM; a partial report is written). A partial report never replaces a
complete one: it goes beside it as ``<name>.partial.json``.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import warnings

from doclens.cli import agreement, compare, install_metric, leaderboard, presets, report, score, validate
from doclens.cli.common import Terminated
from doclens.core.errors import EXIT_ERROR, EXIT_INTERRUPTED, EXIT_USAGE, DocLensError
from doclens.version import __version__

logger = logging.getLogger("doclens")

#: the commands, in the order ``doclens --help`` lists them
COMMANDS = (score, install_metric, presets, validate, compare, agreement, report, leaderboard)


def build_parser() -> argparse.ArgumentParser:
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
                        help="-v: say what is being done (info), -vv: debug detail, tracebacks and where each "
                             "warning came from (DEBUG may print instance text; nothing above it does)")
    parser.add_argument("-q", "--quiet", dest="global_quiet", action="store_true",
                        help="errors only on stderr: no warnings, no progress bar (as 'score -q')")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(sub)
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


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns its exit code (:mod:`doclens.core.errors`: 0 ok, 1 internal error,
    2 bad input or option, 3 scored but incomplete, 130 interrupted). No user input ends in a
    traceback: bad files and values are one ``doclens: error:`` line naming the file, line,
    instance and field; an unexpected error names its type (``-vv`` logs the traceback)."""
    import signal
    import threading

    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help, --version (0) or a usage error (2)
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    if args.global_quiet and hasattr(args, "quiet"):
        args.quiet = True
    verbosity = -1 if args.global_quiet or getattr(args, "quiet", False) else min(args.verbose, 2)
    handler, shown = _log_to_stderr(verbosity)
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    # module:Class judges import from the current folder, as `python -m` would (the console
    # script puts only its own folder on sys.path)
    added_cwd = os.getcwd() not in sys.path and "" not in sys.path
    if added_cwd:
        sys.path.insert(0, os.getcwd())
    for note in getattr(args, "deprecated_options", None) or []:
        logger.warning("%s", note)
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
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        if added_cwd and os.getcwd() in sys.path:
            sys.path.remove(os.getcwd())
        logger.removeHandler(handler)
        logger.setLevel(handler.previous_level)
        warnings.showwarning = shown


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


def _log_to_stderr(verbosity: int):
    """Send the ``doclens`` logger to stderr at the level ``-q`` (-1: errors only), nothing (0:
    warnings), ``-v`` (1: info) or ``-vv`` (2: debug, which may show instance text) asks for, and
    Python warnings (the report's warnings, a missing price …) through it as one line each,
    without the source line ``warnings`` would print; ``-vv`` adds where a warning came from.
    Returns the handler and the previous ``warnings.showwarning``, restored when the command ends."""
    level = {-1: logging.ERROR, 0: logging.WARNING, 1: logging.INFO}.get(verbosity, logging.DEBUG)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_Formatter(detailed=verbosity >= 2))
    handler.setLevel(level)  # -q filters what reaches stderr only: other handlers still get warnings
    handler.previous_level = logger.level
    logger.addHandler(handler)
    if level < logger.getEffectiveLevel():
        logger.setLevel(level)
    shown = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        kind = "" if category is UserWarning else f" ({category.__name__})"
        logger.warning("%s%s", message, kind)
        logger.debug("the warning above came from %s:%s", filename, lineno)

    warnings.showwarning = show
    return handler, shown
