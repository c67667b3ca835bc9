"""What ``doclens score`` says about a run, and the table it ends with when it scores several
systems (``doclens score A.csv B.csv … --references GOLD -o DIR/``):

* inputs may be named, ``NAME=PATH`` (:func:`named_inputs`); a name is the system's name in its
  report, on every table and page, and the stem of its report file (``DIR/NAME.doclens.json``);
* each system gets one progress line when it is done (:func:`progress_line`), not its full
  summary (``--summaries`` asks for those too);
* the report's own warnings are said once: in the summary, at their level (``note``, ``warning``,
  ``error``), never a second time on standard error (:func:`warnings_said_once`); with several
  systems, once at the end for all of them (:func:`warning_lines`);
* the run ends with one table ranked by ``--rank-by`` (claim F1 by default) with intervals, the
  paired comparison with #1 and each system's time, printed and written as ``DIR/leaderboard.html``
  and ``DIR/leaderboard.json`` (:func:`combined_board`) — the files ``doclens leaderboard`` writes
  from the same scores files.
"""

from __future__ import annotations

import contextlib
import os
import re
import warnings
from pathlib import Path

from doclens.core.errors import InputError

#: the files of the combined table, in the output folder
BOARD_HTML = "leaderboard.html"
BOARD_JSON = "leaderboard.json"
_UNSAFE = re.compile(r"[^\w.+\-]+")


def named_inputs(tokens: list[str]) -> list[tuple[str | None, str]]:
    """``(name, path)`` per input token: ``NAME=PATH`` names a file (``GPT-4=test2GPT-4_.csv``);
    a token that is a path as written (one holding ``=`` included) or has no ``=`` is a path with no
    name. An empty name, or a name given twice, is refused.

    >>> named_inputs(["GPT-4=a.csv", "b.csv"])
    [('GPT-4', 'a.csv'), (None, 'b.csv')]
    """
    found: list[tuple[str | None, str]] = []
    for token in tokens:
        name, sep, path = token.partition("=")
        if not sep or token == "-" or os.path.exists(token) or not path:
            found.append((None, token))
            continue
        if not name.strip():
            raise InputError(f"input {token!r}: the name before '=' is empty; write NAME=PATH", field="input")
        found.append((name.strip(), path))
    names = [name for name, _ in found if name is not None]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise InputError(f"the name {repeated[0]!r} is given to more than one input: each system needs its own name",
                         field="input")
    return found


def report_stem(name: str) -> str:
    """A system name as a file-name stem: characters other than letters, digits, ``.``, ``+``
    and ``-`` become ``_`` (``GPT-4 (June)`` → ``GPT-4_June_``)."""
    return _UNSAFE.sub("_", name).strip("._") or "system"


@contextlib.contextmanager
def warnings_said_once():
    """Record every warning raised inside; the caller says them once (:func:`replay_warnings`)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught


def replay_warnings(caught: list, report) -> None:
    """Show the recorded warnings that the report does not hold (the report's own are said in its
    summary, or at the end of a run of several systems), once each, through the usual path
    (``doclens: warning: …`` on standard error, which ``-q`` silences)."""
    import logging

    held = set(report.warnings) if report is not None else set()
    seen = set()
    for record in caught:
        key = (record.category, str(record.message))
        if key in seen:
            continue
        if str(record.message) in held:  # said in the summary; -vv says where it was raised
            logging.getLogger("doclens").debug("the report's warning %r came from %s:%s", str(record.message)[:60],
                                               record.filename, record.lineno)
            seen.add(key)
            continue
        seen.add(key)
        warnings.showwarning(record.message, record.category, record.filename, record.lineno)


def progress_line(position: int, total: int, name: str, report, seconds: float, output: str) -> str:
    """``[2/10] GPT-4: 40 instances in 15.3 s — claim F1 49.20 (recall 57.49, precision 43.00) → DIR/GPT-4.doclens.json``."""
    scores = report.scores

    def number(metric: str) -> str:
        value = scores.get(metric)
        return "n/a" if value is None else f"{100 * value:.2f}"

    partial = " (PARTIAL)" if report.partial else ""
    return (f"[{position}/{total}] {name}: {report.size} instances{partial} in {seconds:.1f} s — claim F1 "
            f"{number('claim_f1')} (recall {number('claim_recall')}, precision {number('claim_precision')}) → "
            f"{report.written or output}")


def warning_lines(said: list[tuple[str, list[tuple[str, str]]]]) -> list[str]:
    """The warnings of several systems' reports, each message once with the systems that got it
    (``said``: ``[(system, [(level, message), …]), …]``), errors first."""
    from doclens.core.errors import WARNING_LEVELS
    from doclens.views.text import LEVEL_WORDS

    systems: dict[tuple[str, str], list[str]] = {}
    for name, levelled in said:
        for level, message in levelled:
            systems.setdefault((level, message), []).append(name)
    ordered = sorted(systems.items(), key=lambda item: -WARNING_LEVELS.index(item[0][0]))
    lines = []
    for (level, message), names in ordered:
        who = (f"all {len(names)} systems" if len(names) == len(said) and len(said) > 1 else ", ".join(names))
        lines.append(f"{LEVEL_WORDS[level]} ({who}): {message}")
    return lines


def combined_board(folder: Path, written: list[tuple[str, str, float]], rank_by: str) -> tuple[str, list[str]]:
    """The table of every system scored (``written``: ``(name, scores file, seconds)``): the text
    ``doclens leaderboard`` prints, with each system's time, and the lines saying where its HTML
    page and JSON went (``folder/leaderboard.html`` and ``.json``)."""
    from doclens.cli.leaderboard import ranked_groups, write_board
    from doclens.stats.bootstrap import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED, bootstrap_description
    from doclens.views.leaderboard import leaderboard_text, load_entry

    entries = []
    for name, path, seconds in written:
        entry = load_entry(path)
        entry.system, entry.seconds = name, seconds
        entries.append(entry)
    groups = ranked_groups(entries, rank_by)
    text = leaderboard_text(groups, rank_by, bootstrap_description(DEFAULT_RESAMPLES, DEFAULT_SEED,
                                                                   DEFAULT_CONFIDENCE))
    said = write_board(groups, rank_by, html=str(folder / BOARD_HTML), json_path=str(folder / BOARD_JSON))
    return text, said
