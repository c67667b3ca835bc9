"""The result of a DocLens run: aggregate scores, counts, evidence per instance, signature."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Optional

from doclens.core.metrics import METRICS
from doclens.core.types import InstanceResult
from doclens.io.files import write_atomically
from doclens.io.scores_files import REPORT_FORMAT, iter_instance_results


@dataclass
class Report:
    scores: dict[str, Optional[float]]
    counts: dict[str, dict]
    instances: list[InstanceResult]
    signature: str
    config: dict = field(default_factory=dict)
    usage: dict = field(default_factory=dict)
    sections: dict[str, dict] = field(default_factory=dict)  # note_generation: per-division scores
    baselines: dict[str, Any] = field(default_factory=dict)
    unparsed: dict[str, int] = field(default_factory=dict)
    failed: dict[str, int] = field(default_factory=dict)  # items whose model call failed for good
    warnings: list[str] = field(default_factory=list)
    partial: bool = False
    error: Optional[str] = None
    version: str = ""

    # ---- access ---------------------------------------------------------------------------
    def __getitem__(self, key: str):
        return self.scores[key]

    def instance(self, ident: str) -> InstanceResult:
        for result in self.instances:
            if result.id == ident:
                return result
        raise KeyError(ident)

    # ---- serialisation --------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {
            "format": REPORT_FORMAT,
            "version": self.version,
            "signature": self.signature,
            "partial": self.partial,
            "error": self.error,
            "scores": self.scores,
            "sections": self.sections,
            "counts": self.counts,
            "unparsed": self.unparsed,
            "failed": self.failed,
            "usage": self.usage,
            "config": self.config,
            "baselines": self.baselines,
            "warnings": self.warnings,
            "instances": [r.to_dict() for r in self.instances],
        }

    def to_json(self, indent: Optional[int] = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False, allow_nan=False)

    @classmethod
    def from_dict(cls, data: dict) -> "Report":
        """A report from a parsed dict, trusted as is (:meth:`load` checks a file first)."""
        if data.get("format") != REPORT_FORMAT:
            raise ValueError(f"not a DocLens report (format {data.get('format')!r}, expected {REPORT_FORMAT!r})")
        return cls._from_parts(data, [InstanceResult.from_dict(r) for r in data.get("instances", [])])

    @classmethod
    def _from_parts(cls, header: dict, instances: list[InstanceResult]) -> "Report":
        return cls(scores=header["scores"], counts=header["counts"], signature=header["signature"],
                   instances=instances, config=header.get("config", {}), usage=header.get("usage", {}),
                   sections=header.get("sections", {}), baselines=header.get("baselines", {}),
                   unparsed=header.get("unparsed", {}), failed=header.get("failed", {}),
                   warnings=header.get("warnings", []),
                   partial=header.get("partial", False), error=header.get("error"),
                   version=header.get("version", ""))

    @classmethod
    def from_json(cls, text: str) -> "Report":
        return cls.from_dict(json.loads(text))

    def save(self, path: os.PathLike) -> None:
        """Write atomically: a crash mid-write never leaves a truncated report. Text that cannot be
        encoded as UTF-8 (a lone surrogate such as ``"\\ud800"`` read from an input file) is
        written as a JSON ``\\u`` escape, so saving never fails on the text it holds."""
        write_atomically(path, self.write)

    def write(self, handle) -> None:
        """Write the report's JSON to an open text handle (a file, or ``sys.stdout`` for ``-o -``)."""
        try:
            text = self.to_json()
            text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: ASCII JSON escapes it as \udXXX
            text = json.dumps(self.to_dict(), indent=2, ensure_ascii=True, allow_nan=False)
        handle.write(text)

    @classmethod
    def load(cls, path: os.PathLike) -> "Report":
        """Read a scores file through :func:`doclens.io.scores_files.iter_report`, which checks it
        against the shipped schema: raises :class:`doclens.core.errors.InputError` naming the file, the
        instance and the field of the first problem."""
        header: dict = {}
        instances = list(iter_instance_results(str(path), header))
        return cls._from_parts(header, instances)

    # ---- display --------------------------------------------------------------------------
    #: baseline → the recall its scores report, shown beside claim recall (the paper's comparison)
    SIDE_BY_SIDE = (("rouge", "rougeL_recall"), ("bertscore", "bertscore_recall"), ("medcon", "medcon_recall"))

    def side_by_side(self) -> list[dict]:
        """Claim recall next to ROUGE-L, BERTScore and MEDCON recall: one row for the total and,
        for notes, one per section. ``[]`` when no baseline was computed."""
        present = [(name, key) for name, key in self.SIDE_BY_SIDE if name in self.baselines]
        if not present:
            return []
        parts = [("total", self.scores, {name: self.baselines[name]["scores"] for name, _ in present})]
        for section, scores in self.sections.items():
            parts.append((section, scores, {name: self.baselines[name].get("sections", {}).get(section, {})
                                            for name, _ in present}))
        rows = []
        for part, doclens_scores, baseline_scores in parts:
            row = {"part": part, "claim_recall": doclens_scores.get("claim_recall")}
            for name, key in present:
                row[key] = baseline_scores[name].get(key)
            rows.append(row)
        return rows

    def summary(self) -> str:
        """A plain-text table: each metric pooled and macro, with the counts behind it."""
        def fmt(value):
            return "   n/a" if value is None else f"{100 * value:6.2f}"

        lines = [f"DocLens {'(PARTIAL) ' if self.partial else ''}— {len(self.instances)} instances",
                 f"{'metric':<20}{'pooled':>8}{'macro':>8}{'items':>8}{'empty':>7}{'skipped':>9}"]
        for metric in METRICS:
            c = self.counts.get(metric, {})
            lines.append(f"{metric:<20}{fmt(self.scores.get(metric)):>8}{fmt(self.scores.get(metric + '_macro')):>8}"
                         f"{c.get('items', 0):>8}{c.get('empty', 0):>7}{c.get('skipped', 0):>9}")
        for section, scores in self.sections.items():
            lines.append(f"  {section:<20}" + "".join(f"{fmt(scores.get(m)):>8}" for m in METRICS[:2])
                         + "  (claim recall, claim precision)")
        citations = self.counts.get("citations") or {}
        if citations.get("statements"):
            lines.append(f"statements={citations['statements']} uncited={citations['uncited_statements']} "
                         f"inherited={citations['inherited_statements']} invalid ids={citations['invalid_ids']}")
        if any(self.unparsed.values()):
            lines.append("unparsed judge replies: " + ", ".join(f"{k}={v}" for k, v in self.unparsed.items() if v))
        if any(self.failed.values()):
            lines.append("failed calls (no verdict): " + ", ".join(f"{k}={v}" for k, v in self.failed.items() if v))
        if self.usage:
            u = self.usage
            lines.append(f"calls={u.get('calls', 0)} cached={u.get('cached_calls', 0)} retries={u.get('retries', 0)} "
                         f"failed={u.get('failed_calls', 0)} "
                         f"tokens={u.get('prompt_tokens', 0) + u.get('completion_tokens', 0)} "
                         f"cost=${u.get('cost_usd', 0):.4f} pairs={u.get('pairs', 0)}")
        comparison = self.side_by_side()
        if comparison:
            columns = [c for c in comparison[0] if c != "part"]
            lines.append("side by side (DocLens claim recall, baseline recalls; baselines are per-instance means):")
            lines.append(f"  {'part':<20}" + "".join(f"{c:>18}" for c in columns))
            for row in comparison:
                lines.append(f"  {row['part']:<20}" + "".join(f"{fmt(row[c]):>18}" for c in columns))
        lines.append(f"signature: {self.signature}")
        lines.extend(f"warning: {w}" for w in self.warnings)
        return "\n".join(lines)
