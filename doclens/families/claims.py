"""The claim family: claim recall and claim precision (``docs/design.md`` §1)."""

from __future__ import annotations

from doclens.core.metrics import claim_counts
from doclens.families.base import CountingRule, MetricFamily


def _in_section(items, section: str | None) -> list:
    return list(items) if section is None else [item for item in items if item.section == section]


class ClaimFamily(MetricFamily):
    """Reference claims judged against the prediction (recall), prediction claims against the
    reference (precision). Applies to every instance; one with no claims is ``empty``."""

    name = "claims"
    selector = "doclens"
    metrics = ("claim_recall", "claim_precision")
    item_fields = {"claim_recall": "reference_claims", "claim_precision": "prediction_claims"}

    def count(self, result, rule: CountingRule, section: str | None) -> dict:
        return {"claim_recall": claim_counts(_in_section(result.reference_claims, section), rule.on_unparsed),
                "claim_precision": claim_counts(_in_section(result.prediction_claims, section), rule.on_unparsed)}


CLAIMS = ClaimFamily()
