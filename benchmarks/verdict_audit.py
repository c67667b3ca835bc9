"""Audit the default judge's verdicts for issue 46's invariant: a verdict and its explanation never disagree.

A **supported** verdict must carry no contradiction: no finding typed as one (``findings``:
``{"kind", "contradiction": true}``: a negation, an opposite direction, side, site, drug, dose,
frequency or person the note states otherwise on the claim's concept), and no explanation phrased
as one ("note says X, claim says Y", "(negated)": ``CONTRADICTION_PHRASING``). Two modes:

* ``--systems``: every claim verdict ``doclens score`` gives, default settings (``clinical-rules``,
  claims extracted by ``clauses``), on the real outputs of ACI-BENCH's 21 systems for test splits 2
  and 3 (``../shared/data/aci_bench_systems``), both directions (recall: the reference's claims
  against the system's note; precision: the system's claims against the reference);
* ``--shipped`` (CI): every item of the shipped labelled sets — the real-output set's halves but
  ``sealed`` (read by name only), and the near-miss probe — judged by the judge's contract.

Printed (JSON): verdicts, supported verdicts, supported verdicts carrying a contradiction by kind
(typed) and by phrasing, and the list of those found (``--list``). Exit status 1 when any is found.

    python -m benchmarks.verdict_audit --shipped
    python -m benchmarks.verdict_audit --systems [--splits test2,test3] [--only GPT-4,BART] --list
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "aci_bench_systems"
#: the real-output halves audited in CI: every half but ``sealed``
HALVES = ("dev", "held-out", "fresh", "fresh-2")


def _record(found: dict, where: str, claim: str, entailed, explanation: str, findings) -> None:
    from doclens.evaluators.rules.findings import CONTRADICTION_PHRASING

    found["verdicts"] += 1
    if not entailed:
        return
    found["supported"] += 1
    typed = [f["kind"] for f in findings or [] if f.get("contradiction")]
    phrased = bool(CONTRADICTION_PHRASING.search(explanation or ""))
    for kind in typed:
        found["by_kind"][kind] += 1
    if phrased:
        found["phrased"] += 1
    if typed or phrased:
        found["list"].append({"where": where, "claim": claim, "explanation": explanation, "kinds": typed})


def audit_shipped(found: dict, aci_bench_dir: Path | None) -> None:
    """The shipped labelled items (every half but ``sealed``, and the near-miss probe)."""
    from doclens.datasets.labelled import shipped_set
    from doclens.evaluators.base import ClaimRequest
    from doclens.evaluators.rules.clinical_rules import ClinicalRulesJudge

    judge = ClinicalRulesJudge()
    sets = [("real-outputs", half) for half in HALVES] + [("near-miss-probe", "all")]
    for name, half in sets:
        items = shipped_set(name, half, aci_bench_dir).items
        answers = judge.judge_claims_many([ClaimRequest(i.premise, [i.claim]) for i in items])
        for item, (answer,) in zip(items, answers):
            _record(found, f"{name}/{half}/{item.id}", item.claim, answer.entailed, answer.explanation, answer.findings)


def _instances(split: str, system: str) -> list[dict]:
    refs = {r["id"]: r for r in map(json.loads, open(DATA / split / "references.jsonl", encoding="utf-8"))}
    rows = [json.loads(line) for line in open(DATA / split / "systems" / f"{system}.jsonl", encoding="utf-8")]
    return [{"id": r["id"], "task": "note_generation", "prediction": r["prediction"] or "",
             "reference": refs[r["id"]]["reference"]} for r in rows]


def audit_systems(found: dict, splits: list[str], only: list[str] | None) -> dict:
    """Every claim verdict of ``doclens score``'s default settings on the systems' notes; per system seconds."""
    from doclens import DocLens
    from doclens.evaluators.rules.clinical_rules import ClinicalRulesJudge
    from doclens.extraction.extractors import ClauseExtractor

    scorer = DocLens(evaluator=ClinicalRulesJudge(), extractor=ClauseExtractor())
    seconds = {}
    for split in splits:
        systems = sorted(p.stem for p in (DATA / split / "systems").glob("*.jsonl"))
        for system in [s for s in systems if not only or s in only]:
            start = time.perf_counter()
            report = scorer.score(_instances(split, system), progress=False)
            for result in report.instances:
                for side, claims in (("recall", result.reference_claims), ("precision", result.prediction_claims)):
                    for verdict in claims:
                        _record(found, f"{split}/{system}/{result.id}/{side}", verdict.text, verdict.entailed,
                                verdict.explanation, verdict.findings)
            seconds[f"{split}/{system}"] = round(time.perf_counter() - start, 1)
            print(f"{split}/{system}: {found['verdicts']} verdicts so far", file=sys.stderr)
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--shipped", action="store_true", help="the shipped labelled sets (every half but sealed)")
    mode.add_argument("--systems", action="store_true", help="ACI-BENCH's 21 systems, default settings")
    parser.add_argument("--splits", default="test2,test3")
    parser.add_argument("--only", default=None, help="comma-separated system names (default: all 21)")
    parser.add_argument("--aci-bench-dir", type=Path, default=None)
    parser.add_argument("--list", action="store_true", help="print every supported verdict found carrying a contradiction")
    args = parser.parse_args(argv)
    found: dict = {"verdicts": 0, "supported": 0, "by_kind": Counter(), "phrased": 0, "list": []}
    start = time.perf_counter()
    seconds = audit_shipped(found, args.aci_bench_dir) if args.shipped else audit_systems(
        found, args.splits.split(","), args.only.split(",") if args.only else None)
    out = {"mode": "shipped" if args.shipped else "systems", "verdicts": found["verdicts"], "supported": found["supported"],
           "supported_with_contradiction": len(found["list"]),
           "by_kind": dict(found["by_kind"]), "by_phrasing": found["phrased"],
           "seconds": round(time.perf_counter() - start, 1), "load": os.getloadavg()[0]}
    if seconds:
        out["seconds_per_system"] = seconds
    if args.list:
        out["list"] = found["list"]
    print(json.dumps(out, indent=2))
    return 1 if found["list"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
