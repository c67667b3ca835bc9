"""Read a list of subclaims out of an extractor's reply.

Accepts, in this order of preference:

* a JSON list — bare, in a code fence or inside prose — of strings or of objects with a
  ``claim`` / ``subclaim`` / ``text`` field;
* ``Claim 1: …`` lines, in any case and with numbering slips (``claim 3 -``, ``CLAIM: …``,
  ``Subclaim 2.``);
* bullet or numbered lists (``- …``, ``• …``, ``1. …``, ``2) …``).

A reply in none of these forms gives its non-empty lines, minus a lead-in line ending with
``:``. Duplicates (case, spacing and final punctuation ignored) are dropped, first kept, and
placeholder answers (``None``, ``N/A``, ``No claims``) are not claims. Fence markers that a model
echoes from its prompt (:class:`doclens.evaluators.llm.prompting.Fence`) are removed.
"""

from __future__ import annotations

import json
import re

#: Hex digits of a boundary (32 bits). Its length is not what makes it unforgeable (no text can
#: contain it: see doclens.evaluators.llm.prompting.make_fence); it only makes re-deriving rare.
#: Short, because every fenced item pays for two markers in prompt tokens.
FENCE_LENGTH = 8
#: A fence marker of any request, for readers that strip echoed markers from a judge's reply.
FENCE_MARKER = re.compile(r"<<<(?:DATA|END)-[0-9a-f]{" + str(FENCE_LENGTH) + r"}>>>")

_CLAIM_LINE = re.compile(r"^\s*[*_#]*\s*(?:sub-?)?claims?\s*#?\s*\d*\s*[*_]*\s*[:.)\-–]\s*[*_]*\s*(.+?)\s*$",
                         re.IGNORECASE)
_BULLET_LINE = re.compile(r"^\s*(?:[-*•▪◦‣·]|\(?\d{1,3}[.)])\s+(.+?)\s*$")
_PLACEHOLDER = re.compile(r"^(?:none|n/?a|no (?:sub)?claims?(?: (?:found|extracted))?|nothing|-)\.?$", re.IGNORECASE)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


def _normalise(claim: str) -> str:
    return re.sub(r"\s+", " ", claim).strip().rstrip(".;,").lower()


def dedupe_claims(claims: list[str]) -> list[str]:
    """Drop empty, placeholder and duplicate claims; keep the first of each.

    >>> dedupe_claims(["Fever.", " fever. ", "", "Cough."])
    ['Fever.', 'Cough.']
    """
    seen: set[str] = set()
    kept: list[str] = []
    for claim in claims:
        claim = re.sub(r"\s+", " ", FENCE_MARKER.sub(" ", claim)).strip().strip('"').strip()
        key = _normalise(claim)
        if not key or _PLACEHOLDER.match(claim) or key in seen:
            continue
        seen.add(key)
        kept.append(claim)
    return kept


def _json_items(value) -> list[str] | None:
    if isinstance(value, dict):
        for key in ("claims", "subclaims", "facts"):
            if isinstance(value.get(key), list):
                return _json_items(value[key])
        return None
    if not isinstance(value, list):
        return None
    items: list[str] = []
    for item in value:
        if isinstance(item, str):
            items.append(item)
        elif isinstance(item, dict):
            text = next((item[k] for k in ("claim", "subclaim", "text", "fact") if isinstance(item.get(k), str)), None)
            if text is None:
                return None
            items.append(text)
        else:
            return None
    return items


def find_json(text: str):
    """The first JSON value (list or object) found in ``text``: the whole reply, a code fence,
    or the first bracketed span that parses. ``None`` if there is none."""
    candidates = [text.strip()] + [m.group(1).strip() for m in _FENCE.finditer(text)]
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except (json.JSONDecodeError, ValueError):
            pass
    decoder = json.JSONDecoder()
    for match in re.finditer(r"[\[{]", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
            return value
        except json.JSONDecodeError:
            continue
    return None


def find_json_values(text: str) -> list:
    """Every outermost JSON list or object in ``text``, in order of appearance (bare, in a code
    fence, or inside prose). A value nested in another is part of it, not a value of its own.
    Judges read their answer from these (the last one that answers the question asked), so JSON
    quoted earlier from the instance text cannot stand in for the answer."""
    decoder = json.JSONDecoder()
    values: list = []
    start = re.compile(r"[\[{]")
    position = 0
    while True:
        match = start.search(text, position)
        if match is None:
            return values
        try:
            value, end = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            position = match.start() + 1
            continue
        values.append(value)
        position = end


def parse_claim_list(reply: str) -> list[str]:
    """The claims in an extractor's ``reply`` (see the module docstring for the forms).

    >>> parse_claim_list('Here you go: ["The patient has a fever.", "The patient has no cough."]')
    ['The patient has a fever.', 'The patient has no cough.']
    >>> parse_claim_list("Claim 1: The patient has a fever.\\nclaim 3 - The patient has no cough.")
    ['The patient has a fever.', 'The patient has no cough.']
    """
    if not reply or not reply.strip():
        return []
    items = _json_items(find_json(reply))
    if items is not None:
        return dedupe_claims(items)
    lines = reply.splitlines()
    claims = [m.group(1) for m in map(_CLAIM_LINE.match, lines) if m]
    if claims:
        return dedupe_claims(claims)
    bullets = [m.group(1) for m in map(_BULLET_LINE.match, lines) if m]
    if bullets:
        return dedupe_claims(bullets)
    plain = [line.strip() for line in lines if line.strip()]
    if plain and plain[0].endswith(":"):
        plain = plain[1:]
    return dedupe_claims(plain)
