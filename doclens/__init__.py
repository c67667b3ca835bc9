"""DocLens: fact-level evaluation of medical text generation.

Claim recall (completeness), claim precision (conciseness), citation recall and citation
precision (attribution), as defined by Xie et al., "DocLens: Multi-aspect Fine-grained
Evaluation for Medical Text Generation".

    >>> from doclens import DocLens
    >>> from doclens.evaluators.rules.overlap import OverlapEvaluator
    >>> report = DocLens(evaluator=OverlapEvaluator()).score([
    ...     {"id": "1", "prediction": "The patient has a fever [0].",
    ...      "reference": "Fever and cough.", "source": ["[patient] I have a fever."],
    ...      "reference_claims": ["Fever.", "Cough."],
    ...      "prediction_claims": ["The patient has a fever."]}], progress=False)
    >>> report.scores["claim_recall"], report.scores["citation_recall"]
    (0.5, 1.0)
"""

from doclens.core.errors import (
    CostWarning,
    DocLensWarning,
    FailedCallsWarning,
    InputWarning,
    JudgeWarning,
    NotApplicableWarning,
    NumberedSourcesWarning,
    RewardBudgetWarning,
    UncitedOutputsWarning,
    UnicodeRepairWarning,
    UnreadCitationsWarning,
)
from doclens.core.settings import EndpointSettings, ModelSettings, ScoringSettings
from doclens.core.types import (
    CitationJudgement,
    CitationVerdict,
    ClaimJudgement,
    ClaimVerdict,
    Instance,
    InstanceResult,
    SourceUnit,
    Statement,
)
from doclens.evaluators import load_evaluator
from doclens.evaluators.base import Evaluator
from doclens.extraction.extractors import Extractor
from doclens.reports.report import Report
from doclens.rewards.settings import RewardSettings
from doclens.scoring.scorer import DocLens
from doclens.scoring.signature import Signature
from doclens.version import __version__


def evaluate_module() -> str:
    """The path of DocLens's ``evaluate`` module file, as installed with the package.

    ``evaluate.load(doclens.evaluate_module(), "clinical-rules")`` loads it offline from any
    folder with no ``doclens install-metric``: ``evaluate`` reads a path as a local module, so it
    never asks the Hub and prints no "Using the latest cached version" line (loading it by name,
    ``evaluate.load("doclens")``, needs ``doclens install-metric`` first; ``metrics/doclens/README.md``).
    """
    from doclens.core.resources import resource_root

    return str(resource_root("metric") / "doclens.py")


__all__ = [
    "__version__",
    "evaluate_module",
    "CitationJudgement",
    "CitationVerdict",
    "ClaimJudgement",
    "ClaimVerdict",
    "CostWarning",
    "DocLens",
    "DocLensWarning",
    "EndpointSettings",
    "Evaluator",
    "Extractor",
    "Instance",
    "FailedCallsWarning",
    "InputWarning",
    "InstanceResult",
    "JudgeWarning",
    "ModelSettings",
    "NotApplicableWarning",
    "NumberedSourcesWarning",
    "Report",
    "RewardBudgetWarning",
    "RewardSettings",
    "ScoringSettings",
    "Signature",
    "SourceUnit",
    "Statement",
    "UncitedOutputsWarning",
    "UnicodeRepairWarning",
    "UnreadCitationsWarning",
    "load_evaluator",
]
