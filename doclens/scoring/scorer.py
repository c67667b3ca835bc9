"""The DocLens scorer: instances in, report out (``docs/design.md`` §3).

    instances ─► claims (given, or extracted per task/section) ─┐
                 statements + citations (parsed from the prediction) ─┤
                                                                      ▼
                     evaluator (batched) ─► verdicts ─► aggregation ─► Report

Instances are processed in chunks: each chunk's extraction and judging go to the extractor and
the evaluator as one batch (so in-process models batch and LLM clients run concurrently), and
a failure — bad input further down the file, an endpoint that stays down, Ctrl-C — keeps every
chunk finished before it: the exception carries ``partial_report``.

The steps live in their own modules: :mod:`doclens.scoring.run` (the per-run state),
:mod:`doclens.scoring.verdicts` (requests out, verdicts back), :mod:`doclens.engines.sink`
(where each finished chunk goes: kept in memory by :meth:`DocLens.score`, written as it
finishes by :meth:`DocLens.score_to`), :mod:`doclens.scoring.aggregate` (the incremental
reduction) and :mod:`doclens.scoring.build` (the report).
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Any

from doclens.core.errors import ConfigurationError, InputError, UnparsedJudgementError
from doclens.core.settings import QUESTION_STATEMENTS, UNCITED, KeywordSignature, ScoringSettings  # noqa: F401
from doclens.core.tasks import AUTO_TASK, SECTION_NAMES, Task, check_task
from doclens.core.threads import collector_paused
from doclens.core.types import NO_VERDICT, Direction, Instance, InstanceResult, SourceUnit, Statement
from doclens.engines.progress import InstanceSteps, ProgressBar, judge_batch
from doclens.engines.sink import FileSink, ResultSink
from doclens.evaluators.base import Evaluator
from doclens.extraction.extractors import ExtractionRequest, Extractor, FailedExtraction
from doclens.families import FAMILIES, CountingRule, FamilyContext, MetricFamily, own_item_families, selected
from doclens.inputs.tables import UnicodeRepairWarning
from doclens.inputs.unicode import replace_lone_surrogates
from doclens.parsing.sections import detect_task, looks_like_note, note_section_spans, segments
from doclens.parsing.source_units import number_source, parse_source_units
from doclens.parsing.statements import (
    citation_style,
    inherit_citations,
    parse_statements,
    strip_citations,
    whole_statement,
    without_citations,
)
from doclens.reports.files import output_lock
from doclens.reports.report import Report
from doclens.scoring.run import Run, RunMeta, Work
from doclens.scoring.verdicts import (
    citation_requests,
    claim_requests,
    instance_result,
    mark_for_review,
    own_section_lookup,
    own_section_requests,
)

logger = logging.getLogger("doclens")

#: A run whose unparsed share of judged items is above this is reported as incomplete.
UNPARSED_SHARE_LIMIT = 0.5
#: Characters of reference text and claims whose extraction a scorer keeps (:meth:`DocLens._extract`):
#: every ACI-BENCH reference (207 notes, about 1.5 million characters with their claims) and any
#: leaderboard's reference set of that size, while a stream of distinct references (20,000
#: instances, each its own reference) no longer grows the scorer's memory with the input. Kept
#: first come, never evicted: a run of several systems over a larger reference set still finds
#: the first references kept for each system (evicting the oldest would find none).
REFERENCE_CLAIMS_KEPT_CHARS = 2_000_000


def incomplete_reasons(report: Report) -> list[str]:
    """Why a finished report is not a complete result (empty when it is): items whose call failed
    for good, or most judge replies unreadable. The CLI exits with ``EXIT_INCOMPLETE`` for these."""
    reasons = []
    failed = sum((report.failed or {}).values())
    failed_calls = (report.usage or {}).get("failed_calls", 0)
    if failed or failed_calls:
        reasons.append(f"{failed_calls} model call(s) failed for good; {failed} item(s) are marked 'failed' "
                       f"(scored per on_unparsed). Rerun the same command to ask exactly those again: every "
                       "answer received is cached")
    for name, result in (report.baselines or {}).items():
        if result.get("failed"):
            reasons.append(f"baseline {name} failed, the judged scores and the other baselines are in the report: "
                           f"{result.get('error')}")
    judged = report.judged if report.judged is not None else sum(
        getattr(v, "judged", True) for r in report.instances  # a family's own items: all judged
        for v in r.reference_claims + r.prediction_claims + r.statements
        + [item for items in r.family_items.values() for item in items])
    unparsed = sum((report.unparsed or {}).values())
    if judged and unparsed / judged > UNPARSED_SHARE_LIMIT:
        reasons.append(f"most judge replies could not be read: {unparsed} of {judged} judged item(s) are "
                       f"'unparsed' ({100 * unparsed / judged:.0f} %); the scores say little about the texts. "
                       "Check the model, the prompt style (--evaluator) and the endpoint")
    return reasons


def _family_options(family_options: dict | None, keywords: dict) -> dict:
    """``{family name: settings}`` from ``family_options=`` and the keywords named after a registered
    family (taken out of ``keywords``), each checked by its family."""
    given = dict(family_options or {})
    for family in FAMILIES:
        if family.name in keywords:
            if family.name in given:
                raise ConfigurationError(f"{family.name}= and family_options[{family.name!r}] both given: give one")
            given[family.name] = keywords.pop(family.name)
    known = {family.name: family for family in FAMILIES}
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise ConfigurationError(f"family_options: unknown metric family {', '.join(map(repr, unknown))}; the "
                                 f"registered ones are {', '.join(known)}")
    return {name: known[name].check_options(options) for name, options in given.items() if options is not None}


def _repaired(instance: Instance) -> Instance:
    """``instance`` with lone surrogates replaced by U+FFFD in every field, named in a warning
    (:mod:`doclens.inputs.unicode`): the file readers repair their rows, and an instance given
    to :meth:`DocLens.score` as a dict or an :class:`Instance` gets the same, so one row of text
    no encoder can write never stops a run in the judge."""
    fields, repaired = replace_lone_surrogates(dict(vars(instance)))
    if not repaired:
        return instance
    warnings.warn(f"instance {instance.id!r}: {repaired} lone surrogate(s) in "
                  f"{', '.join(k for k, v in vars(instance).items() if v is not fields[k])} replaced with U+FFFD",
                  UnicodeRepairWarning, stacklevel=4)
    return Instance(**fields)


class DocLens:
    """Score generated medical text against references, fact by fact.

    Parameters
    ----------
    evaluator : Evaluator
        The judge (``doclens.load_evaluator("…")`` or your own subclass).
    extractor : Extractor, optional
        Produces claims for instances without ``reference_claims`` / ``prediction_claims``.
        Without one, such an instance raises :class:`InputError` naming it.
    settings : ScoringSettings, optional
        How to score (:class:`doclens.core.settings.ScoringSettings`: task, citation rules,
        premise scope, how unparsed verdicts count, source numbering, metric families, chunk
        size), checked once when it was made. Default: ``ScoringSettings()``.
    **options
        The same settings as keywords (``DocLens(judge, uncited="inherit", premise_scope=
        "section")``), read by :meth:`ScoringSettings.from_kwargs`: a name it lacks is refused.
        With ``settings`` too, those not ``None`` change it (``settings.replace``). What each
        means: :class:`~doclens.core.settings.ScoringSettings`.
    baselines : list of str, optional
        Also compute these baselines (``rouge``, ``bertscore``, ``medcon``) on the same instances.
    baseline_options : dict, optional
        Per-baseline settings passed to :func:`doclens.baselines.compute_baselines`.
    family_options : dict, optional
        ``{family name: its settings}`` for the metric families that have settings of their own
        (:meth:`doclens.families.MetricFamily.options_type`); giving a family's settings turns it
        on. A family's name as a keyword says the same (``DocLens(judge, <family name>=settings)``;
        ``cards/source-support.md`` has one). A family that is on and was given none has its
        defaults.
    """

    #: what ``DocLens(...)`` takes: its own parameters and each ScoringSettings option as a keyword
    __signature__ = KeywordSignature(ScoringSettings)

    def __init__(self, evaluator: Evaluator, extractor: Extractor | None = None, *,
                 settings: ScoringSettings | None = None, baselines: list[str] | None = None,
                 baseline_options: dict | None = None, family_options: dict | None = None,
                 **options: Any) -> None:
        if not isinstance(evaluator, Evaluator):
            raise ConfigurationError(f"evaluator must be a doclens.Evaluator, got {type(evaluator).__name__}")
        if extractor is not None and not isinstance(extractor, Extractor):
            raise ConfigurationError(f"extractor must be a doclens.Extractor, got {type(extractor).__name__}")
        given = _family_options(family_options, options)
        settings = ScoringSettings.from_kwargs(settings, **options)  # checked there, once
        turned_on = [family.selector for family in FAMILIES if family.name in given]
        if any(selector not in settings.metrics for selector in turned_on):
            settings = settings.replace(metrics=tuple(dict.fromkeys((*settings.metrics, *turned_on))))
        #: how this scorer scores (frozen; read by the steps, the report and its signature)
        self.__dict__["settings"] = settings
        self.evaluator = evaluator
        self.extractor = extractor
        self.baselines = list(baselines or [])
        self.baseline_options = dict(baseline_options or {})
        if self.baselines:  # bad baseline names or options are refused before anything is judged
            from doclens.baselines import check_baseline_settings

            check_baseline_settings(self.baselines, self.baseline_options,  # auto: the tasks met decide, later
                                    task=settings.task if settings.task not in (None, AUTO_TASK) else "general")
        #: the metric families this scorer computes (:mod:`doclens.families`) and how they count
        self.families = selected(settings.metrics)
        #: each family's own settings (those that have some): given, or the family's defaults
        self.family_options = {family.name: given[family.name] if family.name in given else family.default_options()
                               for family in self.families if family.options_type() is not None}
        self.counting_rule = CountingRule(settings.on_unparsed, settings.uncited_outputs)
        #: reference claims extracted by this scorer, by (task, section, text): a reference scored
        #: again (the next system's outputs against the same references, ``doclens score A B … -o
        #: DIR/``) is not extracted again; failed extractions are not kept
        self._reference_claims: dict[tuple[str, str | None, str], list[str]] = {}
        self._reference_claims_chars = 0  # what it holds, bounded (REFERENCE_CLAIMS_KEPT_CHARS)

    def family_context(self, family: MetricFamily) -> FamilyContext:
        """What ``family`` reads of this scorer: the settings, the judge and extractor, and its own
        settings (:class:`doclens.families.FamilyContext`)."""
        return FamilyContext(self.settings, self.evaluator, self.extractor, self.family_options.get(family.name))

    def __getattr__(self, name: str) -> Any:  # a setting's value (its own type), or a family's settings
        """``scorer.uncited`` … : each setting read from :attr:`settings` (for code written when
        they were attributes of their own), and a family's own settings by its name
        (``scorer.<family name>``: ``None`` where the family is off); nothing else is looked up here."""
        settings = self.__dict__.get("settings")
        if settings is not None and name in ScoringSettings.names():
            return getattr(settings, name)
        if any(family.name == name for family in FAMILIES) and "family_options" in self.__dict__:
            return self.__dict__["family_options"].get(name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:  # any attribute's value
        if name == "settings" or name in ScoringSettings.names():
            raise AttributeError(f"a DocLens's settings are frozen ({name}): build a new DocLens, e.g. "
                                 f"DocLens(evaluator, extractor, settings=scorer.settings.replace({name}=…))")
        super().__setattr__(name, value)

    def close(self) -> None:
        """Close the judge and the extractor (:meth:`doclens.evaluators.usage.Component.close`: the
        offline judge writes its new Porter stems and pending readings, ``JudgeResources.close``;
        an LLM judge closes its client and answer cache). They reopen on use, so a scorer closed
        can score again. Safe to call twice; ``with DocLens(...) as scorer:`` closes on leaving."""
        self.evaluator.close()
        if self.extractor is not None:
            self.extractor.close()

    def __enter__(self) -> DocLens:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ------------------------------------------------------------------------------------------
    def score(self, instances: Iterable[dict | Instance], progress: bool = True, *,
              sink: ResultSink | None = None, columns: dict | str | None = None) -> Report:
        """Score ``instances`` and return a :class:`Report`. ``instances``: dicts or
        :class:`Instance`, a ``datasets.Dataset`` (or a ``DatasetDict`` with one split) or a pandas
        ``DataFrame``; ``columns`` maps field names to column names (``{"prediction":
        "generated_note"}``, see :func:`doclens.inputs.tables.as_instances`).

        Raises :class:`InputError` for bad input (naming the instance and field), and
        :class:`UnparsedJudgementError` with ``on_unparsed="raise"``; any exception raised
        mid-run carries ``partial_report``, the report of every chunk finished before it.
        The run's state lives in a :class:`Run` of its own: one scorer can score twice at once.
        ``sink``: where each finished chunk goes (:mod:`doclens.engines.sink`); by default the
        results are kept in memory and returned in the report — for large inputs use
        :meth:`score_to`, which writes them as it goes.
        """
        from doclens.inputs.tables import as_instances

        instances = as_instances(instances, columns)
        total = len(instances) if isinstance(instances, Sized) else None
        run = Run()
        sink = sink if sink is not None else ResultSink(self.settings.on_unparsed)
        sink.start(self, run)  # a refused --resume stops here, before anything is written
        iterator = iter(instances)
        bar = ProgressBar(total, progress, self.evaluator, self.extractor)
        try:
            while True:
                chunk, pending, read = self._read_chunk(iterator, run)
                if chunk:
                    meta = RunMeta()
                    results = self._score_chunk(chunk, meta, bar)
                    run.merge(meta)
                    sink.add_chunk(results, meta)
                # instances read but not scored (skipped by --resume) step the bar here; the
                # scored ones stepped it as each was judged
                bar.step(read - len(chunk))
                if pending is not None:
                    raise pending
                if read < self.settings.chunk_size:
                    break
        except BaseException as exc:
            error = f"{type(exc).__name__}: {exc}"
            for holder in (self.evaluator, self.extractor):  # an endpoint may have echoed the key
                error = holder.redact(error) if holder is not None else error
            exc.partial_report = sink.finish(self, run, partial=True, error=error)  # type: ignore[attr-defined]
            raise
        finally:
            bar.close()
        return sink.finish(self, run)

    def score_to(self, output: str, instances: Iterable[dict | Instance], *, output_format: str = "json",
                 resume: bool = False, progress: bool = True, system: str | None = None,
                 columns: dict | str | None = None) -> Report:
        """Score ``instances`` and write the results to ``output`` as each chunk finishes, in
        memory bounded by the chunk, not the input (:class:`doclens.engines.sink.FileSink`).

        ``output_format``: ``json`` (one scores file, the layout :meth:`Report.save` writes),
        ``jsonl`` or ``parquet`` (a summary at ``output`` and the per-instance results beside
        it; Parquet needs ``pyarrow``). ``resume``: continue from the journal an interrupted run
        with the same settings left beside ``output``; instances already scored there are read
        but not scored again. Returns the report without its instances (``report.size`` says how
        many); on an error the exception carries ``partial_report`` and a partial output is
        written (never over a complete one). ``system``: recorded in the report's ``config``
        (the name ``doclens leaderboard`` shows). ``columns``: as for :meth:`score`. One output,
        one writer: :class:`doclens.reports.files.OutputLocked` at once when another run writes it."""
        with output_lock(output, output_format):
            return self.score(instances, progress=progress, columns=columns,
                              sink=FileSink(output, output_format, self.settings.on_unparsed, resume=resume, system=system))

    def score_chunk(self, chunk: list[Instance]) -> tuple[list[InstanceResult], RunMeta]:
        """Score one chunk of instances already read and checked (ids unique): its results in
        the chunk's order, and what it taught the run (tasks met, extractor use, capped
        statements). An engine that scores chunks elsewhere (a worker holding its own judge)
        calls this and passes both to a sink on the driver, in input order
        (:mod:`doclens.engines.sink`): the report is then the same as :meth:`score`'s."""
        meta = RunMeta()
        return self._score_chunk(chunk, meta), meta

    def _read_chunk(self, iterator: Iterator[dict | Instance],
                    run: Run) -> tuple[list[Instance], InputError | None, int]:
        """Up to ``chunk_size`` instances to score, the input error that stopped the reading (the
        instances before it are still scored), and how many instances were read (those in
        ``run.done``, scored by the run being resumed, are read but not returned)."""
        chunk: list[Instance] = []
        read = 0
        try:
            while read < self.settings.chunk_size:
                item = next(iterator)
                position = len(run.seen)
                instance = _repaired(item if isinstance(item, Instance) else Instance.from_dict(item, position))
                if instance.id in run.seen:
                    raise InputError(f"instance {instance.id!r}: id seen twice", field="id")
                run.seen.add(instance.id)
                read += 1
                if self.baselines:
                    run.texts[instance.id] = (strip_citations(instance.prediction), instance.reference)
                if instance.id not in run.done:
                    chunk.append(instance)
        except StopIteration:
            pass
        except InputError as exc:
            return chunk, exc, read
        return chunk, None, read

    @collector_paused()  # docs/design.md, "Speed": cycles are collected between chunks, not within one
    def _score_chunk(self, chunk: list[Instance], run: RunMeta,
                     bar: ProgressBar | None = None) -> list[InstanceResult]:
        """The results of one chunk, in its order; what the chunk taught the run (tasks met,
        extractor use, capped statements) goes into ``run`` (a fresh :class:`RunMeta` per chunk).
        ``bar`` steps once per instance, when its last judgement is in."""
        works = [self._prepare(instance, run) for instance in chunk]
        self._extract(works, run)
        claim_asked, claim_slots = claim_requests(works, self.settings.section_fallback, self.settings.premise_scope)
        _count_section_fallbacks(works, run)
        citation_asked, citation_slots = citation_requests(works)
        steps = InstanceSteps(len(works), claim_slots, citation_slots, bar.step, bar.touch) if bar else None
        claim_answers = judge_batch(self.evaluator.judge_claims_many, claim_asked,
                                    steps.claim_done if steps else None) if claim_asked else []
        citation_answers = judge_batch(self.evaluator.judge_citations_many, citation_asked,
                                       steps.citation_done if steps else None) if citation_asked else []
        self._check_claim_answers(claim_asked, claim_answers)
        if len(citation_answers) != len(citation_asked):
            raise RuntimeError(f"{type(self.evaluator).__name__} returned the wrong number of citation judgements")
        if steps:
            steps.finish()
        claim_lookup = dict(zip(claim_slots, claim_answers))
        citation_lookup = dict(zip(citation_slots, citation_answers))
        judged_here = [family for family in self.families if not family.judges_itself]
        own_lookup = self._placement_check(works, claim_slots, claim_answers, bar)
        results = [instance_result(i, work, claim_lookup, citation_lookup, self.counting_rule, judged_here,
                                   self.settings.premise_scope, own_lookup) for i, work in enumerate(works)]
        mark_for_review(results, self.settings.review_below, run)
        self._judge_families(works, results)
        if self.settings.on_unparsed == "raise":
            _raise_on_unparsed(results)
        return results

    def _placement_check(self, works: list[Work], claim_slots: list[tuple], claim_answers: list,
                         bar: ProgressBar | None) -> dict:
        """Under ``premise_scope="note"``: the supported note claims whose evidence lies outside their
        section, asked again against their own section (:func:`own_section_requests`)."""
        if self.settings.premise_scope != "note":
            return {}
        asked, slots, held = own_section_requests(works, claim_slots, claim_answers)
        answers = judge_batch(self.evaluator.judge_claims_many, asked,
                              (lambda n: bar.touch()) if bar else None) if asked else []
        self._check_claim_answers(asked, answers)
        return own_section_lookup(slots, answers, held)

    def _judge_families(self, works: list[Work], results: list[InstanceResult]) -> None:
        """Each family's own judging step (:meth:`doclens.families.MetricFamily.judge`): its items
        kept in the results, its per-instance scores added."""
        for family in own_item_families(self.families):
            for i, items in family.judge(works, self.family_context(family)).items():
                results[i].family_items[family.name] = items
                results[i].scores.update(family.instance_scores(family.counts(results[i], self.counting_rule)))

    def _check_claim_answers(self, asked: list, answers: list) -> None:
        if len(answers) != len(asked) or any(len(a) != len(r.claims) for a, r in zip(answers, asked)):
            raise RuntimeError(f"{type(self.evaluator).__name__} returned the wrong number of claim judgements")

    def _prepare(self, instance: Instance, run: RunMeta) -> Work:
        where = f"instance {instance.id!r}: "
        task = instance.task or self.settings.task
        if task == AUTO_TASK:  # picked from the reference's shape, recorded per instance (result.task)
            task = detect_task(instance.reference)
            run.auto_tasks[task] = run.auto_tasks.get(task, 0) + 1
        elif not task and looks_like_note(instance.reference):
            run.untasked_notes += 1
        task = check_task(task, where)
        run.tasks.add(task)
        work = Work(instance, task)
        if task == Task.QUESTION_SUMMARIZATION:
            # The whole question is one claim (docs/design.md §4).
            work.ref_claims = {None: [instance.reference.strip()] if instance.reference.strip() else []}
            prediction = strip_citations(instance.prediction)
            work.pred_claims = {None: [prediction] if prediction else []}
        else:
            for field_name, target in (("reference_claims", work.ref_claims), ("prediction_claims", work.pred_claims)):
                given = getattr(instance, field_name)
                if given is not None:
                    run.used_given = True
                    target.update(_given_claims(given, task, field_name, where))
        units = self._citable_units(instance, where, run) if instance.source is not None else None
        if units is not None:
            work.n_units = len(units)
            work.units = {u.index: u.premise_text for u in units}
            work.statements = self._statements(instance.prediction, task, set(work.units), run, instance.id)
        return work

    def _citable_units(self, instance: Instance, where: str, run: RunMeta) -> list[SourceUnit] | None:
        """The source's numbered units for the citation metrics: a ``"[0] …"`` string or a list
        (strings, and table rows, each row the unit ``"column: value; …"``). A long text without
        ``[0]`` has no citable units: with source support on, the citation metrics are skipped for
        it (the report counts and warns); otherwise it is an input error, as before."""
        source = instance.source
        try:
            if isinstance(source, list) and any(isinstance(item, dict) for item in source):
                from doclens.retrieval.facts import record_units

                return [SourceUnit(unit.index, unit.text, unit.speaker) for unit, _ in record_units(source)]
            if isinstance(source, str) and self.settings.source_units != "given":
                texts, how = number_source(source, self.settings.source_units)
                if texts is not None:
                    run.numbered_sources[how] = run.numbered_sources.get(how, 0) + 1
                    return parse_source_units(texts)
            if (any(family.reads_plain_source for family in self.families) and isinstance(source, str)
                    and source.strip() and not source.lstrip().startswith("[0]")):
                run.uncitable.append(instance.id)
                return None
            return parse_source_units(source)
        except ValueError as exc:  # InputError, or e.g. an unit number too long to convert
            raise InputError(f"{where}field 'source': {exc}", field="source") from exc

    def _statements(self, prediction: str, task: str, units: set[int], run: RunMeta,
                    ident: str = "") -> list[Statement]:
        if task == Task.NOTE_GENERATION:
            statements: list[Statement] = []
            for section, start, end in note_section_spans(prediction):
                statements += parse_statements(prediction[start:end], section=section, start_index=len(statements))
        elif task == Task.QUESTION_SUMMARIZATION and self.settings.question_statements == "whole":
            statements = whole_statement(prediction)
        else:
            statements = parse_statements(prediction)
        style = citation_style(prediction, statements, len(units))
        if not style.consistent:  # stray numbers (LED's "[2]The onset …"): no citation is read (cards/doclens.md)
            statements = without_citations(statements)
            run.unread_citations[ident] = style.groups
        if self.settings.uncited != "zero":
            statements = inherit_citations(statements, within_section=self.settings.uncited == "inherit")
        if self.settings.max_citations:
            for statement in statements:
                # validity first (the original scripts' order): a statement citing an id the
                # source lacks is a miss with every id it cites counted, so nothing is capped away
                if len(statement.citations) > self.settings.max_citations and all(c in units for c in statement.citations):
                    statement.citations = statement.citations[: self.settings.max_citations]
                    run.capped_statements += 1
        return statements

    def _extract(self, works: list[Work], run: RunMeta) -> None:
        requests: list[ExtractionRequest] = []
        targets: list[tuple[Work, str, dict, str | None]] = []
        for work in works:
            for claims, text, field_name in ((work.ref_claims, work.instance.reference, "reference_claims"),
                                             (work.pred_claims, strip_citations(work.instance.prediction),
                                              "prediction_claims")):
                if claims or work.task == Task.QUESTION_SUMMARIZATION:
                    continue
                if self.extractor is None:
                    raise InputError(f"instance {work.instance.id!r}: no '{field_name}' given and no extractor "
                                     "configured; pass claims or an extractor (command line: --extractor "
                                     "sentences, clauses, llm …; 'doclens presets' lists them)", field=field_name)
                run.used_extractor = True
                for section, segment in segments(work.task, text).items():
                    claims[section] = []
                    kept = self._reference_claims.get((work.task, section, segment)) \
                        if field_name == "reference_claims" else None
                    if kept is not None:
                        claims[section] = list(kept)
                    elif segment.strip():
                        requests.append(ExtractionRequest(segment, work.task, section))
                        targets.append((work, field_name, claims, section))
        if requests and self.extractor is not None:  # a request is made only with an extractor (above)
            extracted = self.extractor.extract_many(requests)
            if len(extracted) != len(requests):
                raise RuntimeError(f"{type(self.extractor).__name__} returned {len(extracted)} claim lists for "
                                   f"{len(requests)} texts")
            for request, (work, field_name, claims, section), found in zip(requests, targets, extracted):
                claims[section] = list(found)
                if isinstance(found, FailedExtraction):
                    work.failed_extractions[(field_name, section)] = found.error
                elif field_name == "reference_claims":
                    self._keep_reference_claims((request.task, section, request.text), claims[section])

    def _keep_reference_claims(self, key: tuple[str, str | None, str], claims: list[str]) -> None:
        """Keep a reference's claims while the memo holds under :data:`REFERENCE_CLAIMS_KEPT_CHARS`."""
        size = len(key[2]) + sum(len(claim) for claim in claims)
        if key in self._reference_claims or self._reference_claims_chars + size > REFERENCE_CLAIMS_KEPT_CHARS:
            return
        self._reference_claims[key] = list(claims)
        self._reference_claims_chars += size


def _count_section_fallbacks(works: list[Work], run: RunMeta) -> None:
    """Count in ``run`` the claims judged against the whole premise note because it lacks their section."""
    for work in works:
        for direction, section in work.section_fallbacks:
            n = len((work.ref_claims if direction == Direction.RECALL else work.pred_claims)[section])
            run.section_fallbacks[direction] = run.section_fallbacks.get(direction, 0) + n


def _raise_on_unparsed(results: list[InstanceResult]) -> None:
    """``on_unparsed="raise"``: an :class:`UnparsedJudgementError` naming the instances with an item without a verdict."""
    bad = [r.id for r in results if any(v.status in NO_VERDICT for v in
                                         r.reference_claims + r.prediction_claims + r.statements
                                         + [item for items in r.family_items.values() for item in items])]
    if bad:
        raise UnparsedJudgementError(f"judge replies could not be parsed, or the call failed, for instance(s) "
                                     f"{', '.join(bad)} (on_unparsed='raise')")


def _given_claims(given: Sequence[str] | dict[str, list[str]], task: str, field_name: str,
                  where: str) -> dict[str | None, list[str]]:
    """Claims given in the input: a list (the whole text) or, for notes, a section mapping."""
    if not isinstance(given, dict):
        return {None: list(given)}
    if task != Task.NOTE_GENERATION:
        raise InputError(f"{where}field '{field_name}' is a section mapping, which only the "
                         f"note_generation task takes (task is {task!r})", field=field_name)
    unknown = sorted(set(given) - set(SECTION_NAMES))
    if unknown:
        raise InputError(f"{where}field '{field_name}' has unknown section(s) {unknown}; sections are "
                         f"{', '.join(SECTION_NAMES)}", field=field_name)
    return {section: list(given.get(section, [])) for section in SECTION_NAMES}
