"""``doclens score``: read instances, build the scorer the options describe, score, save the
report (a partial one on errors) and choose the exit code."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path

from doclens.baselines import BASELINE_NAMES
from doclens.cli.common import (
    NON_NEGATIVE_FLOAT,
    NON_NEGATIVE_INT,
    POSITIVE_FLOAT,
    POSITIVE_INT,
    PROBABILITY,
    Terminated,
    check_output_path,
    command_parser,
    deprecated_alias,
    refuse_overwriting_inputs,
    stderr_is_terminal,
)
from doclens.core.errors import (
    EXIT_ERROR,
    EXIT_INCOMPLETE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    ConfigurationError,
    InputError,
    MissingExtraError,
    RunStoppedError,
)
from doclens.core.settings import (
    ON_UNPARSED,
    PREMISE_SCOPES,
    QUESTION_STATEMENTS,
    SECTION_FALLBACKS,
    SOURCE_UNITS,
    UNCITED,
    UNCITED_OUTPUTS,
    ScoringSettings,
)
from doclens.core.tasks import AUTO_TASK, TASKS
from doclens.engines.sink import FileSink
from doclens.evaluators.models.torch_utils import DTYPES
from doclens.inputs.tables import INPUT_FORMATS
from doclens.reports.files import OutputLocked, output_lock, partial_path, save_report, written_files
from doclens.reports.results_files import OUTPUT_FORMATS, journal_path
from doclens.views.text import MIN_SECTION_ITEMS, summary_text

logger = logging.getLogger("doclens")

#: The judge ``doclens score`` uses when no ``--evaluator`` is given: the offline default.
DEFAULT_EVALUATOR = "clinical-rules"
DEFAULT_EVALUATOR_NOTE = ("no --evaluator given: using clinical-rules, the offline default judge (rule-based, "
                          "deterministic, explains each verdict; it misses paraphrase with new words, so for numbers "
                          "you publish use true-nli, gpt4-json-cot or mistral-cot: cards/clinical-rules.md)")

REFERENCES_HELP = ("INPUT is a validated submission or a table of outputs (id, prediction, prediction_claims?): join it "
                   "by id with this table of references (id, reference, source?, claims?; any input format); every "
                   "id missing on either side is an error. Swapped tables: outputs that are the reference notes of "
                   "a known public set (ACI-BENCH test 1-3, MeQSum's test set; known by fingerprints) and an outputs "
                   "file that is REFS itself are refused; for other data only the column names are checked (a "
                   "reference column and no prediction column in INPUT, or the other way round)")


class _Forwarded:
    """An argument group whose options go to the evaluator and extractor constructors: it keeps
    their names, so the list of forwarded options is the parser itself."""

    def __init__(self, group):
        self.group = group
        self.dests: list[str] = []

    def add_argument(self, *flags, **options) -> None:
        self.dests.append(self.group.add_argument(*flags, **options).dest)


def _options(args: argparse.Namespace, names: tuple[str, ...]) -> dict:
    # `is not` (not `in`): 0 is a value (--max-retries 0), only None and the False of a flag are "unset"
    return {name: getattr(args, name) for name in names
            if getattr(args, name, None) is not None and getattr(args, name, None) is not False}


def _parse_pairs(pairs: list[str] | None, flag: str) -> dict:
    """``KEY=VALUE`` pairs (a JSON value, else the text) as ``{key: value}``, dashes in keys read as underscores."""
    result = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep:
            raise ConfigurationError(f"{flag} takes KEY=VALUE, got {pair!r}")
        try:
            result[key.replace("-", "_")] = json.loads(value)
        except json.JSONDecodeError:
            result[key.replace("-", "_")] = value
    return result


def _is_chat_judge(name: str) -> bool:
    """Whether evaluator ``name`` is a chat judge (those take ``dry_run`` and count calls)."""
    from doclens.evaluators import EVALUATOR_PRESETS, import_target
    from doclens.evaluators.llm.chat import ChatJudge

    try:
        target = import_target(EVALUATOR_PRESETS[name][0] if name in EVALUATOR_PRESETS else name)
    except (ConfigurationError, ImportError):
        return True  # loading it will say what is wrong
    return isinstance(target, type) and issubclass(target, ChatJudge)


def evaluator_options(args: argparse.Namespace, name: str, pairs: list[str] | None, flag: str = "--evaluator-arg") -> dict:
    """The constructor options of evaluator ``name`` from a command line with the judge option
    groups (:func:`add_judge_options`): the model options (all of them), the cache options it
    takes, and its ``KEY=VALUE`` pairs (``pairs``, from ``flag``)."""
    from doclens.evaluators import EVALUATOR_PRESETS, accepted_options

    # model options go to every constructor; cache options only to those that take them
    model_options = _options(args, args.model_options)
    if model_options.get("dry_run") and not _is_chat_judge(name):
        del model_options["dry_run"]  # a pairwise judge: the dry run describes it instead (scoring/dry_run.py)
    return {**model_options, **accepted_options(name, _options(args, args.run_options), EVALUATOR_PRESETS),
            **_parse_pairs(pairs, flag)}


def scoring_settings(args: argparse.Namespace) -> ScoringSettings:
    """The :class:`~doclens.core.settings.ScoringSettings` a ``score`` command line describes: each
    setting from the option of its name (``--premise-scope`` → ``premise_scope``), checked there.
    The options keep no default of their own (but ``--task``, whose command-line default is
    ``auto``): unset, the settings' default applies."""
    return ScoringSettings.from_kwargs(**{name: getattr(args, name) for name in ScoringSettings.names()
                                          if hasattr(args, name)})


def build_scorer(args: argparse.Namespace, settings: ScoringSettings | None = None):
    """The :class:`doclens.DocLens` a ``score`` command line describes. ``settings``: scoring
    settings already built from it (the Ray engine's workers get the driver's own,
    :func:`_score_on_ray`); default: :func:`scoring_settings`."""
    from doclens.evaluators import (
        EVALUATOR_PRESETS,
        EXTRACTOR_PRESETS,
        accepted_options,
        load_evaluator,
        load_extractor,
        named_options,
    )
    from doclens.scoring.scorer import DocLens

    model_options = _options(args, args.model_options)
    run_options = _options(args, args.run_options)
    options = evaluator_options(args, args.evaluator, args.evaluator_arg)
    # clinical-rules' lexicons, stems, readings and MiniLM vectors, for a judge whose constructor names them
    options.update(_judge_stores(args, named_options(args.evaluator, EVALUATOR_PRESETS)))
    evaluator = load_evaluator(args.evaluator, **options)
    extractor = None
    if args.extractor in (None, "auto"):
        make = getattr(evaluator, "make_extractor", None)
        extractor = make() if callable(make) else None
    elif args.extractor != "none":
        extractor_options = {**accepted_options(args.extractor, {**model_options, **run_options},
                                                EXTRACTOR_PRESETS),
                             **_parse_pairs(args.extractor_arg, "--extractor-arg")}
        extractor = load_extractor(args.extractor, **extractor_options)
    baselines = [b.strip() for b in args.baselines.split(",") if b.strip()] if args.baselines else None
    settings = settings if settings is not None else scoring_settings(args)
    return DocLens(evaluator, extractor, settings=settings, baselines=baselines,
                   baseline_options=_parse_pairs(args.baseline_option, "--baseline-option") or None,
                   family_options=_family_options(args, settings))


def _family_options(args: argparse.Namespace, settings: ScoringSettings) -> dict:
    """Each registered family's settings from its own options (:meth:`doclens.families.MetricFamily.options_from_cli`);
    a family's options without the family are a usage error, never silently ignored."""
    from doclens.families import FAMILIES

    found = {family.name: family.options_from_cli(args, settings) for family in FAMILIES}
    return {name: options for name, options in found.items() if options is not None}


def _default_output(input_path: str) -> str:
    if input_path == "-":
        return "doclens-scores.json"
    path = Path(input_path)
    if not path.exists():  # a Hub dataset id: the report goes to the current folder
        return path.name + ".doclens.json"
    return str(path.with_name(path.stem + ".doclens.json"))


def open_input(args: argparse.Namespace):
    """The instances ``args`` name, read lazily (``len()`` when the size is known): any table
    :func:`doclens.inputs.tables.read_table` reads, or a submission joined with ``--references``
    (:func:`doclens.inputs.references.read_instances`, the reader ``report --input`` and ``baselines``
    share). Checked before anything is scored: the columns, every id (present and unique; joined,
    matched one to one), and that there are rows (every format alike: an error, no report)."""
    from doclens.inputs.references import read_instances

    instances = read_instances(args.input, input_format=args.input_format, split=args.split, columns=args.columns,
                               references=args.references, reference_columns=getattr(args, "reference_columns", None))
    if not args.references:
        instances.check_ids()  # every id present and unique before anything is scored (stdin: as it is read)
    if hasattr(instances, "__len__") and not len(instances):  # every format alike: an error, no report
        raise InputError(f"{args.input}: no instances to score (the input has no rows); nothing was scored and no "
                         "report written")
    return instances


def _located(message: str, path: str, lines: dict[str, str]) -> str:
    """``message`` prefixed with the input file and, when it names a read instance, where it is
    (``line 3``, ``row 3``: the scorer knows instances, not lines)."""
    from doclens.inputs.jsonl import display_name

    name = display_name(path)
    if message.startswith(name):
        return message
    for ident, where in lines.items():
        if message.startswith(f"instance {ident!r}"):
            return f"{name} {where}: {message}"
    return f"{name}: {message}"


def run(args: argparse.Namespace) -> int:
    """Score the input; save the report (a partial one when the run stopped) and say where.
    Several inputs (``doclens score A.jsonl B.jsonl … -o DIR/``): :func:`run_many`."""
    if isinstance(args.input, list):
        if len(args.input) > 1:
            args.rank_by = getattr(args, "rank_by", None) or _default_rank_by()
            return run_many(args)
        from doclens.cli.score_board import named_inputs

        (name, args.input), = named_inputs(args.input)
        if name is not None and args.system:
            raise ConfigurationError(f"--system {args.system!r} and {name}=… both name the system: give one")
        args.system = args.system or name
    for flag, given in (("--rank-by", getattr(args, "rank_by", None)), ("--summaries", getattr(args, "summaries", 0))):
        if given:
            raise ConfigurationError(f"{flag} applies to several inputs (their combined table); one was given")
    return _run_one(args)


def _default_rank_by() -> str:
    from doclens.views.leaderboard import DEFAULT_RANK_BY

    return DEFAULT_RANK_BY


def _judge_stores(args: argparse.Namespace, named: set[str]) -> dict:
    """What a judge reads besides its code, for a judge whose constructor ``named`` ``resources``
    (clinical-rules: :class:`~doclens.evaluators.rules.resources.JudgeResources`, its lexicons,
    Porter stems, reading of each text and MiniLM's vectors), in the cache folder (``--cache-dir``
    moves them all); in memory with ``--no-cache`` or ``--refresh``: no cache of any kind is read or
    written. A judge that names none gets none, and nothing is made for it."""
    from doclens.evaluators.rules.resources import JudgeResources

    if "resources" not in named:
        return {}
    if getattr(args, "no_cache", False) or getattr(args, "refresh", False):
        return {"resources": JudgeResources.in_memory()}
    return {"resources": JudgeResources.in_folder(getattr(args, "cache_dir", None))}


def _inputs(args: argparse.Namespace, inputs: list[str]) -> list[str]:
    """Every file a ``score`` command line reads: its inputs, the references, the price table."""
    return [*inputs, args.references, getattr(args, "price_table", None)]


def _run_one(args: argparse.Namespace) -> int:
    output = args.output or _default_output(args.input)
    check_output_path(output)
    refuse_overwriting_inputs([("--output", path) for path in written_files(output, args.output_format)],
                              _inputs(args, [args.input]))
    instances = open_input(args)  # a missing column or split, and every id, checked before anything loads
    if getattr(args, "dry_run", False):
        return _scored(args, instances, output)  # writes no output: takes no lock
    try:  # one output, one writer: taken before anything loads, so a second run is refused at once
        with output_lock(output, args.output_format):
            return _scored(args, instances, output)
    except OutputLocked as exc:
        print(f"doclens: error: {exc}", file=sys.stderr)
        return EXIT_USAGE


def run_many(args: argparse.Namespace) -> int:
    """Several prediction files scored by one scorer in one process (``doclens score A.jsonl
    B.jsonl … --references refs.jsonl -o DIR/``, or ``GPT-4=a.csv BART=b.csv …`` to name them): the
    judge loads once, each reference's claims are extracted once (the scorer keeps them by content,
    :class:`doclens.DocLens`), and the judge's memory of texts it has analysed carries from one file
    to the next. Each input gets its own report, ``DIR/NAME.doclens.json`` (``DIR/INPUT-stem.doclens.json``
    when unnamed), with its own usage and signature, exactly the report a run on that input alone
    writes; one progress line each, then one table of them all (:mod:`doclens.cli.score_board`).
    The exit code is the worst of the inputs'."""
    from doclens.cli.score_board import named_inputs

    named = named_inputs(args.input)
    inputs = [path for _, path in named]
    folder = _output_folder(args.output, len(inputs))
    for flag, given in (("-", "-" in inputs), ("--system", bool(args.system)), ("--dry-run", args.dry_run),
                        ("--engine ray", getattr(args, "engine", "local") == "ray")):
        if given:
            what = "stdin ('-')" if flag == "-" else flag
            hint = ": name each input NAME=PATH instead" if flag == "--system" else ""
            print(f"doclens: error: {what} takes one input; {len(inputs)} were given{hint}", file=sys.stderr)
            return EXIT_USAGE
    outputs = [str(folder / _report_name(name, path)) for name, path in named]
    repeated = sorted({o for o in outputs if outputs.count(o) > 1})
    if repeated:
        print(f"doclens: error: several inputs would write the same report {repeated[0]} (inputs of the same file "
              "name): name them NAME=PATH, or score them into different folders", file=sys.stderr)
        return EXIT_USAGE
    refuse_overwriting_inputs([("--output", path) for output in outputs
                               for path in written_files(output, args.output_format)], _inputs(args, inputs))
    opened = []
    for path in inputs:  # every input's columns and ids are checked before anything loads
        args.input = path
        opened.append(open_input(args))
    folder.mkdir(exist_ok=True)
    scorer = _built(args)
    if scorer is None:
        return EXIT_USAGE
    names = [name or getattr(instances, "system", None) or Path(path).stem
             for (name, path), instances in zip(named, opened)]
    try:
        codes, written, said = _score_each(scorer, args, list(zip(names, inputs, outputs, opened)))
    finally:
        scorer.evaluator.close()
    _tell_board(args, folder, written, said)
    return max(codes, key=_severity)


def _report_name(name: str | None, path: str) -> str:
    """The report file of one of several inputs: ``NAME.doclens.json`` for a named one, else the
    input's stem (``_default_output``)."""
    from doclens.cli.score_board import report_stem

    return f"{report_stem(name)}.doclens.json" if name else Path(_default_output(path)).name


def _score_each(scorer, args: argparse.Namespace, systems: list[tuple]) -> tuple[list[int], list, list]:
    """Score each ``(name, input, output, instances)`` in turn; one progress line each (its full
    summary too with ``--summaries``). Returns the exit codes, ``(name, report file, seconds)`` of
    the reports written and ``(name, levelled warnings)`` of each."""
    import time

    from doclens.cli.score_board import progress_line

    codes, written, said = [], [], []
    for position, (name, path, output, instances) in enumerate(systems, start=1):
        args.input, args.system = path, name
        for holder in (scorer.evaluator, scorer.extractor):  # each report counts its own input's work
            if holder is not None:
                holder.usage.reset()
        started = time.perf_counter()
        try:
            with output_lock(output, args.output_format):
                code, report = _scored_report(scorer, args, instances, output, close=False,
                                              summary=getattr(args, "summaries", False) and not args.quiet)
        except OutputLocked as exc:
            print(f"doclens: error: {exc}", file=sys.stderr)
            code, report = EXIT_USAGE, None
        codes.append(code)
        seconds = time.perf_counter() - started
        if report is None or (report.partial and not report.size):
            continue
        if not args.quiet:
            print(f"doclens: {progress_line(position, len(systems), name, report, seconds, output)}", file=sys.stderr)
        if report.written:
            written.append((name, report.written, seconds))
            said.append((name, report.levelled_warnings()))
    return codes, written, said


def _tell_board(args: argparse.Namespace, folder: Path, written: list, said: list) -> None:
    """The combined table of the systems scored, printed (unless ``-q``) and written beside their
    reports, then their warnings, each once."""
    from doclens.cli.score_board import combined_board, warning_lines

    if not written:
        return
    text, where = combined_board(folder, written, args.rank_by)
    if args.quiet:
        return
    print(text)
    for line in warning_lines(said):
        print(line)
    for line in where:
        print(line)


def _severity(code: int) -> int:
    """How bad an exit code is, to report the worst of several runs."""
    return {EXIT_OK: 0, EXIT_INCOMPLETE: 1, EXIT_USAGE: 2, EXIT_ERROR: 3, EXIT_INTERRUPTED: 4}.get(code, 3)


def _output_folder(output: str | None, count: int) -> Path:
    """The folder ``-o`` names for ``count`` inputs: an existing folder, or a path ending in ``/``
    (to create; its parent must exist); anything else is refused before any work starts."""
    if not output or output == "-":
        raise InputError(f"{count} inputs were given: -o/--output must name a folder (DIR/) for their reports, one "
                         "per input", field="--output")
    folder = Path(output)
    if folder.is_dir():
        if not os.access(folder, os.W_OK | os.X_OK):
            raise InputError(f"--output {output}: the folder is not writable", field="--output")
        return folder
    if not output.endswith(("/", os.sep)):
        raise InputError(f"--output {output}: {count} inputs were given, so --output must be a folder (one report "
                         "per input); give an existing folder, or end the path with '/' to create it",
                         field="--output")
    if not folder.parent.is_dir():
        raise InputError(f"--output {output}: the folder {str(folder.parent)!r} does not exist", field="--output")
    return folder  # created once every input has been read


def _built(args: argparse.Namespace):
    """The scorer the options describe, checked against the engine options; ``None`` (the error
    said on stderr) when it cannot be built."""
    defaulted = args.evaluator is None
    if defaulted:
        args.evaluator = DEFAULT_EVALUATOR
        logger.warning("%s", DEFAULT_EVALUATOR_NOTE)
    try:
        scorer = build_scorer(args)
        if getattr(args, "engine", "local") == "ray":
            from doclens.engines.ray import require_ray

            require_ray()
            _runtime_env(args)
        else:
            given = [flag for flag, name in (("--address", "address"), ("--workers", "workers"),
                                             ("--gpus-per-worker", "gpus_per_worker"), ("--runtime-env", "runtime_env"))
                     if getattr(args, name, None) is not None]
            if given:
                raise ConfigurationError(f"{', '.join(given)} only apply with --engine ray")
    except (ConfigurationError, InputError, ImportError, TypeError, ValueError) as exc:
        hint = (" (the default judge needs the [clinical] extra: see the README's Install section, or pass "
                "--evaluator)" if defaulted and isinstance(exc, ImportError) else "")
        print(f"doclens: error: {exc}{hint}", file=sys.stderr)
        return None
    return scorer


def _scored(args: argparse.Namespace, instances, output: str) -> int:
    """:func:`run` once the output is this run's: build the scorer, score, save and tell."""
    # a submission names its system: recorded in the report (a streamed one is written as it goes)
    args.system = args.system or getattr(instances, "system", None)
    scorer = _built(args)
    if scorer is None:
        return EXIT_USAGE
    if getattr(args, "dry_run", False):
        return _dry_run(scorer, _instances(args, instances))
    if output == "-" and (args.resume or args.output_format != "json"):
        print("doclens: error: --resume and --output-format jsonl/parquet need a file (--output PATH), not '-'",
              file=sys.stderr)
        return EXIT_USAGE
    return _score_and_save(scorer, args, instances, output)


def _score_and_save(scorer, args: argparse.Namespace, instances, output: str, close: bool = True) -> int:
    """Score ``instances`` into ``output``, save, tell, and return the exit code; ``close``: close
    the judge afterwards (not while other inputs wait for it)."""
    return _scored_report(scorer, args, instances, output, close=close, summary=not args.quiet)[0]


def _scored_report(scorer, args: argparse.Namespace, instances, output: str, close: bool = True,
                   summary: bool = True):
    """:func:`_score_and_save`, returning ``(exit code, report)`` (the report ``None`` when none was
    written); ``summary``: print the report's summary (``-q``, and each of several systems, does not).
    The report's warnings are said once, in its summary (:func:`doclens.cli.score_board.warnings_said_once`)."""
    from doclens.cli.score_board import replay_warnings, warnings_said_once

    with warnings_said_once() as caught:
        report, code = _score(scorer, args, output, instances, close=close)
    replay_warnings(caught, report)
    if report is None:
        return code or EXIT_ERROR, None
    if report.partial and not report.size:
        print("doclens: nothing was scored; no report written", file=sys.stderr)
        return code or EXIT_ERROR, None
    if args.system:
        report.config["system"] = args.system
    return _save_and_tell(report, code, output, getattr(args, "min_section_items", MIN_SECTION_ITEMS),
                          summary=summary), report


def _dry_run(scorer, instances) -> int:
    from doclens.scoring.dry_run import dry_run_estimate

    try:
        estimate = dry_run_estimate(scorer, instances)
    except (ConfigurationError, InputError) as exc:
        print(f"doclens: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        scorer.evaluator.close()
    print(json.dumps(estimate, indent=2))
    return EXIT_OK


def _logs_above_the_bar(progress: bool):
    """While the bar is drawn, log lines are written above it (tqdm clears and redraws it)
    instead of through the middle of it."""
    import contextlib

    if not progress:
        return contextlib.nullcontext()
    from tqdm.contrib.logging import logging_redirect_tqdm

    return logging_redirect_tqdm(loggers=[logger])


class _Sized:
    """An iterable of instances with the count known in advance, so the progress bar has a total."""

    def __init__(self, iterable, size: int):
        self.iterable, self.size = iterable, size

    def __iter__(self):
        return iter(self.iterable)

    def __len__(self) -> int:
        return self.size


def _count_lines(path: str) -> int | None:
    """Non-blank lines of a JSONL file (one instance each), counted without parsing; ``None`` for
    stdin or anything that is not a plain ``.jsonl`` / ``.ndjson`` file."""
    if path == "-" or Path(path).suffix.lower() not in (".jsonl", ".ndjson") or not Path(path).is_file():
        return None
    count = 0
    with open(path, "rb") as handle:
        for line in handle:
            count += bool(line.strip())
    return count


def _refuse_extractor_with_claims(instances, extractor: str):
    """The instances, stopped at the first that carries claims while ``--extractor`` was named:
    DocLens scores given claims as they are, so the extractor would silently go unused."""
    for position, item in enumerate(instances):
        fields = item if isinstance(item, dict) else vars(item)
        given = [name for name in ("reference_claims", "prediction_claims") if fields.get(name) is not None]
        if given:
            ident = fields.get("id", position)
            raise InputError(f"instance {ident!r}: carries {' and '.join(given)}, but --extractor {extractor} was "
                             "given: given claims are scored as they are and the extractor would go unused. Remove "
                             "the claim fields from the input to extract claims with it, or leave --extractor out "
                             "to score the given claims", field=given[0])
        yield item


def _refuse_empty(instances, name: str):
    """The instances, then an :class:`InputError` if there were none (nothing is written then)."""
    count = 0
    for item in instances:
        count += 1
        yield item
    if not count:
        from doclens.inputs.jsonl import display_name

        raise InputError(f"{display_name(name)}: no instances to score (the input has no rows); nothing was scored "
                         "and no report written")


def _instances(args: argparse.Namespace, instances):
    """The input's instances (:func:`open_input`), sized when the count is cheap to know (the
    progress bar's total), and checked against an explicit ``--extractor``."""
    size = len(instances) if hasattr(instances, "__len__") else _count_lines(args.input)
    if size is None:  # stdin: an empty input is known only once read (a file's is refused in run())
        instances = _refuse_empty(instances, args.input)
    if args.extractor not in (None, "auto", "none"):
        instances = _refuse_extractor_with_claims(instances, args.extractor)
    return _Sized(instances, size) if size is not None and not hasattr(instances, "__len__") else instances


def _score(scorer, args: argparse.Namespace, output: str, instances, close: bool = True):
    """``(report, exit code)``: the report, or the partial report an error carried (``None`` when
    it carried none), and the code the error calls for (``EXIT_OK`` when there was none). A file
    output is written as the run goes (:meth:`doclens.DocLens.score_to`); ``-`` (stdout) keeps
    the results in memory and prints them at the end."""
    code = EXIT_OK
    lines = getattr(instances, "seen", {})  # id → where it was read
    try:
        instances = _instances(args, instances)
        if args.resume and output != "-":
            print(f"doclens: resuming from {journal_path(output)}: instances already there are not scored again"
                  if os.path.exists(journal_path(output)) else
                  f"doclens: --resume: no journal {journal_path(output)} (the run finished, or never started): "
                  "scoring from the beginning; cached answers are reused", file=sys.stderr)
        progress = not args.quiet and stderr_is_terminal()
        sink = None if output == "-" else FileSink(output, args.output_format, scorer.settings.on_unparsed,
                                                    resume=args.resume, system=args.system)
        with _logs_above_the_bar(progress):
            if getattr(args, "engine", "local") == "ray":
                report = _score_on_ray(scorer, args, instances, sink, progress)
            elif sink is None:
                report = scorer.score(instances, progress=progress)
            else:
                report = scorer.score(instances, progress=progress, sink=sink)
    except KeyboardInterrupt as exc:
        report, code = getattr(exc, "partial_report", None), EXIT_INTERRUPTED
        print(f"doclens: {'terminated' if isinstance(exc, Terminated) else 'interrupted'}", file=sys.stderr)
    except RunStoppedError as exc:  # circuit breaker or deadline: a clean stop with a partial report
        report, code = getattr(exc, "partial_report", None), EXIT_INCOMPLETE
        print(f"doclens: stopped: {exc}", file=sys.stderr)
    except (InputError, ConfigurationError, MissingExtraError) as exc:
        report, code = getattr(exc, "partial_report", None), EXIT_USAGE
        print(f"doclens: error: {_located(str(exc), args.input, lines)}", file=sys.stderr)
    except Exception as exc:  # an endpoint that stays down, a model that fails to load …
        report = getattr(exc, "partial_report", None)
        code = EXIT_INCOMPLETE if report is not None and report.size else EXIT_ERROR
        logger.debug("scoring failed", exc_info=True)
        redact = getattr(scorer.evaluator, "redact", lambda text: text)  # an endpoint may echo the key
        print(f"doclens: error: {redact(f'{type(exc).__name__}: {exc}')}", file=sys.stderr)
    finally:
        if close:
            scorer.evaluator.close()
    return report, code


def _score_on_ray(scorer, args: argparse.Namespace, instances, sink, progress: bool):
    """``--engine ray``: the same report, scored by an actor pool on Ray (``cards/scale-ray.md``);
    every actor builds its judge from this command line. ``sink``: the streamed output (``None``:
    in memory), fed in input order as chunks come back, exactly as a single-process run feeds it."""
    import functools

    from doclens.engines.ray import score_on_ray

    # every actor builds its judge from this command line, and scores under the driver's own settings
    return score_on_ray(functools.partial(build_scorer, args, settings=scorer.settings), instances, scorer=scorer,
                        workers=args.workers or 2,
                        address=args.address, runtime_env=_runtime_env(args), gpus_per_worker=args.gpus_per_worker,
                        progress=progress, sink=sink)


def _runtime_env(args: argparse.Namespace):
    if not args.runtime_env:
        return None
    try:
        runtime_env = json.loads(args.runtime_env)
    except json.JSONDecodeError as exc:
        raise ConfigurationError(f"--runtime-env is not JSON: {exc}") from None
    if not isinstance(runtime_env, dict):
        raise ConfigurationError("--runtime-env must be a JSON object")
    return runtime_env


def _save_and_tell(report, code: int, output: str, min_section_items: int = MIN_SECTION_ITEMS,
                   summary: bool = True) -> int:
    """Save the report (unless the streamed run wrote it already), print its summary and where
    it went (``summary`` false: neither, only problems); the final exit code."""
    if output != "-":
        written, problem = report.written, report.write_problem
    else:
        written, problem = save_report(report, output)
    told = sys.stderr if output == "-" else sys.stdout
    if summary:
        print(summary_text(report, min_section_items), file=told)
    if problem:
        print(f"doclens: error: {problem}", file=sys.stderr)
        if written is None:
            return EXIT_ERROR
    where = "standard output" if written == "-" else written
    if report.partial:
        _tell_partial(report, output, written, where)
    else:
        beside = f" (results in {report.instances_file})" if report.instances_file else ""
        if summary:
            print(f"report written to {where}{beside}", file=told)
    if problem:
        return code or EXIT_ERROR
    if code == EXIT_OK:
        from doclens.scoring.scorer import incomplete_reasons

        reasons = incomplete_reasons(report)
        for reason in reasons:
            print(f"doclens: INCOMPLETE: {reason}", file=sys.stderr)
        if reasons:
            code = EXIT_INCOMPLETE
        unparsed = sum((report.unparsed or {}).values())
        if unparsed and not reasons:  # said even under -q: these items were scored per --on-unparsed
            print(f"doclens: note: {unparsed} item(s) unparsed (judge replies that could not be read, scored per "
                  "--on-unparsed); rerun the same command to ask them again", file=sys.stderr)
    return code


def _tell_partial(report, output: str, written: str, where: str) -> None:
    """Where a partial report went, and how ``--resume`` continues it (after an input error: once
    the input is fixed; rerun as it is, it stops at the same error)."""
    note = (f" (not {output}: that file holds a complete report)" if written == partial_path(output) else "")
    print(f"doclens: PARTIAL report ({report.size} instances scored before the error) "
          f"written to {where}{note}", file=sys.stderr)
    if output != "-":
        first = "fix the input (the error above); then " if (report.error or "").startswith("InputError") else ""
        print(f"doclens: {first}the same command with --resume continues it from {journal_path(output)}"
              + (", keeping what was scored (rerun as it is, it stops at the same error)" if first else ""),
              file=sys.stderr)


def add_judge_options(parser) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The "model and endpoint" and "cache" option groups (forwarded to a judge's constructor by
    :func:`evaluator_options`); returns their destinations, for ``set_defaults(model_options=…,
    run_options=…)``. ``doclens score`` and ``doclens judge-check`` share them."""
    model = _Forwarded(parser.add_argument_group("model and endpoint"))
    model.add_argument("--model", help="model name, hub id, local folder or GGUF file")
    model.add_argument("--base-url", help="OpenAI-compatible endpoint (vLLM, llama.cpp, …)")
    model.add_argument("--api-key-env", help="environment variable holding the API key (never pass the key itself)")
    model.add_argument("--azure-endpoint", help="Azure OpenAI endpoint URL")
    model.add_argument("--azure-deployment", help="Azure OpenAI deployment name")
    model.add_argument("--azure-api-version", help="Azure OpenAI API version")
    model.add_argument("--concurrency", type=POSITIVE_INT, help="requests in flight (default 8)")
    model.add_argument("--rpm", type=POSITIVE_FLOAT, help="requests per minute limit")
    model.add_argument("--tpm", type=POSITIVE_FLOAT, help="tokens per minute limit")
    model.add_argument("--timeout", type=POSITIVE_FLOAT, help="per-request timeout in seconds (LLM judges: default 60)")
    model.add_argument("--max-retries", type=NON_NEGATIVE_INT, help="retries per request (default 5)")
    model.add_argument("--max-consecutive-failures", type=NON_NEGATIVE_INT, metavar="N",
                       help="LLM judges: stop the run (partial report, exit 3) after N requests in a row failed "
                            "(default 20; 0: never)")
    model.add_argument("--deadline", metavar="DURATION",
                       help="LLM judges: stop the run (partial report, exit 3) this long after the first request: "
                            "seconds or 90s, 15m, 1h30m (default: none)")
    model.add_argument("--local-only", action="store_true",
                       help="refuse any endpoint that is not loopback or a private address")
    model.add_argument("--judge-seed", "--seed", dest="seed", type=int,
                       action=deprecated_alias("--seed", "--judge-seed"),
                       help="LLM judges: decoding seed sent with each request, recorded in the signature and "
                            "cache key (default: none; --seed: deprecated spelling)")
    model.add_argument("--temperature", type=NON_NEGATIVE_FLOAT,
                       help="LLM judges: sampling temperature (default 0, as in the paper)")
    model.add_argument("--price-table", help="JSON file of per-model prices (USD per 1M tokens)")
    model.add_argument("--device", help="torch device for in-process models (default: auto)")
    model.add_argument("--dtype", choices=DTYPES,
                       help="in-process model precision (default: bf16 on a GPU that has it for true-nli and local, "
                            "float32 elsewhere and for nli, whose bf16 verdicts were measured to differ)")
    model.add_argument("--batch-size", type=POSITIVE_INT, help="inputs per forward pass for in-process models "
                       "(NLI judges: at most this many; default 8 on a CPU, on a GPU the token budget decides)")
    model.add_argument("--max-batch-tokens", type=POSITIVE_INT,
                       help="in-process NLI judges: at most this many padded tokens per forward pass (on CUDA it "
                            "caps the budget taken from free memory)")
    model.add_argument("--threads", type=POSITIVE_INT,
                       help="CPU threads an in-process judge computes with (clinical-rules: default "
                            "$OMP_NUM_THREADS when set, else 1; N > 1 runs N MiniLM batches at once; "
                            "cards/clinical-rules.md, \"Speed where users run it\"; local: default torch's own)")
    model.add_argument("--threshold", type=PROBABILITY, help="entailment probability threshold")
    model.add_argument("--max-length", type=POSITIVE_INT, help="model window in tokens")
    model.add_argument("--dry-run", action="store_true", help="count calls and tokens; spend nothing")
    cache = _Forwarded(parser.add_argument_group("cache"))
    cache.add_argument("--cache-dir", help="cache folder (default $DOCLENS_CACHE or ~/.cache/doclens): the answers, "
                                           "clinical-rules' readings and vectors, the derived stems and drug names, "
                                           "MiniLM's ONNX export")
    cache.add_argument("--no-cache", action="store_true",
                       help="read and write no cache of any kind (a damaged or read-only cache is set aside by "
                            "itself, with one warning); MiniLM's ONNX export, a model file, is read where a "
                            "run kept one and never written")
    cache.add_argument("--refresh", action="store_true", help="ignore cached answers, store new ones")
    return tuple(model.dests), tuple(cache.dests)


def _add_batch_and_review_options(score) -> None:
    score.add_argument("--chunk-size", type=POSITIVE_INT, help="instances per batch (default 32)")
    score.add_argument("--review-below", type=PROBABILITY, metavar="P",
                       help="a review queue: mark every claim verdict whose confidence (the judge's calibrated "
                            "probability of the verdict; clinical-rules gives one) is under P, count them in the "
                            "summary, mark them on the report page and in the JSON ('review': true); no score changes")


def add_parser(sub) -> None:
    """The ``score`` command's options: a flat list of declarations (long, with nothing to split)."""
    score = command_parser(sub, "score",
                           examples="""
        doclens score examples/notes.jsonl -o scores.json            # the offline default judge, clinical-rules
        doclens score notes.jsonl --evaluator gpt4-json-cot --model gpt-4o --api-key-env OPENAI_API_KEY
        doclens score notes.jsonl --evaluator mistral-cot --base-url http://gpu-box:8000/v1 --local-only
        doclens score notes.jsonl --evaluator true-nli --device cuda --dry-run   # what it would load
        doclens score notes.jsonl --evaluator mypackage.judges:MyNLI     # your own judge, from this folder
        doclens score notes.parquet --columns prediction=generated_note,reference=note
        doclens score submission.json --references refs.jsonl --evaluator true-nli
        doclens score systems/GPT-4.jsonl --references references.jsonl   # outputs {id, prediction} + references
        doclens score GPT-4=gpt4.jsonl BART=bart.jsonl --references references.jsonl -o scores/   # named; one table
        doclens score test2GPT-4_.csv --columns id=encounter_id,prediction=note --references clinicalnlp_taskC_test2.csv \
            --reference-columns id=encounter_id,reference=note,source=dialogue --source-units lines   # ACI-BENCH as published
        """)
    _add_input_options(score)
    _add_output_options(score)
    _add_judge_choice_options(score)
    _add_counting_options(score)
    _add_batch_and_review_options(score)
    score.add_argument("--baselines", help=f"comma-separated: {','.join(BASELINE_NAMES)}")
    score.add_argument("--baseline-option", action="append", metavar="NAME=JSON",
                       help='per-baseline options, e.g. bertscore=\'{"model_type": "/models/x", "num_layers": 6}\'')
    _add_family_options(score)
    model_dests, cache_dests = add_judge_options(score)
    _add_engine_options(score)
    _add_board_options(score)
    score.set_defaults(func=run, model_options=model_dests, run_options=cache_dests)


def _add_input_options(score) -> None:
    """``score``'s inputs: the files, their format, split and columns, and ``--references``."""
    score.add_argument("input", nargs="+", help="instances {id, prediction, reference, source?, reference_claims?, "
                                     "prediction_claims?, task?}: a JSONL file ('-' for stdin), a JSON array, CSV/TSV, "
                                     "Parquet, a folder written by datasets' save_to_disk, or an owner/name Hub "
                                     "dataset id read from the local cache (never downloaded); with --references, "
                                     "a submission JSON or a table of outputs (id, prediction). Several inputs (e.g. "
                                     "systems' outputs against one --references) are scored in one process, the "
                                     "judge loaded once, one report each in the folder -o DIR/ names, then one table "
                                     "of them all (DIR/leaderboard.html, .json); NAME=PATH names a system")
    score.add_argument("--input-format", choices=INPUT_FORMATS,
                       help="read INPUT (or REFS) as this format (default: from the extension, folder or id)")
    score.add_argument("--split", help="split of a saved DatasetDict or Hub dataset (required when it has several)")
    score.add_argument("--columns", metavar="FIELD=COLUMN,…",
                       help="map DocLens fields to INPUT's column names, e.g. prediction=generated_note,reference=note "
                            "(other columns are ignored); with --references, INPUT is the outputs table (id, "
                            "prediction, prediction_claims)")
    score.add_argument("--reference-columns", metavar="FIELD=COLUMN,…",
                       help="with --references: map the references table's fields (id, reference, source, "
                            "reference_claims, task) to its columns, e.g. id=encounter_id,reference=note,"
                            "source=dialogue")
    score.add_argument("--references", metavar="REFS", help=REFERENCES_HELP)


def _add_output_options(score) -> None:
    """``score``'s outputs: the report file and format, ``--resume`` and the system's name."""
    score.add_argument("-o", "--output", help="report JSON (default: INPUT.doclens.json beside the input); results are "
                                              "written as each chunk finishes, to OUTPUT's journal "
                                              "(scores.journal.jsonl beside scores.json) until the run ends); with "
                                              "several inputs, a folder (an existing one, or DIR/ to create it): "
                                              "DIR/INPUT-stem.doclens.json each")
    score.add_argument("--output-format", choices=OUTPUT_FORMATS, default="json",
                       help="json (default): one scores file with the instances inside; jsonl / parquet: OUTPUT is a "
                            "summary (scores, counts, signature) and the per-instance results go beside it, "
                            "OUTPUT-stem.instances.jsonl / .parquet (parquet needs pyarrow: pip install "
                            "'doclens[parquet]')")
    score.add_argument("--resume", action="store_true",
                       help="continue an interrupted run from its journal: instances already scored are not scored "
                            "again; the settings must be the same (the journal's signature is checked)")
    score.add_argument("--system",
                       help="name of the system that wrote the predictions (shown by 'doclens leaderboard'; "
                            "default there: the report's file name)")


def _add_judge_choice_options(score) -> None:
    """``score``'s judge and claim extractor, with their constructor arguments."""
    score.add_argument("--evaluator",
                       help=f"preset name (see 'doclens presets') or package.module:ClassName, imported from the "
                            f"current folder first (default: {DEFAULT_EVALUATOR}, the offline default judge)")
    score.add_argument("--evaluator-arg", action="append", metavar="KEY=VALUE",
                       help="extra constructor argument for the evaluator "
                            "(repeatable; VALUE read as JSON if it parses)")
    score.add_argument("--extractor",
                       help="claim extractor for lines without claims: 'auto' (default: the evaluator's own, when "
                            "it has one), 'none', a preset, or package.module:ClassName. Lines that carry "
                            "reference_claims/prediction_claims are scored on those; naming an extractor for "
                            "such input is refused rather than ignored")
    score.add_argument("--extractor-arg", action="append", metavar="KEY=VALUE",
                       help="extra constructor argument for the extractor (repeatable; VALUE read as JSON if it "
                            "parses)")


def _add_counting_options(score) -> None:
    """How ``score`` counts: the task, uncited statements and outputs, the premise's scope, source
    units, sections' minimum items, citations per statement and unparsed replies."""
    score.add_argument("--task", choices=(AUTO_TASK, *TASKS), default=AUTO_TASK,
                       help="task for lines without a 'task' field; auto (the default) scores a line whose "
                            "reference has SOAP section headers as note_generation, per section, and others as "
                            "general (each result records its task)")
    score.add_argument("--uncited", choices=UNCITED,
                       help="uncited statements score 0 (paper), inherit the next citation within their note section "
                            "(original scripts) or across sections (not the original)")
    score.add_argument("--uncited-outputs", choices=UNCITED_OUTPUTS,
                       help="an output that cites nothing at all: its citation metrics are n/a (default, counted and "
                            "warned about) or, strict, each statement scores 0 (the paper's reading)")
    score.add_argument("--question-statements", choices=QUESTION_STATEMENTS,
                       help="question_summarization: judge the whole prediction as one statement (default, original "
                            "scripts) or each sentence")
    score.add_argument("--premise-scope", choices=PREMISE_SCOPES,
                       help="note_generation: judge a claim against the whole premise note (default; a claim its "
                            "own section does not entail but another does is counted as stated_in_other_section) "
                            "or against its own section only (the paper's rule, the original scripts)")
    score.add_argument("--section-fallback", choices=SECTION_FALLBACKS,
                       help="with --premise-scope section: judge a claim whose section the premise note lacks "
                            "against the whole note (default, counted as section_fallbacks) or as not entailed "
                            "(original scripts)")
    score.add_argument("--source-units", choices=SOURCE_UNITS,
                       help="a source without '[0]' unit markers (ACI-BENCH's dialogue column): refused (given, the "
                            "default), or numbered by lines (ACI-BENCH's dialogues: a turn a line), turns ('[doctor] …' "
                            "tags at line starts), sentences, or auto (lines, or sentences for one line; counted in "
                            "a warning); a numbered source keeps its numbers. "
                            "In the signature (units:)")
    score.add_argument("--min-section-items", type=POSITIVE_INT, default=MIN_SECTION_ITEMS, metavar="N",
                       help="the summary flags a per-section score resting on fewer than N items with '*' "
                            f"(default {MIN_SECTION_ITEMS})")
    score.add_argument("--max-citations", type=NON_NEGATIVE_INT,
                       help="keep at most N citations per statement (default: all)")
    score.add_argument("--on-unparsed", choices=ON_UNPARSED,
                       help="how judge replies that stay unparseable count (default zero, with a warning)")


def _add_board_options(score) -> None:
    """The options of a run of several inputs' combined table (:mod:`doclens.cli.score_board`), and
    ``-q``."""
    from doclens.families import statistics
    from doclens.views.leaderboard import DEFAULT_RANK_BY

    board = score.add_argument_group("several inputs: the combined table (DIR/leaderboard.html and .json)")
    board.add_argument("--rank-by", choices=statistics(), metavar="STATISTIC",
                       help=f"rank the systems by this statistic (default {DEFAULT_RANK_BY}: the harmonic mean of claim "
                            "recall and precision; any of doclens leaderboard's)")
    board.add_argument("--summaries", action="store_true",
                       help="print each system's full summary too, not only its progress line")
    score.add_argument("-q", "--quiet", action="store_true",
                       help="quiet: no summary, no progress bar or lines and no warnings (errors still show; the "
                            "report keeps its warnings)")


def _add_family_options(score) -> None:
    """``--metrics`` and each registered family's own option group (declared by the family:
    :meth:`doclens.families.MetricFamily.add_cli_options`)."""
    from doclens.families import FAMILIES, selectors

    families = score.add_argument_group("metric families")
    families.add_argument("--metrics",
                          help=f"metric families, comma-separated: {', '.join(selectors())} ('doclens', the claim and "
                               "citation metrics, is always on; the default)")
    for family in FAMILIES:
        family.add_cli_options(score)


def _add_engine_options(score) -> None:
    """The "engine" option group of ``doclens score`` (local or Ray)."""
    engine = score.add_argument_group("engine (cards/scale-ray.md)")
    engine.add_argument("--engine", choices=("local", "ray"), default="local",
                        help="local: this process (default); ray: an actor pool on a Ray cluster, one judge per actor "
                             "(needs the [ray] extra; instance text goes to that cluster's workers)")
    engine.add_argument("--address", help="--engine ray: address of a running Ray cluster (ray://head:10001, auto); "
                                          "default: $RAY_ADDRESS when set, else a new Ray instance on this machine")
    engine.add_argument("--workers", type=POSITIVE_INT, help="--engine ray: actors, one judge each (default 2)")
    engine.add_argument("--gpus-per-worker", type=NON_NEGATIVE_FLOAT,
                        help="--engine ray: GPUs per actor (default: 1 for an in-process judge where the cluster has "
                             "GPUs, else 0)")
    engine.add_argument("--runtime-env", metavar="JSON",
                        help='--engine ray: Ray runtime environment for the workers, e.g. \'{"pip": ["doclens"]}\'')
