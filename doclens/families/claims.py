"""The claim family: claim recall and claim precision (``docs/design.md`` §1)."""

from __future__ import annotations

from doclens.core.metrics import CLAIM_F1, claim_counts, f1
from doclens.core.tasks import SECTION_NAMES
from doclens.core.types import PLACEMENT_OTHER_SECTION, Direction
from doclens.families.base import CountingRule, MetricFamily

#: the count of note claims entailed by the whole premise note but not by their own section
#: (``premise_scope="note"``), per metric in ``counts[metric]``, and per section beside it
OTHER_SECTION_COUNT = "stated_in_other_section"
OTHER_SECTION_BY_SECTION = "stated_in_other_section_by_section"


NOTE_TASK = "note_generation"
#: how the scorer names each claim metric's side (``recall``: reference claims against the
#: prediction; ``precision``: prediction claims against the reference), in :attr:`ClaimFamily.metrics` order
DIRECTIONS = (Direction.RECALL, Direction.PRECISION)


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

    def derived_scores(self, scores: dict) -> dict:
        """Claim F1, the harmonic mean of the instance's claim recall and precision
        (:func:`doclens.core.metrics.f1`; ``None`` when it has neither)."""
        return {CLAIM_F1: f1(scores.get("claim_recall"), scores.get("claim_precision"))}

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

    def add_counts(self, counts: dict, tally: dict[str, int], run) -> None:
        """For notes, per claim metric: the claims judged against the whole note because it lacked
        their section (``section_fallbacks``), and those the note entailed but their own section
        did not (:meth:`placement_counts`)."""
        if NOTE_TASK not in run.tasks:
            return
        placements = self.placement_counts(tally, SECTION_NAMES)
        for metric, direction in zip(self.metrics, DIRECTIONS):
            if metric in counts:
                counts[metric]["section_fallbacks"] = run.section_fallbacks.get(direction, 0)
                counts[metric].update(placements[metric])

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

    def trailing_row(self, result) -> dict:
        return {f"{metric}_{OTHER_SECTION_COUNT}": n for metric, n in self.instance_placements(result).items()}

    def trailing_columns(self) -> list[str]:
        return [f"{metric}_{OTHER_SECTION_COUNT}" for metric in self.metrics]


CLAIMS = ClaimFamily()
