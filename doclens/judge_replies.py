"""Read an LLM judge's verdicts out of its reply. Pure functions, no model, no I/O.

Three reply forms, one per prompt style (``prompts/judge/``):

* ``json_cot`` / ``json`` claim replies: a JSON list of objects
  ``{"claim": …, "explanation": …, "entailment_prediction": 1 | 0}`` (``explanation`` optional
  for ``json``), found bare, in a code fence, or inside prose; a ``{"claims": [...]}`` wrapper or
  a single object (one claim) is accepted too. Items are validated with a JSON schema; an item
  that fails it is ignored, which leaves its claim *missing*.
* ``cot`` claim replies: ``explanation: … entailment prediction: 1 | 0`` (the last prediction
  line wins, so a model that "changes its mind" is read at its final answer).
* citation replies: the same two forms plus ``provenance``: the ids of the cited units that
  support the statement (a JSON list, or ``provenance: [2, 5]`` / ``provenance: 2, 5`` in CoT).

Verdicts are matched back to the claims that were asked (:func:`match_claim_items`): by claim
text (case, spacing, quotes and final punctuation ignored), else by position when the reply has
as many items as were asked. Whatever stays unmatched is *missing*: the caller re-asks for it
once, then records it as unparsed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional, Sequence

import jsonschema

from doclens.claim_lists import find_json

#: One verdict item of a JSON claim reply.
CLAIM_ITEM_SCHEMA: dict = {
    "type": "object",
    "properties": {
        "claim": {"type": "string"},
        "explanation": {"type": "string"},
        "entailment_prediction": {"anyOf": [{"type": "integer", "enum": [0, 1]}, {"type": "boolean"},
                                            {"type": "string", "pattern": r"^\s*['\"]?(?:0|1|yes|no|true|false)['\"]?\s*$"}]},
    },
    "required": ["entailment_prediction"],
}

#: A JSON citation reply.
CITATION_SCHEMA: dict = {
    "type": "object",
    "properties": {
        "explanation": {"type": "string"},
        "provenance": {"anyOf": [{"type": "array", "items": {"type": ["integer", "string"]}},
                                 {"type": "integer"}, {"type": "string"}]},
        "entailment_prediction": CLAIM_ITEM_SCHEMA["properties"]["entailment_prediction"],
    },
    "required": ["entailment_prediction"],
}

_VALIDATE_ITEM = jsonschema.Draft202012Validator(CLAIM_ITEM_SCHEMA)
_VALIDATE_CITATION = jsonschema.Draft202012Validator(CITATION_SCHEMA)

_PREDICTION = re.compile(
    r"(?:entailment[ _-]*)?prediction\s*\**\s*[:=]\s*\**\s*['\"\[(]?\s*([01]|yes|no|true|false)\b", re.IGNORECASE)
_EXPLANATION = re.compile(r"explanation\s*\**\s*[:=]\s*\**\s*(.*?)(?=\n?\s*\**\s*(?:provenance|(?:entailment[ _-]*)?"
                          r"prediction)\s*\**\s*[:=]|\Z)", re.IGNORECASE | re.DOTALL)
_PROVENANCE = re.compile(r"provenance\s*\**\s*[:=]\s*\**\s*([^\n]*)", re.IGNORECASE)


@dataclass
class Verdict:
    """One verdict read from a reply."""

    entailed: bool
    explanation: str = ""
    provenance: Optional[list[int]] = None


def normalise_claim(text: str) -> str:
    """The form claims are matched in: lower case, single spaces, no quotes, no final punctuation."""
    text = re.sub(r"\s+", " ", str(text)).strip().strip("\"'“”‘’").strip()
    text = re.sub(r"^(?:claim\s*\d*\s*[:.)-]|\d+\s*[.)])\s*", "", text, flags=re.IGNORECASE)
    return text.rstrip(".;,:!").strip().lower()


def read_label(value: Any) -> Optional[bool]:
    """``1``/``0``, ``True``/``False``, ``"1"``, ``"yes"``… → bool; anything else → ``None``."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return {1: True, 0: False}.get(value)
    if isinstance(value, str):
        key = value.strip().strip("'\"").strip().lower()
        return {"1": True, "yes": True, "true": True, "0": False, "no": False, "false": False}.get(key)
    return None


def _claim_items(value: Any) -> Optional[list]:
    if isinstance(value, dict):
        for key in ("claims", "results", "verdicts", "answers", "items"):
            if isinstance(value.get(key), list):
                return value[key]
        if "entailment_prediction" in value:
            return [value]
        # JSON response mode forces an object: a model asked for a list wraps it under some key.
        lists = [v for v in value.values() if isinstance(v, list)]
        return lists[0] if len(lists) == 1 else None
    return value if isinstance(value, list) else None


def parse_claim_items(reply: str) -> Optional[list[dict]]:
    """The schema-valid verdict items of a JSON claim reply, in reply order; ``None`` when the
    reply holds no JSON list of verdicts at all (an empty list is a valid, empty answer)."""
    if not reply or not reply.strip():
        return None
    items = _claim_items(find_json(reply))
    if items is None:
        return None
    return [item for item in items if isinstance(item, dict) and _VALIDATE_ITEM.is_valid(item)
            and read_label(item["entailment_prediction"]) is not None]


def match_claim_items(items: Sequence[dict], claims: Sequence[str]) -> list[Optional[Verdict]]:
    """One :class:`Verdict` (or ``None``: missing) per claim, in the order of ``claims``.

    An item is matched to the first not-yet-matched claim with the same normalised text. When
    the reply has exactly as many items as there are claims, an item whose text matches no claim
    (or that has no ``claim`` field) takes the claim at its own position, if that one is free.
    Items that match nothing are extra and ignored.
    """
    verdicts: list[Optional[Verdict]] = [None] * len(claims)
    keys = [normalise_claim(c) for c in claims]
    leftovers: list[tuple[int, dict]] = []
    for position, item in enumerate(items):
        verdict = Verdict(entailed=bool(read_label(item["entailment_prediction"])),
                          explanation=str(item.get("explanation", "") or "").strip())
        key = normalise_claim(item["claim"]) if isinstance(item.get("claim"), str) else None
        slot = next((i for i, k in enumerate(keys) if key is not None and k == key and verdicts[i] is None), None)
        if slot is None:
            leftovers.append((position, item))
            continue
        verdicts[slot] = verdict
    if len(items) == len(claims):
        for position, item in leftovers:
            if verdicts[position] is None:
                verdicts[position] = Verdict(entailed=bool(read_label(item["entailment_prediction"])),
                                             explanation=str(item.get("explanation", "") or "").strip())
    return verdicts


def parse_claims_json(reply: str, claims: Sequence[str]) -> list[Optional[Verdict]]:
    """:func:`parse_claim_items` then :func:`match_claim_items`; all ``None`` if unreadable."""
    items = parse_claim_items(reply)
    return [None] * len(claims) if items is None else match_claim_items(items, claims)


def parse_cot(reply: str) -> Optional[Verdict]:
    """``explanation: … entailment prediction: 1|0`` → :class:`Verdict`; ``None`` without a
    readable prediction. The last prediction in the reply is the answer."""
    if not reply:
        return None
    found = list(_PREDICTION.finditer(reply))
    if not found:
        return None
    label = read_label(found[-1].group(1))
    if label is None:
        return None
    explanation = _EXPLANATION.search(reply)
    text = explanation.group(1).strip() if explanation else reply[:found[-1].start()].strip()
    return Verdict(entailed=label, explanation=text)


def read_ids(value: Any) -> Optional[list[int]]:
    """Citation ids from ``[2, 5]``, ``["[2]", "5"]``, ``"2, 5"``, ``"[2][5]"``, ``3``; de-duplicated,
    in order. ``None`` when ``value`` is not an id list; ``[]`` for "none"."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return [value]
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return None
    ids: list[int] = []
    for item in value:
        if isinstance(item, bool):
            return None
        if isinstance(item, int):
            ids.append(item)
        elif isinstance(item, str):
            ids.extend(int(n) for n in re.findall(r"\d+", item))
        else:
            return None
    return list(dict.fromkeys(ids))


def parse_citation_json(reply: str) -> Optional[Verdict]:
    """A JSON citation reply ``{explanation, provenance, entailment_prediction}`` → :class:`Verdict`."""
    if not reply or not reply.strip():
        return None
    value = find_json(reply)
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], dict):
        value = value[0]
    if not isinstance(value, dict) or not _VALIDATE_CITATION.is_valid(value):
        return None
    label = read_label(value["entailment_prediction"])
    provenance = read_ids(value.get("provenance", []))
    if label is None or provenance is None:
        return None
    return Verdict(entailed=label, explanation=str(value.get("explanation", "") or "").strip(),
                   provenance=provenance)


def parse_citation_cot(reply: str) -> Optional[Verdict]:
    """``explanation: … provenance: [2, 5] … entailment prediction: 1|0`` → :class:`Verdict`.
    A missing provenance line reads as no supporting unit."""
    verdict = parse_cot(reply)
    if verdict is None:
        return None
    found = list(_PROVENANCE.finditer(reply))
    verdict.provenance = read_ids(found[-1].group(1)) if found else []
    return verdict
