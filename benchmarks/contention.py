"""Time DocLens's default judge where users run it: idle and beside busy processes; print JSON.

Every timing the README and ``cards/clinical-rules.md`` ("Speed") give comes from this benchmark.
Each case runs in a fresh process (so loading counts), first on the machine as it is ("idle"),
then beside 1 and 2 busy-loop processes this benchmark starts itself and stops by their PIDs
afterwards (``--levels 0,1,2``). Cases (``--cases``):

* ``cold``: ``doclens score`` on one system's 40 notes of ACI-BENCH test split 2 (GPT-4 by default,
  ``../shared/data/aci_bench_systems/test2``, read in place), default settings, with an empty
  ``--cache-dir`` **and** an empty ``$DOCLENS_CACHE`` (a machine's first run: the drug and stem
  lexicons are made too, and MiniLM's ONNX graph, made in memory at every run that encodes);
* ``warm``: the same command again on the folders ``cold`` filled (with ``--cases warm`` alone, the
  cold run is still made first, untimed, so that warm is warm);
* ``reward8`` / ``reward64``: :class:`doclens.rewards.DocLensReward` (the offline default judge,
  claim F1) as TRL calls it, each completion another system's note, so new text: a warm step of
  8 completions (8 encounters whose references the reward met once before), and of 64 (16
  encounters × 4 systems, after one step that met those 16 references); the reward is loaded and
  warmed (a first step) before the clock starts, as in a training loop;
* ``main``: the README's main job, ``doclens score examples/notes.jsonl --evaluator clinical-rules``
  with ``--no-cache`` (every verdict judged again) on a machine whose ``$DOCLENS_CACHE`` holds the
  lexicons (what every run after a machine's first finds).

Each result gives ``wall_s`` and ``cpu_s`` (the case's process: all its threads, user + system;
for the reward steps the step alone), ``/proc/loadavg`` before and after, and the thread settings
the judge reported (``threads``: count and where it came from, ``encoder_runtime``). For each busy
level, ``ratio_to_idle`` gives wall and CPU seconds divided by the same case's idle figures of this
run. ``--baseline-repo DIR`` runs every case a second time with ``PYTHONPATH=DIR`` (another
checkout, e.g. the code before a change) right after this checkout's, at the same level, and
adds ``baseline`` results and ``after_over_before`` ratios: a before/after comparison under the
same load. ``--quick`` (development): 10 notes, one warm step of 8, levels 0 and 2, no 64-step.

Each checkout's ``doclens`` package is run as an installed one is: copied to the benchmark's
temporary folder with its bytecode compiled first (``compileall``; pip compiles a wheel's modules at
install), so no case pays for compiling the package's source, which a checkout run with
``$PYTHONDONTWRITEBYTECODE`` (or from a read-only folder) pays in every process: about 0.5 s of CPU
a process on the 2-core machine (issue 49, round 17). ``--source`` runs the checkouts in place, as
before round 17 (``bytecode`` in the JSON says which).

    python -m benchmarks.contention [--quick] [--cases cold,warm,reward8,reward64,main] [--levels 0,1,2]
        [--threads N] [--runtime onnx|torch] [--baseline-repo DIR] [--source] [--markdown]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "aci_bench_systems" / "test2"
CASES = ("cold", "warm", "reward8", "reward64", "main")
#: Issue 49's targets: idle wall seconds, and beside 2 busy processes the ratios to idle.
TARGETS = {"idle_wall_s": {"cold": 10, "warm": 3, "reward64": 3, "main": 3},
           "busy2_cpu_ratio_max": 1.2, "busy2_wall_ratio_max": 2.5}


def loadavg() -> str:
    with open("/proc/loadavg", encoding="ascii") as handle:
        return handle.read().strip()


class BusyLoops:
    """``count`` processes that spin on a core each, started on entry and stopped by PID on exit."""

    def __init__(self, count: int):
        self.count = count
        self.processes: list[subprocess.Popen] = []

    def __enter__(self):
        for _ in range(self.count):
            self.processes.append(subprocess.Popen([sys.executable, "-c", "while True: pass"]))
        time.sleep(0.5 if self.count else 0)  # running before the case starts
        return self

    def __exit__(self, *exc):
        for process in self.processes:
            os.kill(process.pid, 15)
        for process in self.processes:
            process.wait()
        return False

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.processes]


def _judge_facts(evaluator) -> dict:
    config = evaluator.config() if hasattr(evaluator, "config") else {}
    return {"threads": config.get("threads"), "encoder_runtime": config.get("encoder_runtime")}


def child_score(out: str, argv: list[str]) -> int:
    """``doclens score argv`` in this process, as the ``doclens`` command runs it (``main()`` reading
    ``sys.argv``: what it does before the process exits counts too); writes the judge's thread
    settings to ``out``."""
    from doclens.cli import main
    from doclens.cli import score as score_cli

    facts: dict = {}
    build = score_cli.build_scorer

    def recording(*args, **kwargs):
        scorer = build(*args, **kwargs)
        facts.update(_judge_facts(scorer.evaluator))
        return scorer

    score_cli.build_scorer = recording
    sys.argv = ["doclens", *argv]
    code = main()
    Path(out).write_text(json.dumps({"code": code, **facts}))
    return code


def child_reward(out: str, data: str, steps: str, threads: int | None, runtime: str | None) -> int:
    """The reward's warm steps (module docstring), timed inside this process."""
    from benchmarks.reward_latency import SYSTEMS, load
    from doclens.rewards import DocLensReward

    references, outputs = load(Path(data))
    encounters = sorted(references)
    options = {k: v for k, v in (("threads", threads), ("runtime", runtime)) if v is not None}
    reward = DocLensReward("clinical-rules", task="note_generation", evaluator_options=options or None)

    def step(pairs):
        completions = [outputs[system][encounter] for encounter, system in pairs]
        columns = {"reference": [references[e]["reference"] for e, _ in pairs],
                   "source": [references[e]["source"] for e, _ in pairs]}
        started, cpu = time.perf_counter(), time.process_time()
        values = reward(prompts=["…"] * len(pairs), completions=completions, **columns)
        assert len(values) == len(pairs) and all(isinstance(v, float) for v in values)
        return {"wall_s": round(time.perf_counter() - started, 3), "cpu_s": round(time.process_time() - cpu, 3)}

    first8, next16 = encounters[:8], encounters[8:24]
    result: dict = {"code": 0, **_judge_facts(reward.scorer.evaluator)}
    step([(e, SYSTEMS[0]) for e in first8])  # loads the judge's models, meets the 8 references
    if "8" in steps.split(","):
        result["8"] = step([(e, SYSTEMS[1]) for e in first8])
    if "64" in steps.split(","):
        step([(e, SYSTEMS[4]) for e in next16])  # meets the 16 references
        result["64"] = step([(e, s) for e in next16 for s in SYSTEMS[5:9]])
    Path(out).write_text(json.dumps(result))
    return 0


def _run(command: list[str], env: dict, folder: Path, name: str) -> dict:
    """One child process: wall and CPU seconds, load before and after, and what it reported."""
    out = folder / f"{name}.facts.json"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load_before = loadavg()
    started = time.perf_counter()
    # by path, from the temporary folder: the checkout named by PYTHONPATH is the one imported
    done = subprocess.run([sys.executable, __file__, "--child", str(out), "--", *command],
                          env=env, cwd=str(folder), capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0 or not out.is_file():
        raise SystemExit(f"{name}: exited {done.returncode}: {done.stderr[-3000:]}")
    facts = json.loads(out.read_text())
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "loadavg_before": load_before,
            "loadavg_after": loadavg(), **{k: v for k, v in facts.items() if k != "code"}}


def installed(repo: Path, folder: Path, tag: str) -> Path:
    """A folder holding a copy of ``repo``'s ``doclens`` package with its bytecode compiled, as an
    installed package has it (module docstring); the copy's files are the checkout's."""
    target = folder / f"installed-{tag}"
    if not target.exists():
        shutil.copytree(repo / "doclens", target / "doclens", ignore=shutil.ignore_patterns("__pycache__"))
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(target / "doclens")], check=True,
                       stdout=subprocess.DEVNULL)
    return target


def run_level(args, level: int, repo: Path, folder: Path, tag: str) -> dict:
    """Every chosen case at one busy level, for the checkout at ``repo``."""
    data = Path(args.data)
    package = repo if args.source else installed(repo, folder, tag)
    # the checkout's doclens first, then this one's benchmarks (reward_latency's loader)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "PYTHONPATH": os.pathsep.join(dict.fromkeys([str(package), str(REPO)]))}
    judge = [*(["--threads", str(args.threads)] if args.threads and tag == "this" else []),
             *(["--evaluator-arg", f"runtime={args.runtime}"] if args.runtime and tag == "this" else [])]
    system, references = data / "systems" / f"{args.system}.jsonl", data / "references.jsonl"
    if args.notes:  # the first N notes, and their references (every reference needs its output)
        rows = system.read_text(encoding="utf-8").splitlines()[: args.notes]
        ids = {json.loads(row)["id"] for row in rows}
        system, references = folder / f"{args.system}-{args.notes}.jsonl", folder / f"references-{args.notes}.jsonl"
        system.write_text("\n".join(rows) + "\n", encoding="utf-8")
        references.write_text("".join(line + "\n" for line in (data / "references.jsonl").read_text(encoding="utf-8")
                                      .splitlines() if json.loads(line)["id"] in ids), encoding="utf-8")
    results: dict = {}
    machine = folder / f"machine-{tag}-{level}"  # an empty $DOCLENS_CACHE for the cold run
    cache = folder / f"cache-{tag}-{level}"
    score = ["score", str(system), "--references", str(references), "--cache-dir", str(cache),
             "-q", *judge]
    for name in ("cold", "warm"):
        if name in args.cases or (name == "cold" and "warm" in args.cases):
            # warm alone still needs the folders a cold run fills: that run is made, untimed
            measured = _run(["score", *score[1:], "-o", str(folder / f"{name}-{tag}-{level}.json")],
                            {**env, "DOCLENS_CACHE": str(machine)}, folder, f"{name}-{tag}-{level}")
            if name in args.cases:
                results[name] = measured
    if "main" in args.cases:
        warmed = folder / f"machine-main-{tag}"  # lexicons and the ONNX export made once, before timing
        main = ["score", str(REPO / "examples" / "notes.jsonl"), "--evaluator", "clinical-rules", "--no-cache", "-q",
                *judge]
        if not warmed.exists():  # a plain run (no --no-cache, which writes no lexicon nor export) leaves them
            _run([arg for arg in main if arg != "--no-cache"] + ["-o", str(folder / "main-warmup.json")],
                 {**env, "DOCLENS_CACHE": str(warmed)}, folder, f"main-warmup-{tag}")
        results["main"] = _run([*main, "-o", str(folder / f"main-{tag}-{level}.json")],
                               {**env, "DOCLENS_CACHE": str(warmed)}, folder, f"main-{tag}-{level}")
    steps = ",".join(n for n, case in (("8", "reward8"), ("64", "reward64")) if case in args.cases)
    if steps:
        command = ["reward", args.data, steps, str(args.threads if tag == "this" and args.threads else ""),
                   (args.runtime or "") if tag == "this" else ""]
        measured = _run(command, {**env, "DOCLENS_CACHE": str(folder / f"machine-reward-{tag}")}, folder,
                        f"reward-{tag}-{level}")
        for size in steps.split(","):
            results[f"reward{size}"] = {**measured.pop(size), "loadavg_before": measured["loadavg_before"],
                                        "loadavg_after": measured["loadavg_after"], "threads": measured.get("threads"),
                                        "encoder_runtime": measured.get("encoder_runtime"),
                                        "process_wall_s": measured["wall_s"], "process_cpu_s": measured["cpu_s"]}
    return results


def _ratio(a: float, b: float) -> float | None:
    return round(a / b, 2) if b else None


def ratios(levels: dict) -> dict:
    """Each busy level's wall and CPU seconds over the idle level's, case by case."""
    idle = levels.get("0", {})
    return {level: {case: {"wall": _ratio(r["wall_s"], idle[case]["wall_s"]), "cpu": _ratio(r["cpu_s"], idle[case]["cpu_s"])}
                    for case, r in results.items() if case in idle}
            for level, results in levels.items() if level != "0"}


def _load1(line: str) -> str:
    return line.split()[0]


def markdown(result: dict) -> str:
    """The card's table: one row a case; idle wall / CPU seconds with the 1-minute load before
    and after, and each busy level's ratios to idle (wall ×, CPU ×); with a baseline, its idle
    figures and ratios beside."""
    levels = result["this"]
    busy = [lv for lv in levels if lv != "0"]
    columns = ["case", "idle: wall / CPU (load)", *(f"beside {lv} busy: wall × / CPU ×" for lv in busy)]
    if "baseline" in result:
        columns += ["before: idle wall / CPU", *(f"before, beside {lv}: wall × / CPU ×" for lv in busy)]
    rows = ["| " + " | ".join(columns) + " |", "|" + " --- |" * len(columns)]
    for case in CASES:
        if case not in levels.get("0", {}):
            continue
        idle = levels["0"][case]
        cells = [case, f"{idle['wall_s']} s / {idle['cpu_s']} s ({_load1(idle['loadavg_before'])}–"
                       f"{_load1(idle['loadavg_after'])})"]
        cells += [f"{result['ratios'][lv][case]['wall']} / {result['ratios'][lv][case]['cpu']}" for lv in busy]
        if "baseline" in result:
            before = result["baseline"]["0"][case]
            cells += [f"{before['wall_s']} s / {before['cpu_s']} s"]
            cells += [f"{result['baseline_ratios'][lv][case]['wall']} / {result['baseline_ratios'][lv][case]['cpu']}"
                      for lv in busy]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--system", default="GPT-4")
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--levels", default="0,1,2", help="busy-loop processes beside each case (0: idle)")
    parser.add_argument("--threads", type=int, help="doclens score --threads N for this checkout (default: its own)")
    parser.add_argument("--runtime", choices=("onnx", "torch"), help="clinical-rules' MiniLM runtime (default: auto)")
    parser.add_argument("--notes", type=int, help="score only the first N notes of the system (default: all 40)")
    parser.add_argument("--baseline-repo", help="also run every case with PYTHONPATH=DIR (another checkout)")
    parser.add_argument("--quick", action="store_true", help="development: 10 notes, levels 0,2, no 64-step")
    parser.add_argument("--source", action="store_true",
                        help="run the checkouts in place, compiling their source in every process (before round 17)")
    parser.add_argument("--markdown", action="store_true", help="also print the card's table (stderr)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args, rest = parser.parse_known_args()
    if args.child:
        rest = [a for a in rest if a != "--"]
        if rest and rest[0] == "reward":
            sys.exit(child_reward(args.child, rest[1], rest[2], int(rest[3]) if rest[3] else None, rest[4] or None))
        sys.exit(child_score(args.child, rest))
    if args.quick:
        args.notes = args.notes or 10
        args.levels = "0,2" if args.levels == "0,1,2" else args.levels
        args.cases = args.cases.replace(",reward64", "")
    args.cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = set(args.cases) - set(CASES)
    if unknown:
        parser.error(f"unknown case(s) {sorted(unknown)}; choose from {', '.join(CASES)}")
    started = time.perf_counter()
    result: dict = {"benchmark": "contention", "cpu_count": os.cpu_count(), "quick": args.quick,
                    "system": args.system, "notes": args.notes or "all", "cases": args.cases,
                    "environment": {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS",
                                                                     "OPENBLAS_NUM_THREADS", "TOKENIZERS_PARALLELISM")},
                    "threads_option": args.threads, "runtime_option": args.runtime, "loadavg_start": loadavg(),
                    "bytecode": "checkout in place" if args.source else "compiled copy of the package",
                    "this": {}, "targets": TARGETS}
    if args.baseline_repo:
        result["baseline"] = {}
    with tempfile.TemporaryDirectory(prefix="doclens-contention-") as tmp:
        for level in map(int, args.levels.split(",")):
            with BusyLoops(level) as busy:
                result["this"][str(level)] = run_level(args, level, REPO, Path(tmp), "this")
                if args.baseline_repo:
                    result["baseline"][str(level)] = run_level(args, level, Path(args.baseline_repo).resolve(),
                                                               Path(tmp), "baseline")
                if busy.pids:
                    result.setdefault("busy_pids", {})[str(level)] = busy.pids
    result["ratios"] = ratios(result["this"])
    if args.baseline_repo:
        result["baseline_ratios"] = ratios(result["baseline"])
        result["after_over_before"] = {
            level: {case: {"wall": _ratio(r["wall_s"], result["baseline"][level][case]["wall_s"]),
                           "cpu": _ratio(r["cpu_s"], result["baseline"][level][case]["cpu_s"])}
                    for case, r in cases.items()} for level, cases in result["this"].items()}
    result["loadavg_end"] = loadavg()
    result["benchmark_wall_s"] = round(time.perf_counter() - started, 1)
    print(json.dumps(result, indent=2))
    if args.markdown:
        print(markdown(result), file=sys.stderr)


if __name__ == "__main__":
    main()
