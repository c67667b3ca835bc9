"""``doclens`` command line.

    doclens score notes.jsonl --evaluator local --output scores.json
    doclens install-metric            # makes evaluate.load("doclens") work offline
    doclens presets                   # lists evaluators and extractors
    doclens validate submission.json --references benchmark.jsonl
    doclens compare a.json b.json     # paired bootstrap difference B − A
    doclens agreement scores.json human.csv --human-column completeness
    doclens report scores.json --input notes.jsonl -o report.html
    doclens leaderboard scores/*.json -o board.html

Exit codes (``doclens.errors``): 0 success; 1 an unexpected internal error; 2 bad input file,
option or value (a partial report is written when anything was scored); 3 scored, but
incomplete (some model calls failed for good, most replies were unreadable, the circuit breaker
or ``--deadline`` stopped the run, or it failed mid-way: a partial report is written); 130
interrupted (Ctrl-C or SIGTERM; a partial report is written). A partial report never replaces a
complete one: it goes beside it as ``<name>.partial.json``.
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
from doclens.errors import (EXIT_ERROR, EXIT_INCOMPLETE, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, ConfigurationError,
                            DocLensError, InputError, RunStoppedError)
from doclens.types import Instance

logger = logging.getLogger("doclens")

#: CLI flags forwarded to evaluator / extractor constructors when set (dest → constructor kwarg).
MODEL_OPTIONS = ("model", "base_url", "api_key_env", "azure_endpoint", "azure_deployment", "azure_api_version",
                 "concurrency", "rpm", "tpm", "timeout", "max_retries", "local_only", "seed", "temperature",
                 "price_table", "device", "dtype", "batch_size", "threshold", "max_length", "dry_run",
                 "max_consecutive_failures", "deadline")
#: Forwarded only to constructors that accept them (evaluators that call no model ignore them).
RUN_OPTIONS = ("cache_dir", "no_cache", "refresh")


def read_jsonl(path: str, seen: Optional[dict] = None) -> Iterator[Instance]:
    """Instances from a JSONL file, lazily. Raises :class:`InputError` naming the file, the line
    (and the field) of the first bad line: not UTF-8, not JSON, a missing, empty or mistyped
    field, an id seen twice. Every line needs an ``id``: a non-empty string, or an integer
    (turned into its string). ``seen`` (when given) is filled with ``{id: line}``."""
    from doclens.jsonl import display_name, iter_jsonl

    name = display_name(path)
    seen = {} if seen is None else seen
    for number, data in iter_jsonl(path):
        try:
            instance = Instance.from_dict(data, require_id=True)
        except InputError as exc:
            raise InputError(f"{name} line {number}: {exc}", field=exc.field, line=number) from None
        if instance.id in seen:
            raise InputError(f"{name} line {number}: instance {instance.id!r}: field 'id' repeats the id of line "
                             f"{seen[instance.id]}", field="id", line=number)
        seen[instance.id] = number
        yield instance


def _options(args: argparse.Namespace, names: tuple[str, ...]) -> dict:
    # `is not` (not `in`): 0 is a value (--max-retries 0), only None and the False of a flag are "unset"
    return {name: getattr(args, name) for name in names
            if getattr(args, name, None) is not None and getattr(args, name, None) is not False}


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


def check_output_path(path: str, flag: str = "--output") -> None:
    """Refuse an output path that cannot be written, before any work starts: its folder must
    exist and be writable, and the path must not be a folder. ``-`` (stdout) is always fine."""
    if path == "-":
        return
    target = Path(path)
    parent = target.parent if str(target.parent) else Path(".")
    if target.is_dir():
        raise InputError(f"{flag} {path}: is a folder; give a file name", field=flag)
    if not parent.exists():
        raise InputError(f"{flag} {path}: the folder {str(parent)!r} does not exist", field=flag)
    if not parent.is_dir():
        raise InputError(f"{flag} {path}: {str(parent)!r} is not a folder", field=flag)
    if target.exists() and not os.access(target, os.W_OK):
        raise InputError(f"{flag} {path}: the file is not writable", field=flag)
    if not target.exists() and not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(f"{flag} {path}: the folder {str(parent)!r} is not writable", field=flag)


def is_complete_report(path: str) -> bool:
    """Whether ``path`` holds something a partial report must not replace: any existing file
    except a DocLens report marked ``"partial": true`` (:meth:`Report.save` writes that field
    near the top, so the first 64 KiB are read)."""
    import re

    try:
        with open(path, "rb") as handle:
            head = handle.read(1 << 16)
    except OSError:
        return False
    return not re.search(rb'"partial"\s*:\s*true', head)


def partial_path(output: str) -> str:
    """``scores.json`` → ``scores.partial.json``: where a partial report goes when ``output``
    already holds a complete one."""
    path = Path(output)
    return str(path.with_name(path.stem + ".partial" + (path.suffix or ".json")))


def _fallback_path(output: str) -> str:
    import tempfile
    import time

    name = f"doclens-report-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.json"
    for folder in (Path.cwd(), Path(tempfile.gettempdir())):
        if os.access(folder, os.W_OK | os.X_OK):
            return str(folder / name)
    return str(Path(tempfile.gettempdir()) / name)


def save_report(report, output: str) -> tuple[Optional[str], Optional[str]]:
    """Save ``report`` to ``output`` (``-``: stdout). A partial report never replaces an existing
    complete one: it goes to :func:`partial_path` instead. Returns ``(path written, error)``:
    when writing to the chosen path fails the report goes to a fallback file (the current folder,
    else the temporary folder), and ``error`` says why."""
    if output == "-":
        report.write(sys.stdout)
        sys.stdout.write("\n")
        sys.stdout.flush()
        return "-", None
    target = partial_path(output) if report.partial and Path(output).exists() and is_complete_report(output) \
        else output
    try:
        report.save(target)
        return target, None
    except (OSError, ValueError) as exc:
        problem = f"cannot write {target} ({exc.strerror if isinstance(exc, OSError) else exc})"
    fallback = _fallback_path(output)
    try:
        report.save(fallback)
    except (OSError, ValueError) as exc:
        return None, f"{problem}; the fallback {fallback} failed too ({exc}): the report is lost"
    return fallback, f"{problem}; the report was written to {fallback} instead"


def _located(message: str, path: str, lines: dict[str, int]) -> str:
    """``message`` prefixed with the input file and, when it names a read instance, its line (the
    scorer knows instances, not lines)."""
    from doclens.jsonl import display_name

    name = display_name(path)
    if message.startswith(name):
        return message
    for ident, number in lines.items():
        if message.startswith(f"instance {ident!r}"):
            return f"{name} line {number}: {message}"
    return f"{name}: {message}"


def cmd_score(args: argparse.Namespace) -> int:
    from doclens.jsonl import check_utf8

    output = args.output or _default_output(args.input)
    check_output_path(output)
    check_utf8(args.input)
    try:
        scorer = build_scorer(args)
    except (ConfigurationError, InputError, ImportError, TypeError, ValueError) as exc:
        print(f"doclens: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if getattr(args, "dry_run", False):
        from doclens.dry_run import dry_run_estimate

        try:
            estimate = dry_run_estimate(scorer, read_jsonl(args.input))
        except (ConfigurationError, InputError) as exc:
            print(f"doclens: error: {exc}", file=sys.stderr)
            return EXIT_USAGE
        finally:
            scorer.evaluator.close()
        print(json.dumps(estimate, indent=2))
        return EXIT_OK
    code = EXIT_OK
    lines: dict[str, int] = {}
    try:
        report = scorer.score(read_jsonl(args.input, lines), progress=not args.quiet)
    except KeyboardInterrupt as exc:
        report, code = getattr(exc, "partial_report", None), EXIT_INTERRUPTED
        print(f"doclens: {'terminated' if isinstance(exc, _Terminated) else 'interrupted'}", file=sys.stderr)
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
    if report is None:
        return code or EXIT_ERROR
    if report.partial and not report.instances:
        print("doclens: nothing was scored; no report written", file=sys.stderr)
        return code or EXIT_ERROR
    if args.system:
        report.config["system"] = args.system
    written, problem = save_report(report, output)
    summary = sys.stderr if output == "-" else sys.stdout
    print(report.summary(), file=summary)
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
        from doclens.scorer import incomplete_reasons

        reasons = incomplete_reasons(report)
        for reason in reasons:
            print(f"doclens: INCOMPLETE: {reason}", file=sys.stderr)
        if reasons:
            code = EXIT_INCOMPLETE
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
    try:
        target = install_metric(args.modules_cache)
    except OSError as exc:
        where = getattr(exc, "filename", None) or args.modules_cache or "the HF modules cache"
        raise InputError(f"install-metric: cannot write {where} ({exc.strerror or exc})") from None
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


def _number(kind, low=None, high=None, low_open=False, high_open=False, what="a number"):
    """An argparse ``type`` that accepts a finite ``kind`` within the given bounds, so that
    ``--resamples -5`` or ``--confidence 2`` is a usage error (exit 2), never a traceback."""
    import math

    def parse(text: str):
        try:
            value = kind(text)
        except (TypeError, ValueError):
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if isinstance(value, float) and not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
        if low is not None and (value <= low if low_open else value < low) or \
                high is not None and (value >= high if high_open else value > high):
            raise argparse.ArgumentTypeError(f"expected {what}, got {text}")
        return value

    return parse


POSITIVE_INT = _number(int, 1, what="an integer of at least 1")
NON_NEGATIVE_INT = _number(int, 0, what="an integer of at least 0")
POSITIVE_FLOAT = _number(float, 0, low_open=True, what="a number above 0")
NON_NEGATIVE_FLOAT = _number(float, 0, what="a number of at least 0")
PROBABILITY = _number(float, 0, 1, what="a number between 0 and 1")
CONFIDENCE = _number(float, 0, 1, low_open=True, high_open=True, what="a number strictly between 0 and 1")


def _bootstrap_options(parser: argparse.ArgumentParser, allow_none: bool = False) -> None:
    from doclens.bootstrap import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED

    group = parser.add_argument_group("bootstrap")
    group.add_argument("--resamples", type=NON_NEGATIVE_INT if allow_none else POSITIVE_INT,
                       default=DEFAULT_RESAMPLES,
                       help=f"bootstrap resamples (default {DEFAULT_RESAMPLES}"
                            + ("; 0: no intervals)" if allow_none else ")"))
    group.add_argument("--seed", type=NON_NEGATIVE_INT, default=DEFAULT_SEED,
                       help=f"bootstrap seed (default {DEFAULT_SEED})")
    group.add_argument("--confidence", type=CONFIDENCE, default=DEFAULT_CONFIDENCE,
                       help=f"interval confidence level (default {DEFAULT_CONFIDENCE})")


def _load_report(path: str):
    """A scores file read through the one checked reader (:meth:`doclens.Report.load`); its
    :class:`InputError` names the file, the instance and the field."""
    from doclens.report import Report

    return Report.load(path)


def cmd_validate(args: argparse.Namespace) -> int:
    from doclens.submissions import read_expected_ids, validate_file

    expected = read_expected_ids(args.references) if args.references else None
    failed = False
    for path in args.files:
        try:
            kind, problems = validate_file(path, expected, kind=args.kind)
        except InputError as exc:
            print(f"doclens: error: {exc}", file=sys.stderr)
            failed = True
            continue
        if problems:
            failed = True
            print(f"{path}: INVALID {kind or 'file'} — {len(problems)} problem(s)")
            for problem in problems:
                print(f"  {problem}")
        else:
            against = f" (ids checked against {args.references})" if expected is not None else ""
            print(f"{path}: valid {kind}{against}")
    return EXIT_USAGE if failed else EXIT_OK


def cmd_compare(args: argparse.Namespace) -> int:
    from doclens.bootstrap import MIN_INSTANCES, STATISTICS, align_by_id, bootstrap_description, paired_bootstrap
    from doclens.report_stream import scan_report
    from doclens.signature import signature_differences

    scanned = [scan_report(path) for path in (args.a, args.b)]
    (header_a, ids_a, counts_a), (header_b, ids_b, counts_b) = scanned
    signature_a, signature_b = str(header_a.get("signature")), str(header_b.get("signature"))
    differences = signature_differences(signature_a, signature_b)
    if differences and not args.allow_different_signatures:
        print("doclens: error: the two results have different signatures, so their scores are not comparable:\n  "
              + "\n  ".join(differences) + "\n(--allow-different-signatures compares them anyway)", file=sys.stderr)
        return 2
    counts_a, counts_b = align_by_id(ids_a, counts_a, ids_b, counts_b)
    result = paired_bootstrap(counts_a, counts_b, args.resamples, args.seed, args.confidence)
    bootstrap = bootstrap_description(args.resamples, args.seed, args.confidence)
    if args.json:
        print(json.dumps({"a": args.a, "b": args.b, "signature_a": signature_a,
                          "signature_b": signature_b, "signatures_differ": bool(differences),
                          "instances": len(counts_a), "bootstrap": bootstrap, "min_instances": MIN_INSTANCES,
                          "differences": {k: v.to_dict() for k, v in result.items()}}, indent=2, allow_nan=False))
        return 0
    if differences:
        print("WARNING: signatures differ (compared anyway, --allow-different-signatures):\n  "
              + "\n  ".join(differences))
    print(f"A = {args.a}\nB = {args.b}\n{len(counts_a)} paired instances, paired {bootstrap}; ×100")
    print(f"{'statistic':<28}{'A':>8}{'B':>8}{'B − A':>9}  {'interval':<20}{'p':>7}  verdict")
    for key in STATISTICS:
        d = result[key]
        if d.delta is None:
            print(f"{key:<28}{'n/a':>8}{'n/a':>8}{'n/a':>9}")
            continue
        if d.low is None:  # too few instances: no interval, no p-value, no verdict
            print(f"{key:<28}{100 * d.a:>8.2f}{100 * d.b:>8.2f}{100 * d.delta:>+9.2f}  {'—':<20}{'—':>7}  "
                  f"{d.verdict}")
            continue
        interval = f"[{100 * d.low:+.2f}, {100 * d.high:+.2f}]"
        print(f"{key:<28}{100 * d.a:>8.2f}{100 * d.b:>8.2f}{100 * d.delta:>+9.2f}  {interval:<20}{d.p_value:>7.3f}  "
              f"{d.verdict}")
    print(f"signature: {signature_a}" if not differences else
          f"signature A: {signature_a}\nsignature B: {signature_b}")
    return 0


def _named_scores(spec: str) -> tuple[str, str]:
    name, sep, path = spec.partition("=")
    return (name, path) if sep and name else (None, spec)


def cmd_agreement(args: argparse.Namespace) -> int:
    import csv

    from doclens.agreement import (instance_agreement, pairwise_agreement, read_csv_text, read_human_scores,
                                   read_preferences, report_metric_scores)
    from doclens.leaderboard import system_name

    try:
        header = next(csv.reader(read_csv_text(args.human).splitlines()[:1]), [])
    except csv.Error as exc:
        raise InputError(f"{args.human} line 1: not a readable CSV header ({exc})", line=1) from None
    metrics = args.metric or ["claim_recall", "claim_precision", "citation_recall", "citation_precision"]
    results = []
    if "preferred" in header:
        systems = {}
        for spec in args.scores:
            name, path = _named_scores(spec)
            report = _load_report(path)
            name = name or system_name(report.config, path)
            if name in systems:
                raise InputError(f"two scores files name system {name!r}; name them with NAME=PATH", field="system")
            systems[name] = report
        signatures = {r.signature for r in systems.values()}
        if len(signatures) > 1 and not args.allow_different_signatures:
            print("doclens: error: the scores files have different signatures; their scores are not comparable "
                  "(--allow-different-signatures compares them anyway)", file=sys.stderr)
            return 2
        preferences = read_preferences(args.human)
        for metric in metrics:
            scores = {name: report_metric_scores(report, metric) for name, report in systems.items()}
            results.append(pairwise_agreement(scores, preferences, metric, source=args.human).to_dict())
        mode = "pairwise"
    else:
        if len(args.scores) != 1:
            raise InputError(f"{args.human} has no 'preferred' column, so it holds per-instance scores: give exactly "
                             f"one scores file (got {len(args.scores)})")
        if not args.human_column:
            candidates = [c for c in header if c != args.id_column]
            raise InputError(f"{args.human}: choose the human score column with --human-column (columns: "
                             f"{', '.join(candidates) or 'none'})")
        report = _load_report(_named_scores(args.scores[0])[1])
        human, unrated = read_human_scores(args.human, args.human_column, args.id_column)
        for metric in metrics:
            results.append(instance_agreement(report_metric_scores(report, metric), human, metric, args.human_column,
                                              unrated, source=args.human).to_dict())
        mode = "instance"
    if args.json:
        print(json.dumps({"mode": mode, "human": args.human, "results": results}, indent=2, allow_nan=False))
        return 0

    def fmt(value):
        return "   n/a" if value is None else f"{value:6.3f}"

    if mode == "instance":
        print(f"per-instance agreement with {args.human} column {args.human_column!r}")
        print(f"{'metric':<20}{'n':>6}{'spearman':>10}{'kendall':>10}{'unrated':>9}{'no score':>10}")
        for r in results:
            print(f"{r['metric']:<20}{r['n']:>6}{fmt(r['spearman_rho']):>10}{fmt(r['kendall_tau_b']):>10}"
                  f"{r['human_unrated'] + r['unrated_instances']:>9}{r['metric_undefined']:>10}"
                  + (f"  {r['note']}" if r["note"] else ""))
        print("spearman = Spearman rho, kendall = Kendall tau-b; unrated: instances without a human score; "
              "no score: rated instances where the metric is undefined (left out)")
    else:
        print(f"pairwise agreement with {args.human}")
        print(f"{'metric':<20}{'pairs':>7}{'agree':>7}{'disagree':>9}{'m-ties':>8}{'h-ties':>8}{'undef':>7}"
              f"{'agreement':>11}")
        for r in results:
            print(f"{r['metric']:<20}{r['comparisons']:>7}{r['agree']:>7}{r['disagree']:>9}{r['metric_ties']:>8}"
                  f"{r['human_ties']:>8}{r['undefined']:>7}{fmt(r['agreement']):>11}"
                  + (f"  {r['note']}" if r["note"] else ""))
        print("agreement = agree / (agree + disagree + metric ties); human ties and undefined scores left out")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from doclens.bootstrap import bootstrap_description, bootstrap_intervals
    from doclens.html_views import SourceIndex, write_atomically, write_report_html
    from doclens.report_stream import iter_instance_results, scan_report

    # Two bounded-memory passes over the scores file: counts (for the intervals shown first), then the page.
    output = args.output or str(Path(args.scores).with_suffix(".html"))
    check_output_path(output)
    header, ids, counts = scan_report(args.scores)
    intervals = bootstrap_intervals(counts, args.resamples, args.seed, args.confidence) if args.resamples else None
    del counts
    sources = SourceIndex(args.input) if args.input else None
    if sources is not None:
        missing = [i for i in ids if i not in sources.offsets]
        if missing:
            sources.close()
            unreadable = (f" ({len(sources.unreadable)} line(s) of it could not be read: "
                          f"{'; '.join(sources.unreadable[:5])})" if sources.unreadable else "")
            raise InputError(f"{args.input}: {len(missing)} scored instance(s) not found, e.g. "
                             f"{', '.join(repr(i) for i in missing[:5])}{unreadable}", field="id")
    try:
        write_atomically(output, lambda handle: write_report_html(
            header, iter_instance_results(args.scores), handle, intervals=intervals, sources=sources,
            bootstrap=bootstrap_description(args.resamples, args.seed, args.confidence) if intervals else "",
            count=len(ids)))
    finally:
        if sources is not None:
            sources.close()
    print(f"report of {len(ids)} instances written to {output}")
    return 0


def cmd_leaderboard(args: argparse.Namespace) -> int:
    from doclens.bootstrap import bootstrap_description
    from doclens.html_views import write_atomically, write_leaderboard_html
    from doclens.leaderboard import group_by_signature, leaderboard_text, load_entry, rank_group

    if args.output:
        check_output_path(args.output)
    entries = [load_entry(path, args.resamples, args.seed, args.confidence) for path in args.scores]
    groups = {signature: rank_group(group, args.metric, args.resamples, args.seed, args.confidence)
              for signature, group in group_by_signature(entries).items()}
    bootstrap = bootstrap_description(args.resamples, args.seed, args.confidence)
    print(leaderboard_text(groups, args.metric, bootstrap))
    if args.output:
        write_atomically(args.output, lambda handle: write_leaderboard_html(groups, handle, args.metric, bootstrap))
        print(f"leaderboard written to {args.output}")
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
    score.add_argument("--task", choices=("general", "note_generation", "report_summarization",
                                          "question_summarization"),
                       help="task for lines without a 'task' field (default general)")
    score.add_argument("--uncited", choices=("zero", "inherit"), default="zero",
                       help="uncited statements score 0 (paper) or inherit the next citation (original scripts)")
    score.add_argument("--max-citations", type=NON_NEGATIVE_INT,
                       help="keep at most N citations per statement (default: all)")
    score.add_argument("--on-unparsed", choices=("zero", "exclude", "raise"), default="zero",
                       help="how judge replies that stay unparseable count (default zero, with a warning)")
    score.add_argument("--chunk-size", type=POSITIVE_INT, default=32, help="instances per batch (default 32)")
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
    model.add_argument("--dtype", choices=("float32", "bfloat16", "float16"),
                       help="in-process model precision (default: bf16 on a GPU that has it, else float32)")
    model.add_argument("--batch-size", type=POSITIVE_INT, help="inputs per forward pass for in-process models")
    model.add_argument("--threshold", type=PROBABILITY, help="entailment probability threshold")
    model.add_argument("--max-length", type=POSITIVE_INT, help="model window in tokens")
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

    validate = sub.add_parser("validate", help="check submissions or scores files against their JSON Schemas")
    validate.add_argument("files", nargs="+", help="submission (doclens-submission/1) or scores (doclens-report/1) "
                                                  "JSON files; the kind is read from their 'format' field")
    validate.add_argument("--references", metavar="JSONL",
                          help="the benchmark's instances (JSONL with an 'id' per line): unknown and missing ids "
                               "are named")
    validate.add_argument("--kind", choices=("submission", "scores"), help="validate as this kind whatever 'format' says")
    validate.set_defaults(func=cmd_validate)

    compare = sub.add_parser("compare", help="paired bootstrap difference between two scores files (B − A)")
    compare.add_argument("a", help="scores file A")
    compare.add_argument("b", help="scores file B (same instances, same signature)")
    compare.add_argument("--allow-different-signatures", action="store_true",
                         help="compare results whose signatures differ (the output says so)")
    compare.add_argument("--json", action="store_true", help="print JSON")
    _bootstrap_options(compare)
    compare.set_defaults(func=cmd_compare)

    agreement = sub.add_parser(
        "agreement", help="agreement of DocLens scores with human judgements",
        description="Per-instance CSV (header: id,<score columns>; choose one with --human-column; empty cell = "
                    "not rated): Spearman rho and Kendall tau-b per metric, with one scores file. Pairwise CSV "
                    "(header: id,system_a,system_b,preferred; preferred = a system name or 'tie'): how often "
                    "each metric prefers the system humans preferred, with one scores file per system given as "
                    "NAME=PATH (or PATH, named by the report's config 'system' or its file name).")
    agreement.add_argument("scores", nargs="+", help="scores file(s), optionally NAME=PATH")
    agreement.add_argument("human", help="CSV of human judgements (per-instance or pairwise, see above)")
    agreement.add_argument("--human-column", help="per-instance CSV: the column holding the human score")
    agreement.add_argument("--id-column", default="id", help="per-instance CSV: the id column (default id)")
    agreement.add_argument("--metric", action="append", choices=("claim_recall", "claim_precision", "citation_recall",
                                                                 "citation_precision"),
                           help="metric(s) to compare (repeatable; default all four)")
    agreement.add_argument("--allow-different-signatures", action="store_true")
    agreement.add_argument("--json", action="store_true", help="print JSON")
    agreement.set_defaults(func=cmd_agreement)

    report = sub.add_parser("report", help="a static HTML page of one scores file, instance by instance")
    report.add_argument("scores", help="scores file (doclens-report/1)")
    report.add_argument("-o", "--output", help="HTML file (default: SCORES with .html)")
    report.add_argument("--input", metavar="JSONL",
                        help="the scored input file: adds source units (citations jump to them) and raw predictions")
    _bootstrap_options(report, allow_none=True)
    report.set_defaults(func=cmd_report)

    board = sub.add_parser("leaderboard", help="rank scores files with intervals, one table per signature")
    board.add_argument("scores", nargs="+", help="scores files")
    board.add_argument("-o", "--output", help="also write a sortable HTML leaderboard here")
    board.add_argument("--metric", default="claim_recall",
                       choices=("claim_recall", "claim_precision", "citation_recall", "citation_precision"),
                       help="rank by this metric, pooled (default claim_recall)")
    _bootstrap_options(board)
    board.set_defaults(func=cmd_leaderboard)
    return parser


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C would be so that the same code writes the partial report."""


def _on_sigterm(signum, frame):
    raise _Terminated("terminated (SIGTERM)")


def _quiet_stdout() -> None:
    """After a closed stdout (``doclens … | head``): point stdout at /dev/null so that the
    interpreter's final flush cannot fail again (the Python docs' recipe for SIGPIPE)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # not a real file descriptor (an in-process capture)
        pass


def main(argv: Optional[list[str]] = None) -> int:
    """Run one command; returns its exit code (:mod:`doclens.errors`: 0 ok, 1 internal error,
    2 bad input or option, 3 scored but incomplete, 130 interrupted). No user input ends in a
    traceback: bad files and values are one ``doclens: error:`` line naming the file, line,
    instance and field; an unexpected error names its type (``-vv`` logs the traceback)."""
    import signal
    import threading

    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help, --version (0) or a usage error (2)
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    logging.basicConfig(level=logging.WARNING - 10 * min(args.verbose, 2), format="%(levelname)s %(name)s: %(message)s")
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        return args.func(args)
    except DocLensError as exc:
        print(f"doclens: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt as exc:
        print(f"doclens: {'terminated' if isinstance(exc, _Terminated) else 'interrupted'}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        _quiet_stdout()
        return EXIT_ERROR
    except RecursionError:
        print("doclens: error: input nested too deeply to read", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:  # a bug: say so in one line; -vv shows the traceback
        logger.debug("internal error", exc_info=True)
        print(f"doclens: internal error: {type(exc).__name__}: {exc} (run with -vv for the traceback and "
              "please report it)", file=sys.stderr)
        return EXIT_ERROR
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
