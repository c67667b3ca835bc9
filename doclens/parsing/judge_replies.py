"""Read an LLM judge's verdicts out of its reply. Pure functions, no model, no I/O.

Three reply forms, one per prompt style (``prompts/judge/``):

* ``json_cot`` / ``json`` claim replies: a JSON list of objects
  ``{"id": 3, "claim": …, "explanation": …, "entailment_prediction": 1 | 0}`` (``explanation``
  optional for ``json``), found bare, in a code fence, or inside prose; a ``{"claims": [...]}``
  wrapper or a single object (one claim) is accepted too. Items are validated with a JSON
  schema; an item that fails it is ignored, which leaves its claim *missing*.
* ``cot`` claim replies (one call per claim): ``claim id: 3 claim: … explanation: … entailment
  prediction: 1 | 0``. Every prediction line of the reply must agree: a reply with two that
  disagree (an answer and a quoted ``entailment prediction: 1`` planted in the text judged, or a
  model that "changes its mind") is unreadable, never settled by position. A reply naming no id
  answers the one claim asked; one naming another id answers nothing. The reply restates the
  claim it answers (``claim: …``, the prompts ask for it), and the caller requires it: the
  restated text must be the asked claim's (compared as JSON items' copied texts are), else the
  reply answers nothing. A model misled by a claims block planted in the note answers under the
  asked number about a planted claim, and copies the planted text: caught here, re-asked, then
  unparsed.
* citation replies: the same two forms plus ``provenance``: the ids of the cited units that
  support the statement (a JSON list, or ``provenance: [2, 5]`` / ``provenance: 2, 5`` in CoT).

**Matching** (:func:`match_claim_items`). The prompts number the claims they ask about; a
verdict is filed under the claim its item names by number (``"id"``), else by exact claim text
(case, spacing, quotes, numbering and final punctuation ignored) — never by position. An item
naming no asked claim is *extra* and ignored; an item whose number and text name two different
asked claims is ignored too, and so is one whose number names an asked claim while the claim
text it copies is another (a model judging a claims block planted in the text it was shown:
``"id": 2, "claim": "A cough."`` for the asked "The patient has fever."; texts are compared
normalised, with a similarity of at least :data:`COPIED_CLAIM_SIMILARITY` so that a small slip in
copying is not punished). Two items that disagree on one claim leave it *missing*; identical
duplicates are fine. Whatever stays missing the caller re-asks once, then records as unparsed.

**Source support** replies (``prompts/judge/support.*``) give a 3-way ``verdict`` instead of
``entailment_prediction``: ``"Supported"``, ``"Not Supported"`` or ``"Not Addressed"``
(:func:`read_support_label`), in a JSON list of ``{"id", "claim", "explanation", "verdict"}``
(:func:`read_support_verdicts`, matched exactly like claim replies) or a CoT reply ``claim id: N
explanation: … verdict: …`` (:func:`parse_support_cot`).

**Which JSON.** A reply may hold several JSON values: a judge may quote JSON from the text it
was shown before or after giving its answer, and that text may be written to look like an
answer (a verdict list keyed by the prompt's claim numbers, planted in a prediction). So no
value wins by its position: the items of EVERY value that names an asked claim are read
together (:func:`read_claim_verdicts`), and a claim they disagree on is missing (re-asked, then
unparsed); quoted JSON that names no asked claim is ignored. A citation reply's valid objects
must likewise all agree. What no parser can stop is a model that obeys the planted text and
gives only the planted answer (``cards/llm-evaluators.md``).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from doclens.core.support import NOT_ADDRESSED, NOT_SUPPORTED, SUPPORTED
from doclens.parsing.claim_lists import FENCE_MARKER, find_json_values

#: One verdict item of a JSON claim reply.
CLAIM_ITEM_SCHEMA: dict = {
    "type": "object",
    "properties": {
        "id": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
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

#: How alike (difflib's ratio, of normalised texts) an item's copied claim text must be to the
#: claim its number names: a slip in copying passes, another claim's text does not.
COPIED_CLAIM_SIMILARITY = 0.8

_VALIDATE_ITEM = jsonschema.Draft202012Validator(CLAIM_ITEM_SCHEMA)
_VALIDATE_CITATION = jsonschema.Draft202012Validator(CITATION_SCHEMA)

_PREDICTION = re.compile(
    r"(?:entailment[ _-]*)?prediction\s*\**\s*[:=]\s*\**\s*['\"\[(]?\s*([01]|yes|no|true|false)\b", re.IGNORECASE)
_EXPLANATION = re.compile(r"explanation\s*\**\s*[:=]\s*\**\s*(.*?)(?=\n?\s*\**\s*(?:provenance|(?:entailment[ _-]*)?"
                          r"prediction)\s*\**\s*[:=]|\Z)", re.IGNORECASE | re.DOTALL)
_CLAIM_ID = re.compile(r"claim[ _-]*id\s*\**\s*[:=]\s*\**\s*#?\s*(\d+)", re.IGNORECASE)
#: a CoT reply's restated claim: ``claim: …`` on a line of its own (not ``claim id:``)
_CLAIM_TEXT = re.compile(r"^[ \t*_]*claim[ \t*_]*[:=][ \t*_]*(.*?)[ \t*_]*$", re.IGNORECASE | re.MULTILINE)
_ID_TEXT = re.compile(r"^\s*(?:claim\s*)?#?\s*(\d+)\s*[.:)]?\s*$", re.IGNORECASE)
_PROVENANCE = re.compile(r"provenance\s*\**\s*[:=]\s*\**\s*([^\n]*)", re.IGNORECASE)


@dataclass
class Verdict:
    """One verdict read from a reply."""

    entailed: bool
    explanation: str = ""
    provenance: list[int] | None = None
    label: str | None = None  # source support: the 3-way verdict


def normalise_claim(text: str) -> str:
    """The form claims are matched in: lower case, single spaces, no quotes, no final punctuation."""
    text = re.sub(r"\s+", " ", FENCE_MARKER.sub(" ", str(text))).strip().strip("\"'“”‘’").strip()
    text = re.sub(r"^(?:claim\s*\d*\s*[:.)-]|\d+\s*[.)])\s*", "", text, flags=re.IGNORECASE)
    return text.rstrip(".;,:!").strip().lower()


def read_label(value: Any) -> bool | None:
    """``1``/``0``, ``True``/``False``, ``"1"``, ``"yes"``… → bool; anything else → ``None``."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return {1: True, 0: False}.get(value)
    if isinstance(value, str):
        key = value.strip().strip("'\"").strip().lower()
        return {"1": True, "yes": True, "true": True, "0": False, "no": False, "false": False}.get(key)
    return None


def _claim_items(value: Any) -> list | None:
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


def _valid_items(items: list) -> list[dict]:
    return [item for item in items if isinstance(item, dict) and _VALIDATE_ITEM.is_valid(item)
            and read_label(item["entailment_prediction"]) is not None]


def item_id(item: dict) -> int | None:
    """The claim number an item names: ``"id": 3`` (or ``"3"``, ``"claim 3"``); ``None`` if none."""
    value = item.get("id")
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        match = _ID_TEXT.match(value)
        return int(match.group(1)) if match else None
    return None


@dataclass
class ClaimReading:
    """What a reply says about the claims asked: one :class:`Verdict` or ``None`` (missing) per
    claim, how many items named no asked claim (``extra``), and how many claims were left
    missing because items disagreed (``conflicting``)."""

    verdicts: list[Verdict | None]
    extra: int = 0
    conflicting: int = 0
    named: int = field(default=0, repr=False)  # items filed under an asked claim


def _targets(item: dict, claims: Sequence[str], slot_of_id: dict[int, int],
             slots_of_text: dict[str, list[int]]) -> list[int] | None:
    """The claim slots one reply item answers, by its number and its copy of the claim's text;
    ``None`` when it names no claim, or its number and copied text name different claims."""
    number = item_id(item)
    copied = normalise_claim(item["claim"]) if isinstance(item.get("claim"), str) else None
    by_text = slots_of_text.get(copied, []) if copied else []
    if number in slot_of_id:
        if (by_text and slot_of_id[number] not in by_text) or (
                copied and not by_text and not _alike(copied, normalise_claim(claims[slot_of_id[number]]))):
            return None  # number and copied text name different claims
        return [slot_of_id[number]]
    if by_text:  # identical claim texts are one question: the item answers each of them
        return by_text
    return None


def _resolve(items: Sequence[dict], claims: Sequence[str], ids: Sequence[int] | None) -> ClaimReading:
    numbers = list(range(1, len(claims) + 1)) if ids is None else list(ids)
    if len(numbers) != len(claims):
        raise ValueError(f"{len(claims)} claims but {len(numbers)} ids")
    slot_of_id = {number: slot for slot, number in enumerate(numbers)}
    slots_of_text: dict[str, list[int]] = {}
    for slot, claim in enumerate(claims):
        slots_of_text.setdefault(normalise_claim(claim), []).append(slot)
    found: dict[int, list[Verdict]] = {}
    extra = named = 0
    for item in items:
        verdict = Verdict(entailed=bool(read_label(item["entailment_prediction"])),
                          explanation=str(item.get("explanation", "") or "").strip(), label=item.get("_label"))
        targets = _targets(item, claims, slot_of_id, slots_of_text)
        if targets is None:
            extra += 1
            continue
        named += 1
        for slot in targets:
            found.setdefault(slot, []).append(verdict)
    verdicts: list[Verdict | None] = []
    conflicting = 0
    for slot in range(len(claims)):
        got = found.get(slot, [])
        if len({(v.entailed, v.label) for v in got}) > 1:
            conflicting += 1
            verdicts.append(None)
        else:
            verdicts.append(got[0] if got else None)
    return ClaimReading(verdicts, extra, conflicting, named)


def _alike(copied: str, asked: str) -> bool:
    return difflib.SequenceMatcher(None, copied, asked, autojunk=False).ratio() >= COPIED_CLAIM_SIMILARITY


def _reply_values(reply: str) -> list[list[dict]]:
    """The schema-valid verdict items of each JSON value in the reply that is a verdict list
    (or wraps one), in order of appearance."""
    found = []
    for value in find_json_values(reply or ""):
        items = _claim_items(value)
        if items is not None:
            found.append(_valid_items(items))
    return found


def parse_claim_items(reply: str, claims: Sequence[str] | None = None,
                      ids: Sequence[int] | None = None) -> list[dict] | None:
    """The schema-valid verdict items of a JSON claim reply, in reply order; ``None`` when the
    reply holds no JSON list of verdicts at all (an empty list is a valid, empty answer).

    Of several JSON values, the items of every one that names one of ``claims`` (by ``ids``,
    default 1, 2, …, or by text), together: none wins by position, so items that disagree leave
    their claim missing (:func:`match_claim_items`). Without ``claims``, the last verdict list."""
    values = _reply_values(reply)
    if not values:
        return None
    if claims is not None:
        naming = [items for items in values if _resolve(items, claims, ids).named]
        if naming:
            return [item for items in naming for item in items]
    return values[-1]


def match_claim_items(items: Sequence[dict], claims: Sequence[str],
                      ids: Sequence[int] | None = None) -> list[Verdict | None]:
    """One :class:`Verdict` (or ``None``: missing) per claim, in the order of ``claims``.

    An item is filed under the claim whose number (``ids``, default 1, 2, …) its ``"id"`` names,
    else under the claim(s) with its exact normalised text. Never by position: an item naming
    no asked claim is extra and ignored, as is one whose id and text name different claims. A
    claim with disagreeing items is missing; agreeing duplicates count once (first explanation).
    """
    return _resolve(items, claims, ids).verdicts


def read_claim_verdicts(reply: str, claims: Sequence[str], ids: Sequence[int] | None = None) -> ClaimReading:
    """Read a JSON claim reply: the items of every JSON value naming an asked claim, matched by
    :func:`match_claim_items`, with the counts of extra items and conflicting claims."""
    items = parse_claim_items(reply, claims, ids)
    if items is None:
        return ClaimReading([None] * len(claims))
    return _resolve(items, claims, ids)


def parse_claims_json(reply: str, claims: Sequence[str], ids: Sequence[int] | None = None) -> list[Verdict | None]:
    """:func:`read_claim_verdicts`' verdicts; all ``None`` if unreadable."""
    return read_claim_verdicts(reply, claims, ids).verdicts


def parse_cot(reply: str, claim_id: int | None = None, claim: str | None = None) -> Verdict | None:
    """``claim id: N claim: … explanation: … entailment prediction: 1|0`` → :class:`Verdict`;
    ``None`` without a readable prediction, or with predictions that disagree (never settled by
    position: one may be quoted from the text judged). With ``claim_id`` (the one claim asked), a
    reply whose last ``claim id:`` before its last prediction names another number answers another
    claim: ``None``. A reply naming no id answers the asked one. With ``claim`` (its text), the
    reply must restate it: the last ``claim:`` line before the last prediction, alike to the
    asked text (module docstring), else ``None``."""
    read = _read_cot(reply, claim_id, _PREDICTION, read_label, _EXPLANATION, claim)
    return None if read is None else Verdict(entailed=read[0], explanation=read[1])


def _read_cot(reply: str, claim_id: int | None, answer, read_answer, explanation_pattern, claim: str | None = None):
    """``(answer, explanation)`` of a CoT reply, or ``None``: every ``answer`` match, read by
    ``read_answer``, must give one same answer (``None`` when one is unreadable or they
    disagree); with ``claim_id``, the last ``claim id:`` before the last answer must name that
    claim (or none be named); with ``claim``, the last ``claim:`` line before it must restate
    that claim."""
    if not reply:
        return None
    found = list(answer.finditer(reply))
    if not found:
        return None
    if claim_id is not None:
        named = [int(m.group(1)) for m in _CLAIM_ID.finditer(reply, 0, found[-1].start())]
        if named and named[-1] != claim_id:
            return None
    if claim is not None:
        restated = [m.group(1) for m in _CLAIM_TEXT.finditer(reply, 0, found[-1].start())]
        if not restated or not _alike(normalise_claim(restated[-1]), normalise_claim(claim)):
            return None
    labels = {read_answer(match.group(1)) for match in found}
    if len(labels) != 1:  # answers that disagree: re-asked, then unparsed, never settled by position
        return None
    label = labels.pop()
    if label is None:
        return None
    explanation = explanation_pattern.search(reply)
    return label, explanation.group(1).strip() if explanation else reply[:found[-1].start()].strip()


def read_ids(value: Any) -> list[int] | None:
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


def parse_citation_json(reply: str) -> Verdict | None:
    """A JSON citation reply ``{explanation, provenance, entailment_prediction}`` → :class:`Verdict`.
    Of several valid JSON objects, all must give the same verdict and provenance (``None``
    otherwise: one may be quoted from the text judged, and none wins by position)."""
    if not reply or not reply.strip():
        return None
    answers = []
    for value in find_json_values(reply):
        if isinstance(value, list) and len(value) == 1 and isinstance(value[0], dict):
            value = value[0]
        if not isinstance(value, dict) or not _VALIDATE_CITATION.is_valid(value):
            continue
        label = read_label(value["entailment_prediction"])
        provenance = read_ids(value.get("provenance", []))
        if label is None or provenance is None:
            continue
        answers.append(Verdict(entailed=label, explanation=str(value.get("explanation", "") or "").strip(),
                               provenance=provenance))
    if not answers or len({(a.entailed, tuple(a.provenance or ())) for a in answers}) > 1:
        return None
    return answers[0]


def parse_citation_cot(reply: str) -> Verdict | None:
    """``explanation: … provenance: [2, 5] … entailment prediction: 1|0`` → :class:`Verdict`.
    A missing provenance line reads as no supporting unit."""
    verdict = parse_cot(reply)
    if verdict is None:
        return None
    found = list(_PROVENANCE.finditer(reply))
    readings = {tuple(ids) if ids is not None else None for ids in (read_ids(m.group(1)) for m in found)}
    if len(readings) > 1:  # provenance lines that disagree: as for the prediction, no position wins
        return None
    verdict.provenance = list(readings.pop() or []) if readings else []
    return verdict


# ---- source support (3 verdicts) ---------------------------------------------------------------------
#: One verdict item of a JSON source-support reply.
SUPPORT_ITEM_SCHEMA: dict = {
    "type": "object",
    "properties": {
        "id": CLAIM_ITEM_SCHEMA["properties"]["id"],
        "claim": {"type": "string"},
        "explanation": {"type": "string"},
        "verdict": {"type": "string"},
    },
    "required": ["verdict"],
}
_VALIDATE_SUPPORT = jsonschema.Draft202012Validator(SUPPORT_ITEM_SCHEMA)
_SUPPORT_WORDS = {"supported": SUPPORTED, "not supported": NOT_SUPPORTED, "unsupported": NOT_SUPPORTED,
                  "contradicted": NOT_SUPPORTED, "not addressed": NOT_ADDRESSED, "unaddressed": NOT_ADDRESSED}
_SUPPORT_VERDICT = re.compile(r"verdict\s*\**\s*[:=]\s*\**\s*['\"\[(]?\s*(not[ _-]+supported|not[ _-]+addressed|"
                              r"supported|unsupported|contradicted|unaddressed)\b", re.IGNORECASE)
_SUPPORT_EXPLANATION = re.compile(r"explanation\s*\**\s*[:=]\s*\**\s*(.*?)(?=\n?\s*\**\s*verdict\s*\**\s*[:=]|\Z)",
                                  re.IGNORECASE | re.DOTALL)


def read_support_label(value: Any) -> str | None:
    """``"Supported"``, ``"Not Supported"``, ``"not_addressed"``, ``"unsupported"`` … → one of
    :data:`doclens.core.support.SUPPORT_LABELS`; anything else → ``None``."""
    if not isinstance(value, str):
        return None
    key = re.sub(r"[\s_-]+", " ", value.strip().strip("'\".").strip().lower())
    return _SUPPORT_WORDS.get(key)


def _support_items(value: Any) -> list | None:
    if isinstance(value, dict) and "verdict" in value and not isinstance(value["verdict"], (list, dict)):
        return [value]
    if isinstance(value, dict):
        for key in ("claims", "results", "verdicts", "answers", "items"):
            if isinstance(value.get(key), list):
                return value[key]
        lists = [v for v in value.values() if isinstance(v, list)]
        return lists[0] if len(lists) == 1 else None
    return value if isinstance(value, list) else None


def read_support_verdicts(reply: str, claims: Sequence[str], ids: Sequence[int] | None = None) -> ClaimReading:
    """Read a JSON source-support reply: like :func:`read_claim_verdicts` (every JSON value
    naming an asked claim, read together, matched by number then text, never by position), each
    :class:`Verdict` carrying its ``label`` (``entailed`` is true for ``supported`` only)."""
    values = []
    for value in find_json_values(reply or ""):
        items = _support_items(value)
        if items is None:
            continue
        valid = []
        for item in items:
            if isinstance(item, dict) and _VALIDATE_SUPPORT.is_valid(item):
                label = read_support_label(item["verdict"])
                if label is not None:
                    valid.append({**{k: item[k] for k in ("id", "claim", "explanation") if k in item},
                                  "entailment_prediction": int(label == SUPPORTED), "_label": label})
        values.append(valid)
    naming = [item for items in values if _resolve(items, claims, ids).named for item in items]
    if naming:  # every value that names an asked claim, read together (none wins by position)
        return _resolve(naming, claims, ids)
    return ClaimReading([None] * len(claims)) if not values else _resolve(values[-1], claims, ids)


def parse_support_cot(reply: str, claim_id: int | None = None, claim: str | None = None) -> Verdict | None:
    """``claim id: N claim: … explanation: … verdict: Supported|Not Supported|Not Addressed`` →
    :class:`Verdict` with its ``label``; ``None`` without a readable verdict or with verdicts
    that disagree; the claim id and claim text rules are :func:`parse_cot`'s."""
    read = _read_cot(reply, claim_id, _SUPPORT_VERDICT, read_support_label, _SUPPORT_EXPLANATION, claim)
    return None if read is None else Verdict(entailed=read[0] == SUPPORTED, explanation=read[1], label=read[0])
