"""The source-support family: each prediction claim against the instance's own source
(:mod:`doclens.core.support` has its verdicts; the judging is
:class:`doclens.scoring.source_support.SourceSupport`'s; ``cards/source-support.md``)."""

from __future__ import annotations

from doclens.core.errors import JudgeWarning, NotApplicableWarning
from doclens.core.support import SUPPORT_LABELS, SUPPORT_METRICS, SupportVerdict, support_counts
from doclens.core.types import NO_VERDICT
from doclens.families.base import APPLIES, SKIPPED, Applicability, CountingRule, MetricFamily


class SourceSupportFamily(MetricFamily):
    """Opt-in (``metrics="doclens,source_support"``). Skipped where no verdicts were taken (no
    source, or the metric not asked for); an instance's ``scores`` name its metrics only where
    they were counted."""

    name = "source_support"
    selector = "source_support"
    metrics = tuple(SUPPORT_METRICS)
    item_fields = dict.fromkeys(SUPPORT_METRICS, "source_support")
    none_when_absent = False
    on_instance_line = False  # the page lists each claim's support verdict under the instance instead
    #: what its signature fields and report block read of the judge
    reads_judge = ("support_verdicts", "support_window_words", "support_prompt_tags")
    #: a source without numbered units (a long text) is read whole or retrieved from
    reads_plain_source = True

    def applicability(self, result, rule: CountingRule) -> Applicability:
        return SKIPPED if self.items(result) is None else APPLIES

    def count(self, result, rule: CountingRule, section: str | None) -> dict:
        return support_counts(self.items(result), rule.on_unparsed, section)

    def judge(self, works: list, scorer) -> dict[int, list]:
        """Every prediction claim of every work with a source, judged against evidence from it
        (:meth:`doclens.scoring.source_support.SourceSupport.judge`, with the scorer's settings)."""
        return scorer.source_support.judge(works, scorer.evaluator)

    def item_from_dict(self, data: dict) -> SupportVerdict:
        return SupportVerdict.from_dict(data)

    def tally(self, result) -> dict[str, int]:
        """Verdicts and statuses of the instance's claims, how their evidence was found, and
        whether the instance had no verdicts (no source): the report's ``source_support`` block."""
        verdicts = self.items(result)
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

    def report_block(self, tally: dict[str, int], scorer, run) -> dict:
        """The report's ``source_support`` block: the judge's kind, the retrieval signature,
        verdict and retrieval counts, and the instances whose source has no citable units."""
        return {**scorer.source_support.report_block(tally, scorer.evaluator), "uncitable_instances": len(run.uncitable)}

    def run_warnings(self, counts: dict, block: dict, unparsed: int, failed: int, scorer,
                     run) -> list[tuple[type, str]]:
        found: list[tuple[type, str]] = []
        if unparsed or failed:
            found.append((JudgeWarning,
                          f"source support: {unparsed} claim(s) unparsed and {failed} failed; they have no verdict "
                          f"and count per on_unparsed={scorer.on_unparsed!r}"))
        if block.get("note"):
            found.append((JudgeWarning, f"source support: {block['note']}"))
        if run.uncitable:
            found.append((NotApplicableWarning,
                          f"{len(run.uncitable)} instance(s) have a source that is a plain text without "
                          f"numbered units ([0] …), e.g. {run.uncitable[0]!r}: it has no citable units, so "
                          "citation recall and precision are skipped for them (source support uses it)"))
        return found


SOURCE_SUPPORT = SourceSupportFamily()
