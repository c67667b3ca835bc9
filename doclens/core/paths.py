"""Whether two paths name one file: the one test behind "no command writes over its inputs"
(``doclens.cli.common.refuse_overwriting_inputs``) and "the outputs are not the references"
(``doclens.inputs.references``)."""

from __future__ import annotations

import os


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Whether paths ``a`` and ``b`` name one file: the same file on disk where both exist
    (:func:`os.path.samefile`: symbolic and hard links, relative paths, ``..``), else the same
    path once resolved (:func:`os.path.realpath`: a file about to be written through a link to
    one that does not exist yet).

    >>> same_file("a/../b.json", "b.json")
    True
    """
    try:
        if os.path.exists(a) and os.path.exists(b):
            return os.path.samefile(a, b)
        return os.path.normcase(os.path.realpath(a)) == os.path.normcase(os.path.realpath(b))
    except (OSError, ValueError):  # an unreadable path or a NUL in it: not provably the same
        return False
