"""The rules' per-claim compute made cheaper, verdicts unchanged (issue 49): the count of claim stems
a note sentence holds (:func:`doclens.evaluators.rules.assertion._shared`) is kept across a claim's
words and skips the stems too short to end another, and a claim's parts
(``ClinicalRulesJudge._weakest_part``) are read once a claim; each gives what the check gives
computed as written, pair by pair."""

import re

from doclens.evaluators.rules import assertion
from doclens.evaluators.rules.assertion import COMPOUND_PART, _conflicting_occurrence, _shared
from doclens.evaluators.rules.clinical_rules import _CLAIM_PART, _claim_parts
from doclens.evaluators.rules.words import is_content

NOTE = ("Genitourinary: Denies bladder issues. Gastrointestinal: Denies abdominal pain or nausea. "
        "The patient reports numbness in his right foot. He denies numbness in his left hand. "
        "No fever. She has a fever and chills today. Lungs are clear. Cardiovascular: no murmurs. "
        "Intestinal symptoms resolved. Musculoskeletal: denies joint pain.")
CLAIMS = ("He has urinary issues.", "The patient has intestinal pain and nausea.", "No numbness in the right foot.",
          "She reports fever.", "The lungs have crackles.", "He has a murmur.", "The patient denies joint pain.",
          "Reports numbness and fever with urinary and intestinal symptoms.")


def _shared_as_written(sentence, claim_stems):
    """The count as the check states it: stems in common, and each other claim stem of at least
    ``COMPOUND_PART`` letters that ends a longer stem of the sentence."""
    stems = sentence.stems
    parts = {c for c in claim_stems - stems if len(c) >= COMPOUND_PART
             and any(len(s) > len(c) and s.endswith(c) for s in stems)}
    return len(stems & claim_stems) + len(parts)


def test_shared_counts_compound_parts_as_written(judge):
    analyser = judge.analyser
    sentences = analyser.sentences(NOTE)
    counted_a_part = False
    for claim in CLAIMS:
        stems = {w.stem for s in analyser.sentences(claim) for w in s.words}
        for sentence in sentences:
            assert _shared(sentence, stems) == _shared_as_written(sentence, stems), (claim, sentence.text)
            counted_a_part |= _shared(sentence, stems) > len(sentence.stems & stems)
    assert counted_a_part  # "urinary" of "genitourinary", "intestinal" of "gastrointestinal"


def test_a_claims_words_share_the_counts_and_find_the_same(judge, monkeypatch):
    analyser = judge.analyser
    sentences = analyser.sentences(NOTE)
    index = judge._index(sentences)
    calls = []
    monkeypatch.setattr(assertion, "_shared", lambda s, c: calls.append(id(s)) or _shared_as_written(s, c))
    for claim in CLAIMS:
        words = [w for s in analyser.sentences(claim) for w in s.words]
        stems = {w.stem for w in words}
        # word by word, each with counts of its own, as before the counts were kept
        alone = [_conflicting_occurrence(w, index, stems, False) for w in words]
        calls.clear()
        memo: dict[int, int] = {}
        kept = [_conflicting_occurrence(w, index, stems, False, memo) for w in words]
        assert kept == alone, claim
        assert len(calls) == len(set(calls))  # each sentence counted once for the claim


def _weakest_part_as_written(claim, key, missing):
    shares = []
    for part in _CLAIM_PART.split(claim):
        words = [w for w in re.findall(r"[A-Za-z][A-Za-z'\-]*", part.lower()) if is_content(w) and w not in key]
        if words:
            shares.append(sum(w not in missing for w in words) / len(words))
    return min(shares, default=1.0)


def test_weakest_part_reads_a_claims_parts_once(judge):
    claims = [*CLAIMS, "The lungs are clear and the abdomen is soft, non-tender; no edema.", "Follow-up in 2 weeks.",
              "Medical Reasoning: The patient's blood pressure is well-controlled and he takes lisinopril."]
    _claim_parts.cache_clear()
    for claim in claims:
        words = {w.lower() for w in re.findall(r"[A-Za-z]+", claim)}
        for key in (set(), {"medical", "reasoning"}):
            for missing in (set(), {"abdomen"}, {"lungs", "clear"}, set(sorted(words)[::2]), words):
                assert judge._weakest_part(claim, key, missing) == _weakest_part_as_written(claim, key, missing)
    assert any(judge._weakest_part(c, set(), {"abdomen"}) < 1.0 for c in claims)  # a part with something missing
    info = _claim_parts.cache_info()
    assert info.misses == len(claims) * 2 and info.hits > info.misses  # once a claim and key, not once a call
