"""The source-support family: each prediction claim against the instance's own source
(:mod:`doclens.core.support` has its verdicts; its settings and judging step are
:class:`doclens.scoring.source_support.SourceSupport`, the family's options: ``DocLens(judge,
source_support=SourceSupport(...))`` and ``doclens score``'s ``--top-n`` …; ``cards/source-support.md``)."""

from __future__ import annotations

from doclens.core.errors import JudgeWarning, NotApplicableWarning
from doclens.core.support import SUPPORT_LABELS, SUPPORT_METRICS, SupportVerdict, support_counts
from doclens.core.types import NO_VERDICT
from doclens.families.base import APPLIES, SKIPPED, Applicability, CountingRule, FamilyContext, MetricFamily


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
    #: its views on the HTML report (views/templates/family_views.html): the block's judge and
    #: evidence counts, and each claim's verdict with its evidence under the instance
    block_view = "support_block"
    items_view = "support_list"
    #: what its signature fields and report block read of the judge
    reads_judge = ("support_verdicts", "support_window_words", "support_prompt_tags")
    #: a source without numbered units (a long text) is read whole or retrieved from
    reads_plain_source = True
    #: a claim the source contradicts or does not address is a fault of the output
    lower_is_better = frozenset({"source_not_supported", "source_not_addressed"})
    #: its settings: retrieval (``RetrievalConfig``), the whole-source budget, the retriever
    options_path = "doclens.scoring.source_support:SourceSupport"

    def applicability(self, result, rule: CountingRule) -> Applicability:
        return SKIPPED if self.items(result) is None else APPLIES

    def count(self, result, rule: CountingRule, section: str | None) -> dict:
        return support_counts(self.items(result), rule.on_unparsed, section)

    def judge(self, works: list, context: FamilyContext) -> dict[int, list]:
        """Every prediction claim of every work with a source, judged against evidence from it
        (:meth:`doclens.scoring.source_support.SourceSupport.judge`, with the family's settings)."""
        return context.options.judge(works, context.evaluator)

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

    def signature_fields(self, context: FamilyContext) -> list[tuple[str, str]]:
        return context.options.signature_fields(context.evaluator)

    def report_block(self, tally: dict[str, int], context: FamilyContext, run) -> dict:
        """The report's ``source_support`` block: the judge's kind, the retrieval signature,
        verdict and retrieval counts, and the instances whose source has no citable units."""
        return {**context.options.report_block(tally, context.evaluator), "uncitable_instances": len(run.uncitable)}

    def verdict_counts(self, block: dict) -> dict[str, dict[str, int]]:
        """The block's claim verdicts, as the verdict plot draws them (``source support``)."""
        claims = (block or {}).get("claims") or {}
        if not claims:
            return {}
        return {"source support": {"supported": int(claims.get("supported", 0)),
                                   "contradicted": int(claims.get("not_supported", 0)),
                                   "not addressed": int(claims.get("not_addressed", 0)),
                                   "unparsed": int(claims.get("unparsed", 0)),
                                   "failed": int(claims.get("failed", 0))}}

    def planning_options(self, options):
        """A dry run's stand-in (:class:`doclens.scoring.source_support.PlanningSourceSupport`):
        sources given whole are planned, the claims of a longer one counted apart."""
        return options.planning()

    def plan(self, options) -> tuple[dict, list[str]] | None:
        return options.plan()

    def run_warnings(self, counts: dict, block: dict, unparsed: int, failed: int, context: FamilyContext,
                     run) -> list[tuple[type, str]]:
        found: list[tuple[type, str]] = []
        if unparsed or failed:
            found.append((JudgeWarning,
                          f"source support: {unparsed} claim(s) unparsed and {failed} failed; they have no verdict "
                          f"and count per on_unparsed={context.settings.on_unparsed!r}"))
        if block.get("note"):
            found.append((JudgeWarning, f"source support: {block['note']}"))
        if run.uncitable:
            found.append((NotApplicableWarning,
                          f"{len(run.uncitable)} instance(s) have a source that is a plain text without "
                          f"numbered units ([0] …), e.g. {run.uncitable[0]!r}: it has no citable units, so "
                          "citation recall and precision are skipped for them (source support uses it)"))
        return found


SOURCE_SUPPORT = SourceSupportFamily()
