import pytest

from doclens.parsing.claim_lists import dedupe_claims, find_json, parse_claim_list


@pytest.mark.parametrize("reply, claims", [
    ("Claim 1: The patient has a fever.\nClaim 2: The patient denies cough.", ["The patient has a fever.",
                                                                             "The patient denies cough."]),
    ("claim 1 - A\nCLAIM 2: B\nClaim3: C\nClaim 5. D\nClaim: E\nSubclaim 6: F", ["A", "B", "C", "D", "E", "F"]),
    ("**Claim 1:** A\n**Claim 2:** B", ["A", "B"]),
    ('["A", "B"]', ["A", "B"]),
    ('Here you go:\n```json\n[{"claim": "A"}, {"claim": "B"}]\n```', ["A", "B"]),
    ('Sure! The claims are ["A", "B"] as requested.', ["A", "B"]),
    ('{"claims": ["A", "B"]}', ["A", "B"]),
    ("- A\n- B\n* C\n• D", ["A", "B", "C", "D"]),
    ("1. A\n2) B", ["A", "B"]),
    ("The claims:\nA\nB", ["A", "B"]),
    ("Claim 1: None", []),
    ("", []),
    ("Claim 1: A.\nClaim 2: a\nClaim 3:  A ", ["A."]),
])
def test_parse_claim_list(reply, claims):
    assert parse_claim_list(reply) == claims


def test_dedupe_keeps_first_and_drops_placeholders():
    assert dedupe_claims(["Fever.", "fever", " N/A ", "", "Cough", "No claims"]) == ["Fever.", "Cough"]


def test_find_json_none_when_absent():
    assert find_json("no json here") is None
    assert find_json('prefix {"a": 1} suffix') == {"a": 1}
