"""Where a scoring run's results go, chunk by chunk: the interface between whatever *produces*
scored chunks and the report.

An engine — the in-process loop of :meth:`doclens.DocLens.score`, or one that scores chunks on
other workers with :meth:`doclens.DocLens.score_chunk` — calls, for each finished chunk **in
input order**::

    results, meta = scorer.score_chunk(chunk)   # on whichever worker holds a judge
    run.merge(meta)                             # on the driver, then:
    sink.add_chunk(results, meta)               # list[InstanceResult], RunMeta of that chunk

and at the end (or when the run stops early, with ``partial=True``)::

    report = sink.finish(scorer, run, partial=False, error=None)

:class:`ResultSink` keeps the results in memory (what ``DocLens.score()`` returns);
:class:`FileSink` writes each chunk to a journal as it finishes and keeps only the running
reduction (:class:`doclens.scoring.aggregate.Aggregator`), so memory is bounded by the chunk,
not the input; at the end it writes the output in the chosen layout
(:mod:`doclens.reports.results_files`). Both reduce through the same aggregator, so the scores,
counts, intervals and signature are the same whichever sink ran.

Before the first chunk the engine calls ``sink.start(scorer, run)``: a :class:`FileSink`
resuming an interrupted run feeds the results already in its journal to the aggregator, merges
their metadata into ``run`` and puts their ids in ``run.done`` (the engine reads those instances
but does not score them again).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os

from doclens.core.errors import ConfigurationError, InputError
from doclens.core.settings import OnUnparsed
from doclens.core.signature import Signature
from doclens.core.types import InstanceResult
from doclens.families import result_from_dict
from doclens.reports.files import fallback_path, is_complete_report, partial_path, write_atomically
from doclens.reports.report import Report
from doclens.reports.results_files import (
    OUTPUT_FORMATS,
    Journal,
    JournalState,
    ParquetResults,
    instances_path,
    journal_path,
    read_journal,
    require_pyarrow,
)
from doclens.scoring.aggregate import Aggregator
from doclens.scoring.build import build_report, settings_signature, usage_of
from doclens.scoring.run import Run, RunMeta

logger = logging.getLogger("doclens")

#: result lines per batch when the journal is copied into the output
_COPY_BATCH = 512


def _add_usage(a: dict, b: dict) -> dict:
    """Two usage dicts added key by key (numbers only; any other value is taken from ``b``)."""
    total = dict(a)
    for key, value in b.items():
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        total[key] = total.get(key, 0) + value if number and isinstance(total.get(key, 0), (int, float)) else value
    if isinstance(total.get("cost_usd"), float):
        total["cost_usd"] = round(total["cost_usd"], 6)  # as Usage.to_dict rounds it
    return total


class ResultSink:
    """Keeps every result in memory and reduces them: the sink of :meth:`doclens.DocLens.score`."""

    keep_results = True

    def __init__(self, on_unparsed: OnUnparsed = "zero"):
        self.aggregator = Aggregator(on_unparsed, keep_results=self.keep_results)
        #: the scorer whose usage a journal's commit lines record (:class:`FileSink`; a Ray run
        #: sets the one that reports the workers' usage before each chunk)
        self.scorer = None

    def start(self, scorer, run: Run) -> None:
        """Called once before the first chunk."""
        self.aggregator.use_scorer(scorer)  # its metric families and counting rule

    def add_chunk(self, results: list[InstanceResult], meta: RunMeta) -> None:
        """One finished chunk: its results in input order and what the chunk taught the run."""
        self.aggregator.add(results)

    def finish(self, scorer, run: Run, partial: bool = False, error: str | None = None) -> Report:
        """The report of everything added so far."""
        return build_report(scorer, run, self.aggregator, partial=partial, error=error, texts=run.texts)


def stopped_run_note(path: str) -> str:
    """What a new run (without ``--resume``) says of the journal an earlier run left at ``path``:
    that run stopped before it finished (an error, Ctrl-C, a kill), how many results it had
    committed, and that this run starts over."""
    try:
        scored = sum(len(lines) for lines, _ in read_journal(path, JournalState({})))
    except (OSError, InputError, ValueError):
        scored = None
    held = "results that cannot be read" if scored is None else f"{scored} instance(s) scored"
    return (f"{path} is the journal of an earlier run on this output that stopped before it finished ({held}); "
            "this run starts over and replaces it (the same command with --resume would have continued it)")


class FileSink(ResultSink):
    """Writes each chunk's results to a journal as it finishes and, at :meth:`finish`, the output
    at ``output`` in ``fmt`` (``json``, ``jsonl`` or ``parquet``; see
    :mod:`doclens.reports.results_files` for the layout). ``resume``: continue the journal an earlier
    run of the same settings left (a run with other settings is refused); without a journal the
    run starts from the beginning. ``system``: the name of the system scored, written into the
    report's ``config`` (what ``doclens leaderboard`` shows).

    A partial output never replaces a complete one: when ``output`` holds a complete report, the
    partial one goes to ``scores.partial.json`` (and its results beside it). The journal stays
    until a complete output is written."""

    keep_results = False

    def __init__(self, output: str, fmt: str = "json", on_unparsed: OnUnparsed = "zero", resume: bool = False,
                 system: str | None = None):
        if fmt not in OUTPUT_FORMATS:
            raise ConfigurationError(f"output format must be one of {OUTPUT_FORMATS}, got {fmt!r}")
        if fmt == "parquet":
            require_pyarrow()  # before any work: the error names the extra
        super().__init__(on_unparsed)
        self.output, self.fmt, self.resume, self.system = output, fmt, resume, system
        self.journal_path = journal_path(output)
        self.journal: Journal | None = None
        self.resumed = 0  # results taken over from an earlier run's journal
        self.dropped_lines = 0  # lines of that journal dropped (an uncommitted chunk, a cut-off line)
        self.written: str | None = None  # the summary path finish() wrote
        #: the calls, tokens and cost of the run being resumed (as of its last committed chunk)
        self.prior_usage: dict = {}
        self.run: Run | None = None

    def start(self, scorer, run: Run) -> None:
        super().start(scorer, run)
        self.scorer, self.run = scorer, run
        settings = settings_signature(scorer)
        if self.resume and os.path.exists(self.journal_path):
            state = JournalState({})
            chunks = read_journal(self.journal_path, state)
            first = True
            for lines, commit in chunks:
                if first:
                    self._check_settings(state.header, settings)
                    first = False
                try:
                    results = [result_from_dict(json.loads(line)) for line in lines]
                except (ValueError, KeyError, TypeError) as exc:
                    raise InputError(f"{self.journal_path}: a committed result cannot be read ({exc}); the journal "
                                     "is damaged: rerun without --resume") from None
                self.aggregator.add(results)
                run.merge(RunMeta.from_dict(commit))
                self.prior_usage = commit.get("usage") or {}
                ids = [r.id for r in results]
                run.done.update(ids)
                self.resumed += len(ids)
            if first:  # no chunk committed: the header is still checked
                self._check_settings(state.header, settings)
            self.dropped_lines = state.dropped_lines
            logger.info("resuming %s: %d result(s) already there%s", self.journal_path, self.resumed,
                        f", {state.dropped_lines} uncommitted line(s) dropped" if state.dropped_lines else "")
            self.journal = Journal.append(self.journal_path, state.committed_bytes)
            return
        if self.resume:
            logger.info("resume: no journal %s (the run finished, or never started): scoring from the "
                        "beginning; cached answers are reused", self.journal_path)
        elif os.path.exists(self.journal_path):
            logger.warning("%s", stopped_run_note(self.journal_path))
        self.journal = Journal.create(self.journal_path, settings, self.output)

    def _check_settings(self, header: dict, settings: Signature) -> None:
        found = Signature.read(header.get("settings"))  # read_journal made it a Signature
        if found != settings:
            raise ConfigurationError(
                f"--resume: {self.journal_path} was written with other settings, so its results cannot be "
                "continued with these:\n  " + "\n  ".join(found.differences(settings))
                + "\nrerun with the same options, or without --resume to start over")

    def add_chunk(self, results: list[InstanceResult], meta: RunMeta) -> None:
        # the commit line also records the usage so far, so that a resumed run's report counts
        # the calls of the run it continues
        if self.journal is None:
            raise RuntimeError("FileSink.add_chunk before start(): there is no journal to write to")
        usage: dict = _add_usage(self.prior_usage, usage_of(self.scorer, self.run)) if self.scorer is not None else {}
        self.journal.write_chunk(results, {**meta.to_dict(), "usage": usage})
        self.aggregator.add(results)

    def finish(self, scorer, run: Run, partial: bool = False, error: str | None = None) -> Report:
        report = super().finish(scorer, run, partial=partial, error=error)
        if self.prior_usage:
            report.usage = _add_usage(self.prior_usage, report.usage)
        if self.system:
            report.config["system"] = self.system
        if self.journal is not None:
            self.journal.close()
        if partial and not len(self.aggregator):
            if self.journal is not None and not self.resumed:
                # this run's journal holds no result: removed, so that no later run is told of it
                with contextlib.suppress(OSError):
                    os.remove(self.journal_path)
            return report  # nothing scored: nothing written
        target = self.output
        if partial and os.path.exists(target) and is_complete_report(target):
            target = partial_path(target)
        try:
            self._write(report, target, self.fmt)
        except (OSError, ValueError) as exc:
            problem = f"cannot write {target} ({exc.strerror if isinstance(exc, OSError) else exc})"
            fallback = fallback_path(self.output)
            try:  # one file in a folder that can be written, so that nothing finished is lost
                self._write(report, fallback, "json")
            except (OSError, ValueError) as again:
                report.write_problem = (f"{problem}; the fallback {fallback} failed too ({again}); the results stay "
                                        f"in {self.journal_path} (the same command with --resume writes them)")
                return report
            report.write_problem = f"{problem}; the report was written to {fallback} instead"
            target = fallback
        self.written = report.written = target
        if not partial:
            os.remove(self.journal_path)
        return report

    # ---- the output ------------------------------------------------------------------------
    def _committed_lines(self):
        """The journal's committed result lines, a batch at a time."""
        batch: list[str] = []
        for lines, _ in read_journal(self.journal_path):
            batch.extend(lines)
            if len(batch) >= _COPY_BATCH:
                yield batch
                batch = []
        if batch:
            yield batch

    def _write(self, report: Report, target: str, fmt: str) -> None:
        if fmt == "json":
            write_atomically(target, lambda handle: self._write_single(report, handle))
            return
        results = instances_path(target, fmt)
        if fmt == "jsonl":
            def jsonl(handle) -> None:
                for batch in self._committed_lines():
                    handle.write("".join(batch))

            write_atomically(results, jsonl)
        else:
            def parquet(handle) -> None:
                writer = ParquetResults(handle)
                try:
                    for batch in self._committed_lines():
                        writer.write_lines(batch)
                finally:
                    writer.close()

            write_atomically(results, parquet, binary=True)
        report.instances_file, report.instances_format = os.path.basename(results), fmt
        write_atomically(target, report.write)

    def _write_single(self, report: Report, handle) -> None:
        """The one-file layout: the summary fields, then the ``instances`` array copied line by
        line from the journal."""
        header = json.dumps(report._header_dict(), indent=2, ensure_ascii=True, allow_nan=False)
        handle.write(header[: header.rindex("}")].rstrip() + ',\n  "instances": [\n')
        first = True
        for batch in self._committed_lines():
            for line in batch:
                handle.write(("" if first else ",\n") + line.rstrip("\n"))
                first = False
        handle.write("\n  ]\n}\n")

