"""The ``clauses`` extractor's claims, read: are they well-formed, and true to the note? Prints JSON.

Draws a fixed sample of the claims the ``clauses`` extractor (``clinical-rules``' own) cuts from
ACI-BENCH test-2 notes of three systems (GPT-4, ChatGPT, BioBART; read in place from
``../shared/data/aci_bench_systems``), each claim with the note sentence it was cut from, exactly
as ``doclens score`` extracts them (the note split into its SOAP sections, each section's
sentences cut into claims). The sample was read claim by claim
(``doclens/datasets/real_outputs/extractor_reading.jsonl``; how: that folder's DATASHEET,
"Extractor reading"): a claim is **well-formed** when it reads as one complete statement (no lost
object, no dangling "for to", no fragment of a list cut from its verb) and **true to the note**
when it says what its sentence says (no lost negation, no fact another item's words changed).

    python -m benchmarks.claim_reading --draw 1 > sample.jsonl   # round 1's sample (v4's claims), for reading
    python -m benchmarks.claim_reading --draw 5 > sample5.jsonl  # round 5's (v5's, sentences not read before)
    python -m benchmarks.claim_reading                           # each round's figures, and the claims the
                                                                 # current extractor cuts from the same sentences

The figures: the share of the sampled claims read as well-formed and as true to the note; then,
for the current extractor, how many of the read sentences it now cuts differently and how the
claims it cuts from them were read (a claim it still cuts keeps its reading; a claim it no longer
cuts is listed with what replaced it, to be read again).
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from doclens.extraction.extractors import clinician_claims
from doclens.parsing.sections import segments
from doclens.parsing.statements import parse_statements, strip_citations

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "aci_bench_systems"
READING = REPO / "doclens" / "datasets" / "real_outputs" / "extractor_reading.jsonl"
SYSTEMS = {"GPT-4": 34, "ChatGPT": 33, "BioBART": 33}
SEED = 48
SEED2 = 4848
SEED3 = 484848
SEED4 = 48484848
SEED5 = 4848484848
#: round 6: a second reader's sample of v5 (after the merge of clinical-rules v8), drawn and read once
SEED6 = 20261129
#: the rounds' seeds
SEEDS = {1: SEED, 2: SEED2, 3: SEED3, 4: SEED4, 5: SEED5, 6: SEED6}


def sentence_claims(system: str, split: str = "test2") -> list[dict]:
    """Every claim of ``system``'s notes with the sentence it was cut from, in note order."""
    rows = []
    path = DATA / split / "systems" / f"{system}.jsonl"
    for line in path.read_text(encoding="utf-8").splitlines():
        note = json.loads(line)
        for section, text in segments("note_generation", note["prediction"]).items():
            if not text:
                continue
            for statement in parse_statements(strip_citations(text)):
                for claim in clinician_claims(statement.text):
                    rows.append({"system": system, "encounter": note["id"], "section": section,
                                 "sentence": statement.text, "claim": claim})
    return rows


def draw(seed: int = SEED, read: list[dict] | None = None) -> list[dict]:
    """A fixed sample: :data:`SYSTEMS` claims of each system, drawn with ``seed``, none from a
    sentence already ``read`` (round 1 was drawn with :data:`SEED` from v4's claims; rounds 2 to 4
    from drafts of v5, each after the fixes the round before found; round 5 with :data:`SEED5` from v5
    as shipped, after the fixes round 4 found: the one not read while changing the extractor; round 6
    with :data:`SEED6`, read by a second reader who changed nothing)."""
    rng = random.Random(seed)
    seen = {(r["system"], r["encounter"], r["sentence"]) for r in read or []}
    sample = []
    for system, count in SYSTEMS.items():
        claims = [c for c in sentence_claims(system) if (c["system"], c["encounter"], c["sentence"]) not in seen]
        sample += [claims[i] for i in sorted(rng.sample(range(len(claims)), count))]
    return sample


def figures(reading: list[dict]) -> dict:
    """Shares of the read claims that are well-formed and true to the note, and the current
    extractor's claims of the same sentences against the reading."""
    n = len(reading)
    result = {"claims": n, "well_formed": sum(r["well_formed"] for r in reading) / n,
              "true_to_note": sum(r["true_to_note"] for r in reading) / n,
              "by_system": {}}
    for system in SYSTEMS:
        rows = [r for r in reading if r["system"] == system]
        result["by_system"][system] = {"claims": len(rows), "well_formed": sum(r["well_formed"] for r in rows),
                                       "true_to_note": sum(r["true_to_note"] for r in rows)}
    changed, gone = 0, []
    for row in reading:
        now = clinician_claims(row["sentence"])
        if row["claim"] not in now:
            changed += 1
            gone.append({"claim": row["claim"], "well_formed": row["well_formed"], "now": now})
    kept = [r for r in reading if r["claim"] in clinician_claims(r["sentence"])]
    result["current_extractor"] = {
        "read_claims_still_cut": len(kept),
        "of_them_well_formed": sum(r["well_formed"] for r in kept),
        "read_claims_no_longer_cut": changed, "replaced": gone}
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draw", type=int, choices=tuple(SEEDS), help="print a round's sample (JSON Lines)")
    parser.add_argument("--reading", default=str(READING))
    args = parser.parse_args()
    reading = [json.loads(line) for line in Path(args.reading).read_text(encoding="utf-8").splitlines() if line.strip()]
    if args.draw:
        rows = draw(SEEDS[args.draw], [r for r in reading if r["round"] < args.draw])
        for row in rows:
            print(json.dumps(row, ensure_ascii=False))
        return
    print(json.dumps({f"round {n}": figures([r for r in reading if r["round"] == n]) for n in SEEDS
                      if any(r["round"] == n for r in reading)},
                     indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
