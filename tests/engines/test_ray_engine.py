"""``doclens score --engine ray`` on a local Ray instance (started once for the module, two CPUs):
the same report as the single-process run (overlap judge, and an LLM judge over real HTTP to the
local test server), a worker killed mid-run retried with nothing lost or counted twice (and the
answers it had cached before dying kept), answer cache shards merged into the user's cache without
duplicates and reused by a rerun, a failing chunk ending the run as it does without Ray.

Without Ray installed the Ray tests are skipped, saying so; Ray installed but unable to start is a
failure, never a skip. No timing is asserted (``benchmarks/scale_ray.py`` measures speed)."""

import json
import os
import sqlite3
import sys
import warnings
from pathlib import Path

import pytest

from doclens.cli import main
from tests.llm_server import FakeChatServer

try:
    import ray
except ImportError as exc:  # the [ray] extra is not installed
    ray = None
    RAY_MISSING = f"Ray is not importable ({exc}); install the [ray] extra to run these tests"

REPO = Path(__file__).resolve().parents[2]
needs_ray = pytest.mark.skipif(ray is None, reason=RAY_MISSING if ray is None else "")


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray instance for every test here; a start that fails fails the tests."""
    # the workers import doclens and tests.ray_crash_judge from this checkout, installed or not
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    try:
        ray.init(num_cpus=2, include_dashboard=False, runtime_env={"env_vars": {"PYTHONPATH": path}})
    except Exception as exc:  # noqa: BLE001 - reported whole: the environment cannot run Ray
        pytest.fail(f"Ray is installed but could not start here: {type(exc).__name__}: {exc}")
    yield ray
    ray.shutdown()


INSTANCES = [
    {"id": f"g{i}", "prediction": f"The patient has fever {i} [0]. Cough for {i} days [1][2].",
     "reference": f"Fever {i}. Cough for {i} days. Rash {i % 3}.",
     "source": [f"patient: I have a fever {i}", f"patient: cough for {i} days", "doctor: any rash?"],
     "reference_claims": [f"The patient has fever {i}.", f"Cough for {i} days.", f"A rash {i % 3}."],
     "prediction_claims": [f"The patient has fever {i}.", f"Cough for {i} days."]}
    for i in range(9)
] + [
    {"id": "note", "task": "note_generation",
     "prediction": "HPI\nFever for two days [0].\nASSESSMENT AND PLAN\nRest [0][1].",
     "reference": "HPI\nFever for two days.\nASSESSMENT AND PLAN\nRest.", "source": ["fever two days", "rest"],
     "reference_claims": {"subjective": ["Fever for two days."], "assessment_and_plan": ["Rest."]},
     "prediction_claims": {"subjective": ["Fever for two days."]}},
    {"id": "question", "task": "question_summarization", "prediction": "What treats a fever?",
     "reference": "What is the treatment for fever?", "source": ["What medicine treats my fever?"]},
]


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def score(argv, output):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = main(["score", *argv, "-q", "-o", str(output)])
    return code, json.loads(output.read_text(encoding="utf-8"))


def both(tmp_path, argv, ray_argv=()):
    """The single-process report and the Ray report of the same command line."""
    code, local = score(argv, tmp_path / "local.json")
    assert code == 0
    code, on_ray = score([*argv, "--engine", "ray", "--workers", "2", *ray_argv], tmp_path / "ray.json")
    assert code == 0
    return local, on_ray


def cache_keys(folder):
    with sqlite3.connect(folder / "cache.sqlite") as conn:
        rows = conn.execute("SELECT key FROM answers").fetchall()
    return [key for (key,) in rows]


@needs_ray
def test_overlap_judge_gives_the_single_process_report(local_ray, tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", INSTANCES)
    local, on_ray = both(tmp_path, [str(data), "--evaluator", "overlap", "--chunk-size", "2", "--max-citations", "1"])
    assert local["counts"]["citations"]["capped_statements"] == 10  # run metadata, summed over chunks
    assert on_ray == local  # scores, sections, counts, per-instance results, signature, config, usage


@needs_ray
def test_llm_judge_same_report_shards_merged_rerun_hits_cache(local_ray, tmp_path):
    # no two instances share a prompt: two actors may each ask a question that one process asks
    # once, so only then are the call counts of both runs equal. Three instances give no claims:
    # the judge's model extracts them (the extractor's part of signature and usage)
    rows = [dict(row) for row in INSTANCES]
    for row in rows[6:9]:
        del row["reference_claims"], row["prediction_claims"]
    data = write_jsonl(tmp_path / "in.jsonl", rows)
    judge = ["--evaluator", "gpt4-json-cot", "--model", "test-model", "--chunk-size", "3", "--concurrency", "2",
             "--evaluator-arg", "backoff_base=0.01"]
    with FakeChatServer(latency=0.02) as server:
        argv = [str(data), *judge, "--base-url", server.base_url]
        code, local = score([*argv, "--cache-dir", str(tmp_path / "cache-local")], tmp_path / "local.json")
        assert code == 0
        calls = server.count
        code, on_ray = score([*argv, "--cache-dir", str(tmp_path / "cache-ray"), "--engine", "ray", "--workers", "2"],
                             tmp_path / "ray.json")
        assert code == 0 and server.count == 2 * calls
        # the rerun on the cluster: every answer comes from the merged cache, none from the server
        code, rerun = score([*argv, "--cache-dir", str(tmp_path / "cache-ray"), "--engine", "ray", "--workers", "2"],
                            tmp_path / "rerun.json")
        assert code == 0 and server.count == 2 * calls
        code, local_rerun = score([*argv, "--cache-dir", str(tmp_path / "cache-local")], tmp_path / "local-rerun.json")
        assert code == 0 and server.count == 2 * calls
    # which earlier request shares a prompt prefix depends on the order requests arrive in
    for report in (local, on_ray, rerun, local_rerun):
        report["usage"].pop("cached_prompt_tokens")
    assert "extract:given+llm" in local["signature"]
    assert on_ray == local
    assert on_ray["usage"]["calls"] == calls and rerun["usage"]["calls"] == 0
    assert rerun == local_rerun  # the same answers, all from the cache, counted the same way
    assert {k: v for k, v in rerun.items() if k != "usage"} == {k: v for k, v in local.items() if k != "usage"}
    merged = cache_keys(tmp_path / "cache-ray")
    assert len(merged) == len(set(merged)) == calls  # every answer once: no duplicate, none missing
    assert set(merged) == set(cache_keys(tmp_path / "cache-local"))


@needs_ray
def test_a_worker_killed_mid_run_is_retried_nothing_lost_or_doubled(local_ray, tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", INSTANCES[:9])
    marker = tmp_path / "crash-once"
    marker.touch()
    judge = ["--evaluator", "tests.ray_crash_judge:CrashOnceJudge", "--chunk-size", "2"]
    code, local = score([str(data), *judge], tmp_path / "local.json")
    assert code == 0 and marker.exists()  # no marker argument: the single-process run never crashes
    code, on_ray = score([str(data), *judge, "--evaluator-arg", f"marker={marker}", "--evaluator-arg",
                          "trigger=fever 5", "--engine", "ray", "--workers", "2"], tmp_path / "ray.json")
    assert code == 0
    assert not marker.exists()  # a worker did die on the chunk holding instance g5
    assert [r["id"] for r in on_ray["instances"]] == [f"g{i}" for i in range(9)]
    on_ray["config"]["evaluator"] = local["config"]["evaluator"]  # the marker option differs, nothing else
    assert on_ray == local  # same results; usage (pairs judged) counted once per chunk


@needs_ray
def test_answers_cached_by_a_worker_that_died_reach_the_users_cache(local_ray, tmp_path):
    """The actor dies after its chunk's claim answers went into its shard: Ray restarts it, the
    retried chunk finds them there (no second call), and they are merged into the user's cache."""
    data = write_jsonl(tmp_path / "in.jsonl", INSTANCES[:6])
    marker = tmp_path / "crash-once"
    marker.touch()
    judge = ["--evaluator", "tests.ray_crash_judge:CrashOnceChatJudge", "--model", "test-model", "--chunk-size", "2",
             "--evaluator-arg", "backoff_base=0.01"]
    with FakeChatServer() as server:
        argv = [str(data), *judge, "--base-url", server.base_url]
        code, local = score([*argv, "--cache-dir", str(tmp_path / "cache-local")], tmp_path / "local.json")
        assert code == 0
        calls = server.count
        code, on_ray = score([*argv, "--cache-dir", str(tmp_path / "cache-ray"), "--evaluator-arg", f"marker={marker}",
                              "--evaluator-arg", "trigger=fever 3", "--engine", "ray", "--workers", "2"],
                             tmp_path / "ray.json")
        assert code == 0 and not marker.exists()  # the actor scoring g2, g3 died once
        assert server.count == 2 * calls  # no question asked twice: the lost attempt's answers were kept
    assert on_ray["instances"] == local["instances"] and on_ray["scores"] == local["scores"]
    assert on_ray["signature"] == local["signature"]
    # the lost attempt's calls are not in usage; its answers come back as cache hits of the retry
    assert on_ray["usage"]["calls"] < calls and on_ray["usage"]["cached_calls"] > 0
    merged = cache_keys(tmp_path / "cache-ray")
    assert len(merged) == len(set(merged)) == calls and set(merged) == set(cache_keys(tmp_path / "cache-local"))


@needs_ray
def test_a_chunk_failing_on_a_worker_stops_the_run_as_without_ray(local_ray, tmp_path, capsys):
    rows = [dict(row) for row in INSTANCES[:9]]
    rows[5]["task"] = "no_such_task"  # refused when its chunk is prepared, on the worker
    data = write_jsonl(tmp_path / "in.jsonl", rows)
    codes, partials = [], []
    for name, engine in (("local", []), ("ray", ["--engine", "ray", "--workers", "2"])):
        output = tmp_path / f"{name}.json"
        codes.append(main(["score", str(data), "--evaluator", "overlap", "--chunk-size", "2", "-q", "-o", str(output),
                           *engine]))
        partials.append(json.loads(output.read_text(encoding="utf-8")))  # partial: "partial": true
        assert "no_such_task" in capsys.readouterr().err
    assert codes == [2, 2] and partials[1]["partial"] is True
    assert [r["id"] for r in partials[1]["instances"]] == ["g0", "g1", "g2", "g3"]  # the chunks before it
    assert partials[1] == partials[0]


def test_without_ray_the_option_says_how_to_get_it(tmp_path, monkeypatch, capsys):
    data = write_jsonl(tmp_path / "in.jsonl", INSTANCES[:1])
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now fails as if it were not installed
    code = main(["score", str(data), "--evaluator", "overlap", "--engine", "ray", "-q", "-o", str(tmp_path / "s.json")])
    err = capsys.readouterr().err
    assert code == 2 and "pip install 'doclens[ray]'" in err and "--engine ray" in err
    assert not (tmp_path / "s.json").exists()


def test_engine_options_without_the_ray_engine_are_refused(tmp_path, capsys):
    data = write_jsonl(tmp_path / "in.jsonl", INSTANCES[:1])
    code = main(["score", str(data), "--evaluator", "overlap", "--workers", "4", "-q", "-o", str(tmp_path / "s.json")])
    assert code == 2 and "--workers only apply with --engine ray" in capsys.readouterr().err


@needs_ray
def test_a_judge_told_to_use_cuda_on_a_cluster_without_gpus_is_refused(local_ray, tmp_path, capsys):
    """An in-process judge asks Ray for a GPU per actor; on a cluster with none, ``--device cuda``
    is a usage error, not a run that waits for ever for a GPU."""
    data = write_jsonl(tmp_path / "in.jsonl", INSTANCES[:2])
    code = main(["score", str(data), "--evaluator", "nli", "--model", str(tmp_path / "never-loaded"), "--device",
                 "cuda", "--engine", "ray", "-q", "-o", str(tmp_path / "s.json")])
    assert code == 2 and "the Ray cluster has no GPU" in capsys.readouterr().err


def overlap_scorer():
    """A scorer the workers build for themselves (a judge holds locks: it is not shipped)."""
    from doclens import DocLens
    from doclens.evaluators.rules.overlap import OverlapEvaluator

    return DocLens(OverlapEvaluator(), chunk_size=2)


@needs_ray
def test_ray_feeds_the_streamed_output_and_resumes_a_single_process_journal(local_ray, tmp_path):
    """The Ray engine hands its chunks to the same sink as the single-process run: a streamed
    (jsonl) output, continued with ``resume`` from the journal an interrupted run left, equals
    the uninterrupted single-process output, and the resumed part skips what the journal holds."""
    from doclens.engines.ray import score_on_ray
    from doclens.engines.sink import FileSink
    from doclens.reports.report import Report

    rows = INSTANCES[:9]
    make = overlap_scorer
    whole = make().score_to(str(tmp_path / "local.json"), rows, output_format="jsonl", progress=False)

    def stop_after(n):
        for k, row in enumerate(rows):
            if k == n:
                raise KeyboardInterrupt
            yield row

    output = str(tmp_path / "ray.json")
    with pytest.raises(KeyboardInterrupt):
        make().score_to(output, stop_after(5), output_format="jsonl", progress=False)
    sink = FileSink(output, "jsonl", resume=True)
    resumed = score_on_ray(make, rows, sink=sink, workers=2, progress=False)
    assert sink.resumed == 4  # two finished chunks were in the journal; the rest went to Ray
    for key in ("scores", "counts", "sections", "unparsed", "failed", "signature"):
        assert getattr(resumed, key) == getattr(whole, key), key
    assert ([r.to_dict() for r in Report.load(output).instances]
            == [r.to_dict() for r in Report.load(str(tmp_path / "local.json")).instances])


#: a reference fact the prediction states in another section (stated_in_other_section under the
#: default premise scope), and a reference section the prediction lacks (a section fallback)
SCOPED_NOTES = [
    {"id": "elsewhere", "task": "note_generation",
     "prediction": "HPI\nFever for two days, drinks fluids [0].\nASSESSMENT AND PLAN\nRest [1].",
     "reference": "HPI\nFever for two days.\nPHYSICAL EXAM\nNo rash.\nASSESSMENT AND PLAN\nRest and fluids.",
     "source": ["fever two days, drinking fluids", "rest"],
     "reference_claims": {"subjective": ["Fever for two days."], "objective_exam": ["No rash."],
                          "assessment_and_plan": ["Rest.", "Drinks fluids."]},
     "prediction_claims": {"subjective": ["Fever for two days.", "Drinks fluids."], "assessment_and_plan": ["Rest."]}},
]
#: every value of every scoring option (doclens.ScoringSettings), in five runs: each row takes one
#: value of each option, so that every value is met once at least (a covering table, not every
#: combination); section_fallback="section" goes with premise_scope="section" only (the settings
#: refuse it under "note"), and both fallbacks are met under "section"
COVERING_RUNS = [
    {"--task": "auto", "--uncited": "zero", "--uncited-outputs": "not-applicable", "--question-statements": "whole",
     "--premise-scope": "note", "--section-fallback": "note", "--source-units": "given", "--on-unparsed": "zero",
     "--metrics": "doclens", "--chunk-size": "3"},
    {"--task": "general", "--uncited": "inherit", "--uncited-outputs": "strict", "--question-statements": "sentences",
     "--premise-scope": "section", "--section-fallback": "section", "--source-units": "lines", "--max-citations": "1",
     "--on-unparsed": "exclude", "--metrics": "doclens,source_support", "--chunk-size": "2", "--review-below": "0.5"},
    {"--task": "note_generation", "--uncited": "inherit-across-sections", "--uncited-outputs": "not-applicable",
     "--question-statements": "whole", "--premise-scope": "section", "--section-fallback": "note",
     "--source-units": "turns", "--on-unparsed": "raise", "--metrics": "doclens", "--chunk-size": "3"},
    {"--task": "report_summarization", "--uncited": "zero", "--uncited-outputs": "strict",
     "--question-statements": "sentences", "--premise-scope": "note", "--section-fallback": "note",
     "--source-units": "sentences", "--max-citations": "1", "--on-unparsed": "zero",
     "--metrics": "doclens,source_support", "--chunk-size": "3"},
    {"--task": "question_summarization", "--uncited": "inherit", "--uncited-outputs": "not-applicable",
     "--question-statements": "whole", "--premise-scope": "note", "--section-fallback": "note",
     "--source-units": "auto", "--on-unparsed": "exclude", "--metrics": "doclens", "--chunk-size": "3"},
]
#: a source without [0] markers, in dialogue turns (for every --source-units but "given")
TURNS = {"id": "turns", "prediction": "Fever for two days [1]. A cough [3].", "reference": "Fever for two days. Cough.",
         "source": "[doctor] any fever?\n[patient] fever for two days.\n[doctor] a cough?\n[patient] yes, a cough.",
         "reference_claims": ["Fever for two days.", "Cough."], "prediction_claims": ["Fever for two days.", "A cough."]}


def test_the_covering_runs_meet_every_value_of_every_scoring_option():
    """The table below is complete: each ScoringSettings option (but metrics, whose selectors are
    the families') has a flag, and each of its values is in a run; none is a combination the
    settings refuse. (Runs without Ray: it checks the table, not the engine.)"""
    from doclens.core import settings as vocabularies
    from doclens.core.settings import ScoringSettings
    from doclens.core.tasks import AUTO_TASK, TASKS

    values = {"task": (AUTO_TASK, *TASKS), "uncited": vocabularies.UNCITED,
              "uncited_outputs": vocabularies.UNCITED_OUTPUTS, "question_statements": vocabularies.QUESTION_STATEMENTS,
              "premise_scope": vocabularies.PREMISE_SCOPES, "section_fallback": vocabularies.SECTION_FALLBACKS,
              "source_units": vocabularies.SOURCE_UNITS, "on_unparsed": vocabularies.ON_UNPARSED,
              "max_citations": (None, 1), "metrics": ("doclens", "doclens,source_support"), "chunk_size": (2, 3),
              "review_below": (None, 0.5)}
    assert sorted(values) == sorted(ScoringSettings.names())
    met = {name: set() for name in values}
    for run in COVERING_RUNS:
        options = {flag[2:].replace("-", "_"): value for flag, value in run.items()}
        options["max_citations"] = int(options["max_citations"]) if "max_citations" in options else None
        options["chunk_size"] = int(options["chunk_size"])
        options["review_below"] = float(options["review_below"]) if "review_below" in options else None
        ScoringSettings.from_kwargs(**options)  # a combination the settings accept
        for name, value in options.items():
            met[name].add(value)
    assert {name: sorted(map(str, met[name])) for name in values} == \
        {name: sorted(map(str, found)) for name, found in values.items()}
    assert ("section", "note") in {(r["--premise-scope"], r["--section-fallback"]) for r in COVERING_RUNS}


@needs_ray
@pytest.mark.parametrize("run", COVERING_RUNS, ids=[f"run{i}" for i in range(len(COVERING_RUNS))])
def test_every_scoring_option_gives_the_local_report_and_signature_on_ray(local_ray, tmp_path, run):
    """Every value of every scoring option, scored locally and on Ray: equal signatures, equal
    reports (source support's block included). Ray builds no signature of its own and its
    workers score under the driver's own settings object (issue 40: it used to rebuild the
    settings from getattr defaults, dropping the support fields and signing ``sections:note``
    whatever the fallback)."""
    from doclens.core.signature import Signature

    rows = INSTANCES + SCOPED_NOTES + ([TURNS] if run["--source-units"] != "given" else [])
    data = write_jsonl(tmp_path / "in.jsonl", rows)
    argv = [str(data), "--evaluator", "overlap", *[part for flag_value in run.items() for part in flag_value]]
    local, on_ray = both(tmp_path, argv)
    assert on_ray["signature"] == local["signature"]
    assert on_ray == local
    signature = Signature.read(local["signature"])
    assert signature.get("uncited") == run["--uncited"] and signature.get("unparsed") == run["--on-unparsed"]
    assert signature.get("maxcit") == run.get("--max-citations", "none")
    assert signature.get("units") == (None if run["--source-units"] == "given" else run["--source-units"])
    assert signature.get("uncited-outputs") == ("na" if run["--uncited-outputs"] == "not-applicable" else "strict")
    assert signature.get("premise") == run["--premise-scope"]  # every run meets a note
    assert signature.get("sections") == (run["--section-fallback"] if run["--premise-scope"] == "section" else None)
    assert signature.get("qstatements") == ("sentences" if run["--question-statements"] == "sentences" else None)
    support = "source_support" in run["--metrics"]
    assert (signature.get("metrics") == "doclens+source_support") == support
    assert bool(local.get("source_support")) == support and (signature.get("support") is not None) == support
    if run["--task"] not in ("auto", "general"):  # the default task of rows without one
        assert run["--task"] in signature.get("task").split("+")


@needs_ray
def test_a_worker_built_with_other_settings_is_refused():
    """An actor scores under the driver's settings: a ``make_scorer`` that builds its scorer with
    other settings is refused before it scores anything, naming what differs."""
    from doclens import DocLens, ScoringSettings
    from doclens.core.errors import ConfigurationError
    from doclens.engines.ray import ScoreWorker
    from doclens.evaluators.rules.overlap import OverlapEvaluator

    with pytest.raises(ConfigurationError, match="uncited: 'inherit' != 'zero'"):
        ScoreWorker(lambda: DocLens(OverlapEvaluator()), "run", [], ScoringSettings(uncited="inherit"))


@needs_ray
@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="the watchdog reads /proc (Linux only)")
def test_a_driver_killed_with_sigkill_leaves_no_ray_process(tmp_path):
    """kill -9 of a driver that started its own Ray instance: every Ray process it had started
    (the raylet's agents used to outlive it) is gone within seconds (doclens/engines/reaper.py)."""
    import signal
    import subprocess
    import time

    from doclens.engines.reaper import descendants, running

    def ray_descendants(root: int) -> dict:  # the test's own look: Ray's processes name Ray
        return {pid: start for pid, start in descendants(root).items() if b"ray" in _cmdline(pid)}

    data = write_jsonl(tmp_path / "in.jsonl", INSTANCES[:2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)}
    env.pop("RAY_ADDRESS", None)
    driver = subprocess.Popen([sys.executable, "-m", "doclens", "score", str(data), "--evaluator",
                               "tests.ray_crash_judge:SlowJudge", "--engine", "ray", "--workers", "1", "-q",
                               "-o", str(tmp_path / "out.json")], env=env, cwd=tmp_path,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        noted: dict = {}
        deadline = time.monotonic() + 180
        # the actor judging (its slow batch) is up: the whole Ray instance is
        while time.monotonic() < deadline and not any(b"(ScoreWorker)" in _cmdline(pid) for pid in noted):
            assert driver.poll() is None, "the driver ended before its workers started"
            noted.update(ray_descendants(driver.pid))
            time.sleep(0.5)
        assert noted, "no Ray process started under the driver"
        noted.update(ray_descendants(driver.pid))
        driver.send_signal(signal.SIGKILL)
        driver.wait()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(running(pid, start) for pid, start in noted.items()):
            time.sleep(0.5)
        left = [_cmdline(pid)[:60] for pid, start in noted.items() if running(pid, start)]
        assert left == []
    finally:
        if driver.poll() is None:
            driver.kill()


def _cmdline(pid: int) -> bytes:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes()
    except OSError:
        return b""
