"""Draw claims the default judge says are *stated in another section*, for reading by hand (issue 46, point 3).

``doclens score``'s default settings (``clinical-rules``, claims extracted by ``clauses``, the whole
premise note) on ACI-BENCH test split 2's real outputs (``../shared/data/aci_bench_systems/test2``):
every supported note claim whose placement is ``other_section`` — its evidence, the premise sentence
the judge found it in, lies outside the claim's own section. A seeded sample of ``--n`` of them is
written, each with the claim, its own section, the evidence and the section it was found in, and the
premise note cut into its sections, so a reader can check two things by reading the note: is the
claim's fact stated in the section the evidence is in, and is it absent from the claim's own
section? The sample holds note text: write it outside the repository.

    python -m benchmarks.placement_sample --systems GPT-4,ChatGPT --n 40 --out /tmp/placements.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "aci_bench_systems"


def placements(split: str, systems: list[str]) -> list[dict]:
    """Every supported note claim placed in another section, both directions, with what a reader needs."""
    from doclens import DocLens
    from doclens.evaluators.rules.clinical_rules import ClinicalRulesJudge
    from doclens.extraction.extractors import ClauseExtractor
    from doclens.parsing.sections import segments

    refs = {r["id"]: r for r in map(json.loads, open(DATA / split / "references.jsonl", encoding="utf-8"))}
    scorer = DocLens(evaluator=ClinicalRulesJudge(), extractor=ClauseExtractor())
    found = []
    for system in systems:
        rows = [json.loads(line) for line in open(DATA / split / "systems" / f"{system}.jsonl", encoding="utf-8")]
        instances = [{"id": r["id"], "task": "note_generation", "prediction": r["prediction"] or "",
                      "reference": refs[r["id"]]["reference"]} for r in rows]
        report = scorer.score(instances, progress=False)
        for result, instance in zip(report.instances, instances):
            for side, claims, premise in (("recall", result.reference_claims, instance["prediction"]),
                                          ("precision", result.prediction_claims, instance["reference"])):
                sections = segments("note_generation", premise)
                for verdict in claims:
                    if verdict.placement == "other_section":
                        found.append({"split": split, "system": system, "encounter": result.id, "side": side,
                                      "claim": verdict.text, "claim_section": verdict.section,
                                      "evidence": verdict.evidence, "explanation": verdict.explanation,
                                      "premise_sections": {str(k): v for k, v in sections.items()}})
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", default="test2")
    parser.add_argument("--systems", default="GPT-4")
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument("--seed", type=int, default=46)
    parser.add_argument("--out", required=True, help="JSONL to write (outside the repository: it holds note text)")
    args = parser.parse_args(argv)
    found = placements(args.split, args.systems.split(","))
    chosen = random.Random(args.seed).sample(found, min(args.n, len(found)))
    Path(args.out).write_text("".join(json.dumps(item) + "\n" for item in chosen), encoding="utf-8")
    print(json.dumps({"other_section_claims": len(found), "sampled": len(chosen), "out": args.out}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
