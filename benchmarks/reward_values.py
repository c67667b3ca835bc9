"""Record the reward's values on :mod:`benchmarks.reward_latency`'s steps, and compare two records.

The proof that a change to the reward's path (the scoring orchestration, the judge's per-claim
compute) left every reward as it was (issue 49): the same steps as ``reward_latency`` (a first step
of 8, three warm steps of 8, the step that meets 16 references, the warm step of 64: real system
notes of ACI-BENCH test split 2, each scored against its encounter's clinician note), each
completion's components (:meth:`doclens.rewards.DocLensReward.score_components`: claim recall,
precision, F1 …) and its reward, written as JSON. Run it before the change (``--out before.json``),
after it (``--out after.json``), then ``--compare before.json after.json``: it prints every value
that differs (step, completion, component), or ``identical``, and exits 1 when any differs. The
record holds no text (encounter ids, system names and numbers only)::

    python -m benchmarks.reward_values --out /tmp/before.json [--data DIR]
    python -m benchmarks.reward_values --compare /tmp/before.json /tmp/after.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def steps(encounters: list[str], systems: tuple[str, ...]) -> list[tuple[str, list[tuple[str, str]]]]:
    """``reward_latency``'s steps, in its order: (name, [(encounter, system), …])."""
    first8, next16 = encounters[:8], encounters[8:24]
    return [("first_8", [(e, systems[0]) for e in first8]),
            *((f"warm_8_{system}", [(e, system) for e in first8]) for system in systems[1:4]),
            ("meets_16", [(e, systems[4]) for e in next16]),
            ("warm_64", [(e, s) for e in next16 for s in systems[5:9]])]


def record(data: Path) -> dict:
    """Every step's values: ``{step: [{"encounter", "system", "reward", "components"}, …]}``."""
    from benchmarks.reward_latency import SYSTEMS, load
    from doclens.rewards import DocLensReward

    references, outputs = load(data)
    reward = DocLensReward("clinical-rules", task="note_generation")
    out: dict = {}
    for name, pairs in steps(sorted(references), SYSTEMS):
        completions = [outputs[system][encounter] for encounter, system in pairs]
        columns = {"reference": [references[e]["reference"] for e, _ in pairs],
                   "source": [references[e]["source"] for e, _ in pairs]}
        components = reward.score_components(completions, **columns)
        out[name] = [{"encounter": e, "system": s, "components": c} for (e, s), c in zip(pairs, components)]
    reward.close()
    return {"benchmark": "reward_values", "judge": reward.scorer.evaluator.signature(), "steps": out}


def differences(before: dict, after: dict) -> list[str]:
    """Each value that differs between two records, as ``step #n (encounter, system) component: a -> b``."""
    found = []
    for name in dict.fromkeys([*before["steps"], *after["steps"]]):
        rows_a, rows_b = before["steps"].get(name), after["steps"].get(name)
        if rows_a is None or rows_b is None or len(rows_a) != len(rows_b):
            found.append(f"{name}: in one record only, or of another length")
            continue
        for n, (a, b) in enumerate(zip(rows_a, rows_b)):
            where = f"{name} #{n} ({a['encounter']}, {a['system']})"
            if (a["encounter"], a["system"]) != (b["encounter"], b["system"]):
                found.append(f"{where}: another completion ({b['encounter']}, {b['system']})")
            elif a["components"] is None or b["components"] is None:
                if a["components"] != b["components"]:
                    found.append(f"{where}: {a['components']} -> {b['components']}")
            else:
                found += [f"{where} {key}: {a['components'].get(key)} -> {b['components'].get(key)}"
                          for key in dict.fromkeys([*a["components"], *b["components"]])
                          if a["components"].get(key) != b["components"].get(key)]
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None, help="ACI-BENCH test split 2's systems (reward_latency's default)")
    parser.add_argument("--out", help="write the record here")
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args(argv)
    if args.compare:
        before, after = (json.loads(Path(p).read_text(encoding="utf-8")) for p in args.compare)
        found = differences(before, after)
        print("\n".join(found) if found else "identical")
        return 1 if found else 0
    if not args.out:
        parser.error("give --out FILE or --compare BEFORE AFTER")
    from benchmarks.reward_latency import DEFAULT_DATA

    result = record(Path(args.data) if args.data else DEFAULT_DATA)
    Path(args.out).write_text(json.dumps(result, indent=1), encoding="utf-8")
    print(f"{sum(len(rows) for rows in result['steps'].values())} completions' values written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
