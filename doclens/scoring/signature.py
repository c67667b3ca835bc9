"""sacreBLEU-style signatures: one string that pins everything that can change a score.

Two results are comparable only when their signatures are equal::

    doclens:1.0.0|task:general|judge:gpt4-json-cot:gpt-4o|style:json_cot|extract:given|prompts:3f2a9c1d|T:0|agg:pooled|uncited:zero|maxcit:none|unparsed:zero|uncited-outputs:na|cite:styled

Fields, in order: package version; tasks scored; judge (preset or class name and model; a judge
that keeps the base class's name ``custom`` is named by its class, ``custom(pkg.mod.Class)``, so
two different custom judges never share a signature); ``style`` (prompt style, only for judges
that have one); extractor (``given`` claims and/or the extractor's name and model); the
fingerprint of every prompt version used (judge and extractor); the judge's decoding parameters
(``T``, ``seed`` …) and, prefixed ``extract-``, the extractor's where it has its own; aggregation;
citation options (``uncited``, ``maxcit``); how unparsed replies count; only when sources without
``[0]`` markers were numbered by DocLens, how (``units:lines``, ``turns``, ``sentences`` or
``auto``, detected per source and counted in a warning); only when question
summaries were split into sentences instead of judged whole, ``qstatements:sentences``; for
``note_generation``, what a claim is judged against (``premise:note``, the whole premise note,
each claim still counted under its own section; ``premise:section``, its own section, the
paper's rule) and, under ``premise:section`` only, what a claim whose section the premise note
lacks is judged against (``sections:note``, the whole note; ``sections:section``, the original
empty premise); then the
fields each metric family of the run declares (:meth:`doclens.families.MetricFamily.signature_fields`):
the citation family's ``uncited-outputs`` (``na`` or ``strict``) and ``cite:styled`` (a bracketed
number is read as a citation only in a consistent citation style,
:func:`doclens.parsing.statements.citation_style`), source support's settings.

A signature is a :class:`Signature`: its fields are data, built once by :func:`get_signature` from
the run's :class:`~doclens.core.settings.ScoringSettings` and the judge and extractor that
actually scored, and rendered to text once, when it is made. It *is* that text (a ``str``
subclass), so a report's signature prints, compares and is written to files as the text always
was; code that needs a field reads :meth:`Signature.get`, never the text. Text is parsed in one
place only, :meth:`Signature.read`, for signatures read back from files.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from doclens.core.settings import ScoringSettings
from doclens.core.signature import Signature, SignatureField, parse_signature, render_signature
from doclens.evaluators.llm.prompting import prompts_fingerprint
from doclens.version import __version__

if TYPE_CHECKING:
    from doclens.evaluators.base import Evaluator
    from doclens.evaluators.usage import Component
    from doclens.extraction.extractors import Extractor
    from doclens.scoring.run import RunMeta

__all__ = ["Signature", "SignatureField", "render_signature", "parse_signature", "signature_fields", "make_signature",
           "get_signature", "component_signature", "signature_differences"]


def signature_fields(*, version: str, tasks: list[str], judge: str, extract: str, prompt_tags: list[str],
                     decoding: dict | None = None, uncited: str = "zero", max_citations: int | None = None,
                     on_unparsed: str = "zero", style: str | None = None,
                     extract_decoding: dict | None = None,
                     question_statements: str = "whole", premise_scope: str | None = None,
                     section_fallback: str | None = None, source_units: str = "given") -> list[SignatureField]:
    """The fields of one run's signature, before the metric families' own (see the module docstring)."""
    fields = [("doclens", version), ("task", "+".join(sorted(set(tasks))) or "none"), ("judge", judge)]
    if style:
        fields.append(("style", style))
    fields += [("extract", extract), ("prompts", prompts_fingerprint(prompt_tags) if prompt_tags else "none")]
    fields += [(key, str(value)) for key, value in sorted((decoding or {}).items())]
    fields += [(f"extract-{key}", str(value)) for key, value in sorted((extract_decoding or {}).items())]
    fields += [("agg", "pooled"), ("uncited", uncited), ("maxcit", str(max_citations) if max_citations else "none"),
               ("unparsed", on_unparsed)]
    if source_units != "given":  # unnumbered sources were numbered (lines, turns, sentences, auto)
        fields.append(("units", source_units))
    if question_statements != "whole":  # only when question summaries were split into sentences
        fields.append(("qstatements", question_statements))
    if premise_scope:  # note_generation only
        fields.append(("premise", premise_scope))
    if section_fallback and premise_scope != "note":  # under the whole note's scope, a missing section is no case
        fields.append(("sections", section_fallback))
    return fields


def make_signature(*, family_fields: Sequence[SignatureField] = (), **settings: Any) -> Signature:
    """The signature of one run from loose fields: :func:`signature_fields` of ``settings`` then
    the metric families' ``family_fields``. Runs are signed by :func:`get_signature`."""
    return Signature([*signature_fields(**settings), *family_fields])


def get_signature(settings: ScoringSettings, judge: Evaluator, extractor: Extractor | None = None,
                  run: RunMeta | None = None,
                  family_fields: Sequence[SignatureField] = ()) -> Signature:
    """The signature of a run scored under ``settings`` by ``judge`` and ``extractor`` (the ones
    that actually scored: on Ray, as the workers reported them), the one place a run is signed
    (sacreBLEU's ``get_signature``). ``run``: what the run met (``tasks``, ``used_given``,
    ``used_extractor``: a :class:`doclens.scoring.run.RunMeta`); ``None``: the settings alone,
    before any input is read: every task's fields named, the extractor named whether or not it
    will be used. ``family_fields``: the fields the run's metric families declare, in order."""
    tasks = sorted(run.tasks) if run is not None else ["*"]
    used = extractor if extractor is not None and (run is None or run.used_extractor) else None  # or None: not used
    if run is None:
        extract = component_signature(extractor) if extractor is not None else "none"
    else:
        extract = "+".join((["given"] if run.used_given else [])
                           + ([component_signature(used)] if used is not None else [])) or "none"
    prompt_tags = list(judge.prompt_tags()) + (list(used.prompt_tags()) if used is not None else [])
    decoding = judge.decoding() or {}
    extract_decoding = {}
    if used is not None and callable(used.decoding):
        extract_decoding = {k: v for k, v in used.decoding().items() if decoding.get(k) != v}
    met = (lambda task: True) if run is None else (lambda task: task in run.tasks)
    notes = met("note_generation")
    return make_signature(version=__version__, tasks=tasks, judge=component_signature(judge),
                          style=getattr(judge, "style", None), extract=extract,
                          prompt_tags=prompt_tags, decoding=decoding, uncited=settings.uncited,
                          max_citations=settings.max_citations, on_unparsed=settings.on_unparsed,
                          extract_decoding=extract_decoding,
                          question_statements=settings.question_statements if met("question_summarization")
                          else "whole",
                          family_fields=family_fields, source_units=settings.source_units,
                          premise_scope=settings.premise_scope if notes else None,
                          section_fallback=settings.section_fallback if notes else None)


def component_signature(component: Component) -> str:
    """The judge or extractor part of a signature: ``component.signature()``, except that a
    component still carrying the base classes' default name ``custom`` is named by its class,
    ``custom(pkg.mod.Class)`` or ``custom(pkg.mod.Class):model``."""
    text = component.signature()
    if getattr(component, "name", None) == "custom":
        cls = type(component)
        text = f"custom({cls.__module__}.{cls.__qualname__})" + text[len("custom"):]
    return text


def signature_differences(signature_a: str, signature_b: str) -> list[str]:
    """Human-readable ``field: a != b`` lines for the fields where two signatures differ
    (:meth:`Signature.differences`)."""
    return Signature.read(signature_a).differences(signature_b)
