"""The offline default judged on real system outputs (ACI-BENCH test splits 2 and 3). Prints JSON.

Two parts:

* ``labelled``: the real-output set labelled by reading (``doclens/datasets/real_outputs/
  labels_test2.jsonl`` and ``labels_test3.jsonl``, round 2's ``labels_test2_round2.jsonl`` and
  ``labels_test3_round2.jsonl``, lines ``{"item", "claim", "label"}``, joined on
  ``item`` with the draw of ``benchmarks/real_outputs_sample.py``, which gives each item its side,
  system and half). Each labelled claim is judged against the whole premise note: the system's
  note for a reference claim (``recall`` side), the clinician's reference note for a system claim
  (``precision`` side). Reported per half (``dev``, ``held_out``): balanced accuracy, accuracy per
  side, per system and per labelling round (``round:1``, ``round:2``), and per system the labelled
  supported rate beside the judge's. Items
  labelled ``null`` (the labeller could not decide) are left out and counted. ``--half dev`` reads
  and prints the development half only (for tuning: the held-out half is then never loaded).
* ``table``: every selected system's notes scored as a user would (``doclens score`` with the
  judge, the default extractor and ``task: note_generation``): claim recall, precision and F1 per
  system, split and note section, the section-fallback counts, and Kendall's τ-b between the
  systems' F1 (and recall, precision) and each column the ACI-BENCH paper published
  (``published_scores.csv``, its ``ALL`` block).

    python -m benchmarks.real_outputs                          # both parts, defaults below
    python -m benchmarks.real_outputs --half dev --no-table    # the dev loop
    python -m benchmarks.real_outputs --no-labelled --systems all --encounters 40   # the full table (long)

Reads ``../shared/data/aci_bench_systems`` in place (test split 1's system outputs are held out and
never read).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from benchmarks.real_outputs_sample import DATA, SPLITS, draw, read_jsonl  # noqa: E402
from doclens import DocLens  # noqa: E402
from doclens.core.verdict_rates import rates  # noqa: E402
from doclens.evaluators import load_evaluator  # noqa: E402
from doclens.extraction.extractors import ClauseExtractor  # noqa: E402
from doclens.parsing.statements import strip_citations  # noqa: E402
from doclens.stats.agreement import kendall_tau_b  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DEFAULT_LABELS = REPO / "doclens" / "datasets" / "real_outputs"
#: The labelled systems, and four more for the table by default (a few minutes on 2 cores).
DEFAULT_SYSTEMS = ("GPT-4", "ChatGPT", "Text-Davinci-003", "BioBART-div", "LED", "train_UMLS", "BART-div",
                   "Text-Davinci-002", "LED-div", "transcript")


def read_labels(folder: Path, half: str) -> list[dict]:
    """The labelled items of ``half`` (``dev``, ``held_out`` or ``both``), each with its draw."""
    drawn = {item["item"]: item for item in draw()}
    rows = []
    for path in (folder / f"labels_{split}{suffix}.jsonl" for suffix in ("", "_round2") for split in SPLITS):
        if not path.exists():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            label = json.loads(line)
            item = drawn.get(label["item"])
            if item is None:
                raise SystemExit(f"{path}: item {label['item']!r} is not in the draw of real_outputs_sample.py")
            if half != "both" and item["half"] != half:
                continue  # never kept, never printed
            rows.append({**item, "claim": label.get("claim") or item["sentence"], "label": label.get("label")})
    return rows


def premise_of(item: dict, refs: dict, outputs: dict) -> str:
    split, encounter = item["split"], item["encounter"]
    if item["side"] == "recall":
        return strip_citations(outputs[(split, item["system"])][encounter]["prediction"])
    return refs[split][encounter]["reference"]


def premises(items: list[dict]) -> list[str]:
    """Each item's premise note (:func:`premise_of`), every references and system-outputs file read once."""
    refs = {split: read_jsonl(DATA / split / "references.jsonl") for split in {i["split"] for i in items}}
    outputs = {(split, system): read_jsonl(DATA / split / "systems" / f"{system}.jsonl")
               for split, system in {(i["split"], i["system"]) for i in items}}
    return [premise_of(i, refs, outputs) for i in items]


def labelled_part(judge, folder: Path, half: str, show_errors: bool) -> dict:
    items = read_labels(folder, half)
    undecided = sum(i["label"] is None for i in items)
    items = [i for i in items if i["label"] is not None]
    texts = premises(items)
    started = time.perf_counter()
    verdicts = [judge.explain(premise, i["claim"]) for i, premise in zip(items, texts)]
    out: dict = {"items": len(items), "undecided_left_out": undecided,
                 "seconds": round(time.perf_counter() - started, 1)}
    for name in (["dev", "held_out"] if half == "both" else [half]):
        chosen = [(i, v) for i, v in zip(items, verdicts) if i["half"] == name]
        if not chosen:
            continue
        groups: dict = defaultdict(list)
        for item, (entailed, _) in chosen:
            pair = (bool(item["label"]), bool(entailed))
            groups["all"].append(pair)
            groups[f"round:{item['round']}"].append(pair)
            groups["side:" + item["side"]].append(pair)
            groups["system:" + item["system"]].append(pair)
            groups[f"system:{item['system']}/{item['side']}"].append(pair)
        out[name] = {key: rates(pairs) for key, pairs in sorted(groups.items())}
        if show_errors and name == "dev":
            out["dev_errors"] = [{"item": i["item"], "label": i["label"], "claim": i["claim"], "judge": v[1]}
                                 for i, v in chosen if bool(i["label"]) != v[0]]
    return out


def _published(split: str) -> tuple[list[str], dict[str, dict[str, float]]]:
    """The columns and the ``ALL`` block of the paper's scores: system file name → column → score."""
    rows, block, header = {}, None, []
    with open(DATA / split / "published_scores.csv", encoding="utf-8") as handle:
        for row in csv.reader(handle):
            if len(row) == 1 and (row[0] == "ALL" or row[0].startswith("division-")):
                block = row[0]
            elif row and row[0] == "Model":
                header = row[1:]
            elif block == "ALL" and len(row) > 2:
                name = re.sub(r"\$_\{\\mathrm\{(\w+)\}\}\$", r"_\1", row[0]).replace(" (Division)", "-div")
                rows[name.replace("spearker", "speaker").replace(" ", "_")] = dict(zip(header, map(float, row[1:])))
    return header, rows


def _f1(recall, precision):
    return None if not recall or not precision else 2 * recall * precision / (recall + precision)


def system_notes(systems: list[str], splits: list[str], encounters: int):
    """``(split, system, rows)``: each system's notes of the first ``encounters`` of each split (by
    id) with their references, as ``note_generation`` rows for the scorer."""
    for split in splits:
        refs = read_jsonl(DATA / split / "references.jsonl")
        ids = sorted(refs)[:encounters]
        for system in systems:
            outputs = read_jsonl(DATA / split / "systems" / f"{system}.jsonl")
            yield split, system, [{"id": i, "task": "note_generation", "prediction": outputs[i]["prediction"],
                                   "reference": refs[i]["reference"]} for i in ids]


def table_part(judge, systems: list[str], splits: list[str], encounters: int) -> dict:
    table: dict = {}
    for split, system, rows in system_notes(systems, splits, encounters):
        started = time.perf_counter()
        report = DocLens(judge, ClauseExtractor()).score(rows, progress=False)
        recall, precision = report["claim_recall"], report["claim_precision"]
        table.setdefault(system, {})[split] = {
            "claim_recall": round(100 * recall, 1), "claim_precision": round(100 * precision, 1),
            "claim_f1": round(100 * _f1(recall, precision), 1) if _f1(recall, precision) else None,
            "section_fallbacks": {m: report.counts[m].get("section_fallbacks")
                                  for m in ("claim_recall", "claim_precision")},
            "items": {m: report.counts[m]["items"] for m in ("claim_recall", "claim_precision")},
            "sections": {s: {m: None if v.get(m) is None else round(100 * v[m], 1)
                             for m in ("claim_recall", "claim_precision")}
                         for s, v in (report.sections or {}).items()},
            "seconds": round(time.perf_counter() - started, 1)}
    taus = {}
    for split in splits:
        header, published = _published(split)
        named = [s for s in systems if s in published and split in table.get(s, {})]
        for ours in ("claim_f1", "claim_recall", "claim_precision"):
            for column in header:
                tau = kendall_tau_b([table[s][split][ours] or 0 for s in named], [published[s][column] for s in named])
                taus.setdefault(split, {}).setdefault(ours, {})[column] = None if tau is None else round(tau, 3)
        taus[split]["systems"] = len(named)
    return {"encounters_per_split": encounters, "systems": table, "kendall_tau_vs_published": taus}


def table_arguments(parser: argparse.ArgumentParser, systems) -> None:
    """The options of the judge, the system table and the two parts (this script's and
    ``premise_scope.py``'s)."""
    parser.add_argument("--judge", default="clinical-rules")
    parser.add_argument("--systems", default=",".join(systems), help="comma-separated, or 'all'")
    parser.add_argument("--splits", default=",".join(SPLITS))
    parser.add_argument("--encounters", type=int, default=10, help="notes per split in the table (first N by id)")
    parser.add_argument("--no-table", action="store_true")
    parser.add_argument("--no-labelled", action="store_true")


def chosen_systems(args) -> list[str]:
    """``--systems``: the names given, or every system of test 2 for ``all``."""
    systems = args.systems.split(",")
    return sorted(p.stem for p in (DATA / "test2" / "systems").glob("*.jsonl")) if systems == ["all"] else systems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--labels", default=str(DEFAULT_LABELS), help="folder of labels_test2/3.jsonl")
    parser.add_argument("--half", choices=("dev", "held_out", "both"), default="both")
    table_arguments(parser, DEFAULT_SYSTEMS)
    parser.add_argument("--errors", action="store_true", help="list the dev half's wrong verdicts")
    args = parser.parse_args()
    judge = load_evaluator(args.judge)
    report: dict = {"judge": judge.signature(), "cpu_count": os.cpu_count()}
    if not args.no_labelled:
        report["labelled"] = labelled_part(judge, Path(args.labels), args.half, args.errors)
    if not args.no_table:
        report["table"] = table_part(judge, chosen_systems(args), args.splits.split(","), args.encounters)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
