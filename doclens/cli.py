"""``doclens`` command line.

    doclens score notes.jsonl --evaluator local --output scores.json
    doclens install-metric            # makes evaluate.load("doclens") work offline
    doclens presets                   # lists evaluators and extractors

Exit codes: 0 success, 1 a run that failed mid-way (a partial report is written), 2 bad input or
options (a partial report is written when anything was scored), 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path
from typing import Iterator, Optional

from doclens import __version__
from doclens.errors import ConfigurationError, DocLensError, InputError
from doclens.types import Instance

logger = logging.getLogger("doclens")

#: CLI flags forwarded to evaluator / extractor constructors when set (dest → constructor kwarg).
MODEL_OPTIONS = ("model", "base_url", "api_key_env", "azure_endpoint", "azure_deployment", "azure_api_version",
                 "concurrency", "rpm", "tpm", "timeout", "max_retries", "local_only", "seed", "temperature",
                 "price_table", "device", "dtype", "batch_size", "threshold", "max_length", "dry_run")
#: Forwarded only to constructors that accept them (evaluators that call no model ignore them).
RUN_OPTIONS = ("cache_dir", "no_cache", "refresh")


def read_jsonl(path: str) -> Iterator[Instance]:
    """Instances from a JSONL file, lazily. Raises :class:`InputError` naming the line (and the
    field) of the first bad line: not JSON, a missing or mistyped field, an id seen twice."""
    seen: dict[str, int] = {}
    handle = sys.stdin if path == "-" else open(path, encoding="utf-8")
    try:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"line {number}: not valid JSON ({exc.msg} at column {exc.colno})",
                                 line=number) from None
            try:
                instance = Instance.from_dict(data, position=number)
            except InputError as exc:
                raise InputError(f"line {number}: {exc}", field=exc.field, line=number) from None
            if instance.id in seen:
                raise InputError(f"line {number}: instance {instance.id!r}: field 'id' repeats the id of line "
                                 f"{seen[instance.id]}", field="id", line=number)
            seen[instance.id] = number
            yield instance
    finally:
        if handle is not sys.stdin:
            handle.close()


def _options(args: argparse.Namespace, names: tuple[str, ...]) -> dict:
    return {name: getattr(args, name) for name in names if getattr(args, name, None) not in (None, False)}


def _accepted(factory_name: str, options: dict, presets: dict) -> dict:
    """The subset of ``options`` the evaluator/extractor constructor accepts."""
    import inspect

    from doclens.evaluators import _import

    target = presets[factory_name][0] if factory_name in presets else factory_name
    try:
        parameters = inspect.signature(_import(target)).parameters
    except (TypeError, ValueError, ConfigurationError):
        return {}
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return options
    return {k: v for k, v in options.items() if k in parameters}


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
    from doclens.evaluators import EVALUATOR_PRESETS, EXTRACTOR_PRESETS, load_evaluator, load_extractor
    from doclens.scorer import DocLens

    model_options = _options(args, MODEL_OPTIONS)
    run_options = _options(args, RUN_OPTIONS)
    evaluator_options = {**model_options, **_accepted(args.evaluator, run_options, EVALUATOR_PRESETS),
                         **_parse_pairs(args.evaluator_arg, "--evaluator-arg")}
    evaluator = load_evaluator(args.evaluator, **evaluator_options)
    extractor = None
    if args.extractor == "auto":
        make = getattr(evaluator, "make_extractor", None)
        extractor = make() if callable(make) else None
    elif args.extractor != "none":
        extractor_options = {**_accepted(args.extractor, {**model_options, **run_options}, EXTRACTOR_PRESETS),
                             **_parse_pairs(args.extractor_arg, "--extractor-arg")}
        extractor = load_extractor(args.extractor, **extractor_options)
    baselines = [b.strip() for b in args.baselines.split(",") if b.strip()] if args.baselines else None
    return DocLens(evaluator, extractor, task=args.task, uncited=args.uncited, max_citations=args.max_citations,
                   on_unparsed=args.on_unparsed, chunk_size=args.chunk_size, baselines=baselines,
                   baseline_options=_parse_pairs(args.baseline_option, "--baseline-option") or None)


def _default_output(input_path: str) -> str:
    if input_path == "-":
        return "doclens-scores.json"
    path = Path(input_path)
    return str(path.with_name(path.stem + ".doclens.json"))


def cmd_score(args: argparse.Namespace) -> int:
    output = args.output or _default_output(args.input)
    try:
        scorer = build_scorer(args)
    except (ConfigurationError, InputError, ImportError) as exc:
        print(f"doclens: error: {exc}", file=sys.stderr)
        return 2
    if getattr(args, "dry_run", False):
        from doclens.dry_run import dry_run_estimate

        try:
            estimate = dry_run_estimate(scorer, read_jsonl(args.input))
        except (ConfigurationError, InputError, FileNotFoundError) as exc:
            print(f"doclens: error: {exc}", file=sys.stderr)
            return 2
        finally:
            scorer.evaluator.close()
        print(json.dumps(estimate, indent=2))
        return 0
    code = 0
    try:
        report = scorer.score(read_jsonl(args.input), progress=not args.quiet)
    except KeyboardInterrupt as exc:
        report, code = getattr(exc, "partial_report", None), 130
        print("doclens: interrupted", file=sys.stderr)
    except FileNotFoundError as exc:
        print(f"doclens: error: {exc}", file=sys.stderr)
        return 2
    except (InputError, ConfigurationError) as exc:
        report, code = getattr(exc, "partial_report", None), 2
        print(f"doclens: error: {exc}", file=sys.stderr)
    except Exception as exc:  # an endpoint that stays down, a model that fails to load …
        report, code = getattr(exc, "partial_report", None), 1
        logger.debug("scoring failed", exc_info=True)
        print(f"doclens: error: {type(exc).__name__}: {exc}", file=sys.stderr)
    finally:
        scorer.evaluator.close()
    if report is None:
        return code or 1
    report.save(output)
    print(report.summary())
    if report.partial:
        print(f"doclens: PARTIAL report ({len(report.instances)} instances scored before the error) "
              f"written to {output}", file=sys.stderr)
    else:
        print(f"report written to {output}")
    return code


def metric_module_files() -> dict[str, str]:
    """The ``evaluate`` module's files (``doclens.py``, ``README.md``) as shipped."""
    from doclens.resources import resource_root

    root = resource_root("metric")
    return {name: (root / name).read_text(encoding="utf-8") for name in ("doclens.py", "README.md")}


def install_metric(hf_modules_cache: Optional[str] = None) -> Path:
    """Put the ``evaluate`` module where ``evaluate.load("doclens")`` finds it offline:
    ``$HF_MODULES_CACHE/evaluate_modules/metrics/evaluate-metric--doclens/<sha256>/doclens.py``."""
    import hashlib

    base = Path(hf_modules_cache or os.environ.get("HF_MODULES_CACHE") or Path(
        os.environ.get("HF_HOME") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "huggingface")
        / "modules")
    files = metric_module_files()
    digest = hashlib.sha256(files["doclens.py"].encode("utf-8")).hexdigest()
    target = base / "evaluate_modules" / "metrics" / "evaluate-metric--doclens" / digest
    target.mkdir(parents=True, exist_ok=True)
    for folder in (base / "evaluate_modules", base / "evaluate_modules" / "metrics",
                   base / "evaluate_modules" / "metrics" / "evaluate-metric--doclens", target):
        (folder / "__init__.py").touch()
    for name, text in files.items():
        (target / name).write_text(text, encoding="utf-8")
    return target


def cmd_install_metric(args: argparse.Namespace) -> int:
    target = install_metric(args.modules_cache)
    print(f"installed the doclens evaluate module in {target}\n"
          "evaluate.load(\"doclens\") now works offline (evaluate falls back to this copy when the Hub "
          "cannot be reached; set HF_HUB_OFFLINE=1 to skip the attempt)")
    return 0


def cmd_presets(args: argparse.Namespace) -> int:
    from doclens.evaluators import EVALUATOR_PRESETS, EXTRACTOR_PRESETS

    print("evaluators (--evaluator):")
    for name, (_, description, where) in EVALUATOR_PRESETS.items():
        print(f"  {name:<16} [{'data stays on this machine' if where == 'local' else 'sends text to ' + where}] "
              f"{description}")
    print("extractors (--extractor):")
    for name, (_, description) in EXTRACTOR_PRESETS.items():
        print(f"  {name:<16} {description}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="doclens", description="Fact-level evaluation of medical text generation.")
    parser.add_argument("--version", action="version", version=f"doclens {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="-v: INFO, -vv: DEBUG (DEBUG may print instance text)")
    sub = parser.add_subparsers(dest="command", required=True)

    score = sub.add_parser("score", help="score a JSONL file of generated texts")
    score.add_argument("input", help="JSONL: {id, prediction, reference, source?, reference_claims?, "
                                     "prediction_claims?, task?} per line ('-' for stdin)")
    score.add_argument("-o", "--output", help="report JSON (default: INPUT.doclens.json beside the input)")
    score.add_argument("--evaluator", required=True,
                       help="preset name (see 'doclens presets') or package.module:ClassName")
    score.add_argument("--evaluator-arg", action="append", metavar="KEY=VALUE",
                       help="extra constructor argument for the evaluator (repeatable; VALUE read as JSON if it parses)")
    score.add_argument("--extractor", default="auto",
                       help="claim extractor: 'auto' (the evaluator's own model when it has one), 'none', a preset, "
                            "or package.module:ClassName")
    score.add_argument("--extractor-arg", action="append", metavar="KEY=VALUE")
    score.add_argument("--task", choices=("general", "note_generation", "report_summarization",
                                          "question_summarization"),
                       help="task for lines without a 'task' field (default general)")
    score.add_argument("--uncited", choices=("zero", "inherit"), default="zero",
                       help="uncited statements score 0 (paper) or inherit the next citation (original scripts)")
    score.add_argument("--max-citations", type=int, help="keep at most N citations per statement (default: all)")
    score.add_argument("--on-unparsed", choices=("zero", "exclude", "raise"), default="zero",
                       help="how judge replies that stay unparseable count (default zero, with a warning)")
    score.add_argument("--chunk-size", type=int, default=32, help="instances per batch (default 32)")
    score.add_argument("--baselines", help="comma-separated: rouge,bertscore,medcon")
    score.add_argument("--baseline-option", action="append", metavar="NAME=JSON",
                       help='per-baseline options, e.g. bertscore=\'{"model_type": "/models/x", "num_layers": 6}\'')
    model = score.add_argument_group("model and endpoint")
    model.add_argument("--model", help="model name, hub id, local folder or GGUF file")
    model.add_argument("--base-url", help="OpenAI-compatible endpoint (vLLM, llama.cpp, …)")
    model.add_argument("--api-key-env", help="environment variable holding the API key (never pass the key itself)")
    model.add_argument("--azure-endpoint", help="Azure OpenAI endpoint URL")
    model.add_argument("--azure-deployment", help="Azure OpenAI deployment name")
    model.add_argument("--azure-api-version", help="Azure OpenAI API version")
    model.add_argument("--concurrency", type=int, help="requests in flight (default 8)")
    model.add_argument("--rpm", type=float, help="requests per minute limit")
    model.add_argument("--tpm", type=float, help="tokens per minute limit")
    model.add_argument("--timeout", type=float, help="per-request timeout in seconds")
    model.add_argument("--max-retries", type=int, help="retries per request")
    model.add_argument("--local-only", action="store_true",
                       help="refuse any endpoint that is not loopback or a private address")
    model.add_argument("--seed", type=int)
    model.add_argument("--temperature", type=float)
    model.add_argument("--price-table", help="JSON file of per-model prices (USD per 1M tokens)")
    model.add_argument("--device", help="torch device for in-process models (default: auto)")
    model.add_argument("--dtype", choices=("float32", "bfloat16", "float16"),
                       help="in-process model precision (default: bf16 on a GPU that has it, else float32)")
    model.add_argument("--batch-size", type=int, help="inputs per forward pass for in-process models")
    model.add_argument("--threshold", type=float, help="entailment probability threshold")
    model.add_argument("--max-length", type=int, help="model window in tokens")
    model.add_argument("--dry-run", action="store_true", help="count calls and tokens; spend nothing")
    cache = score.add_argument_group("cache")
    cache.add_argument("--cache-dir", help="cache folder (default $DOCLENS_CACHE or ~/.cache/doclens)")
    cache.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    cache.add_argument("--refresh", action="store_true", help="ignore cached answers, store new ones")
    score.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    score.set_defaults(func=cmd_score)

    install = sub.add_parser("install-metric", help="make evaluate.load('doclens') work offline")
    install.add_argument("--modules-cache", help="HF modules cache (default $HF_MODULES_CACHE or $HF_HOME/modules)")
    install.set_defaults(func=cmd_install_metric)

    presets = sub.add_parser("presets", help="list evaluator and extractor presets")
    presets.set_defaults(func=cmd_presets)
    return parser


def main(argv: Optional[list[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING - 10 * min(args.verbose, 2), format="%(levelname)s %(name)s: %(message)s")
    try:
        return args.func(args)
    except DocLensError as exc:
        print(f"doclens: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
