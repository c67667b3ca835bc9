"""Record every score, count and verdict DocLens gives on fixed inputs, and compare two records.

The proof that a refactor changed no behaviour (issue 28): run it before the change
(``--out before.json``), after it (``--out after.json``), then ``--compare before.json
after.json`` prints every field that differs (JSON paths), or ``identical``. Runs, each through the
CLI in a fresh interpreter (``--no-cache``, so every verdict is judged again):

* ``examples/*.jsonl`` (claims given), with ``overlap`` and ``clinical-rules``, the source-support
  family on, in memory (``json``) and streamed (``jsonl``);
* ACI-BENCH test split 1 (``../shared/data``, read in place; never copied into the project): the
  clinician's note scored against itself, claims extracted by ``clauses``;
* a few real systems of ACI-BENCH test split 2 (``aci_bench_systems/test2``), the same way.

What is recorded per run: the summary (scores, counts, sections, unparsed, failed, the
source-support block, warnings, signature) and every instance's verdicts. The record holds note
text, so write it outside the repository (the default is a temporary folder)::

    python -m benchmarks.behaviour_snapshot --out /tmp/before.json [--runs NAME,…]
    python -m benchmarks.behaviour_snapshot --compare /tmp/before.json /tmp/after.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
TEST2 = DATA / "aci_bench_systems" / "test2"
SYSTEMS = ("GPT-4", "BART", "12_doctor_turns")
SUMMARY_FIELDS = ("scores", "counts", "sections", "unparsed", "failed", "source_support", "warnings", "signature")


def _runs() -> dict:
    """name → (input maker, CLI arguments)."""
    runs = {}
    for example in ("notes", "questions", "records"):
        for judge in ("overlap", "clinical-rules"):
            for fmt in ("json", "jsonl"):
                runs[f"{example}-{judge}-{fmt}"] = (
                    lambda folder, e=example: REPO / "examples" / f"{e}.jsonl",
                    ["--evaluator", judge, "--metrics", "doclens,source_support", "--output-format", fmt])
    clauses = ["--extractor", "clauses"]
    runs["aci1-refcopy-overlap-support"] = (_test1, ["--evaluator", "overlap", *clauses,
                                                      "--metrics", "doclens,source_support"])
    runs["aci1-refcopy-rules"] = (_test1, ["--evaluator", "clinical-rules", *clauses])
    runs["aci1-refcopy-rules-jsonl"] = (_test1, ["--evaluator", "clinical-rules", *clauses, "--output-format", "jsonl"])
    for system in SYSTEMS:
        for judge in ("overlap", "clinical-rules"):
            runs[f"aci2-{system}-{judge}"] = (lambda folder, s=system: _test2(folder, s),
                                              ["--evaluator", judge, *clauses])
    runs["aci2-GPT-4-overlap-support-jsonl"] = (lambda folder: _test2(folder, "GPT-4"),
                                                ["--evaluator", "overlap", *clauses, "--metrics",
                                                 "doclens,source_support", "--output-format", "jsonl"])
    return runs


def _write(folder: Path, name: str, rows: list[dict]) -> Path:
    path = folder / f"{name}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _test1(folder: Path) -> Path:
    rows = [json.loads(line) for line in open(DATA / "aci_bench_test1.jsonl", encoding="utf-8")]
    return _write(folder, "aci1", [{"id": r["id"], "task": "note_generation", "prediction": r["reference"],
                                    "reference": r["reference"], "source": r["source"]} for r in rows])


def _test2(folder: Path, system: str) -> Path:
    refs = {r["id"]: r for r in map(json.loads, open(TEST2 / "references.jsonl", encoding="utf-8"))}
    outputs = [json.loads(line) for line in open(TEST2 / "systems" / f"{system}.jsonl", encoding="utf-8")]
    return _write(folder, f"aci2-{system}", [
        {"id": o["id"], "task": "note_generation", "prediction": o["prediction"],
         "reference": refs[o["id"]]["reference"], "source": refs[o["id"]]["source"]} for o in outputs])


def _score(path: Path, args: list[str], out: Path, extra: list[str]) -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-m", "doclens", "score", str(path), *args, *extra, "-o", str(out), "-q",
                           "--no-cache"], env=env, capture_output=True, text=True)
    if done.returncode not in (0,):
        return {"exit": done.returncode, "stderr": done.stderr[-2000:]}
    summary = json.loads(out.read_text(encoding="utf-8"))
    record = {"exit": done.returncode, **{k: summary.get(k) for k in SUMMARY_FIELDS}}
    if "instances" in summary:
        record["instances"] = summary["instances"]
    else:
        results = out.parent / summary["instances_file"]
        record["instances"] = [json.loads(line) for line in open(results, encoding="utf-8")]
        record["instance_counts"] = summary.get("instance_counts")
    return record


def _differences(a, b, path: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        found = []
        for key in dict.fromkeys([*a, *b]):
            if key not in a or key not in b:
                found.append(f"{path}/{key}: {'absent' if key not in a else 'present'} -> "
                             f"{'absent' if key not in b else 'present'}")
            else:
                found += _differences(a[key], b[key], f"{path}/{key}")
        return found
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _differences(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: {json.dumps(a)[:160]} -> {json.dumps(b)[:160]}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="where to write the record (JSON)")
    parser.add_argument("--runs", help="comma-separated run names (default: all)")
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"))
    parser.add_argument("--extra-args", default="", help="more `doclens score` arguments for every run, e.g. "
                        "'--uncited-outputs strict' (space-separated)")
    args = parser.parse_args()
    if args.compare:
        before, after = (json.load(open(p, encoding="utf-8")) for p in args.compare)
        differences = {run: _differences(before.get(run), after.get(run)) for run in dict.fromkeys([*before, *after])}
        print(json.dumps({run: found or "identical" for run, found in differences.items()}, indent=2))
        return
    runs = _runs()
    chosen = args.runs.split(",") if args.runs else list(runs)
    if not DATA.is_dir():
        chosen = [r for r in chosen if not r.startswith("aci")]
        print(f"{DATA} absent: the ACI-BENCH runs are skipped", file=sys.stderr)
    record = {}
    out = args.out or os.path.join(tempfile.gettempdir(), "doclens_behaviour_snapshot.json")
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        for name in chosen:
            make, cli_args = runs[name]
            record[name] = _score(make(folder), cli_args, folder / f"{name}.scores.json", args.extra_args.split())
            print(f"{name}: exit {record[name]['exit']}", file=sys.stderr)
            with open(out, "w", encoding="utf-8") as handle:  # after every run: a cut-off record still compares
                json.dump(record, handle)
    print(json.dumps({"out": out, "runs": {n: r["exit"] for n, r in record.items()}}, indent=2))


if __name__ == "__main__":
    main()
