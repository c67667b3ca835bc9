"""sacreBLEU-style signatures: one string that pins everything that can change a score.

Two results are comparable only when their signatures are equal::

    doclens:1.0.0|task:general|judge:gpt4-json-cot:gpt-4o|extract:given|prompts:3f2a9c1d|T:0|agg:pooled|uncited:zero|maxcit:none|unparsed:zero
"""

from __future__ import annotations

from typing import Optional

from doclens.prompting import prompts_fingerprint


def make_signature(*, version: str, tasks: list[str], judge: str, extract: str, prompt_tags: list[str],
                   decoding: Optional[dict] = None, uncited: str = "zero", max_citations: Optional[int] = None,
                   on_unparsed: str = "zero") -> str:
    parts = [
        f"doclens:{version}",
        f"task:{'+'.join(sorted(set(tasks))) or 'none'}",
        f"judge:{judge}",
        f"extract:{extract}",
        f"prompts:{prompts_fingerprint(prompt_tags) if prompt_tags else 'none'}",
    ]
    for key, value in sorted((decoding or {}).items()):
        parts.append(f"{key}:{value}")
    parts += ["agg:pooled", f"uncited:{uncited}", f"maxcit:{max_citations if max_citations else 'none'}",
              f"unparsed:{on_unparsed}"]
    return "|".join(parts)


def parse_signature(signature: str) -> dict[str, str]:
    """``"a:1|b:x:y"`` → ``{"a": "1", "b": "x:y"}``."""
    return dict(part.split(":", 1) if ":" in part else (part, "") for part in signature.split("|"))
