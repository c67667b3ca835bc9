"""A tiny synthetic UMLS-like vocabulary for the MEDCON tests (no licensed data).

Written as UMLS rich release format rows (MRCONSO.RRF, MRSTY.RRF) for QuickUMLS and as a
scispaCy knowledge-base JSONL file. Two concepts have semantic types that ACI-BENCH leaves out
(``patient``: Living Beings; ``therapy``: Procedures) so the type filter is exercised.
"""

from __future__ import annotations

import json
from pathlib import Path

# (CUI, TUI, semantic type name, strings; the first string is the preferred name)
CONCEPTS = [
    ("C0015967", "T184", "Sign or Symptom", ["fever", "pyrexia"]),
    ("C0020538", "T047", "Disease or Syndrome", ["hypertension", "high blood pressure"]),
    ("C0010200", "T184", "Sign or Symptom", ["cough"]),
    ("C0004057", "T121", "Pharmacologic Substance", ["aspirin"]),
    ("C0022646", "T023", "Body Part, Organ, or Organ Component", ["kidney"]),
    ("C0011849", "T047", "Disease or Syndrome", ["diabetes", "diabetes mellitus"]),
    ("C0030705", "T101", "Patient or Disabled Group", ["patient"]),
    ("C0087111", "T061", "Therapeutic or Preventive Procedure", ["therapy"]),
    ("C9000325", "T121", "Pharmacologic Substance", ["325"]),
]

# A realistic subset of NLTK's English stopword list (QuickUMLS reads corpora/stopwords/english).
STOPWORDS = """i me my myself we our ours you your he him his she her it its they them their what which
who whom this that these those am is are was were be been being have has had having do does did a an the
and but if or because as until while of at by for with about against between into through during before
after above below to from up down in out on off over under again further then once here there when where
why how all any both each few more most other some such no nor not only own same so than too very s t can
will just don should now""".split()


def write_umls_files(folder: Path) -> Path:
    """Write MRCONSO.RRF and MRSTY.RRF into ``folder``; return it."""
    folder.mkdir(parents=True, exist_ok=True)
    conso, sty = [], []
    aui = 0
    for cui, tui, type_name, strings in CONCEPTS:
        for position, string in enumerate(strings):
            aui += 1
            # CUI|LAT|TS|LUI|STT|SUI|ISPREF|AUI|SAUI|SCUI|SDUI|SAB|TTY|CODE|STR|SRL|SUPPRESS|CVF|
            conso.append(f"{cui}|ENG|P|L{aui:07d}|PF|S{aui:07d}|{'Y' if position == 0 else 'N'}|A{aui:07d}||||"
                         f"TEST|PT|{cui}|{string}|0|N||")
        # CUI|TUI|STN|STY|ATUI|CVF|
        sty.append(f"{cui}|{tui}|A1.2.3|{type_name}|AT{cui[1:]}||")
    (folder / "MRCONSO.RRF").write_text("\n".join(conso) + "\n", encoding="utf-8")
    (folder / "MRSTY.RRF").write_text("\n".join(sty) + "\n", encoding="utf-8")
    return folder


def write_scispacy_kb(path: Path) -> Path:
    """Write the vocabulary as a scispaCy knowledge-base JSONL file."""
    with open(path, "w", encoding="utf-8") as handle:
        for cui, tui, _name, strings in CONCEPTS:
            handle.write(json.dumps({"concept_id": cui, "canonical_name": strings[0], "aliases": strings[1:],
                                     "types": [tui], "definition": None}) + "\n")
    return path


def write_nltk_stopwords(nltk_data: Path) -> Path:
    """Write ``corpora/stopwords/english`` under ``nltk_data``; return ``nltk_data``."""
    folder = nltk_data / "corpora" / "stopwords"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "english").write_text("\n".join(STOPWORDS) + "\n", encoding="utf-8")
    return nltk_data
