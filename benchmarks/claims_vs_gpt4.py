"""Are the offline extractors' claims the ones a clinician (or GPT-4) would count? Prints JSON.

Compares the ``clauses`` and ``sentences`` extractors with the GPT-4 subclaims that the original
DocLens repository ships for the clinicians' reference notes of ACI-BENCH test split 1
(``data/ACI-Bench-TestSet-1_clean.claim_min1max30.json`` in github.com/yiqingxyq/DocLens; claims of
the reference notes only — no system output). That file is not part of this project: give its
path with ``--gpt4-claims``. Its rows are misaligned (a row's ``reference`` and its per-section
texts belong to different notes), so each section's subclaims are aligned by content with the
section of ``../shared/data/aci_bench_test1.jsonl`` whose text they were made from.

Per extractor:

* ``claims_per_note``: mean claims per note (GPT-4's for comparison);
* ``gpt4_covered``: the share of GPT-4 subclaims that one claim of the extractor covers (at least
  ``--cover`` of the subclaim's content words, Porter-stemmed, stop words out, occur in that claim);
* ``claims_covering``: the share of the extractor's claims that cover some GPT-4 subclaim (a bare
  header or boilerplate covers none);
* ``subclaims_per_claim``: GPT-4 subclaims covered per claim that covers any (1 = as atomic as
  GPT-4's);
* ``gpt4_covered_jointly``: the share of GPT-4 subclaims covered by the claims made from one note
  sentence together (GPT-4 often keeps a list in one subclaim — "history of depression, type 2
  diabetes, and hypertension" — which a split list covers only jointly).

    python -m benchmarks.claims_vs_gpt4 --gpt4-claims /path/to/ACI-Bench-TestSet-1_clean.claim_min1max30.json
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from doclens.extraction.extractors import ClauseExtractor, SentenceExtractor  # noqa: E402
from doclens.parsing.sections import SECTION_NAMES, segments  # noqa: E402
from doclens.parsing.statements import parse_statements  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "aci_bench_test1.jsonl"
_STOP = frozenset("""a an the and or of to in on at for with by from as is are was were be been has have had his her
he she they their patient patient's pt this that it its also which who today there no not""".split())


def content(text: str, stem) -> set[str]:
    return {stem(w) for w in re.findall(r"[a-z0-9/.%-]+", text.lower().replace("'s", "")) if w not in _STOP}


def align(gpt4_rows: list[dict], notes: list[dict]) -> list[tuple[str, str, str, list[str]]]:
    """``(note id, section, section text, GPT-4 subclaims)`` for every section of the file, matched
    to the test-1 note section with the most words in common."""
    sections = {(n["id"], s): t for n in notes for s, t in segments("note_generation", n["reference"]).items()}
    words = {k: set(t.lower().split()) for k, t in sections.items()}
    out = []
    for row in gpt4_rows:
        for section in SECTION_NAMES:
            text, claims = row.get(f"reference_{section}") or "", row.get(f"subclaims_reference_{section}") or []
            if not claims:
                continue
            mine = set(text.lower().split())
            best = max((k for k in sections if k[1] == section),
                       key=lambda k: len(mine & words[k]) / max(1, len(mine | words[k])))
            out.append((best[0], section, sections[best], list(claims)))
    return out


def measure(extractor, aligned, cover: float, stem) -> dict:
    notes, ours, gpt4 = set(), 0, 0
    covered = covering = covered_pairs = jointly = 0
    for note, section, text, subclaims in aligned:
        notes.add(note)
        groups = [set().union(*[content(c, stem) for c in extractor.extract(s.text, "note_generation", section)])
                  for s in parse_statements(text)]
        jointly += sum(any(len(s & g) >= cover * len(s) for g in groups) for s in (content(x, stem) for x in subclaims)
                       if s)
        claims = [content(c, stem) for c in extractor.extract(text, "note_generation", section)]
        ours += len(claims)
        gpt4 += len(subclaims)
        hits = [[i for i, c in enumerate(claims) if s and len(s & c) >= cover * len(s)]
                for s in (content(x, stem) for x in subclaims)]
        covered += sum(bool(h) for h in hits)
        per_claim = [sum(i in h for h in hits) for i in range(len(claims))]
        covering += sum(n > 0 for n in per_claim)
        covered_pairs += sum(per_claim)
    return {"claims_per_note": round(ours / len(notes), 1), "gpt4_claims_per_note": round(gpt4 / len(notes), 1),
            "gpt4_covered": round(covered / gpt4, 3), "gpt4_covered_jointly": round(jointly / gpt4, 3),
            "claims_covering": round(covering / max(1, ours), 3),
            "subclaims_per_claim": round(covered_pairs / max(1, covering), 2), "notes": len(notes)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpt4-claims", required=True, help="ACI-Bench-TestSet-1_clean.claim_min1max30.json")
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--cover", type=float, default=0.75)
    args = parser.parse_args()
    from nltk.stem.porter import PorterStemmer

    stem = PorterStemmer().stem
    notes = [json.loads(line) for line in open(args.data, encoding="utf-8") if line.strip()]
    aligned = align(json.load(open(args.gpt4_claims, encoding="utf-8")), notes)
    report = {"sections": len(aligned), "cover": args.cover,
              "extractors": {e.name: measure(e, aligned, args.cover, stem)
                             for e in (ClauseExtractor(), SentenceExtractor())}}
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
