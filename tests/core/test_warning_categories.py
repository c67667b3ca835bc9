"""DocLens's warnings come in categories (doclens.core.errors), each a UserWarning so that a filter
on UserWarning keeps working, and the package filters its own warnings by category, not by text."""

import warnings

import pytest

import doclens
from doclens import DocLens, Instance
from doclens.core import errors
from doclens.evaluators.rules.overlap import OverlapEvaluator
from doclens.extraction.extractors import SentenceExtractor

CATEGORIES = [errors.DocLensWarning, errors.JudgeWarning, errors.NotApplicableWarning,
              errors.UncitedOutputsWarning, errors.InputWarning, errors.UnicodeRepairWarning,
              errors.CostWarning, errors.RewardBudgetWarning]


@pytest.mark.parametrize("category", CATEGORIES, ids=lambda c: c.__name__)
def test_each_category_is_a_user_warning_exported_from_doclens(category):
    assert issubclass(category, errors.DocLensWarning) and issubclass(category, UserWarning)
    assert getattr(doclens, category.__name__) is category and category.__name__ in doclens.__all__


def test_the_old_names_are_the_same_classes():
    from doclens.inputs.tables import UnicodeRepairWarning
    from doclens.rewards import RewardBudgetWarning
    assert UnicodeRepairWarning is errors.UnicodeRepairWarning
    assert RewardBudgetWarning is errors.RewardBudgetWarning


UNCITED = Instance(id="u", task="general", source="[0] The patient has a cough.",
                   reference="The patient has a cough.", prediction="The patient has a cough.",
                   reference_claims=["The patient has a cough."], prediction_claims=["The patient has a cough."])


def test_an_uncited_output_warns_with_its_category():
    with pytest.warns(errors.UncitedOutputsWarning, match="cite no source unit") as caught:
        DocLens(evaluator=OverlapEvaluator()).score([UNCITED])
    assert all(issubclass(w.category, errors.NotApplicableWarning) for w in caught
               if "cite no source unit" in str(w.message))


def test_a_filter_on_the_category_silences_it_and_only_it():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", category=errors.UncitedOutputsWarning)
        DocLens(evaluator=OverlapEvaluator(), max_citations=1).score(
            [UNCITED, Instance(id="c", task="general", source="[0] A cough. [1] A fever.", reference="A cough.",
                               prediction="A cough [0][1].", reference_claims=["A cough."],
                               prediction_claims=["A cough."])])
    kinds = {w.category for w in caught}
    assert errors.UncitedOutputsWarning not in kinds
    assert errors.InputWarning in kinds  # max_citations=1 cut a statement's citations: still warned


def test_a_reward_step_is_quiet_on_completions_that_cite_nothing():
    """Completions rarely cite. The same rows scored by DocLens warn (UncitedOutputsWarning, and an
    InputWarning for the cut citations); a reward step scores chunks without building a report and
    so issues neither, with no filter on any message or category."""
    from doclens.rewards import DocLensReward

    rows = {"completions": ["Fever for two days.", "Rash [0][1]."], "reference": ["Fever for two days.", "Rash."],
            "source": ["[0] fever for two days [1] a rash"] * 2}
    with warnings.catch_warnings(record=True) as scored:
        warnings.simplefilter("always")
        DocLens(evaluator=OverlapEvaluator(), extractor=SentenceExtractor(), max_citations=1).score(
            [{"id": str(i), "prediction": c, "reference": r, "source": s}
             for i, (c, r, s) in enumerate(zip(rows["completions"], rows["reference"], rows["source"]))],
            progress=False)
    assert {w.category for w in scored} >= {errors.UncitedOutputsWarning, errors.InputWarning}
    with warnings.catch_warnings(record=True) as rewarded:
        warnings.simplefilter("always")
        values = DocLensReward("overlap", "sentences", max_citations=1, score="claim_recall")(**rows)
    assert values == [1.0, 1.0]
    assert not [w for w in rewarded if issubclass(w.category, errors.DocLensWarning)]
