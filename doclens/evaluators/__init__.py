"""Evaluator and extractor presets, loaded by name.

``load_evaluator("overlap")`` gives a preset; ``load_evaluator("mypkg.judges:MyJudge")`` imports
a user's own :class:`doclens.Evaluator` subclass. Presets are imported lazily so the core never
imports torch or an HTTP client it does not need.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

from doclens.errors import ConfigurationError

#: name → ("module:factory", one-line description, keeps data on this machine?)
EVALUATOR_PRESETS: dict[str, tuple[str, str, str]] = {
    "overlap": ("doclens.evaluators.overlap:OverlapEvaluator",
                "lexical containment heuristic; offline, instant, for smoke tests — not a publishable judge",
                "local"),
    "gpt4-json-cot": ("doclens.evaluators.openai_chat:GPT4JsonCoT",
                      "LLM judge, JSON + chain of thought, all claims of a premise per call (paper's GPT-4 setting; "
                      "default model gpt-4o)", "the configured endpoint"),
    "mistral-cot": ("doclens.evaluators.openai_chat:MistralCoT",
                    "LLM judge, chain of thought, one call per claim, on an OpenAI-compatible server hosting "
                    "Mistral (needs --base-url)", "the configured endpoint"),
    "json": ("doclens.evaluators.openai_chat:JsonJudge",
             "LLM judge, JSON verdicts without explanations (prompt-style ablation)", "the configured endpoint"),
    "cot": ("doclens.evaluators.openai_chat:CoTJudge",
            "LLM judge, chain of thought, one call per claim, any chat model (prompt-style ablation)",
            "the configured endpoint"),
}

#: name → ("module:factory", description)
EXTRACTOR_PRESETS: dict[str, tuple[str, str]] = {
    "sentences": ("doclens.extractors:SentenceExtractor", "each sentence is a claim (no model)"),
    "llm": ("doclens.evaluators.openai_chat:llm_extractor",
            "LLM subclaim extraction on an OpenAI-compatible endpoint (sends text to it)"),
}


def _import(target: str):
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise ConfigurationError(f"{target!r} is neither a preset nor 'package.module:ClassName'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        if exc.name and module_name.startswith(exc.name):
            raise ConfigurationError(f"cannot import module {module_name!r} (from {target!r}): {exc}") from exc
        raise
    try:
        return getattr(module, attr)
    except AttributeError as exc:
        raise ConfigurationError(f"module {module_name!r} has no {attr!r} (from {target!r})") from exc


def _construct(factory, options: dict[str, Any], what: str):
    options = {k: v for k, v in options.items() if v is not None}
    try:
        parameters = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return factory(**options)
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        unknown = sorted(set(options) - set(parameters))
        if unknown:
            raise ConfigurationError(f"{what} does not take option(s) {', '.join(unknown)}")
    return factory(**options)


def load_evaluator(name: str, **options):
    """An evaluator by preset name or ``package.module:ClassName``; ``options`` go to its
    constructor (``None`` values are dropped)."""
    from doclens.evaluators.base import Evaluator

    target = EVALUATOR_PRESETS[name][0] if name in EVALUATOR_PRESETS else name
    if name not in EVALUATOR_PRESETS and ":" not in name:
        raise ConfigurationError(f"unknown evaluator {name!r}; presets: {', '.join(EVALUATOR_PRESETS)}, "
                                 "or give 'package.module:ClassName'")
    evaluator = _construct(_import(target), options, f"evaluator {name!r}")
    if not isinstance(evaluator, Evaluator):
        raise ConfigurationError(f"{name!r} did not produce a doclens.Evaluator (got {type(evaluator).__name__})")
    return evaluator


def load_extractor(name: str, **options):
    """An extractor by preset name or ``package.module:ClassName``."""
    from doclens.extractors import Extractor

    target = EXTRACTOR_PRESETS[name][0] if name in EXTRACTOR_PRESETS else name
    if name not in EXTRACTOR_PRESETS and ":" not in name:
        raise ConfigurationError(f"unknown extractor {name!r}; presets: {', '.join(EXTRACTOR_PRESETS)}, "
                                 "or give 'package.module:ClassName'")
    extractor = _construct(_import(target), options, f"extractor {name!r}")
    if not isinstance(extractor, Extractor):
        raise ConfigurationError(f"{name!r} did not produce a doclens.Extractor (got {type(extractor).__name__})")
    return extractor
