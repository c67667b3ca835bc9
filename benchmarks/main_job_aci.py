"""Time the README's main job (``doclens score … --evaluator clinical-rules``) end to end; print JSON.

Runs the CLI in a fresh interpreter (imports, model loading and all) on:

* ``examples``: ``examples/notes.jsonl`` (2 synthetic visits, claims given);
* ``aci-reference-copy``: the 40 notes of ACI-BENCH test split 1 (``../shared/data``, read in
  place; the JSONL the CLI reads is written to a temporary folder) with the clinician's note as
  the prediction — claims extracted by the default ``clauses`` extractor; a sanity check, it
  should score close to 100;
* ``aci-transcript-copy``: the same notes with the dialogue itself (turn numbers and speaker tags
  removed) as the prediction, ACI-BENCH's transcript-copy baseline: many more claims.

There are no system outputs in the shared data, hence these two stand-ins.

    python -m benchmarks.main_job_aci [--runs aci-reference-copy,aci-transcript-copy,examples]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "aci_bench_test1.jsonl"


def transcript(source: str) -> str:
    return re.sub(r"^\[\d+\]\[\w+\]\s*", "", source, flags=re.MULTILINE)


def score(path: Path, out: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "doclens.cli", "score", str(path), "--evaluator", "clinical-rules",
                             "--output", str(out), "-q", "--no-cache"], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"doclens score failed ({result.returncode}):\n{result.stderr[-2000:]}")
    report = json.loads(out.read_text())
    return {"wall_s": round(wall, 2), "instances": len(report["instances"]),
            "pairs": report["usage"].get("pairs"), "signature": report["signature"],
            "scores": {k: (round(v, 4) if isinstance(v, float) else v) for k, v in report["scores"].items()
                       if not k.endswith("_macro")},
            "items": {k: v.get("items") for k, v in report["counts"].items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--runs", default="examples,aci-reference-copy,aci-transcript-copy")
    args = parser.parse_args()
    rows = [json.loads(line) for line in open(args.data, encoding="utf-8")]
    report = {"cpu_count": os.cpu_count(), "runs": {}}
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        for run in [r for r in args.runs.split(",") if r]:
            if run == "examples":
                path = REPO / "examples" / "notes.jsonl"
            else:
                def make(r, copy=run == "aci-reference-copy"):
                    return r["reference"] if copy else transcript(r["source"])
                path = folder / f"{run}.jsonl"
                path.write_text("".join(json.dumps({"id": r["id"], "task": "note_generation", "prediction": make(r),
                                                    "reference": r["reference"], "source": r["source"]}) + "\n"
                                        for r in rows), encoding="utf-8")
            report["runs"][run] = score(path, folder / f"{run}.scores.json")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
