"""The ``clinical-rules`` preset's factory: :class:`ClinicalRulesJudge` with, optionally, a decision
model of one's own (a file ``doclens judge-fit`` wrote) in place of the shipped one. The judge's
signature names the model it uses (``+lr-<fingerprint>``), so scores made with a refitted model are
never mixed with the shipped model's."""

from __future__ import annotations

import os

from doclens.core.errors import ConfigurationError
from doclens.evaluators.rules.clinical_rules import ClinicalRulesJudge
from doclens.evaluators.rules.decision import DecisionModel, load_model


def clinical_rules(paraphrase: str = "minilm", decision: str | None = None,
                   decision_model: str | os.PathLike | DecisionModel | None = None) -> ClinicalRulesJudge:
    """``ClinicalRulesJudge(paraphrase, decision)``; ``decision_model``: a model file (or a
    :class:`DecisionModel`) used instead of the shipped model (needs ``decision="model"``, the
    default with MiniLM)."""
    judge = ClinicalRulesJudge(paraphrase=paraphrase, decision=decision)
    if decision_model is not None:
        if judge.decision != "model":
            raise ConfigurationError("decision_model applies to decision='model' (the default with paraphrase='minilm')")
        # ClinicalRulesJudge loads the shipped model itself; its constructor does not take a path yet
        judge._decision_model = decision_model if isinstance(decision_model, DecisionModel) else load_model(decision_model)
    return judge
