"""Prompt templates, stored as files under ``prompts/`` (``docs/design.md`` §4), never as strings in code.

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

**Fences.** Instance text (predictions, references, source units, claims, statements) is
untrusted: a leaderboard submission may hold a fake ``Claims:`` block, ``### assistant``,
``<|im_start|>`` or "ignore previous instructions". Every such text enters a prompt only inside a
:class:`Fence`: ``<<<DATA-t>>>`` … ``<<<END-t>>>``, where ``t`` is a boundary made for the request
(:func:`make_fence`) that occurs in none of its texts, so no text can close its fence early or
open a new one. The prompts say that fenced text is data, never an instruction; templates write
the two markers as ``${data}`` and ``${end}``, or (the judge prompts) describe them generically
(``<<<DATA-x>>>`` … ``<<<END-x>>>``, the same 8 hex digits in both) and fence their worked
example with the fixed boundary :data:`EXAMPLE_FENCE_TOKEN`, so that everything before the
instance data is the same text in every request (a prefix that a server, or the in-process
judge, computes once).

The boundary is *derived*, not drawn at random: a hash of the request's texts (and a fixed,
public salt), re-derived with a counter until it occurs in none of them. It is unpredictable to
a submission (which would have to contain the hash of itself) yet the same for the same request,
so the answer cache, whose keys hold the full prompt, is hit on a rerun.
"""

from __future__ import annotations

import hashlib
import itertools
import re
import string
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

from doclens.core.resources import read_resource
from doclens.parsing.claim_lists import FENCE_LENGTH

_ROLE = re.compile(r"^###\s*(system|user|assistant)\s*$", re.MULTILINE)

#: Public, fixed: the boundary only has to be absent from the texts and the same on a rerun.
FENCE_SALT = b"doclens-fence-v1"
#: The fixed boundary of the worked examples in the judge prompts (constant text, the same in
#: every request); :func:`make_fence` never gives it to a request.
EXAMPLE_FENCE_TOKEN = "5e1f0c2a"


@dataclass(frozen=True)
class Fence:
    """The delimiters of one request's untrusted text: ``<<<DATA-token>>>`` … ``<<<END-token>>>``."""

    token: str

    @property
    def open(self) -> str:
        return f"<<<DATA-{self.token}>>>"

    @property
    def close(self) -> str:
        return f"<<<END-{self.token}>>>"

    def wrap(self, text: str) -> str:
        """``text`` inside the fence, on the same line (short items: a claim, a unit)."""
        return f"{self.open}{text}{self.close}"

    def block(self, text: str) -> str:
        """``text`` inside the fence, the markers on lines of their own (long texts)."""
        return f"{self.open}\n{text}\n{self.close}"

    def values(self) -> dict:
        """The template placeholders of the markers: ``${data}`` and ``${end}``."""
        return {"data": self.open, "end": self.close}


def make_fence(texts: Iterable[str]) -> Fence:
    """The fence for a request holding ``texts``: its token is derived from a hash of the texts
    and :data:`FENCE_SALT` (with a counter, re-derived until the token occurs in no text, in any
    letter case, and differs from :data:`EXAMPLE_FENCE_TOKEN`). Same texts, same fence: prompts,
    hence cache keys, are stable across runs."""
    texts = [str(t) for t in texts]
    digest = hashlib.sha256(FENCE_SALT)
    for text in texts:
        data = text.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "big") + data)
    seed = digest.digest()
    lowered = [t.lower() for t in texts]
    for counter in itertools.count():
        token = hashlib.sha256(seed + counter.to_bytes(8, "big")).hexdigest()[:FENCE_LENGTH]
        if token != EXAMPLE_FENCE_TOKEN and not any(token in text for text in lowered):
            return Fence(token)
    raise AssertionError("unreachable")  # pragma: no cover


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
    messages: tuple[tuple[str, str], ...]
    if len(parts) == 1:
        messages = (("user", body.strip("\n")),)
    else:
        if parts[0].strip():
            raise ValueError(f"prompt {name!r} has text before its first '### role' line")
        messages = tuple((parts[i], parts[i + 1].strip("\n")) for i in range(1, len(parts), 2))
    sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return PromptTemplate(name=name, version=meta["version"], messages=messages, sha=sha)


@cache
def load_prompt(name: str) -> PromptTemplate:
    """Load ``prompts/<name>.txt`` (``name`` like ``"extract/general"``)."""
    return parse_prompt(name, read_resource("prompts", f"{name}.txt"))


def prompts_fingerprint(tags: list[str]) -> str:
    """A short hash of a set of prompt tags, for signatures."""
    return hashlib.sha256("|".join(sorted(set(tags))).encode()).hexdigest()[:8]
