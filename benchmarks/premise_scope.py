"""What the premise scope changes (docs/design.md §4, Premise scope). Prints JSON.

Two parts, each under both scopes (``premise_scope="note"``, the default: a claim its own section
does not entail is asked again against the whole premise note; ``"section"``: the paper's
per-section premise):

* ``labelled``: the real-output items of ``benchmarks/real_outputs.py`` (labelled by reading
  against the **whole** note) judged three ways: the judge directly against the whole note (what
  ``real_outputs.py`` reports), and through the scorer as a user runs it (``DocLens`` with the
  item as a given claim of the section its sentence sits in) under each scope. Balanced accuracy
  per half, and how many items each scope placed in another section. Items whose sentence cannot
  be found under a section header of its note are left out and counted.
* ``table``: the system table (claim recall, precision, F1 per system and split, ``clauses``
  claims, ``task: note_generation``) under both scopes, with the "stated in another section"
  counts per metric and the seconds each scope took (each scope with its own judge, so that
  neither run is warmed by the other's).

    python benchmarks/premise_scope.py                                   # the defaults below
    python benchmarks/premise_scope.py --systems all --encounters 40     # the full table (long)

Reads ``../shared/data/aci_bench_systems`` in place (test split 1's outputs are never read).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from benchmarks.real_outputs import (
    DEFAULT_LABELS,
    _f1,
    chosen_systems,
    premises,
    read_labels,
    system_notes,
    table_arguments,
)
from benchmarks.real_outputs_sample import DATA, read_jsonl
from doclens import DocLens
from doclens.core.verdict_rates import rates
from doclens.evaluators import load_evaluator
from doclens.extraction.extractors import ClauseExtractor
from doclens.parsing.sections import note_section_spans
from doclens.parsing.statements import strip_citations

SCOPES = ("note", "section")
#: six systems of both splits: the labelled ones (each kind: GPT-4 family, fine-tuned, retrieval)
DEFAULT_SYSTEMS = ("GPT-4", "ChatGPT", "Text-Davinci-003", "BioBART-div", "LED", "train_UMLS")
CLAIM_METRICS = ("claim_recall", "claim_precision")


def section_of(sentence: str, note: str) -> str | None:
    """The section of ``note`` whose text holds ``sentence`` (``None``: not found under a header)."""
    for section, start, end in note_section_spans(note):
        if sentence in note[start:end]:
            return section
    return None


def item_rows(items: list[dict]) -> tuple[list[dict], list[dict], int]:
    """Each item as a scorer row (its claim given under the section of the note it was drawn
    from), the items kept, and how many were left out (no section found)."""
    texts = premises(items)  # the note each claim is judged against
    rows, kept, lost = [], [], 0
    for item, premise in zip(items, texts):
        # the note the sentence was drawn from: the reference for a recall item, the system's for precision
        source_note = premise_source(item)
        section = section_of(item["sentence"], source_note)
        if section is None:
            lost += 1
            continue
        claims = {section: [item["claim"]]}
        if item["side"] == "recall":
            row = {"reference": source_note, "prediction": premise, "reference_claims": claims,
                   "prediction_claims": {}}
        else:
            row = {"reference": premise, "prediction": source_note, "reference_claims": {},
                   "prediction_claims": claims}
        rows.append({"id": item["item"], "task": "note_generation", **row})
        kept.append(item)
    return rows, kept, lost


_NOTES: dict = {}


def premise_source(item: dict) -> str:
    """The note an item's sentence was drawn from (the other side's premise)."""
    split = item["split"]
    if item["side"] == "recall":
        key = (split, "references")
        if key not in _NOTES:
            _NOTES[key] = read_jsonl(DATA / split / "references.jsonl")
        return _NOTES[key][item["encounter"]]["reference"]
    key = (split, item["system"])
    if key not in _NOTES:
        _NOTES[key] = read_jsonl(DATA / split / "systems" / f"{item['system']}.jsonl")
    return strip_citations(_NOTES[key][item["encounter"]]["prediction"])


def labelled_part(judge, labels: Path) -> dict:
    items = [i for i in read_labels(labels, "both") if i["label"] is not None]
    rows, kept, lost = item_rows(items)
    whole = [judge.explain(premise, i["claim"])[0] for i, premise in zip(kept, premises(kept))]
    judged = {"whole_note_direct": whole}
    placed = {}
    for scope in SCOPES:
        report = DocLens(judge, premise_scope=scope).score(rows, progress=False)
        verdicts = [(r.reference_claims or r.prediction_claims)[0] for r in report.instances]
        judged[f"scorer_{scope}"] = [bool(v.entailed) for v in verdicts]
        placed[scope] = sum(v.placement == "other_section" for v in verdicts)
    out: dict = {"items": len(kept), "left_out_no_section": lost, "stated_in_other_section": placed}
    for half in ("dev", "held_out"):
        chosen = [k for k, item in enumerate(kept) if item["half"] == half]
        out[half] = {name: rates([(bool(kept[k]["label"]), bool(verdicts[k])) for k in chosen])
                     for name, verdicts in judged.items()}
    return out


def table_part(judge_name: str, systems: list[str], splits: list[str], encounters: int) -> dict:
    """The table under each scope, each scope with its own judge (the judge keeps what it read of
    a text: a shared one would make the second scope's run look cheaper than it is)."""
    table: dict = {}
    seconds = dict.fromkeys(SCOPES, 0.0)
    judges = {scope: load_evaluator(judge_name) for scope in SCOPES}
    for split, system, rows in system_notes(systems, splits, encounters):
        for scope in SCOPES:
            started = time.perf_counter()
            report = DocLens(judges[scope], ClauseExtractor(), premise_scope=scope).score(rows, progress=False)
            seconds[scope] += time.perf_counter() - started
            recall, precision = report["claim_recall"], report["claim_precision"]
            f1 = _f1(recall, precision)
            table.setdefault(system, {}).setdefault(split, {})[scope] = {
                "claim_recall": round(100 * recall, 1), "claim_precision": round(100 * precision, 1),
                "claim_f1": round(100 * f1, 1) if f1 else None,
                "items": {m: report.counts[m]["items"] for m in CLAIM_METRICS},
                "stated_in_other_section": {m: report.counts[m]["stated_in_other_section"] for m in CLAIM_METRICS},
                "section_fallbacks": {m: report.counts[m]["section_fallbacks"] for m in CLAIM_METRICS}}
    return {"encounters_per_split": encounters, "systems": table,
            "seconds": {scope: round(value, 1) for scope, value in seconds.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--labels", default=str(DEFAULT_LABELS))
    table_arguments(parser, DEFAULT_SYSTEMS)
    args = parser.parse_args()
    judge = load_evaluator(args.judge)
    out: dict = {"judge": judge.signature(), "cpu_count": os.cpu_count(), "load_before": os.getloadavg()}
    if not args.no_labelled:
        out["labelled"] = labelled_part(judge, Path(args.labels))
    if not args.no_table:
        out["table"] = table_part(args.judge, chosen_systems(args), args.splits.split(","), args.encounters)
    out["load_after"] = os.getloadavg()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
