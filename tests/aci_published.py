"""ACI-BENCH's published tables for test splits 2 and 3 beside DocLens's baselines on the same
system outputs (``../shared/data/aci_bench_systems``, real outputs of 21 systems). Used by
``tests/baselines/test_baselines_published.py`` and ``benchmarks/baselines_published.py``.

The paper's numbers come from ACI-BENCH's ``evaluation/evaluate_fullnote.py`` (wyim/aci-bench):
``evaluate.load("rouge")`` F1 (no stemming) on each full note as given and on each division
built by its SectionTagger, each averaged over all notes. Its "ROUGE-L" column is ``rougeLsum``
(sentences = the note's own lines). DocLens reproduces that with its defaults plus
``divisions="aci-bench"`` and ``remove_citations=False`` (the LED outputs contain ``[n]`` as text).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "aci_bench_systems"
SPLITS = ("test2", "test3")

#: published column → DocLens key (per-instance F1 means, ×100 in the table)
COLUMNS = {"ROUGE-1": "rouge1_f1", "ROUGE-2": "rouge2_f1", "ROUGE-L": "rougeLsum_f1"}
ROUGE_OPTIONS = {"rouge_types": ["rouge1", "rouge2", "rougeLsum"]}  # the defaults otherwise: no stemming, lines

_RENAMED = {"longest spearker turn": "longest_speaker_turn", "longest doctor turn": "longest_doctor_turn",
            "12 speaker turns": "12_speaker_turns", "12 doctor turns": "12_doctor_turns",
            "transcript": "transcript", r"train$_{\mathrm{UMLS}}$": "train_UMLS",
            r"train$_{\mathrm{sent}}$": "train_sent"}


def system_file(model: str) -> str:
    """The ``systems/<name>.jsonl`` stem of a model as the published table names it."""
    if model in _RENAMED:
        return _RENAMED[model]
    name = model.replace(" (Division)", "").replace(r"$_{\mathrm{SAMSum}}$", "_SAMSum")
    name = name.replace(r"$_{\mathrm{PubMed}}$", "_PubMed")
    return name + ("-div" if model.endswith(" (Division)") else "")


def published_table(split: str) -> dict[str, dict[str, dict[str, float]]]:
    """``{block: {system file: {column: value}}}``; blocks ``ALL`` and ``division-<name>``."""
    blocks: dict[str, dict] = {}
    block = None
    with open(DATA / split / "published_scores.csv", encoding="utf-8") as handle:
        for row in csv.reader(handle):
            if len(row) == 1 and (row[0] == "ALL" or row[0].startswith("division-")):
                block = blocks.setdefault(row[0], {})
            elif len(row) > 1 and row[0] != "Model" and block is not None:
                header = ["Model", "ROUGE-1", "ROUGE-2", "ROUGE-L", "BERTScore", "BLEURT", "Fact", "average"]
                block[system_file(row[0])] = {name: float(value) for name, value in zip(header[1:], row[1:])}
    return blocks


def read_split(split: str) -> tuple[list[str], list[str], dict[str, list[str]]]:
    """``(ids, references, {system file: predictions in the ids' order})``."""
    rows = [json.loads(line) for line in open(DATA / split / "references.jsonl", encoding="utf-8")]
    ids = [row["id"] for row in rows]
    systems = {}
    for path in sorted((DATA / split / "systems").glob("*.jsonl")):
        by_id = {row["id"]: row["prediction"] for row in map(json.loads, open(path, encoding="utf-8"))}
        systems[path.stem] = [by_id[i] for i in ids]
    return ids, [row["reference"] for row in rows], systems


def score_system(predictions: list[str], references: list[str], baselines=("rouge",), options=None) -> dict:
    """``{block: {metric: value ×100}}`` of one system, as the published table computes them."""
    from doclens.baselines import compute_baselines

    options = {"rouge": ROUGE_OPTIONS, **(options or {})}
    results = compute_baselines(predictions, references, list(baselines), task="note_generation",
                                divisions="aci-bench", remove_citations=False, options=options)
    blocks: dict[str, dict] = {"ALL": {}}
    for result in results.values():
        blocks["ALL"].update({key: 100 * value for key, value in result["scores"].items()})
        for section, scores in result["sections"].items():
            blocks.setdefault(f"division-{section}", {}).update({key: 100 * value for key, value in scores.items()})
    return blocks


def differences(split: str, ours: dict[str, dict], columns=COLUMNS) -> list[dict]:
    """Every published value of ``columns`` beside ours: ``{split, block, system, column, ours,
    published, difference}`` (``ours``: system → :func:`score_system`'s blocks)."""
    found = []
    for block, systems in published_table(split).items():
        for system, published in systems.items():
            for column, key in columns.items():
                value = ours[system][block][key]
                found.append({"split": split, "block": block, "system": system, "column": column,
                              "ours": round(value, 4), "published": published[column],
                              "difference": round(value - published[column], 4)})
    return found
