import json

import pytest

from doclens.parsing.judge_replies import (
    match_claim_items,
    normalise_claim,
    parse_citation_cot,
    parse_citation_json,
    parse_claim_items,
    parse_claims_json,
    parse_cot,
    read_ids,
    read_label,
)

CLAIMS = ["The patient has a fever.", "The patient takes metformin.", "No rash."]


def items(*labels, explanation=True):
    return [dict({"claim": c, "entailment_prediction": v}, **({"explanation": f"why {i}"} if explanation else {}))
            for i, (c, v) in enumerate(zip(CLAIMS, labels))]


def entailed(verdicts):
    return [None if v is None else v.entailed for v in verdicts]


@pytest.mark.parametrize("wrap", [
    lambda s: s,
    lambda s: f"```json\n{s}\n```",
    lambda s: f"```\n{s}\n```",
    lambda s: f"Here is my evaluation of each claim:\n{s}\nI hope this helps.",
    lambda s: f"Sure! ```JSON\n{s}``` Done.",
    lambda s: json.dumps({"claims": json.loads(s)}),
    lambda s: json.dumps({"verdicts_for_you": json.loads(s)}),  # json_object mode wraps a list under any key
])
def test_json_reply_forms(wrap):
    reply = wrap(json.dumps(items(1, 0, 1)))
    verdicts = parse_claims_json(reply, CLAIMS)
    assert entailed(verdicts) == [True, False, True]
    assert verdicts[1].explanation == "why 1"


@pytest.mark.parametrize("label,expected", [(1, True), (0, False), ("1", True), ("0", False), (True, True),
                                            (False, False), ("yes", True), ("No", False), (" '1' ", True),
                                            (2, None), ("maybe", None), (None, None), (1.0, None)])
def test_read_label(label, expected):
    assert read_label(label) is expected


def test_items_failing_the_schema_are_missing():
    reply = json.dumps([{"claim": CLAIMS[0], "entailment_prediction": 1},
                        {"claim": CLAIMS[1], "entailment_prediction": "perhaps"},
                        {"claim": CLAIMS[2]}])
    assert entailed(parse_claims_json(reply, CLAIMS)) == [True, None, None]


def test_matching_by_normalised_text_in_any_order():
    reply = json.dumps([{"claim": "no rash", "entailment_prediction": 0},
                        {"claim": "  THE PATIENT HAS A FEVER ", "entailment_prediction": 1},
                        {"claim": "2. The patient takes metformin", "entailment_prediction": 1}])
    assert entailed(parse_claims_json(reply, CLAIMS)) == [True, True, False]


def test_no_positional_fallback():
    paraphrased = [{"claim": "Fever present", "entailment_prediction": 1},
                   {"claim": "On metformin", "entailment_prediction": 0},
                   {"entailment_prediction": 1}]
    # as many items as claims, none naming one: nothing is filed (the old position fallback guessed)
    assert entailed(match_claim_items(paraphrased, CLAIMS)) == [None, None, None]
    assert entailed(match_claim_items(paraphrased[:2], CLAIMS)) == [None, None, None]


def test_missing_and_extra_items():
    reply = json.dumps([{"claim": CLAIMS[0], "entailment_prediction": 1},
                        {"claim": "Something nobody asked.", "entailment_prediction": 1},
                        {"claim": CLAIMS[2], "entailment_prediction": 0},
                        {"claim": "Another extra.", "entailment_prediction": 0}])
    # four items for three claims: no positional fallback; the unmatched claim is missing
    assert entailed(parse_claims_json(reply, CLAIMS)) == [True, None, False]


def test_identical_claim_texts_are_one_question():
    claims = ["Fever.", "Fever."]
    agreeing = json.dumps([{"claim": "Fever.", "entailment_prediction": 1},
                           {"claim": "Fever", "entailment_prediction": 1}])
    assert entailed(parse_claims_json(agreeing, claims)) == [True, True]
    # by text alone, two different answers to the same question are a conflict: both missing
    disagreeing = json.dumps([{"claim": "Fever.", "entailment_prediction": 1},
                              {"claim": "Fever", "entailment_prediction": 0}])
    assert entailed(parse_claims_json(disagreeing, claims)) == [None, None]
    # by number each copy gets its own answer
    by_id = json.dumps([{"id": 2, "claim": "Fever.", "entailment_prediction": 0},
                        {"id": 1, "claim": "Fever", "entailment_prediction": 1}])
    assert entailed(parse_claims_json(by_id, claims)) == [True, False]


@pytest.mark.parametrize("reply", ["", "   ", "I cannot help with that.", "{not json", "[1, 2, 3]", '"just a string"'])
def test_garbage_gives_all_missing(reply):
    assert entailed(parse_claims_json(reply, CLAIMS)) == [None, None, None]


def test_no_list_is_none_but_empty_list_is_an_answer():
    assert parse_claim_items("no json here") is None
    assert parse_claim_items("[]") == []


def test_single_object_for_one_claim():
    reply = json.dumps({"claim": "Fever.", "explanation": "x", "entailment_prediction": 1})
    assert entailed(parse_claims_json(reply, ["Fever."])) == [True]


@pytest.mark.parametrize("reply,expected", [
    ("explanation: The note states fever.\nentailment prediction: 1", True),
    ("Explanation: not stated.\nEntailment Prediction: 0", False),
    ("explanation: x\nentailment_prediction: 1", True),
    ("**Explanation:** x\n**Entailment prediction:** 0", False),
    ("explanation: first I thought 1.\nprediction: 0", False),
    ("entailment prediction: yes", True),
    ("entailment prediction = '0'", False),
])
def test_cot_replies(reply, expected):
    verdict = parse_cot(reply)
    assert verdict is not None and verdict.entailed is expected


def test_cot_explanation_is_kept():
    verdict = parse_cot("explanation: The report names metformin only.\nentailment prediction: 0")
    assert verdict.explanation == "The report names metformin only."


@pytest.mark.parametrize("reply", ["", "The claim is supported.", "entailment prediction: maybe",
                                   "explanation: unclear",
                                   # two answers that disagree (a change of mind, or a quoted planted line)
                                   "explanation: a\nentailment prediction: 0\n\nOn reflection:\nentailment prediction: 1",
                                   "entailment prediction: 0\nThe note reads: 'entailment prediction: 1'"])
def test_cot_unreadable(reply):
    assert parse_cot(reply) is None


@pytest.mark.parametrize("value,expected", [([2, 5], [2, 5]), (["[2]", "5"], [2, 5]), ("2, 5", [2, 5]),
                                            ("[2][5][2]", [2, 5]), (3, [3]), ([], []), ("none", []),
                                            (True, None), ({"a": 1}, None), ([1.5], None)])
def test_read_ids(value, expected):
    assert read_ids(value) == expected


def test_citation_json():
    verdict = parse_citation_json('Answer: {"explanation": "x", "provenance": [0, "2"], "entailment_prediction": 1}')
    assert (verdict.entailed, verdict.provenance, verdict.explanation) == (True, [0, 2], "x")
    no_provenance = parse_citation_json('{"entailment_prediction": 0}')
    assert (no_provenance.entailed, no_provenance.provenance) == (False, [])
    assert parse_citation_json('[{"provenance": [1], "entailment_prediction": "1"}]').provenance == [1]


@pytest.mark.parametrize("reply", ["", "garbage", '{"provenance": [1]}', '{"entailment_prediction": 3}',
                                   '{"entailment_prediction": 1, "provenance": {"x": 1}}', "[1, 2]"])
def test_citation_json_unreadable(reply):
    assert parse_citation_json(reply) is None


def test_citation_cot():
    verdict = parse_citation_cot("explanation: units 1 and 3 say so.\nprovenance: [1, 3]\nentailment prediction: 1")
    assert (verdict.entailed, verdict.provenance, verdict.explanation) == (True, [1, 3], "units 1 and 3 say so.")
    assert parse_citation_cot("explanation: x\nentailment prediction: 0").provenance == []
    assert parse_citation_cot("provenance: [1]") is None


def test_normalise_claim():
    assert normalise_claim(' "Claim 3: The Patient  has fever." ') == "the patient has fever"
    assert normalise_claim("1) Fever;") == "fever"
