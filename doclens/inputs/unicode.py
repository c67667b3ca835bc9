"""Text that no encoding can write, repaired where it is read.

JSON may spell a lone UTF-16 surrogate (``"\\ud800"``), and Python then holds a string that no
UTF-8 encoder accepts: spaCy, tokenizers and HTTP clients raise ``UnicodeEncodeError`` on it, in
the middle of a run. Every text read from a user (a row of an input file, a completion given to
the reward) goes through :func:`replace_lone_surrogates` first: each surrogate code point becomes
U+FFFD (the replacement character, what a UTF-8 decoder puts for bytes it cannot read), and the
caller says where it did so. A valid pair written as two escapes (``"\\ud83d\\ude00"``) is the
character it spells.
"""

from __future__ import annotations

import re
from typing import Any

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")
_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")


def _join_pair(match: re.Match) -> str:
    return match.group().encode("utf-16", "surrogatepass").decode("utf-16")


def replace_lone_surrogates(value: Any) -> tuple[Any, int]:
    """``value`` (a string, or lists / dicts of them, keys included) with each lone surrogate
    replaced by U+FFFD, and how many were replaced. Anything else comes back as it is; a value
    with nothing to repair comes back as the same object."""
    if isinstance(value, str):
        if not _SURROGATE.search(value):
            return value, 0
        value = _PAIR.sub(_join_pair, value)
        return _SURROGATE.subn(REPLACEMENT, value)
    if isinstance(value, list):
        repaired = [replace_lone_surrogates(item) for item in value]
        changed = any(new is not old for (new, _), old in zip(repaired, value))
        return ([item for item, _ in repaired] if changed else value), sum(n for _, n in repaired)
    if isinstance(value, dict):
        pairs = [(replace_lone_surrogates(k), replace_lone_surrogates(v)) for k, v in value.items()]
        changed = any(nk is not k or nv is not v for ((nk, _), (nv, _)), (k, v) in zip(pairs, value.items()))
        return ({k: v for (k, _), (v, _) in pairs} if changed else value), sum(a + b for (_, a), (_, b) in pairs)
    return value, 0
