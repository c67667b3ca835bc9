"""The result of a DocLens run: aggregate scores, counts, evidence per instance, signature."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

from doclens.core.signature import Signature
from doclens.core.types import STATUS_FAILED, STATUS_UNPARSED, InstanceResult
from doclens.families import FAMILIES, CountingRule, reported, result_counts, result_from_dict
from doclens.families.claims import OTHER_SECTION_COUNT
from doclens.reports.files import write_atomically
from doclens.reports.scores_files import REPORT_FORMAT, iter_instance_results, wrong_format_message

if TYPE_CHECKING:  # the optional extras' types (tables, plots): imported only by the methods that need them
    import datasets
    import pandas
    from matplotlib.figure import Figure


def levelled_warnings(header: dict) -> list[tuple[str, str]]:
    """``(level, message)`` of each warning of a report or scores-file header: its recorded level,
    or ``warning`` where none was recorded (a file written before levels were)."""
    messages = header.get("warnings") or []
    levels = list(header.get("warning_levels") or [])
    return [(levels[n] if n < len(levels) else "warning", message) for n, message in enumerate(messages)]


@dataclass
class Report:
    """The result of a run, as data: what :meth:`save` writes and :meth:`load` reads back.
    :func:`doclens.views.text.summary_text` renders it as the tables `doclens score` prints."""

    scores: dict[str, float | None]
    counts: dict[str, dict]
    instances: list[InstanceResult]
    signature: Signature
    config: dict = field(default_factory=dict)
    usage: dict = field(default_factory=dict)
    sections: dict[str, dict] = field(default_factory=dict)  # note_generation: per-division scores
    baselines: dict[str, Any] = field(default_factory=dict)
    unparsed: dict[str, int] = field(default_factory=dict)
    failed: dict[str, int] = field(default_factory=dict)  # items whose model call failed for good
    warnings: list[str] = field(default_factory=list)
    #: each warning's level, in order (``info``, ``warning``, ``error``: :func:`doclens.core.errors.warning_level`);
    #: a file written before levels were recorded has none, and its warnings read as ``warning``
    warning_levels: list[str] = field(default_factory=list)
    partial: bool = False
    error: str | None = None
    version: str = ""
    #: a streamed result (:mod:`doclens.engines.sink`): ``instances`` is empty and the results
    #: live in this file beside the summary (a plain name, same folder), in ``instances_format``
    #: (``jsonl`` or ``parquet``); ``instance_counts`` holds the per-instance counts the bootstrap
    #: needs (:meth:`doclens.scoring.aggregate.Aggregator.counts_document`)
    instances_file: str | None = None
    instances_format: str | None = None
    instance_counts: dict | None = field(default=None, repr=False)
    #: items the judge was asked about (not written; ``None`` for a loaded report)
    judged: int | None = field(default=None, repr=False, compare=False)
    #: where :meth:`doclens.DocLens.score_to` wrote the summary (not written; ``None`` otherwise)
    written: str | None = field(default=None, repr=False, compare=False)
    #: why it was not written where asked (``written`` then names the fallback file, or is ``None``)
    write_problem: str | None = field(default=None, repr=False, compare=False)
    #: family name → the family's block (:meth:`doclens.families.MetricFamily.report_block`), a
    #: key of the scores file each (``report.<family name>`` reads one too)
    blocks: dict[str, dict] = field(default_factory=dict)

    def __getattr__(self, name: str) -> dict[str, Any]:
        """A registered family's block by its name (``blocks[name]``; ``{}`` when the family was
        not on): for code written before the families kept their blocks in one place."""
        if not name.startswith("__") and any(family.name == name for family in FAMILIES):
            return self.__dict__.get("blocks", {}).get(name, {})
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def levelled_warnings(self) -> list[tuple[str, str]]:
        """``(level, message)`` of every warning (:func:`levelled_warnings`)."""
        return levelled_warnings({"warnings": self.warnings, "warning_levels": self.warning_levels})

    # ---- access ---------------------------------------------------------------------------
    def __getitem__(self, key: str) -> float | None:
        return self.scores[key]

    @property
    def size(self) -> int:
        """How many instances were scored (also for a streamed result, whose ``instances`` is empty)."""
        if self.instances:
            return len(self.instances)
        if self.instance_counts is not None:
            return len(self.instance_counts.get("ids", []))
        return int((self.counts or {}).get("claim_recall", {}).get("instances", 0))

    def instance(self, ident: str) -> InstanceResult:
        for result in self.instances:
            if result.id == ident:
                return result
        raise KeyError(ident)

    # ---- serialisation --------------------------------------------------------------------
    def to_dict(self) -> dict:
        """The scores file's JSON. A streamed result (``instances_file`` set) is a summary: no
        ``instances`` array but ``instances_file``, ``instances_format`` and ``instance_counts``."""
        data = self._header_dict()
        if not self.instances and self.instances_file is None and (self.instance_counts or {}).get("ids"):
            raise ValueError("this report of a streamed run holds no instances (they are in the file "
                             f"DocLens.score_to wrote{': ' + self.written if self.written else ''}); "
                             "load that file with Report.load to save a copy")
        if self.instances_file is not None:
            data.update(instances_file=self.instances_file, instances_format=self.instances_format,
                        instance_counts=self.instance_counts)
        else:
            data["instances"] = [r.to_dict() for r in self.instances]
        return data

    def _header_dict(self) -> dict:
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
            "warning_levels": [level for level, _ in self.levelled_warnings()],
            **{name: block for name, block in self.blocks.items() if block},
        }

    def to_json(self, indent: int | None = 2, ensure_ascii: bool = False) -> str:
        """The report as JSON. A streamed summary's ``instance_counts`` (columns of one number per
        instance) is written compactly on one line: indented, 100,000 instances would be nearly a
        million lines, and Python encodes indented JSON far more slowly and with far more memory."""
        data = self.to_dict()
        counts = data.pop("instance_counts", None)
        text = json.dumps(data, indent=indent, ensure_ascii=ensure_ascii, allow_nan=False)
        if counts is None:
            return text
        compact = json.dumps(counts, ensure_ascii=ensure_ascii, allow_nan=False, separators=(",", ":"))
        newline = "\n" if indent is not None else ""
        pad = " " * indent if isinstance(indent, int) else (indent or "")
        return text[: text.rindex("}")].rstrip() + f",{newline}{pad}\"instance_counts\": {compact}{newline}}}"

    @classmethod
    def from_dict(cls, data: dict) -> Report:
        """A report from a parsed dict, trusted as is (:meth:`load` checks a file first)."""
        if data.get("format") != REPORT_FORMAT:
            raise ValueError(wrong_format_message(data.get("format")))
        return cls._from_parts(data, [result_from_dict(r) for r in data.get("instances", [])])

    @classmethod
    def _from_parts(cls, header: dict, instances: list[InstanceResult]) -> Report:
        signature = header["signature"]  # the file's text, read as data here
        return cls(scores=header["scores"], counts=header["counts"],
                   signature=Signature.read(signature) if isinstance(signature, str) else signature,
                   instances=instances, config=header.get("config", {}), usage=header.get("usage", {}),
                   sections=header.get("sections", {}), baselines=header.get("baselines", {}),
                   unparsed=header.get("unparsed", {}), failed=header.get("failed", {}),
                   warnings=header.get("warnings", []), warning_levels=header.get("warning_levels") or [],
                   partial=header.get("partial", False), error=header.get("error"),
                   version=header.get("version", ""),
                   blocks={family.name: header[family.name] for family in FAMILIES if header.get(family.name)})

    @classmethod
    def from_json(cls, text: str) -> Report:
        return cls.from_dict(json.loads(text))

    def save(self, path: os.PathLike) -> None:
        """Write atomically: a crash mid-write never leaves a truncated report. Text that cannot be
        encoded as UTF-8 (a lone surrogate such as ``"\\ud800"`` read from an input file) is
        written as a JSON ``\\u`` escape, so saving never fails on the text it holds."""
        write_atomically(path, self.write)

    def write(self, handle: TextIO) -> None:
        """Write the report's JSON to an open text handle (a file, or ``sys.stdout`` for ``-o -``)."""
        try:
            text = self.to_json()
            text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: ASCII JSON escapes it as \udXXX
            text = self.to_json(ensure_ascii=True)
        handle.write(text)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Report:
        """Read a scores file through :func:`doclens.reports.scores_files.iter_report`, which checks it
        against the shipped schema: raises :class:`doclens.core.errors.InputError` naming the file, the
        instance and the field of the first problem."""
        header: dict = {}
        instances = list(iter_instance_results(str(path), header))
        return cls._from_parts(header, instances)

    # ---- per-instance rows ------------------------------------------------------------------
    def to_rows(self) -> list[dict]:
        """One plain dict per instance, in report order: what :meth:`to_pandas` and
        :meth:`to_dataset` hold. Columns, family by family (:mod:`doclens.families`; an opt-in
        family's where the report has its scores):

        * ``id``, ``task``, ``has_source`` (whether citation metrics apply);
        * per metric (``claim_recall``, ``claim_precision``, ``citation_recall``,
          ``citation_precision``, with source support ``source_supported``,
          ``source_not_supported``, ``source_not_addressed``): ``<metric>`` the instance's score
          (``None`` when it has nothing to score, or no source for a citation metric),
          ``<metric>_hits`` and ``<metric>_items`` its counts under the report's ``on_unparsed``
          rule (``None`` when the metric does not apply);
        * ``claim_f1``: the instance's claim F1 (:func:`doclens.core.metrics.f1`), after
          ``claim_precision``'s columns; the mean of this column is the report's ``claim_f1_macro``;
        * ``claim_recall_stated_in_other_section``, ``claim_precision_stated_in_other_section``:
          the instance's note claims entailed by the whole premise note but not by their own
          section (``premise_scope="note"``; 0 otherwise);
        * ``unparsed`` and ``failed``: the instance's claims and statements whose judge reply
          could not be read, or whose model call failed for good.

        The pooled corpus score of a metric is ``sum(hits) / sum(items)`` over these rows."""
        rule = CountingRule.from_config(self.config)
        families = reported(self.scores)
        rows = []
        for result in self.instances:
            counts = result_counts(result, rule, families=families)
            row = {"id": result.id, "task": result.task, "has_source": result.has_source}
            for family in families:
                row.update(family.row(result, counts))
            for family in families:
                row.update(family.trailing_row(result))
            verdicts = [item for name in InstanceResult.VERDICT_LISTS for item in getattr(result, name)]
            row["unparsed"] = sum(v.status == STATUS_UNPARSED for v in verdicts)
            row["failed"] = sum(v.status == STATUS_FAILED for v in verdicts)
            rows.append(row)
        return rows

    def to_pandas(self) -> pandas.DataFrame:
        """The per-instance rows (:meth:`to_rows`) as a pandas ``DataFrame``; needs the ``tables``
        extra. Metric columns are floats (``NaN`` where :meth:`to_rows` has ``None``), count
        columns nullable integers (``Int64``)."""
        from doclens.core.errors import require

        pandas = require("pandas", "Report.to_pandas()", "tables")
        frame = pandas.DataFrame(self.to_rows(), columns=self._row_columns())
        for column in frame.columns:
            if column.endswith(("_hits", "_items", OTHER_SECTION_COUNT)) or column in ("unparsed", "failed"):
                frame[column] = frame[column].astype("Int64")
            elif column not in ("id", "task", "has_source"):
                frame[column] = frame[column].astype("float64")
        return frame

    def to_dataset(self) -> datasets.Dataset:
        """The per-instance rows (:meth:`to_rows`) as a ``datasets.Dataset`` (``None`` kept as
        null); needs the ``tables`` extra."""
        from doclens.core.errors import require

        datasets = require("datasets", "Report.to_dataset()", "tables")
        columns = self._row_columns()
        rows = self.to_rows()
        features = datasets.Features({
            name: datasets.Value("string") if name in ("id", "task") else datasets.Value("bool")
            if name == "has_source" else datasets.Value("int64") if name.endswith(("_hits", "_items"))
            or name in ("unparsed", "failed") else datasets.Value("float64") for name in columns})
        return datasets.Dataset.from_dict({name: [row[name] for row in rows] for name in columns}, features=features)

    def _row_columns(self) -> list[str]:
        families = reported(self.scores)
        return ["id", "task", "has_source", *(c for family in families for c in family.row_columns()),
                *(c for family in families for c in family.trailing_columns()), "unparsed", "failed"]

    # ---- display --------------------------------------------------------------------------
    def plot(self, kind: str = "sections", metrics: list[str] | None = None) -> Figure:
        """A matplotlib ``Figure`` of this report, as ``doclens report``'s page draws it (needs the
        ``plots`` extra; :mod:`doclens.reports.plots`). ``kind``: ``"sections"`` (claim recall and
        precision per note section), ``"distribution"`` (each instance's score per metric, the
        pooled score marked) or ``"verdicts"`` (supported / not supported / unparsed / failed
        counts per item kind, and source support's when scored). ``metrics`` narrows the metrics
        shown. In Jupyter the returned figure shows itself; elsewhere ``fig.savefig("x.svg")``."""
        from doclens.reports.plots import report_figure

        return report_figure(self, kind, metrics)

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
