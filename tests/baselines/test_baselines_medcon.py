"""MEDCON on a tiny synthetic vocabulary: the real QuickUMLS and scispaCy matching, offline,
against hand-computed precision, recall and F1.

The vocabulary (no licensed data) is written as UMLS rich release format rows (MRCONSO.RRF,
MRSTY.RRF) for QuickUMLS and as a scispaCy knowledge-base JSONL file. Two concepts have semantic
types that ACI-BENCH leaves out (``patient``: Living Beings; ``therapy``: Procedures), so the type
filter is exercised.
"""

import json
from pathlib import Path

import pytest

from doclens.baselines import compute_baselines
from doclens.baselines.medcon import (
    ACI_BENCH_SEMANTIC_TYPES,
    SEMANTIC_TYPES_BY_GROUP,
    medcon_instance_scores,
)
from doclens.core.errors import ConfigurationError

# (CUI, TUI, semantic type name, strings; the first string is the preferred name)
CONCEPTS = [
    ("C0015967", "T184", "Sign or Symptom", ["fever", "pyrexia"]),
    ("C0020538", "T047", "Disease or Syndrome", ["hypertension", "high blood pressure"]),
    ("C0010200", "T184", "Sign or Symptom", ["cough"]),
    ("C0004057", "T121", "Pharmacologic Substance", ["aspirin"]),
    ("C0022646", "T023", "Body Part, Organ, or Organ Component", ["kidney"]),
    ("C0011849", "T047", "Disease or Syndrome", ["diabetes", "diabetes mellitus"]),
    ("C0030705", "T101", "Patient or Disabled Group", ["patient"]),
    ("C0087111", "T061", "Therapeutic or Preventive Procedure", ["therapy"]),
    ("C9000325", "T121", "Pharmacologic Substance", ["325"]),
]

# A realistic subset of NLTK's English stopword list (QuickUMLS reads corpora/stopwords/english).
STOPWORDS = """i me my myself we our ours you your he him his she her it its they them their what which
who whom this that these those am is are was were be been being have has had having do does did a an the
and but if or because as until while of at by for with about against between into through during before
after above below to from up down in out on off over under again further then once here there when where
why how all any both each few more most other some such no nor not only own same so than too very s t can
will just don should now""".split()


def write_umls_files(folder: Path) -> Path:
    """Write MRCONSO.RRF and MRSTY.RRF into ``folder``; return it."""
    folder.mkdir(parents=True, exist_ok=True)
    conso, sty = [], []
    aui = 0
    for cui, tui, type_name, strings in CONCEPTS:
        for position, string in enumerate(strings):
            aui += 1
            # CUI|LAT|TS|LUI|STT|SUI|ISPREF|AUI|SAUI|SCUI|SDUI|SAB|TTY|CODE|STR|SRL|SUPPRESS|CVF|
            conso.append(f"{cui}|ENG|P|L{aui:07d}|PF|S{aui:07d}|{'Y' if position == 0 else 'N'}|A{aui:07d}||||"
                         f"TEST|PT|{cui}|{string}|0|N||")
        # CUI|TUI|STN|STY|ATUI|CVF|
        sty.append(f"{cui}|{tui}|A1.2.3|{type_name}|AT{cui[1:]}||")
    (folder / "MRCONSO.RRF").write_text("\n".join(conso) + "\n", encoding="utf-8")
    (folder / "MRSTY.RRF").write_text("\n".join(sty) + "\n", encoding="utf-8")
    return folder


def write_scispacy_kb(path: Path) -> Path:
    """Write the vocabulary as a scispaCy knowledge-base JSONL file."""
    with open(path, "w", encoding="utf-8") as handle:
        for cui, tui, _name, strings in CONCEPTS:
            handle.write(json.dumps({"concept_id": cui, "canonical_name": strings[0], "aliases": strings[1:],
                                     "types": [tui], "definition": None}) + "\n")
    return path


def write_nltk_stopwords(nltk_data: Path) -> Path:
    """Write ``corpora/stopwords/english`` under ``nltk_data``; return ``nltk_data``."""
    folder = nltk_data / "corpora" / "stopwords"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "english").write_text("\n".join(STOPWORDS) + "\n", encoding="utf-8")
    return nltk_data

# Reference: fever, hypertension, aspirin (patient: Living Beings and therapy: Procedures are
# left out). Prediction: pyrexia (= fever), high blood pressure (= hypertension), cough.
# matched = 2 (fever, hypertension): P = 2/3, R = 2/3, F1 = 2/3.
REFERENCE = "patient has fever and hypertension. started aspirin therapy."
PREDICTION = "pyrexia and high blood pressure, no cough."
# Two reference terms share the concept of one prediction term: P = 2/1, R = 1, F1 = 4/3 (ACI-BENCH's formula).
SHARED_REFERENCE = "high blood pressure and hypertension"
SHARED_PREDICTION = "hypertension"
NO_CONCEPTS = "the weather was nice today"

HAND = [  # (prediction, reference, precision, recall, f1)
    (PREDICTION, REFERENCE, 2 / 3, 2 / 3, 2 / 3),
    (SHARED_PREDICTION, SHARED_REFERENCE, 2.0, 1.0, 4 / 3),
    # "diabetes" and "diabetes mellitus" are both C0011849: reference terms {diabetes mellitus, cough},
    # prediction terms {kidney, diabetes}; matched = 1.
    ("kidney and diabetes", "diabetes mellitus, cough", 1 / 2, 1 / 2, 1 / 2),
    ("", REFERENCE, 0.0, 0.0, 0.0),
    (PREDICTION, "", 0.0, 0.0, 0.0),
    ("", "", 0.0, 0.0, 0.0),
    (NO_CONCEPTS, REFERENCE, 0.0, 0.0, 0.0),
]


def test_semantic_types_are_aci_benchs_66():
    assert len(ACI_BENCH_SEMANTIC_TYPES) == 66
    assert sum(len(types) for types in SEMANTIC_TYPES_BY_GROUP.values()) == 66
    assert "T184" in ACI_BENCH_SEMANTIC_TYPES and "T047" in ACI_BENCH_SEMANTIC_TYPES
    assert "T061" not in ACI_BENCH_SEMANTIC_TYPES and "T101" not in ACI_BENCH_SEMANTIC_TYPES


def test_instance_scores_formula():
    reference = {"fever": {"C1"}, "htn": {"C2"}, "aspirin": {"C3"}}
    prediction = {"pyrexia": {"C1", "C9"}, "cough": {"C4"}}
    assert medcon_instance_scores(reference, prediction) == {
        "medcon_precision": 0.5, "medcon_recall": 1 / 3, "medcon_f1": 0.4, "medcon_matched": 1.0,
        "medcon_reference_terms": 3.0, "medcon_prediction_terms": 2.0}
    assert medcon_instance_scores({}, {})["medcon_f1"] == 0.0
    assert medcon_instance_scores(reference, {})["medcon_precision"] == 0.0


@pytest.fixture(scope="module")
def vocabulary(tmp_path_factory):
    return tmp_path_factory.mktemp("vocabulary")


@pytest.fixture()
def nltk_data(vocabulary, monkeypatch):
    nltk = pytest.importorskip("nltk", reason="nltk is not installed (the 'medcon' extra)")
    folder = write_nltk_stopwords(vocabulary / "nltk_data")
    monkeypatch.setenv("NLTK_DATA", str(folder))
    monkeypatch.setattr(nltk.data, "path", [str(folder)])  # read once at import: set it too
    return folder


@pytest.fixture(scope="module")
def quickumls_index(vocabulary):
    pytest.importorskip("quickumls", reason="QuickUMLS is not installed (the 'medcon' extra)")
    from doclens.baselines.medcon import build_quickumls_index

    return build_quickumls_index(str(write_umls_files(vocabulary / "umls")), str(vocabulary / "quickumls"))


@pytest.fixture(scope="module")
def kb_path(vocabulary):
    pytest.importorskip("scispacy", reason="scispaCy is not installed (the 'medcon' extra)")
    pytest.importorskip("nmslib", reason="nmslib is not installed (scispaCy's dependency)")
    return str(write_scispacy_kb(vocabulary / "kb.jsonl"))


def _check(result, backend, approximation):
    medcon = result["medcon"]
    assert medcon["config"]["backend"] == backend
    assert medcon["config"]["approximation"] is approximation
    for row, (_p, _r, precision, recall, f1) in zip(medcon["per_instance"], HAND):
        assert row["medcon_precision"] == pytest.approx(precision)
        assert row["medcon_recall"] == pytest.approx(recall)
        assert row["medcon_f1"] == pytest.approx(f1)
    assert medcon["scores"]["medcon_f1"] == pytest.approx(sum(h[4] for h in HAND) / len(HAND))
    assert medcon["scores"]["medcon_recall"] == pytest.approx(sum(h[3] for h in HAND) / len(HAND))


@pytest.mark.slow
def test_quickumls_hand_computed(quickumls_index, nltk_data):
    options = {"medcon": {"backend": "quickumls", "quickumls_path": quickumls_index, "spacy_model": "blank"}}
    result = compute_baselines([h[0] for h in HAND], [h[1] for h in HAND], ["medcon"], options=options)
    _check(result, "quickumls", approximation=True)  # a blank spaCy pipeline is not ACI-BENCH's tagger
    config = result["medcon"]["config"]
    assert config["window"] == 5 and config["threshold"] == 1.0 and config["ignore_syntax"] is False
    assert "spaCy pipeline 'blank'" in config["approximation_note"]


@pytest.mark.slow
def test_quickumls_terms_case_and_syntax(quickumls_index, nltk_data):
    from doclens.baselines.medcon import QuickUMLSConcepts

    extractor = QuickUMLSConcepts(quickumls_index, spacy_model="blank")
    assert extractor.concepts(REFERENCE) == {"fever": {"C0015967"}, "hypertension": {"C0020538"},
                                             "aspirin": {"C0004057"}}
    # An index built without lowercasing (as ACI-BENCH's) is case-sensitive, except that an
    # all-upper-case span is looked up in lower case.
    assert extractor.concepts("Fever") == {}
    assert extractor.concepts("FEVER") == {"fever": {"C0015967"}}
    # QuickUMLS's syntax rules never start a span at a number; ignore_syntax does.
    assert extractor.concepts("took 325 today") == {}
    literal = QuickUMLSConcepts(quickumls_index, spacy_model="blank", ignore_syntax=True)
    assert literal.concepts("took 325 today") == {"325": {"C9000325"}}


@pytest.mark.slow
def test_quickumls_lowercase_index(vocabulary, nltk_data, quickumls_index):
    from doclens.baselines.medcon import QuickUMLSConcepts, build_quickumls_index

    folder = build_quickumls_index(str(vocabulary / "umls"), str(vocabulary / "quickumls_lower"), lowercase=True)
    extractor = QuickUMLSConcepts(folder, spacy_model="blank")
    assert extractor.concepts("Fever") == {"fever": {"C0015967"}}
    assert extractor.settings["lowercase_index"] is True


def test_quickumls_errors(quickumls_index, nltk_data, vocabulary, monkeypatch):
    from doclens.baselines.medcon import QuickUMLSConcepts

    with pytest.raises(ConfigurationError, match="not a QuickUMLS index"):
        QuickUMLSConcepts(str(vocabulary), spacy_model="blank")
    with pytest.raises(ConfigurationError, match="quickumls_path"):
        compute_baselines(["a"], ["a"], ["medcon"], options={"medcon": {"backend": "quickumls"}})
    with pytest.raises(ConfigurationError, match="unknown option"):
        compute_baselines(["a"], ["a"], ["medcon"], options={"medcon": {"backend": "quickumls",
                                                                       "kb_path": "x"}})
    spacy = pytest.importorskip("spacy", reason="spaCy is not installed (the 'medcon' extra)")
    if not spacy.util.is_package("en_core_web_sm"):
        with pytest.raises(ConfigurationError, match="en_core_web_sm"):
            QuickUMLSConcepts(quickumls_index)
    import nltk

    monkeypatch.setattr(nltk.data, "path", [str(vocabulary / "empty")])
    with pytest.raises(ConfigurationError, match="stopword"):
        QuickUMLSConcepts(quickumls_index, spacy_model="blank")


@pytest.mark.slow
def test_scispacy_hand_computed(kb_path):
    options = {"medcon": {"backend": "scispacy", "kb_path": kb_path}}
    result = compute_baselines([h[0] for h in HAND], [h[1] for h in HAND], ["medcon"], options=options)
    _check(result, "scispacy", approximation=True)
    assert "approximation" in result["medcon"]["config"]["approximation_note"]


@pytest.mark.slow
def test_scispacy_index_is_saved_and_reloaded(kb_path, vocabulary):
    from doclens.baselines.medcon import ScispacyConcepts

    index_dir = vocabulary / "scispacy_index"
    first = ScispacyConcepts(kb_path, index_dir=str(index_dir))
    assert (index_dir / "nmslib_index.bin").is_file()
    second = ScispacyConcepts(kb_path, index_dir=str(index_dir))
    for extractor in (first, second):
        assert extractor.concepts(PREDICTION) == {"pyrexia": {"C0015967"}, "high blood pressure": {"C0020538"},
                                                  "cough": {"C0010200"}}
        assert extractor.concepts("the patient needs therapy") == {}  # excluded semantic types


def test_scispacy_refuses_missing_or_empty_knowledge_base(kb_path, tmp_path):
    from doclens.baselines.medcon import ScispacyConcepts

    with pytest.raises(ConfigurationError, match="kb_path"):
        ScispacyConcepts(str(tmp_path / "missing.jsonl"))
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(ConfigurationError, match="no entities"):
        ScispacyConcepts(str(empty))


# A note whose lines each end or start with a concept: ACI-BENCH's __lf1__ glues "fever" to the
# next line's first word, so QuickUMLS no longer finds it there.
DIVISION_REFERENCES = ["HPI\nfever\ncough\nPLAN\naspirin", "HPI\nhypertension and cough"]
DIVISION_PREDICTIONS = ["HPI__lf1__fever__lf1__cough__lf1__PLAN__lf1__aspirin", "HPI\nhas cough"]


@pytest.mark.slow
def test_medcon_divisions_doclens_and_aci_bench(quickumls_index, nltk_data):
    options = {"medcon": {"backend": "quickumls", "quickumls_path": quickumls_index, "spacy_model": "blank"}}
    ours = compute_baselines(DIVISION_PREDICTIONS, DIVISION_REFERENCES, ["medcon"], task="note_generation",
                             options=options)["medcon"]
    # __lf1__ read as a line break: note 0 matches fully, in total and in both of its divisions
    assert ours["per_instance"][0]["medcon_f1"] == 1.0
    assert ours["sections"]["subjective"]["medcon_recall"] == pytest.approx((1.0 + 0.5) / 2)
    # the plan: only note 0 has one, so the mean runs over one note
    assert ours["config"]["section_support"]["assessment_and_plan"] == 1
    assert ours["sections"]["assessment_and_plan"]["medcon_f1"] == 1.0
    assert ours["config"]["divisions"] == "doclens"

    aci_options = {"medcon": {**options["medcon"], "divisions": "aci-bench"}}
    aci = compute_baselines(DIVISION_PREDICTIONS, DIVISION_REFERENCES, ["medcon"], task="note_generation",
                            options=aci_options)["medcon"]
    assert aci["config"]["divisions"] == "aci-bench"
    assert aci["config"]["section_support"] == {"subjective": 2, "objective_exam": 2, "objective_results": 2,
                                                "assessment_and_plan": 2}
    # the full note is scored as given: the prediction's "HPI__lf1__fever__lf1__cough…" is one token
    assert aci["per_instance"][0]["medcon_prediction_terms"] == 0.0
    # note 0's subjective on both sides is "HPI__lf1__fever__lf1__cough__lf1__": no term at all;
    # note 1's "HPI__lf1__hypertension and cough" / "HPI__lf1__has cough": cough only, P = R = 1
    assert aci["sections"]["subjective"]["medcon_recall"] == pytest.approx((0.0 + 1.0) / 2)
    # the plan is "PLAN__lf1__aspirin" in note 0 and missing (scored 0) in note 1: mean over both notes
    assert aci["sections"]["assessment_and_plan"]["medcon_f1"] == pytest.approx(0.0)
    with pytest.raises(ConfigurationError, match="divisions"):
        compute_baselines(["a"], ["b"], ["medcon"], task="note_generation",
                          options={"medcon": {**options["medcon"], "divisions": "paper"}})
