"""Time DocLens's statement splitter on long single-line predictions and compare it with pysbd
on the ACI-BENCH notes; print JSON.

Timings: ``parse_statements`` on 4,000 cited sentences on one line, on 232 KB and on 1 MB of
cited sentences on one line (the best of ``--repeat`` runs), on pathological 1 MB lines (one
run), and pysbd on 500, 1,000 and 2,000
sentences on one line (it grows quadratically; 4,000 took 220 s here).

Comparison: every non-empty line of the 40 reference notes of ACI-BENCH test split 1, and every
dialogue turn of their transcripts (lower-case ASR text), is split by
``doclens.parsing.statements.split_sentences`` (nothing removed) and by pysbd 0.3.4 (English,
``clean=False``, ``char_span=True``); a line where the two place different boundaries is a
disagreement. ``--sample N`` prints N disagreements (chosen with a fixed seed) to classify by
hand. pysbd is needed only here (``pip install pysbd==0.3.4``).

    python -m benchmarks.splitter [--data ../shared/data/aci_bench_test1.jsonl] [--sample 40]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import time
from pathlib import Path

from doclens.parsing.statements import parse_statements, sentence_spans

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "aci_bench_test1.jsonl"


def one_line(target_chars: int = 0, sentences: int = 0) -> str:
    """Cited sentences on one line, with abbreviations, decimals, ``No.`` and lower-case starts."""
    parts, size, i = [], 0, 0
    while (sentences and i < sentences) or (target_chars and size < target_chars):
        part = (f"Patient No. {i} reports pain of 1.{i % 10} cm, e.g. in the knee [{i % 50}]." if i % 2 else
                f"no fever since Dr. Lee saw him [{i % 7}, 3].")
        parts.append(part)
        size += len(part) + 1
        i += 1
    return " ".join(parts)


def best_time(function, text: str, repeat: int) -> tuple[float, int]:
    best, count = float("inf"), 0
    for _ in range(repeat):
        start = time.perf_counter()
        count = len(function(text))
        best = min(best, time.perf_counter() - start)
    return best, count


def ends(spans) -> list[int]:
    return sorted({end for end in spans})


def our_boundaries(line: str) -> list[int]:
    """Character offsets where a sentence ends (white space after it not counted)."""
    return ends(len(line[start:end].rstrip()) + start for start, _body, end in sentence_spans(line)
                if line[start:end].strip())


def pysbd_boundaries(segmenter, line: str) -> list[int]:
    return ends(span.start + len(span.sent.rstrip()) for span in segmenter.segment(line) if span.sent.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sample", type=int, default=0, help="print this many disagreements")
    args = parser.parse_args()

    result: dict = {"timings_s": {}}
    for name, text in (("4000_sentences_one_line", one_line(sentences=4000)),
                       ("232KB_one_line", one_line(target_chars=232_000)),
                       ("1MB_one_line", one_line(target_chars=1_000_000))):
        seconds, count = best_time(parse_statements, text, args.repeat)
        result["timings_s"][name] = {"chars": len(text), "statements": count, "seconds": round(seconds, 4)}

    # pathological 1 MB lines: many tiny sentences or non-boundaries; linear, but slower per byte
    for name, unit in (("1MB_tab_dot_pairs", "\t."), ("1MB_No_abbreviations", "No. "), ("1MB_e.g.", "e.g. "),
                       ("1MB_nested_brackets", None)):
        text = "[" * 500_000 + "]" * 500_000 if unit is None else unit * (1_000_000 // len(unit))
        seconds, count = best_time(parse_statements, text, 1)
        result["timings_s"][name] = {"chars": len(text), "statements": count, "seconds": round(seconds, 4)}

    try:
        import pysbd
    except ImportError:
        result["pysbd"] = "not installed (pip install pysbd==0.3.4)"
        print(json.dumps(result, indent=2))
        return
    segmenter = pysbd.Segmenter(language="en", clean=False, char_span=True)
    for sentences in (500, 1000, 2000):  # pysbd grows quadratically on one line: 4,000 take minutes
        text = one_line(sentences=sentences)
        start = time.perf_counter()
        count = len(segmenter.segment(text))
        result["timings_s"][f"pysbd_{sentences}_sentences_one_line"] = {
            "chars": len(text), "sentences": count, "seconds": round(time.perf_counter() - start, 4)}

    rows = [json.loads(line) for line in open(args.data, encoding="utf-8")]
    corpora = {
        "aci_bench_reference_notes": [line for row in rows for line in row["reference"].splitlines()
                                      if line.strip()],
        # the dialogue turns: lower-case ASR text ("okay . all right . um , now , have you …")
        "aci_bench_dialogue_turns": [re.sub(r"^\[\d+\]\[\w+\]\s*", "", line) for row in rows
                                     for line in row["source"].splitlines() if line.strip()],
    }
    rng = random.Random(17)
    for corpus, lines in corpora.items():
        disagreements = []
        ours_total = theirs_total = 0
        for line in lines:
            ours, theirs = our_boundaries(line), pysbd_boundaries(segmenter, line)
            ours_total += len(ours)
            theirs_total += len(theirs)
            if ours != theirs:
                disagreements.append({
                    "line": line,
                    "doclens": [line[a:b].strip() for a, b in zip([0] + ours, ours)],
                    "pysbd": [line[a:b].strip() for a, b in zip([0] + theirs, theirs)],
                })
        result[corpus] = {
            "notes": len(rows), "lines": len(lines), "doclens_sentences": ours_total,
            "pysbd_sentences": theirs_total, "lines_that_disagree": len(disagreements),
            "more_sentences_in_doclens": sum(len(d["doclens"]) > len(d["pysbd"]) for d in disagreements),
            "more_sentences_in_pysbd": sum(len(d["doclens"]) < len(d["pysbd"]) for d in disagreements),
        }
        if args.sample:
            result[corpus]["sample"] = rng.sample(disagreements, min(args.sample, len(disagreements)))
    print(json.dumps(result, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
