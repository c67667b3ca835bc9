"""``doclens score``: read instances, build the scorer the options describe, score, save the
report (a partial one on errors) and choose the exit code."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

from doclens.cli.common import (NON_NEGATIVE_FLOAT, NON_NEGATIVE_INT, POSITIVE_FLOAT, POSITIVE_INT, PROBABILITY, Terminated,
                                check_output_path)
from doclens.core.errors import (EXIT_ERROR, EXIT_INCOMPLETE, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, ConfigurationError,
                                 InputError, RunStoppedError)
from doclens.core.metrics import ON_UNPARSED
from doclens.baselines import BASELINE_NAMES
from doclens.core.tasks import TASKS
from doclens.evaluators.torch_utils import DTYPES
from doclens.io.files import partial_path, save_report
from doclens.io.tables import INPUT_FORMATS
from doclens.scoring.scorer import QUESTION_STATEMENTS, UNCITED
from doclens.views.text import summary_text

logger = logging.getLogger("doclens")

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


def _parse_pairs(pairs: list[str], flag: str) -> dict:
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


def build_scorer(args: argparse.Namespace):
    """The :class:`doclens.DocLens` a ``score`` command line describes."""
    from doclens.evaluators import EVALUATOR_PRESETS, EXTRACTOR_PRESETS, accepted_options, load_evaluator, load_extractor
    from doclens.scoring.scorer import DocLens

    # model options go to every constructor; cache options only to those that take them
    model_options = _options(args, args.model_options)
    run_options = _options(args, args.run_options)
    evaluator_options = {**model_options, **accepted_options(args.evaluator, run_options, EVALUATOR_PRESETS),
                         **_parse_pairs(args.evaluator_arg, "--evaluator-arg")}
    evaluator = load_evaluator(args.evaluator, **evaluator_options)
    extractor = None
    if args.extractor == "auto":
        make = getattr(evaluator, "make_extractor", None)
        extractor = make() if callable(make) else None
    elif args.extractor != "none":
        extractor_options = {**accepted_options(args.extractor, {**model_options, **run_options},
                                                EXTRACTOR_PRESETS),
                             **_parse_pairs(args.extractor_arg, "--extractor-arg")}
        extractor = load_extractor(args.extractor, **extractor_options)
    baselines = [b.strip() for b in args.baselines.split(",") if b.strip()] if args.baselines else None
    return DocLens(evaluator, extractor, task=args.task, uncited=args.uncited, max_citations=args.max_citations,
                   on_unparsed=args.on_unparsed, chunk_size=args.chunk_size, baselines=baselines,
                   question_statements=args.question_statements,
                   baseline_options=_parse_pairs(args.baseline_option, "--baseline-option") or None)


def _default_output(input_path: str) -> str:
    if input_path == "-":
        return "doclens-scores.json"
    path = Path(input_path)
    if not path.exists():  # a Hub dataset id: the report goes to the current folder
        return path.name + ".doclens.json"
    return str(path.with_name(path.stem + ".doclens.json"))


def open_input(args: argparse.Namespace):
    """The instances ``args`` name, read lazily (``len()`` when the size is known): any table
    :func:`doclens.io.tables.read_table` reads, or a submission joined with ``--references``."""
    from doclens.io.references import join_references
    from doclens.io.tables import read_table

    options = dict(input_format=args.input_format, split=args.split, columns=args.columns)
    if args.references:
        return join_references(args.input, args.references, **options)
    return read_table(args.input, **options)


def _located(message: str, path: str, lines: dict[str, str]) -> str:
    """``message`` prefixed with the input file and, when it names a read instance, where it is
    (``line 3``, ``row 3``: the scorer knows instances, not lines)."""
    from doclens.io.jsonl import display_name

    name = display_name(path)
    if message.startswith(name):
        return message
    for ident, where in lines.items():
        if message.startswith(f"instance {ident!r}"):
            return f"{name} {where}: {message}"
    return f"{name}: {message}"


def run(args: argparse.Namespace) -> int:
    """Score the input; save the report (a partial one when the run stopped) and say where."""
    instances = open_input(args)  # a missing column or split is refused before anything loads
    output = args.output or _default_output(args.input)
    check_output_path(output)
    try:
        scorer = build_scorer(args)
    except (ConfigurationError, InputError, ImportError, TypeError, ValueError) as exc:
        print(f"doclens: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if getattr(args, "dry_run", False):
        return _dry_run(scorer, instances)
    report, code = _score(scorer, args, instances)
    if report is None:
        return code or EXIT_ERROR
    if report.partial and not report.instances:
        print("doclens: nothing was scored; no report written", file=sys.stderr)
        return code or EXIT_ERROR
    system = args.system or getattr(instances, "system", None)  # a submission names its system
    if system:
        report.config["system"] = system
    return _save_and_tell(report, code, output)


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


def _score(scorer, args: argparse.Namespace, instances):
    """``(report, exit code)``: the report, or the partial report an error carried (``None`` when
    it carried none), and the code the error calls for (``EXIT_OK`` when there was none)."""
    code = EXIT_OK
    lines = instances.seen  # id → where it was read
    try:
        report = scorer.score(instances, progress=not args.quiet)
    except KeyboardInterrupt as exc:
        report, code = getattr(exc, "partial_report", None), EXIT_INTERRUPTED
        print(f"doclens: {'terminated' if isinstance(exc, Terminated) else 'interrupted'}", file=sys.stderr)
    except RunStoppedError as exc:  # circuit breaker or deadline: a clean stop with a partial report
        report, code = getattr(exc, "partial_report", None), EXIT_INCOMPLETE
        print(f"doclens: stopped: {exc}", file=sys.stderr)
    except (InputError, ConfigurationError) as exc:
        report, code = getattr(exc, "partial_report", None), EXIT_USAGE
        print(f"doclens: error: {_located(str(exc), args.input, lines)}", file=sys.stderr)
    except Exception as exc:  # an endpoint that stays down, a model that fails to load …
        report = getattr(exc, "partial_report", None)
        code = EXIT_INCOMPLETE if report is not None and report.instances else EXIT_ERROR
        logger.debug("scoring failed", exc_info=True)
        redact = getattr(scorer.evaluator, "redact", lambda text: text)  # an endpoint may echo the key
        print(f"doclens: error: {redact(f'{type(exc).__name__}: {exc}')}", file=sys.stderr)
    finally:
        scorer.evaluator.close()
    return report, code


def _save_and_tell(report, code: int, output: str) -> int:
    """Save the report, print its summary and where it went; the final exit code."""
    written, problem = save_report(report, output)
    summary = sys.stderr if output == "-" else sys.stdout
    print(summary_text(report), file=summary)
    if problem:
        print(f"doclens: error: {problem}", file=sys.stderr)
        if written is None:
            return EXIT_ERROR
    where = "standard output" if written == "-" else written
    if report.partial:
        note = (f" (not {output}: that file holds a complete report)" if written == partial_path(output) else "")
        print(f"doclens: PARTIAL report ({len(report.instances)} instances scored before the error) "
              f"written to {where}{note}", file=sys.stderr)
    else:
        print(f"report written to {where}", file=summary)
    if problem:
        return code or EXIT_ERROR
    if code == EXIT_OK:
        from doclens.scoring.scorer import incomplete_reasons

        reasons = incomplete_reasons(report)
        for reason in reasons:
            print(f"doclens: INCOMPLETE: {reason}", file=sys.stderr)
        if reasons:
            code = EXIT_INCOMPLETE
    return code


def add_parser(sub) -> None:
    """The ``score`` command's options: a flat list of declarations (long, with nothing to split)."""
    score = sub.add_parser("score", help="score generated texts: JSONL, JSON, CSV, Parquet, a saved or Hub dataset")
    score.add_argument("input", help="instances {id, prediction, reference, source?, reference_claims?, "
                                     "prediction_claims?, task?}: a JSONL file ('-' for stdin), a JSON array, CSV/TSV, "
                                     "Parquet, a folder written by datasets' save_to_disk, or an owner/name Hub "
                                     "dataset id read from the local cache (never downloaded); with --references, "
                                     "a submission JSON")
    score.add_argument("--input-format", choices=INPUT_FORMATS,
                       help="read INPUT (or REFS) as this format (default: from the extension, folder or id)")
    score.add_argument("--split", help="split of a saved DatasetDict or Hub dataset (required when it has several)")
    score.add_argument("--columns", metavar="FIELD=COLUMN,…",
                       help="map DocLens fields to column names, e.g. prediction=generated_note,reference=note "
                            "(other columns are ignored)")
    score.add_argument("--references", metavar="REFS",
                       help="INPUT is a validated submission (ids + predictions): join it by id with this table "
                            "of references (id, reference, source?, claims?; any input format); every id missing "
                            "on either side is an error")
    score.add_argument("-o", "--output", help="report JSON (default: INPUT.doclens.json beside the input)")
    score.add_argument("--system", help="name of the system that wrote the predictions (shown by 'doclens leaderboard'; "
                                        "default there: the report's file name)")
    score.add_argument("--evaluator", required=True,
                       help="preset name (see 'doclens presets') or package.module:ClassName")
    score.add_argument("--evaluator-arg", action="append", metavar="KEY=VALUE",
                       help="extra constructor argument for the evaluator (repeatable; VALUE read as JSON if it parses)")
    score.add_argument("--extractor", default="auto",
                       help="claim extractor: 'auto' (the evaluator's own model when it has one), 'none', a preset, "
                            "or package.module:ClassName")
    score.add_argument("--extractor-arg", action="append", metavar="KEY=VALUE")
    score.add_argument("--task", choices=TASKS,
                       help="task for lines without a 'task' field (default general)")
    score.add_argument("--uncited", choices=UNCITED, default="zero",
                       help="uncited statements score 0 (paper), inherit the next citation within their note section "
                            "(original scripts) or across sections (not the original)")
    score.add_argument("--question-statements", choices=QUESTION_STATEMENTS, default="whole",
                       help="question_summarization: judge the whole prediction as one statement (default, original "
                            "scripts) or each sentence")
    score.add_argument("--max-citations", type=NON_NEGATIVE_INT,
                       help="keep at most N citations per statement (default: all)")
    score.add_argument("--on-unparsed", choices=ON_UNPARSED, default="zero",
                       help="how judge replies that stay unparseable count (default zero, with a warning)")
    score.add_argument("--chunk-size", type=POSITIVE_INT, default=32, help="instances per batch (default 32)")
    score.add_argument("--baselines", help=f"comma-separated: {','.join(BASELINE_NAMES)}")
    score.add_argument("--baseline-option", action="append", metavar="NAME=JSON",
                       help='per-baseline options, e.g. bertscore=\'{"model_type": "/models/x", "num_layers": 6}\'')
    model = _Forwarded(score.add_argument_group("model and endpoint"))
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
    model.add_argument("--seed", type=int)
    model.add_argument("--temperature", type=NON_NEGATIVE_FLOAT)
    model.add_argument("--price-table", help="JSON file of per-model prices (USD per 1M tokens)")
    model.add_argument("--device", help="torch device for in-process models (default: auto)")
    model.add_argument("--dtype", choices=DTYPES,
                       help="in-process model precision (default: bf16 on a GPU that has it, else float32)")
    model.add_argument("--batch-size", type=POSITIVE_INT, help="inputs per forward pass for in-process models")
    model.add_argument("--threshold", type=PROBABILITY, help="entailment probability threshold")
    model.add_argument("--max-length", type=POSITIVE_INT, help="model window in tokens")
    model.add_argument("--dry-run", action="store_true", help="count calls and tokens; spend nothing")
    cache = _Forwarded(score.add_argument_group("cache"))
    cache.add_argument("--cache-dir", help="cache folder (default $DOCLENS_CACHE or ~/.cache/doclens)")
    cache.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    cache.add_argument("--refresh", action="store_true", help="ignore cached answers, store new ones")
    score.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    score.set_defaults(func=run, model_options=tuple(model.dests), run_options=tuple(cache.dests))
