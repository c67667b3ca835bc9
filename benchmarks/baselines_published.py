"""DocLens's ROUGE (and MEDCON, given a QuickUMLS index) beside ACI-BENCH's published tables for
test splits 2 and 3: 21 real systems, the ALL block and the four division blocks; prints JSON.

Settings (``cards/baselines.md``): DocLens's ROUGE defaults (no stemming, ROUGE-Lsum on the
notes' own lines), ``divisions="aci-bench"``, ``remove_citations=False``. The published "ROUGE-L"
is ``rougeLsum`` F1. Also times DocLens's ROUGE against ``rouge-score``'s own scorer on one
system's full notes and divisions (the same numbers, checked here too).

    python -m benchmarks.baselines_published [--splits test2 test3] [--quickumls INDEX]

MEDCON ("Fact" column) needs a QuickUMLS index of a licensed UMLS (``--quickumls``, built with
``doclens.baselines.medcon.build_quickumls_index``) and ``en_core_web_sm``; without them it is
reported as not computed (the tests cover MEDCON on a synthetic nine-concept index instead).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from tests.aci_published import DATA, differences, read_split, score_system  # noqa: E402


def _timing(split: str, system: str) -> dict:
    """DocLens's ROUGE against rouge-score's scorer on one system (full notes and divisions)."""
    from rouge_score import rouge_scorer

    from doclens.baselines import aci_bench_divisions
    from doclens.baselines.rouge import rouge_per_instance

    _, references, systems = read_split(split)
    predictions = list(systems[system])
    references = list(references)
    split_predictions, split_references = aci_bench_divisions(predictions), aci_bench_divisions(references)
    for section in split_predictions:
        predictions += split_predictions[section]
        references += split_references[section]
    types = ["rouge1", "rouge2", "rougeL", "rougeLsum"]
    started = time.perf_counter()
    theirs = [rouge_scorer.RougeScorer(types).score(r, p) for p, r in zip(predictions, references)]
    middle = time.perf_counter()
    ours, _ = rouge_per_instance(predictions, references)
    ended = time.perf_counter()
    equal = all(row[f"{t}_{part}"] == getattr(score[t], attribute) for row, score in zip(ours, theirs) for t in types
                for part, attribute in (("precision", "precision"), ("recall", "recall"), ("f1", "fmeasure")))
    return {"split": split, "system": system, "pairs": len(predictions), "rouge_score_s": round(middle - started, 2),
            "doclens_s": round(ended - middle, 2), "speedup": round((middle - started) / (ended - middle), 1),
            "values_equal": equal}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", nargs="+", default=["test2", "test3"])
    parser.add_argument("--quickumls", help="QuickUMLS index of your UMLS install: also compare MEDCON with 'Fact'")
    parser.add_argument("--timing-system", default="transcript")
    args = parser.parse_args()
    if not DATA.is_dir():
        sys.exit(f"no ACI-BENCH system outputs at {DATA}")
    baselines, options, columns = ["rouge"], {}, {"ROUGE-1": "rouge1_f1", "ROUGE-2": "rouge2_f1",
                                                   "ROUGE-L": "rougeLsum_f1"}
    if args.quickumls:
        baselines.append("medcon")
        options["medcon"] = {"backend": "quickumls", "quickumls_path": args.quickumls}
        columns["Fact"] = "medcon_f1"
    out = {"settings": "rouge defaults (no stemming, rougeLsum on lines), divisions=aci-bench, "
                       "remove_citations=False; published ROUGE-L = rougeLsum F1",
           "medcon": "compared with 'Fact'" if args.quickumls else
                     "not computed: needs a QuickUMLS index of a licensed UMLS (--quickumls)", "splits": {}}
    for split in args.splits:
        started = time.perf_counter()
        _, references, systems = read_split(split)
        ours = {name: score_system(predictions, references, baselines, options) for name, predictions in systems.items()}
        found = differences(split, ours, columns)
        worst = max(found, key=lambda row: abs(row["difference"]))
        out["splits"][split] = {"systems": len(systems), "values": len(found),
                                "within_0.01": sum(abs(row["difference"]) <= 0.01 for row in found),
                                "worst": worst, "off": [row for row in found if abs(row["difference"]) > 0.01],
                                "wall_s": round(time.perf_counter() - started, 1)}
    out["timing"] = _timing(args.splits[0], args.timing_system)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
