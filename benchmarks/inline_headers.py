"""Which keys written inside running text are headers, on the real outputs of ACI-BENCH test
splits 2 and 3 (21 systems × 80 notes) and on the clinicians' reference notes. Prints JSON.

For every key :mod:`doclens.parsing.sections` can read inside a line (``Examination:``, ``PHYSICAL
EXAM``, ``2) Results:``, ``Section 2: Physical Exam``), the context it follows: a preamble's
colon, two spaces (a flattened line break), a list or markup marker, capitals, or one space at a
sentence end; per context the count, the systems and a few examples (the text around the key, 45
characters each side; system outputs are public data). ``opens`` says whether
:func:`doclens.parsing.sections.break_inline_headers` reads the key as a header. Also: how many
notes have a division written more than once (read as the union of its spans), and, for the
reference notes, whether the scorer's division equals ACI-BENCH's tagger on every one.

    python -m benchmarks.inline_headers

Reads ``../shared/data/aci_bench_systems`` in place (test split 1's system outputs are held out
and never read).
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from pathlib import Path

from doclens.parsing.sections import (
    _INLINE,
    _INLINE_CAPS,
    _LIST_NUMBER_BEFORE,
    _MARKER_AHEAD,
    _SECTION_NUMBER,
    break_inline_headers,
    note_section_spans,
    segments,
    split_note_sections,
)

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "aci_bench_systems"


def context(text: str, match: re.Match, capitals: bool) -> str:
    before = text[:match.start()]
    if _MARKER_AHEAD.match(text, match.end()) or _LIST_NUMBER_BEFORE.search(before):
        return "list or markup marker"
    if before.endswith(":"):
        return "after a colon (preamble or key)"
    if len(match.group(0)) >= 2 or before.endswith(" "):
        return "after two spaces"
    return "capitals after a sentence end" if capitals else "one space after a sentence end"


def main() -> None:
    contexts: dict[str, dict] = defaultdict(lambda: {"keys": 0, "opens": 0, "systems": Counter(), "examples": []})
    reopened: Counter = Counter()
    notes = 0
    for path in sorted(DATA.glob("test[23]/systems/*.jsonl")):
        for row in map(json.loads, path.open(encoding="utf-8")):
            text, notes = row["prediction"], notes + 1
            broken = break_inline_headers(text)
            found = {}
            for capitals, regex in ((False, _INLINE), (True, _INLINE_CAPS), (True, _SECTION_NUMBER)):
                for match in regex.finditer(text):
                    if "\n" not in match.group(0):  # a key already at a line start is no inline key
                        found.setdefault(match.end(), (match, capitals))
            for end, (match, capitals) in found.items():
                entry = contexts[context(text, match, capitals)]
                entry["keys"] += 1
                entry["opens"] += broken[end - 1] == "\n"
                entry["systems"][path.stem] += 1
                if len(entry["examples"]) < 4:
                    entry["examples"].append(f"{path.stem} {row['id']}: …{text[max(0, match.start() - 45):end + 45]}…")
            divisions = [division for division, _, _ in note_section_spans(text, real_headers=True)]
            if len(divisions) != len(set(divisions)):
                reopened[path.stem] += 1
    references = [row for split in ("test2", "test3")
                  for row in map(json.loads, (DATA / split / "references.jsonl").open(encoding="utf-8"))]
    print(json.dumps({
        "system_notes": notes,
        "inline_keys": {name: {**entry, "systems": dict(entry["systems"])} for name, entry in sorted(contexts.items())},
        "notes_with_a_division_reopened": {"total": sum(reopened.values()), "systems": dict(reopened)},
        "reference_notes": len(references),
        "reference_notes_divided_as_aci_bench": sum(segments("note_generation", row["reference"])
                                                    == split_note_sections(row["reference"]) for row in references),
    }, indent=2))


if __name__ == "__main__":
    main()
