"""Draw the items of the real-output labelled set (issue: real notes, real numbers).

Each item is one sentence to be labelled by reading, on one of two sides:

- ``recall``: a sentence of the clinician's reference note, judged against a system's note;
- ``precision``: a sentence of a system's note, judged against the clinician's reference note.

The draw is deterministic (seeded by split, encounter and system) and reads only
``../shared/data/aci_bench_systems/test2`` and ``test3`` (test split 1's system outputs are held out
for independent checks and never read). Encounters are drawn per split; the first half of each
split's encounters is the development half, the rest the held-out half, so no note is in both.

The labeller turns each sentence into the claim it asserts first (in the sentence's own words) and
labels it by reading the whole premise note, before any judge's verdict is looked at. This script
writes the unlabelled items; ``doclens/datasets/real_outputs/labels_*.jsonl`` hold the labels, each
line with its draw's split, encounter, system, side, half and round
(``doclens/datasets/real_outputs/DATASHEET.md``).

    python -m benchmarks.real_outputs_sample --out /tmp/items.jsonl
"""
from __future__ import annotations

import argparse
import json
import random
import re
from pathlib import Path

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "aci_bench_systems"
SYSTEMS = ("GPT-4", "ChatGPT", "Text-Davinci-003", "BioBART-div", "LED", "train_UMLS")
SPLITS = ("test2", "test3")
ENCOUNTERS_PER_SPLIT = 8
PER_SIDE = 3
#: The second round of labels: the next encounters of each split's shuffled order (first half dev,
#: second half held out), drawn after the first round's items so their ids never change.
ROUND_2_ENCOUNTERS = 8
#: The third round: the next 4 encounters of each split, all in the ``fresh`` half — drawn and
#: labelled after round 2's held-out half had been read for error analysis (issue 37), so that the
#: next reported figure comes from notes no one tuning the judge has read: it skips the encounters
#: of the read table claims (``table_claims.jsonl``, development data) too.
ROUND_3_ENCOUNTERS = 4
#: The fourth round: the next 4 encounters of each split after round 3's (the table claims' skipped
#: likewise), the half ``fresh-2`` — drawn and labelled after v7 was measured on ``fresh``, for the
#: figure of the next change (and a second unread measure of v7).
ROUND_4_ENCOUNTERS = 4
#: The fifth round: the next 5 encounters of each split after round 4's (the table claims' skipped
#: likewise), the half ``sealed`` — drawn and labelled before any change of issue 46 (invariants,
#: placement, confidence, a learned step) and measured once, at the end of that work.
ROUND_5_ENCOUNTERS = 5
#: The sixth round: the next 4 encounters of each split after round 5's (the table claims' skipped
#: likewise), the half ``calibration`` — drawn and labelled after clinical-rules v11, to fit the
#: verdicts' confidence on notes no rule was written from (issue 46): read by name only, by the
#: calibration fit, never by anyone writing a rule.
ROUND_6_ENCOUNTERS = 4
#: the half each round after the second is, whole
LATER_HALVES = {3: "fresh", 4: "fresh_2", 5: "sealed", 6: "calibration"}
TABLE_CLAIMS = Path(__file__).resolve().parents[1] / "doclens" / "datasets" / "real_outputs" / "table_claims.jsonl"

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
#: Round 2 does not cut after a title ("Ms. Jones"); round 1's items keep round 1's cut.
_SENTENCE_END_2 = re.compile(r"(?<!\bMr\.)(?<!\bMs\.)(?<!\bDr\.)(?<!\bMrs\.)(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


def read_jsonl(path: Path) -> dict[str, dict]:
    with path.open(encoding="utf-8") as handle:
        return {row["id"]: row for row in map(json.loads, filter(str.strip, handle))}


def is_header(line: str) -> bool:
    """A line that only names a section or sub-section ("PHYSICAL EXAM", "Neck:")."""
    bare = line.strip().strip(":").strip()
    if not bare:
        return True
    if bare.isupper() and len(bare.split()) <= 6:
        return True
    return line.strip().endswith(":") and len(bare.split()) <= 4


def sentences(note: str, cut: re.Pattern = _SENTENCE_END) -> list[str]:
    """Candidate sentences: 4 to 60 words, not a header, one per line piece."""
    found = []
    for line in note.splitlines():
        line = line.strip().lstrip(":").strip()
        if is_header(line):
            continue
        for piece in cut.split(line):
            piece = piece.strip().lstrip("-•*").strip()
            if 4 <= len(piece.split()) <= 60 and re.search(r"[A-Za-z]", piece):
                found.append(piece)
    return found


def _encounters(ids: list[str], first: int, count: int, split: str, round_: int) -> list[str]:
    """The round's encounters of one split's shuffled order; rounds 3 to 5 skip the table claims' (read)."""
    if round_ < 3:
        return ids[first: first + count]
    with TABLE_CLAIMS.open(encoding="utf-8") as handle:
        read = {(row["split"], row["encounter"]) for row in map(json.loads, filter(str.strip, handle))}
    unread = [e for e in ids[ENCOUNTERS_PER_SPLIT + ROUND_2_ENCOUNTERS:] if (split, e) not in read]
    return unread[first - ENCOUNTERS_PER_SPLIT - ROUND_2_ENCOUNTERS:][:count]


def draw(data: Path = DATA) -> list[dict]:
    """Every item of the six rounds, round 1 first (its ids are positions in this list)."""
    items: list[dict] = []
    for round_, first, count, cut in ((1, 0, ENCOUNTERS_PER_SPLIT, _SENTENCE_END),
                                      (2, ENCOUNTERS_PER_SPLIT, ROUND_2_ENCOUNTERS, _SENTENCE_END_2),
                                      (3, ENCOUNTERS_PER_SPLIT + ROUND_2_ENCOUNTERS, ROUND_3_ENCOUNTERS,
                                       _SENTENCE_END_2),
                                      (4, ENCOUNTERS_PER_SPLIT + ROUND_2_ENCOUNTERS + ROUND_3_ENCOUNTERS,
                                       ROUND_4_ENCOUNTERS, _SENTENCE_END_2),
                                      (5, ENCOUNTERS_PER_SPLIT + ROUND_2_ENCOUNTERS + ROUND_3_ENCOUNTERS
                                       + ROUND_4_ENCOUNTERS, ROUND_5_ENCOUNTERS, _SENTENCE_END_2),
                                      (6, ENCOUNTERS_PER_SPLIT + ROUND_2_ENCOUNTERS + ROUND_3_ENCOUNTERS
                                       + ROUND_4_ENCOUNTERS + ROUND_5_ENCOUNTERS, ROUND_6_ENCOUNTERS,
                                       _SENTENCE_END_2)):
        for split in SPLITS:
            refs = read_jsonl(data / split / "references.jsonl")
            outputs = {s: read_jsonl(data / split / "systems" / f"{s}.jsonl") for s in SYSTEMS}
            ids = sorted(refs)
            random.Random(f"real-outputs/{split}").shuffle(ids)
            for rank, encounter in enumerate(_encounters(ids, first, count, split, round_)):
                half = (LATER_HALVES.get(round_) or ("dev" if rank < count // 2 else "held_out"))
                for system in SYSTEMS:
                    note = outputs[system][encounter]["prediction"]
                    rng = random.Random(f"real-outputs/{split}/{encounter}/{system}")
                    for side, pool in (("recall", sentences(refs[encounter]["reference"], cut)),
                                       ("precision", sentences(note, cut))):
                        for sentence in rng.sample(pool, min(PER_SIDE, len(pool))):
                            items.append({"item": f"{split}/{encounter}/{system}/{side}/{len(items)}",
                                          "split": split, "encounter": encounter, "system": system,
                                          "half": half, "round": round_, "side": side, "sentence": sentence})
    return items


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    items = draw()
    Path(args.out).write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")
    print(json.dumps({"items": len(items), "dev": sum(i["half"] == "dev" for i in items)}))


if __name__ == "__main__":
    main()
