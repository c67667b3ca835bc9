"""The public reference sets DocLens ships readers for, known by a fingerprint of their notes, so
that a table of their reference notes given as a system's outputs is refused as swapped.

ACI-BENCH publishes its gold notes and every system's notes in CSVs with the same columns
(``dataset,encounter_id,dialogue,note``): given the wrong way round, column names cannot tell the
two apart, and recall and precision come out exchanged. DocLens keeps, for each known set, the
fingerprint of every reference note (:func:`note_fingerprint`: SHA-256 of the text with its
whitespace collapsed and in lower case, first :data:`HASH_CHARS` hex digits) in
``known_references.json`` beside this module — hashes only, never the text. The file is made by
:func:`build_fingerprints` (``benchmarks/known_references.py`` regenerates it from
``../shared/data``).

What this catches and what it does not (``docs/real-notes.md`` says so too): an
outputs table more than half of whose notes are the reference notes of one known set (ACI-BENCH
test 1, 2 and 3, MeQSum's test set), in any table format, is refused unless the references table
holds the same notes for those ids (a reference scored against itself). Other data is checked by
its columns only (an outputs table with a reference column and no prediction column, or the
other way round) and by whether the two paths name one file.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

#: the shipped file of fingerprints, beside this module
FILE = "known_references.json"
FORMAT = "doclens-known-references/1"
#: hex digits of SHA-256 kept per note (64 bits: no two notes of the known sets collide)
HASH_CHARS = 16


def note_fingerprint(text: str) -> str:
    """The fingerprint of one note: SHA-256 of ``text`` with runs of whitespace made one space,
    stripped and in lower case; the first :data:`HASH_CHARS` hex digits.

    >>> note_fingerprint("Fever,  cough.\\n") == note_fingerprint("fever, cough.")
    True
    """
    normal = " ".join(text.split()).lower()
    return hashlib.sha256(normal.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_CHARS]


def build_fingerprints(sets: dict[str, tuple[str, Iterable[str]]]) -> dict:
    """The content of :data:`FILE` for ``sets``: ``{key: (title, reference notes)}``."""
    return {"format": FORMAT,
            "fingerprint": f"sha256 of the note, whitespace collapsed, lower case; first {HASH_CHARS} hex digits",
            "sets": {key: {"title": title, "fingerprints": sorted({note_fingerprint(t) for t in notes})}
                     for key, (title, notes) in sets.items()}}


@lru_cache(maxsize=1)
def known_sets() -> dict[str, tuple[str, frozenset[str]]]:
    """``{key: (title, fingerprints)}`` of the shipped file."""
    data = json.loads(resources.files("doclens.inputs").joinpath(FILE).read_text(encoding="utf-8"))
    return {key: (entry["title"], frozenset(entry["fingerprints"])) for key, entry in data["sets"].items()}


@dataclass(frozen=True)
class ReferenceMatch:
    """``matched`` of ``total`` notes are reference notes of the known set ``title``."""

    key: str
    title: str
    matched: int
    total: int


def reference_set_of(notes: Iterable[str]) -> ReferenceMatch | None:
    """The known set more than half of ``notes`` are reference notes of (the one with most), or
    ``None``."""
    fingerprints = [note_fingerprint(note) for note in notes if isinstance(note, str) and note.strip()]
    if not fingerprints:
        return None
    best = None
    for key, (title, known) in known_sets().items():
        matched = sum(f in known for f in fingerprints)
        if best is None or matched > best.matched:
            best = ReferenceMatch(key, title, matched, len(fingerprints))
    return best if best is not None and 2 * best.matched > best.total else None
