"""The source-support family: each prediction claim against the instance's own source
(:mod:`doclens.core.support` has its verdicts; the judging is
:class:`doclens.scoring.source_support.SourceSupport`'s; ``cards/source-support.md``)."""

from __future__ import annotations

from doclens.core.support import SUPPORT_LABELS, SUPPORT_METRICS, support_counts
from doclens.core.types import NO_VERDICT
from doclens.families.base import APPLIES, SKIPPED, CountingRule, MetricFamily


class SourceSupportFamily(MetricFamily):
    """Opt-in (``metrics="doclens,source_support"``). Skipped where no verdicts were taken (no
    source, or the metric not asked for); an instance's ``scores`` name its metrics only where
    they were counted."""

    name = "source_support"
    selector = "source_support"
    metrics = tuple(SUPPORT_METRICS)
    item_fields = dict.fromkeys(SUPPORT_METRICS, "source_support")
    none_when_absent = False

    def applicability(self, result, rule: CountingRule) -> str:
        return SKIPPED if result.source_support is None else APPLIES

    def count(self, result, rule: CountingRule, section: str | None) -> dict:
        return support_counts(result.source_support, rule.on_unparsed, section)

    def tally(self, result) -> dict[str, int]:
        """Verdicts and statuses of the instance's claims, how their evidence was found, and
        whether the instance had no verdicts (no source): the report's ``source_support`` block."""
        verdicts = result.source_support
        if verdicts is None:
            return {"instances_without_source": 1}
        found = {label: sum(v.verdict == label for v in verdicts) for label in SUPPORT_LABELS}
        found.update({status: sum(v.status == status for v in verdicts) for status in NO_VERDICT})
        found["retrieved_claims"] = sum(v.retrieved for v in verdicts)
        found["whole_source_claims"] = sum(not v.retrieved and v.status not in NO_VERDICT and bool(v.evidence)
                                           for v in verdicts)
        return found

    def signature_fields(self, scorer) -> list[tuple[str, str]]:
        return scorer.source_support.signature_fields(scorer.evaluator)


SOURCE_SUPPORT = SourceSupportFamily()
