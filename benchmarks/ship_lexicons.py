"""Write the drug names ``clinical-rules`` ships as package data (``doclens/evaluators/rules/drug_names.json``).

The names are derived from the installed ``drug-named-entity-recognition`` lexicon, lemminflect and
the judge's own list (``doclens.evaluators.rules.lexicons``): deterministic, so the file equals a
fresh derivation (``tests/evaluators/rules/test_near_misses.py`` checks it). Run it after a change to any of them
(another version pinned in ``.ci/constraints.txt``, a name added to ``words.DRUGS``); until then
the judge derives the names at its first run (about 5 s) and keeps them in its cache folder.

    python -m benchmarks.ship_lexicons [--check]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from doclens.evaluators.rules import lexicons
from doclens.evaluators.rules.words import DRUGS

TARGET = Path(lexicons.__file__).with_name(lexicons.SHIPPED_DRUG_NAMES)


def shipped_text() -> str:
    """The file's text for the installed versions (one name a line, sorted: a diff shows what changed)."""
    return json.dumps(lexicons.shipped_drug_names_data(DRUGS), indent=0, sort_keys=True, ensure_ascii=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the shipped file differs from a fresh derivation")
    args = parser.parse_args(argv)
    text = shipped_text()
    if args.check:
        same = TARGET.exists() and TARGET.read_text(encoding="utf-8") == text
        print(f"{TARGET}: {'equal to' if same else 'differs from'} a fresh derivation")
        return 0 if same else 1
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET} ({len(text):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
