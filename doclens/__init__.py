"""DocLens: fact-level evaluation of medical text generation.

Claim recall (completeness), claim precision (conciseness), citation recall and citation
precision (attribution), as defined by Xie et al., "DocLens: Multi-aspect Fine-grained
Evaluation for Medical Text Generation".

    >>> from doclens import DocLens
    >>> from doclens.evaluators.overlap import OverlapEvaluator
    >>> report = DocLens(evaluator=OverlapEvaluator()).score([
    ...     {"id": "1", "prediction": "The patient has a fever [0].",
    ...      "reference": "Fever and cough.", "source": ["[patient] I have a fever."],
    ...      "reference_claims": ["Fever.", "Cough."],
    ...      "prediction_claims": ["The patient has a fever."]}], progress=False)
    >>> report.scores["claim_recall"], report.scores["citation_recall"]
    (0.5, 1.0)
"""

__version__ = "1.0.0"

from doclens.types import (  # noqa: E402
    CitationJudgement,
    CitationVerdict,
    ClaimJudgement,
    ClaimVerdict,
    Instance,
    InstanceResult,
    SourceUnit,
    Statement,
)
from doclens.evaluators.base import Evaluator  # noqa: E402
from doclens.extractors import Extractor  # noqa: E402
from doclens.report import Report  # noqa: E402
from doclens.scorer import DocLens  # noqa: E402
from doclens.evaluators import load_evaluator  # noqa: E402

__all__ = [
    "__version__",
    "CitationJudgement",
    "CitationVerdict",
    "ClaimJudgement",
    "ClaimVerdict",
    "DocLens",
    "Evaluator",
    "Extractor",
    "Instance",
    "InstanceResult",
    "Report",
    "SourceUnit",
    "Statement",
    "load_evaluator",
]
