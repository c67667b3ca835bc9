"""Regenerate the picture of ``docs/reports.md``: a forest plot of real ACI-BENCH systems, drawn by DocLens's own
``doclens leaderboard --plot``; print JSON (per system: scoring time and pooled scores).

Joins each system's test-2 outputs (``../shared/data/aci_bench_systems/test2``, read in place;
never copied into the project) with the references and dialogues into a JSONL in ``--work``,
scores it with the offline default judge (``doclens score --evaluator clinical-rules``, claims
extracted by the default ``clauses`` extractor), then runs

    doclens leaderboard WORK/*.scores.json --plot docs/images/leaderboard-forest.svg

Scores files already in ``--work`` are reused (``--rescore`` redoes them), so a second run only
redraws. The SVG has text as paths and no date: the same scores give the same file.

    python -m benchmarks.readme_picture [--work /tmp/doclens-readme] [--systems GPT-4,ChatGPT,...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "aci_bench_systems" / "test2"
SYSTEMS = "GPT-4,Text-Davinci-003,ChatGPT,BART,LED+FT_PubMed-div,BioBART"
OUTPUT = REPO / "docs" / "images" / "leaderboard-forest.svg"


def doclens(*argv: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    result = subprocess.run([sys.executable, "-m", "doclens", *argv], env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"doclens {argv[0]} failed ({result.returncode}):\n{result.stderr[-2000:]}")
    return result


def joined_input(system: str, work: Path) -> Path:
    """The system's outputs with each encounter's reference and dialogue, as DocLens instances."""
    references = {}
    with open(DATA / "references.jsonl", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            references[row["id"]] = row
    path = work / f"{system}.jsonl"
    with open(DATA / "systems" / f"{system}.jsonl", encoding="utf-8") as handle, \
            open(path, "w", encoding="utf-8") as out:
        for line in handle:
            output = json.loads(line)
            reference = references[output["id"]]
            out.write(json.dumps({"id": output["id"], "task": "note_generation", "prediction": output["prediction"],
                                  "reference": reference["reference"], "source": reference["source"]}) + "\n")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", default="/tmp/doclens-readme-picture", help="scores files go (and are reused) here")
    parser.add_argument("--systems", default=SYSTEMS, help="comma-separated system names of test 2")
    parser.add_argument("--output", default=str(OUTPUT))
    parser.add_argument("--rescore", action="store_true", help="score again even where a scores file exists")
    args = parser.parse_args()
    if not DATA.is_dir():
        raise SystemExit(f"{DATA} is absent: the ACI-BENCH system outputs live beside the project, in ../shared/data")
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    report = {"data": str(DATA), "judge": "clinical-rules", "systems": {}}
    scores_files = []
    for system in [s for s in args.systems.split(",") if s]:
        scores = work / f"{system}.scores.json"
        started = time.perf_counter()
        if args.rescore or not scores.is_file():
            doclens("score", str(joined_input(system, work)), "--evaluator", "clinical-rules", "--system", system,
                    "-o", str(scores), "-q", "--no-cache")
            wall = round(time.perf_counter() - started, 1)
        else:
            wall = None  # reused
        data = json.loads(scores.read_text(encoding="utf-8"))
        report["systems"][system] = {"score_wall_s": wall, "instances": len(data["instances"]),
                                     "scores": {k: (round(v, 4) if isinstance(v, float) else v)
                                                for k, v in data["scores"].items() if not k.endswith("_macro")}}
        scores_files.append(str(scores))
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    board = doclens("leaderboard", *scores_files, "--plot", args.output)
    report["leaderboard"] = board.stdout.splitlines()
    report["page_wall_s"] = {}  # what the plots cost a leaderboard page (interpreter start included)
    for label, extra in (("with_plots", []), ("no_plots", ["--no-plots"])):
        started = time.perf_counter()
        doclens("leaderboard", *scores_files, "-o", str(work / f"board-{label}.html"), *extra)
        report["page_wall_s"][label] = round(time.perf_counter() - started, 2)
    report["output"] = args.output
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
