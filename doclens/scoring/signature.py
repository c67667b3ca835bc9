"""sacreBLEU-style signatures: one string that pins everything that can change a score.

Two results are comparable only when their signatures are equal::

    doclens:1.0.0|task:general|judge:gpt4-json-cot:gpt-4o|style:json_cot|extract:given|prompts:3f2a9c1d|T:0|agg:pooled|uncited:zero|maxcit:none|unparsed:zero|uncited-outputs:na

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
the citation family's ``uncited-outputs`` (``na`` or ``strict``), source support's settings.
"""

from __future__ import annotations

from collections.abc import Sequence

from doclens.evaluators.llm.prompting import prompts_fingerprint

#: one signature field, ``(key, value)``: signatures are built and compared as lists of these and
#: rendered to text once, by :func:`render_signature`
SignatureField = tuple[str, str]


def render_signature(fields: Sequence[SignatureField]) -> str:
    """``[("a", "1"), ("b", "x")]`` → ``"a:1|b:x"``: the one place a signature becomes text."""
    return "|".join(f"{key}:{value}" for key, value in fields)


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


def make_signature(*, family_fields: Sequence[SignatureField] = (), **settings) -> str:
    """The signature string of one run: :func:`signature_fields` of ``settings`` then the metric
    families' ``family_fields``, rendered."""
    return render_signature([*signature_fields(**settings), *family_fields])


def parse_signature(signature: str) -> dict[str, str]:
    """``"a:1|b:x:y"`` → ``{"a": "1", "b": "x:y"}``."""
    return dict(part.split(":", 1) if ":" in part else (part, "") for part in signature.split("|"))


def component_signature(component) -> str:
    """The judge or extractor part of a signature: ``component.signature()``, except that a
    component still carrying the base classes' default name ``custom`` is named by its class,
    ``custom(pkg.mod.Class)`` or ``custom(pkg.mod.Class):model``."""
    text = component.signature()
    if getattr(component, "name", None) == "custom":
        cls = type(component)
        text = f"custom({cls.__module__}.{cls.__qualname__})" + text[len("custom"):]
    return text


def signature_differences(signature_a: str, signature_b: str) -> list[str]:
    """Human-readable ``field: a != b`` lines for the fields where two signatures differ."""
    a, b = parse_signature(signature_a), parse_signature(signature_b)
    return [f"{key}: {a.get(key, '(absent)')} != {b.get(key, '(absent)')}"
            for key in list(dict.fromkeys([*a, *b])) if a.get(key) != b.get(key)]
