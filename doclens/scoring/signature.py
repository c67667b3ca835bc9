"""sacreBLEU-style signatures: one string that pins everything that can change a score.

Two results are comparable only when their signatures are equal::

    doclens:1.0.0|task:general|judge:gpt4-json-cot:gpt-4o|style:json_cot|extract:given|prompts:3f2a9c1d|T:0|agg:pooled|uncited:zero|maxcit:none|unparsed:zero

Fields, in order: package version; tasks scored; judge (preset or class name and model; a judge
that keeps the base class's name ``custom`` is named by its class, ``custom(pkg.mod.Class)``, so
two different custom judges never share a signature); ``style`` (prompt style, only for judges
that have one); extractor (``given`` claims and/or the extractor's name and model); the
fingerprint of every prompt version used (judge and extractor); the judge's decoding parameters
(``T``, ``seed`` …) and, prefixed ``extract-``, the extractor's where it has its own; aggregation;
citation options (``uncited``, ``maxcit``); how unparsed replies count; and, only when question
summaries were split into sentences instead of judged whole, ``qstatements:sentences``; for ``note_generation``, what a claim whose section the premise note
lacks is judged against (``sections:note``, the whole note; ``sections:section``, the original
empty premise).
"""

from __future__ import annotations

from typing import Optional

from doclens.evaluators.prompting import prompts_fingerprint


def make_signature(*, version: str, tasks: list[str], judge: str, extract: str, prompt_tags: list[str],
                   decoding: Optional[dict] = None, uncited: str = "zero", max_citations: Optional[int] = None,
                   on_unparsed: str = "zero", style: Optional[str] = None,
                   extract_decoding: Optional[dict] = None, question_statements: str = "whole",
                   section_fallback: Optional[str] = None) -> str:
    """The signature string of one run (see the module docstring for the fields)."""
    parts = [
        f"doclens:{version}",
        f"task:{'+'.join(sorted(set(tasks))) or 'none'}",
        f"judge:{judge}",
    ]
    if style:
        parts.append(f"style:{style}")
    parts += [
        f"extract:{extract}",
        f"prompts:{prompts_fingerprint(prompt_tags) if prompt_tags else 'none'}",
    ]
    for key, value in sorted((decoding or {}).items()):
        parts.append(f"{key}:{value}")
    for key, value in sorted((extract_decoding or {}).items()):
        parts.append(f"extract-{key}:{value}")
    parts += ["agg:pooled", f"uncited:{uncited}", f"maxcit:{max_citations if max_citations else 'none'}",
              f"unparsed:{on_unparsed}"]
    if question_statements != "whole":  # only when question summaries were split into sentences
        parts.append(f"qstatements:{question_statements}")
    if section_fallback:  # note_generation only
        parts.append(f"sections:{section_fallback}")
    return "|".join(parts)


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
