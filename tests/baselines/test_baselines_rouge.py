"""ROUGE baseline: the values are rouge-score's own on the same strings."""

import pytest

rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer",
                                   reason="rouge-score is not installed (the 'baselines' extra)")

from doclens.baselines import compute_baselines  # noqa: E402
from doclens.baselines.rouge import METRIC_KEYS, rouge_per_instance, split_sentences  # noqa: E402
from doclens.core.errors import ConfigurationError  # noqa: E402

PREDICTIONS = [
    "The patient reports knee pain for two weeks. He was prescribed ibuprofen.",
    "Blood pressure is elevated.\nFollow up in 3 weeks.",
    "Denies fever. Takes aspirin 81 mg daily.",
]
REFERENCES = [
    "Patient reports right knee pain for 2 weeks. Prescribed ibuprofen 600 mg.",
    "BP elevated at 150/90. Follow-up in three weeks.",
    "No fevers reported. Aspirin 81 mg daily was continued.",
]


def test_defaults_equal_rouge_score_as_evaluate_runs_it():
    """No stemming and ROUGE-Lsum sentences from the text's own lines: ``evaluate.load("rouge")``."""
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL", "rougeLsum"], use_stemmer=False)
    per_instance, config = rouge_per_instance(PREDICTIONS, REFERENCES)
    assert config["use_stemmer"] is False and config["sentence_splitter"] == "lines"
    assert config["signature"] == f"rouge-score:{config['version']}|stem:no|lsum-sentences:lines|" \
                                  "types:rouge1,rouge2,rougeL,rougeLsum"
    for row, prediction, reference in zip(per_instance, PREDICTIONS, REFERENCES):
        expected = scorer.score(reference, prediction)
        for rouge_type in ("rouge1", "rouge2", "rougeL", "rougeLsum"):
            assert row[f"{rouge_type}_precision"] == expected[rouge_type].precision
            assert row[f"{rouge_type}_recall"] == expected[rouge_type].recall
            assert row[f"{rouge_type}_f1"] == expected[rouge_type].fmeasure
        assert set(row) == set(METRIC_KEYS)


def test_doclens_sentence_splitter_is_an_option_for_rougelsum_only():
    scorer = rouge_scorer.RougeScorer(["rouge1", "rougeL", "rougeLsum"], use_stemmer=True)
    per_instance, config = rouge_per_instance(PREDICTIONS, REFERENCES, use_stemmer=True, sentence_splitter="doclens")
    assert config["sentence_splitter"] == "doclens" and "lsum-sentences:doclens" in config["signature"]
    for row, prediction, reference in zip(per_instance, PREDICTIONS, REFERENCES):
        plain = scorer.score(reference, prediction)
        assert row["rougeL_f1"] == plain["rougeL"].fmeasure and row["rouge1_f1"] == plain["rouge1"].fmeasure
        summary = scorer.score("\n".join(split_sentences(reference)), "\n".join(split_sentences(prediction)))
        assert row["rougeLsum_recall"] == summary["rougeLsum"].recall
        assert row["rougeLsum_f1"] == summary["rougeLsum"].fmeasure
    # two sentences on one line: only DocLens's splitter sees them
    swapped = (["Cough resolved. Fever persists."], ["Fever persists. Cough resolved."])
    assert rouge_per_instance(*swapped, sentence_splitter="doclens")[0][0]["rougeLsum_f1"] == 1.0
    assert rouge_per_instance(*swapped)[0][0]["rougeLsum_f1"] < 1.0


def test_rouge_types_subset_and_bad_options():
    rows, config = rouge_per_instance(PREDICTIONS, REFERENCES, rouge_types=["rougeLsum", "rouge1"])
    assert config["rouge_types"] == ["rouge1", "rougeLsum"]
    assert set(rows[0]) == {f"rouge{t}_{p}" for t in ("1", "Lsum") for p in ("precision", "recall", "f1")}
    result = compute_baselines(PREDICTIONS, REFERENCES, ["rouge"], options={"rouge": {"rouge_types": ["rouge2"]}})
    assert set(result["rouge"]["scores"]) == {"rouge2_precision", "rouge2_recall", "rouge2_f1"}
    for bad in ({"sentence_splitter": "nltk"}, {"rouge_types": ["rouge3"]}, {"rouge_types": []},
                {"use_stemmer": "yes"}):
        with pytest.raises(ConfigurationError, match=next(iter(bad))):
            rouge_per_instance(["a"], ["a"], **bad)


def test_stemming_changes_the_score_and_is_off_by_default():
    stemmed, config = rouge_per_instance(["fevers"], ["fever"], use_stemmer=True)
    plain, default = rouge_per_instance(["fevers"], ["fever"])
    assert stemmed[0]["rouge1_f1"] == 1.0 and config["use_stemmer"] is True
    assert plain[0]["rouge1_f1"] == 0.0 and default["use_stemmer"] is False


def test_rougelsum_reads_line_breaks_as_sentences():
    row = rouge_per_instance(["Cough resolved.\nFever persists."], ["Fever persists.\nCough resolved."])[0][0]
    assert row["rougeLsum_f1"] == 1.0
    assert row["rougeL_f1"] < 1.0
    same_line = rouge_per_instance(["Cough resolved. Fever persists."], ["Fever persists. Cough resolved."])[0][0]
    assert same_line["rougeLsum_f1"] == same_line["rougeL_f1"] < 1.0


def test_split_sentences_keeps_numbers_abbreviations_and_lines():
    text = "Dr. Smith saw him. BP 120/80 and temp 38.5 C. Follow up.\nPLAN\nrest"
    assert split_sentences(text) == ["Dr. Smith saw him.", "BP 120/80 and temp 38.5 C.", "Follow up.", "PLAN", "rest"]
    assert split_sentences("") == []


@pytest.mark.parametrize("prediction, reference", [("", "Fever."), ("Fever.", ""), ("", ""), ("...", "Fever.")])
def test_empty_side_scores_zero_not_nan(prediction, reference):
    scores = compute_baselines([prediction], [reference], ["rouge"])["rouge"]
    assert all(value == 0.0 for value in scores["per_instance"][0].values())
    assert all(value == 0.0 for value in scores["scores"].values())


def test_corpus_score_is_mean_of_instances():
    result = compute_baselines(PREDICTIONS, REFERENCES, ["rouge"])["rouge"]
    for key in METRIC_KEYS:
        expected = sum(row[key] for row in result["per_instance"]) / len(PREDICTIONS)
        assert result["scores"][key] == pytest.approx(expected, abs=1e-15)
    assert "sections" not in result
    assert result["config"]["n_instances"] == 3


def test_citation_markers_are_removed_from_predictions_unless_kept():
    cited = compute_baselines(["Knee pain [0][2]. Ibuprofen [3, 4]."], ["Knee pain. Ibuprofen."], ["rouge"])
    assert cited["rouge"]["scores"]["rouge1_f1"] == 1.0
    assert cited["rouge"]["config"]["citation_markers_removed"] == "predictions"
    kept = compute_baselines(["Knee pain [0][2]. Ibuprofen [3, 4]."], ["Knee pain. Ibuprofen."], ["rouge"],
                             remove_citations=False)["rouge"]
    assert kept["config"]["citation_markers_removed"] == "none"
    # "0", "2", "3" and "4" are tokens of their own
    assert kept["scores"]["rouge1_recall"] == 1.0 and kept["scores"]["rouge1_precision"] == 3 / 7


def test_divisions_aci_bench_procedure_with_rouge():
    references = ["HPI\nfever today\nEXAM\nclear\nPLAN\nrest", "HPI\ncough"]
    predictions = ["HPI__lf1__fever today__lf1__EXAM__lf1__clear__lf1__PLAN__lf1__rest", "HPI\ncough\nPLAN\nrest"]
    ours = compute_baselines(predictions, references, ["rouge"], task="note_generation")["rouge"]
    assert ours["per_instance"][0]["rouge1_f1"] == 1.0  # __lf1__ read as a line break
    assert ours["config"]["divisions"] == "doclens"
    assert ours["config"]["section_support"] == {"subjective": 2, "objective_exam": 1, "objective_results": 0,
                                                 "assessment_and_plan": 2}
    assert ours["sections"]["assessment_and_plan"]["rouge1_f1"] == pytest.approx(0.5)  # note 1: plan vs ""
    aci = compute_baselines(predictions, references, ["rouge"], task="note_generation",
                            divisions="aci-bench")["rouge"]
    assert aci["config"]["divisions"] == "aci-bench"
    assert set(aci["config"]["section_support"].values()) == {2}  # every division over all notes
    # the full note is scored as given: "__lf1__" leaves the token "lf1" in the prediction
    assert aci["per_instance"][0]["rouge1_precision"] < 1.0
    # line breaks inside a division become "__lf1__", a token of its own for ROUGE: note 1's
    # prediction subjective "HPI__lf1__cough__lf1__" has one more "lf1" than the reference's
    assert aci["sections"]["subjective"]["rouge1_f1"] == pytest.approx((1.0 + 6 / 7) / 2)
    # the exam: note 1 lacks it on both sides, scored "#####EMPTY#####" against itself — ROUGE 1.0
    assert aci["sections"]["objective_exam"]["rouge1_f1"] == pytest.approx(1.0)
    # no note has results: "" against "" — 0.0, averaged over both notes
    assert aci["sections"]["objective_results"]["rouge1_f1"] == 0.0
    assert aci["sections"]["assessment_and_plan"]["rouge1_f1"] == pytest.approx(0.5)
    # a per-baseline option wins over the parameter
    per_option = compute_baselines(predictions, references, ["rouge"], task="note_generation",
                                   options={"rouge": {"divisions": "aci-bench"}})["rouge"]
    assert per_option["sections"] == aci["sections"]


def test_lcs_equals_rouge_score_float_for_float_on_real_notes():
    """ROUGE-L and ROUGE-Lsum fill rouge-score's LCS table with numpy: the same numbers on real
    system outputs (a transcript copy, GPT-4, LED with "[n]" text), full notes and ACI-BENCH divisions."""
    from tests.aci_published import DATA, read_split

    if not (DATA / "test3" / "references.jsonl").is_file():
        pytest.skip(f"ACI-BENCH system outputs not found at {DATA} (the shared data folder beside the repo)")
    from doclens.baselines import aci_bench_divisions

    _, references, systems = read_split("test3")
    predictions, targets = [], []
    for name in ("transcript", "GPT-4", "LED", "BART-div"):
        chosen, chosen_references = systems[name][:3], references[:3]
        split_predictions, split_references = aci_bench_divisions(chosen), aci_bench_divisions(chosen_references)
        predictions += chosen + [text for texts in split_predictions.values() for text in texts]
        targets += chosen_references + [text for texts in split_references.values() for text in texts]
    for use_stemmer in (False, True):
        scorer = rouge_scorer.RougeScorer(["rougeL", "rougeLsum"], use_stemmer=use_stemmer)
        ours, _ = rouge_per_instance(predictions, targets, use_stemmer=use_stemmer, rouge_types=["rougeL", "rougeLsum"])
        for row, prediction, reference in zip(ours, predictions, targets):
            expected = scorer.score(reference, prediction)
            assert [row[f"{t}_{p}"] for t in ("rougeL", "rougeLsum") for p in ("precision", "recall", "f1")] == \
                [getattr(expected[t], a) for t in ("rougeL", "rougeLsum") for a in ("precision", "recall", "fmeasure")]


@pytest.mark.parametrize("prediction, reference", [
    ("a b\n\n...\nc a b", "a\nb c\n\na"), ("x y z", "a b c"), ("a a a\nb", "a\na\nb b"), ("\n\n", "a"),
])
def test_lcs_edge_cases_equal_rouge_score(prediction, reference):
    scorer = rouge_scorer.RougeScorer(["rougeL", "rougeLsum"])
    row = rouge_per_instance([prediction], [reference], rouge_types=["rougeL", "rougeLsum"])[0][0]
    expected = scorer.score(reference, prediction)
    for t in ("rougeL", "rougeLsum"):
        assert (row[f"{t}_precision"], row[f"{t}_recall"], row[f"{t}_f1"]) == \
            (expected[t].precision, expected[t].recall, expected[t].fmeasure)
