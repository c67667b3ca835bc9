"""The claim family: claim recall and claim precision (``docs/design.md`` §1)."""

from __future__ import annotations

from doclens.core.metrics import claim_counts
from doclens.core.types import PLACEMENT_OTHER_SECTION
from doclens.families.base import CountingRule, MetricFamily

#: the count of note claims entailed by the whole premise note but not by their own section
#: (``premise_scope="note"``), per metric in ``counts[metric]``, and per section beside it
OTHER_SECTION_COUNT = "stated_in_other_section"
OTHER_SECTION_BY_SECTION = "stated_in_other_section_by_section"


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

    def tally(self, result) -> dict[str, int]:
        """Per metric and note section, the claims *stated in another section* (``"metric:section"``
        → count; :meth:`placement_counts` reads them back)."""
        found: dict[str, int] = {}
        for metric, field_name in self.item_fields.items():
            for verdict in getattr(result, field_name):
                if verdict.placement == PLACEMENT_OTHER_SECTION:
                    key = f"{metric}:{verdict.section}"
                    found[key] = found.get(key, 0) + 1
        return found

    def placement_counts(self, tally: dict[str, int], sections) -> dict[str, dict]:
        """``{metric: {"stated_in_other_section": n, "stated_in_other_section_by_section":
        {section: n}}}`` from the run's sums of :meth:`tally`, every one of ``sections`` named."""
        found: dict[str, dict] = {}
        for metric in self.metrics:
            by_section = {section: tally.get(f"{metric}:{section}", 0) for section in sections}
            found[metric] = {OTHER_SECTION_COUNT: sum(by_section.values()), OTHER_SECTION_BY_SECTION: by_section}
        return found

    def instance_placements(self, result) -> dict[str, int]:
        """Per metric, the instance's claims stated in another section (``Report.to_rows``)."""
        return {metric: sum(v.placement == PLACEMENT_OTHER_SECTION for v in getattr(result, field_name))
                for metric, field_name in self.item_fields.items()}


CLAIMS = ClaimFamily()
