"""The TRL reward's own options as one settings object (:class:`doclens.RewardSettings`, issue 50):
made from keywords or changed by copy alike, each option checked once, naming it, and a reward
made from the object behaves as one made from the same keywords."""

from __future__ import annotations

import dataclasses

import pytest

from doclens import RewardSettings
from doclens.core.errors import ConfigurationError
from doclens.rewards import DocLensReward

#: the reward's own options, none at its default
OPTIONS = {"score": {"claim_recall": 2.0, "citation_recall": 1.0}, "empty_value": -0.5, "budget_s": 300.0,
           "on_over_budget": "raise", "budget_chunk_size": 2, "max_chars": 50, "max_unscored_share": 0.25,
           "reference_column": "gold", "source_column": "dialogue", "reference_claims_column": "gold_claims",
           "task_column": "kind", "name": "my_reward"}

STEP = {"completions": ["Fever for two days [0]. Takes ibuprofen [1].", "Rash.", "",
                        "Fever for two days [0]. " * 4],
        "gold": ["Fever for two days. No medication.", "Fever for two days. No medication.", "Cough.", "Fever."],
        "dialogue": ["[0] fever for two days [1] i take ibuprofen"] * 4}


def test_from_kwargs_and_replace_agree_and_none_means_not_given():
    base = RewardSettings.from_kwargs(**OPTIONS)
    assert base == RewardSettings(**OPTIONS) and base.names()[0] == "score"
    assert base.weights == {"claim_recall": 2.0, "citation_recall": 1.0}
    assert base.columns == {"reference": "gold", "source": "dialogue", "reference_claims": "gold_claims",
                            "task": "kind"}
    changes = {"max_chars": 99, "on_over_budget": "warn", "budget_s": None, "name": None}
    assert RewardSettings.from_kwargs(base, **changes) == base.replace(**changes)
    changed = base.replace(**changes)
    assert (changed.max_chars, changed.on_over_budget, changed.budget_s, changed.name) == (99, "warn", 300.0,
                                                                                          "my_reward")
    # without a base, None is a value for the options that take one, and the default for the others
    assert RewardSettings.from_kwargs(budget_s=None, max_chars=None) == RewardSettings()
    # setting an option to None itself goes through dataclasses.replace, checked the same way
    assert dataclasses.replace(base, budget_s=None).budget_s is None


@pytest.mark.parametrize("option, value", [
    ("score", "bogus"), ("score", {"claim_recall": -1}), ("empty_value", float("nan")), ("budget_s", 0),
    ("budget_s", "5"), ("on_over_budget", "ignore"), ("budget_chunk_size", 0), ("max_chars", 2.5),
    ("max_unscored_share", 1.5), ("reference_column", ""), ("task_column", 3), ("name", 7)])
def test_a_bad_value_is_refused_naming_the_option(option, value):
    with pytest.raises(ConfigurationError, match="score" if option == "score" else option):
        RewardSettings(**{option: value})
    with pytest.raises(ConfigurationError, match="score" if option == "score" else option):
        RewardSettings().replace(**{option: value})
    with pytest.raises(ConfigurationError, match="unknown option.*'scores'.*RewardSettings"):
        RewardSettings.from_kwargs(scores="claim_f1")


def _call(reward, **columns):
    logged = {}
    values = reward(prompts=["p"] * len(columns["completions"]),
                    log_metric=lambda name, value: logged.__setitem__(name, value), **columns)
    logged.pop("doclens/step_s")
    return values, logged


def test_a_reward_from_settings_behaves_as_one_from_the_same_keywords():
    by_keywords = DocLensReward("overlap", "sentences", **OPTIONS)
    by_settings = DocLensReward("overlap", "sentences", reward_settings=RewardSettings(**OPTIONS))
    assert by_settings.reward_settings == by_keywords.reward_settings == RewardSettings(**OPTIONS)
    assert by_settings.__name__ == by_keywords.__name__ == "my_reward"
    values, logged = _call(by_settings, **STEP)
    assert (values, logged) == _call(by_keywords, **STEP)
    assert logged["doclens/capped"] == 1 and len(set(values)) > 1, values
    # a keyword not left at its default changes the settings given; one at its default leaves them
    changed = DocLensReward("overlap", "sentences", reward_settings=RewardSettings(**OPTIONS), max_chars=500,
                            score="claim_f1")
    assert changed.reward_settings == RewardSettings(**OPTIONS).replace(max_chars=500)
    assert _call(changed, **STEP)[1]["doclens/capped"] == 0
    with pytest.raises(ConfigurationError, match="settings must be a doclens.RewardSettings"):
        DocLensReward("overlap", "sentences", reward_settings={"max_chars": 5}, max_chars=9)
