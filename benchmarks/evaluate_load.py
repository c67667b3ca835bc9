"""How long loading DocLens through ``evaluate`` takes, offline, in fresh processes. Prints JSON.

Each way is timed in its own Python process with a fresh ``HF_HOME`` and ``HF_HUB_OFFLINE=1``
(wall seconds inside the process, best of ``--repeats``): ``import evaluate`` alone (the floor:
``evaluate`` imports ``transformers``' pipelines, outside DocLens's control); then the
``evaluate.load`` call alone, by path (``doclens.evaluate_module()``, no install), by name after
``doclens install-metric``, and by name without it (it fails: evaluate's own message is
recorded). Also whether each printed ``evaluate``'s "Using the latest cached version" line. The
load average is printed beside the figures.

    python -m benchmarks.evaluate_load --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TIMED = """
import json, time
started = time.perf_counter()
import evaluate
imported = time.perf_counter()
{load}
print(json.dumps({{"import_evaluate_s": imported - started, "load_s": time.perf_counter() - imported}}))
"""
WAYS = {
    "import_only": "",
    "by_path": "import doclens; evaluate.load(doclens.evaluate_module())",
    "by_name_installed": "evaluate.load('doclens')",
    "by_name_not_installed": "evaluate.load('doclens')",
}


def _run(way: str, hf_home: str) -> dict:
    env = dict(os.environ, HF_HOME=hf_home, HF_HUB_OFFLINE="1", PYTHONPATH=str(ROOT))
    env.pop("HF_MODULES_CACHE", None)
    done = subprocess.run([sys.executable, "-c", TIMED.format(load=WAYS[way])], env=env, capture_output=True,
                          text=True, cwd=tempfile.gettempdir(), timeout=600)
    result = {"ok": done.returncode == 0, "cached_version_line": "cached version" in done.stderr}
    if done.returncode == 0:
        result.update(json.loads(done.stdout.strip().splitlines()[-1]))
    else:
        result["error"] = done.stderr.strip().splitlines()[-1][:300]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    out: dict = {"loadavg_before": os.getloadavg()}
    for way in WAYS:
        runs = []
        for _ in range(args.repeats):
            with tempfile.TemporaryDirectory() as hf_home:
                if way == "by_name_installed":
                    subprocess.run([sys.executable, "-m", "doclens", "install-metric"], check=True, capture_output=True,
                                   env=dict(os.environ, HF_HOME=hf_home, PYTHONPATH=str(ROOT)))
                runs.append(_run(way, hf_home))
        timed = [r for r in runs if r["ok"]]
        best = min(timed, key=lambda r: r["import_evaluate_s"] + r["load_s"]) if timed else runs[0]
        out[way] = {**best, **({k: round(v, 3) for k, v in best.items() if k.endswith("_s")})}
    out["loadavg_after"] = os.getloadavg()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
