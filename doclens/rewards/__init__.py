"""DocLens in training loops (``docs/design.md`` §7, "Training loops"):

* :class:`DocLensReward` — a reward function for TRL's GRPO / RLOO trainers (``reward_funcs``),
  one DocLens score per completion, reference claims extracted once per run;
* :class:`DocLensMetric` — ``compute_metrics`` for ``transformers``' ``Trainer`` /
  ``Seq2SeqTrainer``: DocLens's corpus scores as a flat dict of floats.

Neither imports TRL or transformers (but ``callback()``, which makes the ``TrainerCallback`` that
closes their judge): they take what those libraries pass. Both own and close their judge
(:class:`doclens.rewards.reward.ClosesItsJudge`).
"""

from doclens.rewards.reward import (
    DEFAULT_MAX_CHARS,
    DocLensReward,
    RewardBudgetExceeded,
    RewardBudgetWarning,
    RewardScoringFailed,
    StepCounts,
    completion_text,
)
from doclens.rewards.settings import RewardSettings
from doclens.rewards.trainer_metric import DocLensMetric
from doclens.rewards.values import COMPONENTS

__all__ = ["COMPONENTS", "DEFAULT_MAX_CHARS", "DocLensMetric", "DocLensReward", "RewardBudgetExceeded",
           "RewardBudgetWarning", "RewardScoringFailed", "RewardSettings", "StepCounts", "completion_text"]
