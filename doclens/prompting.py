"""Prompt templates, stored as files under ``prompts/`` (DESIGN §4), never as strings in code.

A template file::

    version: 2
    description: one line on what the prompt asks
    ---
    ### system
    You are …
    ### user
    Premise: ${premise}
    …

The header holds ``key: value`` lines up to ``---``. ``### system`` / ``### user`` /
``### assistant`` start chat messages (a file with none is one user message). Placeholders use
``string.Template`` syntax (``$name`` / ``${name}``), so JSON braces in few-shot examples need no
escaping; write ``$$`` for a literal dollar sign.
"""

from __future__ import annotations

import hashlib
import re
import string
from dataclasses import dataclass
from functools import lru_cache

from doclens.resources import read_resource

_ROLE = re.compile(r"^###\s*(system|user|assistant)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    version: str
    messages: tuple[tuple[str, str], ...]  # (role, template text)
    sha: str  # of the file's bytes: any edit changes cache keys and signatures

    @property
    def tag(self) -> str:
        """``name@vVERSION#sha8``: what reports record for this prompt."""
        return f"{self.name}@v{self.version}#{self.sha[:8]}"

    def render(self, **values) -> list[dict]:
        """Chat messages with the placeholders filled. A missing value raises ``KeyError``."""
        return [{"role": role, "content": string.Template(text).substitute(values)}
                for role, text in self.messages]


def parse_prompt(name: str, text: str) -> PromptTemplate:
    header, sep, body = text.partition("\n---\n")
    if not sep:
        raise ValueError(f"prompt {name!r} has no '---' line ending its header")
    meta = dict(line.split(":", 1) for line in header.strip().splitlines() if ":" in line)
    meta = {k.strip(): v.strip() for k, v in meta.items()}
    if "version" not in meta:
        raise ValueError(f"prompt {name!r} has no 'version:' in its header")
    parts = _ROLE.split(body)
    if len(parts) == 1:
        messages = (("user", body.strip("\n")),)
    else:
        if parts[0].strip():
            raise ValueError(f"prompt {name!r} has text before its first '### role' line")
        messages = tuple((parts[i], parts[i + 1].strip("\n")) for i in range(1, len(parts), 2))
    sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return PromptTemplate(name=name, version=meta["version"], messages=messages, sha=sha)


@lru_cache(maxsize=None)
def load_prompt(name: str) -> PromptTemplate:
    """Load ``prompts/<name>.txt`` (``name`` like ``"extract/general"``)."""
    return parse_prompt(name, read_resource("prompts", f"{name}.txt"))


def prompts_fingerprint(tags: list[str]) -> str:
    """A short hash of a set of prompt tags, for signatures."""
    return hashlib.sha256("|".join(sorted(set(tags))).encode()).hexdigest()[:8]
