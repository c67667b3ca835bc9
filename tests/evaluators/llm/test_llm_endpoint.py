"""LLM judges against a real HTTP server on 127.0.0.1 (tests/llm_server.py): parsing, re-asks,
unparsed replies, retries, timeouts, context splits, caching and resuming, end to end through
DocLens(...).score."""

import asyncio
import json
import sqlite3
import warnings

import pytest

from doclens import DocLens, load_evaluator
from doclens.core.errors import UnparsedJudgementError
from doclens.evaluators.llm.chat import TOO_LONG
from doclens.evaluators.llm.prompting import make_fence
from tests.llm_server import FakeChatServer, Reply, cached_prompt_tokens, claims_in, context_error, fence_token, judge_reply

FAST = {"backoff_base": 0.01, "backoff_max": 0.05}

INSTANCE = {
    "id": "a",
    "prediction": "The patient has a fever [0]. Cough for three days [1][2].",
    "reference": "Fever. Cough for three days.",
    "source": ["patient: I have a fever", "patient: cough for three days", "doctor: any rash?"],
    "reference_claims": ["The patient has a fever.", "Cough for three days.", "A rash on the arm."],
    "prediction_claims": ["The patient has a fever.", "Cough for three days."],
}
# Rule judge: recall 2/3 (no rash in the prediction), precision 2/2, citation recall 2/2,
# citation precision: [0] precise, [1] precise, [2] not (shares no word) → 2/3.
EXPECTED = {"claim_recall": 2 / 3, "claim_precision": 1.0, "citation_recall": 1.0, "citation_precision": 2 / 3}


def judge(server, name="gpt4-json-cot", **options):
    return load_evaluator(name, base_url=server.base_url, model="test-model", **{**FAST, **options})


def score(evaluator, instances=(INSTANCE,), **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return DocLens(evaluator, **options).score(list(instances), progress=False)


def assert_expected(report, expected=EXPECTED):
    for metric, value in expected.items():
        assert report.scores[metric] == pytest.approx(value), metric


def is_claims_prompt(body):
    return "Claims:" in body["messages"][-1]["content"] or "Your answer could not be read" in \
        body["messages"][-1]["content"]


@pytest.mark.parametrize("name,calls", [("gpt4-json-cot", 2 + 2), ("json", 2 + 2), ("mistral-cot", 5 + 2),
                                        ("cot", 5 + 2)])
def test_valid_replies_score_exactly(name, calls):
    with FakeChatServer() as server:
        evaluator = judge(server, name)
        report = score(evaluator)
    assert_expected(report)
    assert server.count == calls == evaluator.usage.calls
    assert evaluator.usage.retries == 0 and evaluator.usage.prompt_tokens > 0
    statement = report.instances[0].statements[1]
    assert statement.provenance == [1] and statement.precise == [1]
    assert report.config["evaluator"]["style"] == {"gpt4-json-cot": "json_cot", "json": "json"}.get(name, "cot")
    assert report.unparsed == {"reference_claims": 0, "prediction_claims": 0, "statements": 0}


@pytest.mark.parametrize("wrap", [lambda s: f"```json\n{s}\n```",
                                  lambda s: f"Sure, here is the evaluation.\n{s}\nLet me know if you need more."])
def test_json_in_code_fence_or_prose(wrap):
    with FakeChatServer(script=lambda n, body: wrap(judge_reply(body["messages"]))) as server:
        report = score(judge(server))
    assert_expected(report)
    assert server.count == 4


def test_missing_claim_is_reasked_once_for_just_that_claim():
    def script(n, body):
        reply = json.loads(judge_reply(body["messages"]))
        if n == 0:  # the first claims call (recall, 3 claims): drop the rash claim
            assert len(reply) == 3
            return json.dumps([item for item in reply if "rash" not in item["claim"]])
        return json.dumps(reply) if isinstance(reply, list) else None

    with FakeChatServer(script=script) as server:
        evaluator = judge(server, concurrency=1)
        report = score(evaluator)
    assert_expected(report)
    assert server.count == 5
    reasks = [b for b in server.requests if b["messages"][-1]["content"].startswith("Your answer could not be read")]
    assert len(reasks) == 1
    assert claims_in(reasks[0]["messages"][-1]["content"]) == ["A rash on the arm."]
    assert reasks[0]["messages"][-2]["role"] == "assistant"


@pytest.mark.parametrize("on_unparsed,expected_recall", [("zero", 0.0), ("exclude", None)])
def test_garbage_is_unparsed_counted_and_scored(on_unparsed, expected_recall):
    def script(n, body):
        return "I am not sure what you mean." if is_claims_prompt(body) and "rash" in json.dumps(body) else None

    with FakeChatServer(script=script) as server:
        evaluator = judge(server, concurrency=1)
        with pytest.warns(UserWarning, match="3 judgement"):
            report = DocLens(evaluator, on_unparsed=on_unparsed).score([INSTANCE], progress=False)
    # recall request (3 claims, mentions the rash) is garbage twice: first try + one re-ask
    assert server.count == 5
    assert report.unparsed["reference_claims"] == 3
    verdict = report.instances[0].reference_claims[0]
    assert verdict.status == "unparsed" and "I am not sure" in verdict.raw and "re-ask" in verdict.raw
    assert report.scores["claim_recall"] == expected_recall
    assert report.scores["claim_precision"] == 1.0


def test_garbage_with_on_unparsed_raise():
    with FakeChatServer(script=lambda n, body: "garbage" if is_claims_prompt(body) else None) as server:
        with pytest.raises(UnparsedJudgementError):
            DocLens(judge(server), on_unparsed="raise").score([INSTANCE], progress=False)


def test_unparsed_citation_reply_and_recovery_by_reask():
    def script(n, body):  # every first citation reply is garbage; only the fever re-ask stays garbage
        last = body["messages"][-1]["content"]
        reask = "could not be read" in last
        return "no idea" if ("Sentence:" in last and not reask) or (reask and "fever" in last) else None

    with FakeChatServer(script=script) as server:
        with pytest.warns(UserWarning):
            report = DocLens(judge(server, concurrency=1)).score([INSTANCE], progress=False)
    assert report.unparsed["statements"] == 1 and server.count == 2 + 2 + 2
    fever, cough = report.instances[0].statements
    assert fever.status == "unparsed" and fever.raw.count("no idea") == 2 and fever.precise == []
    assert cough.status == "ok" and cough.provenance == [1]
    assert report.scores["citation_recall"] == 0.5


def recorded_waits(evaluator, real=False):
    """Make ``evaluator`` record every wait it chooses (before a retry, or for a rate limit): tests
    check the waits chosen, never the wall-clock time a run took. ``real``: still wait them out."""
    waits = []

    async def sleep(seconds):
        waits.append(seconds)
        await asyncio.sleep(seconds if real else min(seconds, 0.01))

    evaluator._sleep = sleep
    return waits


def test_429_with_retry_after_is_honoured():
    with FakeChatServer(script=lambda n, body: Reply(status=429, headers={"Retry-After": "0.4"},
                                                      error={"error": {"message": "slow down"}})
                        if n == 0 else None) as server:
        evaluator = judge(server, concurrency=1)
        waits = recorded_waits(evaluator)
        report = score(evaluator)
    assert_expected(report)
    assert evaluator.usage.retries == 1 and server.count == 5 and evaluator.usage.calls == 4
    assert waits == [0.4]


def test_500_then_success():
    with FakeChatServer(script=lambda n, body: Reply(status=500) if n in (0, 1) else None) as server:
        evaluator = judge(server, concurrency=1)
        report = score(evaluator)
    assert_expected(report)
    assert evaluator.usage.retries == 2 and server.count == 6


def test_reply_slower_than_timeout_is_retried():
    with FakeChatServer(script=lambda n, body: Reply(judge_reply(body["messages"]), delay=1.5) if n == 0
                        else None) as server:
        evaluator = judge(server, concurrency=1, timeout=0.3)
        report = score(evaluator)
    assert_expected(report)
    # the slow first request was given up (the client left before the reply) and asked again
    assert evaluator.usage.retries == 1 and server.count == 5 and evaluator.usage.calls == 4


def test_client_errors_are_not_retried_and_mark_their_items_failed():
    with FakeChatServer(script=lambda n, body: Reply(status=401, error={"error": {"message": "bad key"}})) as server:
        evaluator = judge(server)
        report = score(evaluator)
    # the two claim requests and the two citation requests, each once: the run went on
    assert evaluator.usage.retries == 0 and server.count == 4 and evaluator.usage.failed_calls == 4
    assert report.failed == {"reference_claims": 3, "prediction_claims": 2, "statements": 2}
    claim = report.instances[0].reference_claims[0]
    assert claim.status == "failed" and claim.entailed is None and "HTTP 401" in claim.explanation
    assert "bad key" in claim.explanation
    assert report.scores["claim_recall"] == 0.0 and not report.partial


def test_context_length_error_splits_the_claims():
    def script(n, body):
        content = body["messages"][-1]["content"]
        if "Claims:" in content and len(claims_in(content.split("Claims:")[1])) > 1:
            return context_error()
        return None

    with FakeChatServer(script=script) as server:
        evaluator = judge(server, concurrency=1)
        report = score(evaluator)
    assert_expected(report)
    claim_calls = [b for b in server.requests if "Claims:" in b["messages"][-1]["content"]]
    sizes = [len(claims_in(b["messages"][-1]["content"].split("Claims:")[1])) for b in claim_calls]
    # recall: 3 → refused, 1 + 2 → 2 refused → 1 + 1; precision: 2 → refused → 1 + 1
    assert sorted(sizes) == [1, 1, 1, 1, 1, 2, 2, 3]
    assert evaluator.usage.retries == 0


def test_context_length_error_for_a_single_claim_is_unparsed_never_truncated():
    with FakeChatServer(script=lambda n, body: context_error("prompt is too long for this model")
                        if "Claims:" in body["messages"][-1]["content"] else None) as server:
        with pytest.warns(UserWarning):
            report = DocLens(judge(server)).score([INSTANCE], progress=False)
    assert report.unparsed["reference_claims"] == 3
    assert report.instances[0].reference_claims[0].explanation == TOO_LONG
    full_premise = [b for b in server.requests if "Claims:" in b["messages"][-1]["content"]]
    assert all(INSTANCE["reference"] in b["messages"][-1]["content"] or "fever [0]" not in
               b["messages"][-1]["content"] for b in full_premise)


def test_second_run_makes_no_request(tmp_path):
    with FakeChatServer() as server:
        first = judge(server, "mistral-cot", cache_dir=str(tmp_path))
        score(first)
        made = server.count
        second = judge(server, "mistral-cot", cache_dir=str(tmp_path))
        report = score(second)
    assert_expected(report)
    assert server.count == made == 7
    assert second.usage.calls == 0 and second.usage.cached_calls == 7
    assert report.usage["cached_calls"] == 7


def test_refresh_and_no_cache_call_again(tmp_path):
    with FakeChatServer() as server:
        score(judge(server, cache_dir=str(tmp_path)))
        score(judge(server, cache_dir=str(tmp_path), refresh=True))
        score(judge(server, cache_dir=str(tmp_path), no_cache=True))
        assert server.count == 12
        score(judge(server, cache_dir=str(tmp_path)))
        assert server.count == 12


def distinct(i, **changes):
    """INSTANCE made distinct (identical prompts are asked once, so counts need distinct ones)."""
    return dict(INSTANCE, **{"id": str(i), "prediction": INSTANCE["prediction"] + f" Visit {i}.",
                             "reference": INSTANCE["reference"] + f" Visit {i}.",
                             "source": [f"{unit} (visit {i})" for unit in INSTANCE["source"]], **changes})


def test_identical_prompts_are_asked_once():
    with FakeChatServer() as server:
        evaluator = judge(server, "mistral-cot")
        score(evaluator, [dict(INSTANCE, id=str(i)) for i in range(3)])
    assert server.count == 7 and evaluator.usage.calls == 7


def test_killed_run_resumes_with_exactly_the_missing_requests(tmp_path):
    many = [distinct(i) for i in range(4)]
    with FakeChatServer() as server:  # how many requests a clean run makes
        score(judge(server, "mistral-cot", no_cache=True), many)
        total = server.count
    assert total == 4 * (3 + 2 + 2)
    answered, state = 9, {"down": True}
    # the same server (the cache key includes the endpoint URL): down for good after 9 answers …
    with FakeChatServer(script=lambda n, body: Reply(status=500) if state["down"] and n >= answered
                        else None) as server:
        first = judge(server, "mistral-cot", cache_dir=str(tmp_path), max_retries=1, concurrency=4,
                      max_consecutive_failures=0)
        failed_report = score(first, many)  # the run finishes: the unanswered calls are marked failed
        assert first.usage.failed_calls == total - answered and first.usage.calls == answered
        assert sum(failed_report.failed.values()) > 0 and len(failed_report.instances) == 4
        failed_run = server.count
        state["down"] = False  # … then back up
        evaluator = judge(server, "mistral-cot", cache_dir=str(tmp_path))
        report = score(evaluator, many)
        assert server.count - failed_run == total - answered
    assert evaluator.usage.cached_calls == answered and evaluator.usage.failed_calls == 0
    assert len(report.instances) == 4 and sum(report.failed.values()) == 0


def test_question_summarization_direction():
    instance = {"id": "q", "task": "question_summarization", "prediction": "What dose of ibuprofen for back pain?",
                "reference": "What dose of ibuprofen?"}
    with FakeChatServer() as server:
        report = score(judge(server, concurrency=1), [instance])
    # recall: is the prediction (A) a specification of the reference (B)? yes. precision: the converse: no.
    assert report.scores["claim_recall"] == 1.0 and report.scores["claim_precision"] == 0.0
    first = server.requests[0]["messages"][-1]["content"]
    fence = make_fence(["What dose of ibuprofen for back pain?", "What dose of ibuprofen?"])
    assert f"question A: {fence.wrap('What dose of ibuprofen for back pain?')}" in first
    assert f"question B (claim 1): {fence.wrap('What dose of ibuprofen?')}" in first


def test_request_body_decoding_and_json_mode():
    with FakeChatServer() as server:
        score(judge(server, seed=7, json_response=True))
        body = server.requests[0]
    assert body["temperature"] == 0 and body["seed"] == 7 and body["model"] == "test-model"
    assert body["response_format"] == {"type": "json_object"}
    with FakeChatServer() as server:
        score(judge(server, "mistral-cot"))
        assert "response_format" not in server.requests[0]


def test_signature_and_config_record_the_judge_but_no_key(tmp_path, monkeypatch):
    monkeypatch.setenv("MY_LLM_KEY", "sk-very-secret-123")
    with FakeChatServer() as server:
        evaluator = judge(server, api_key_env="MY_LLM_KEY", cache_dir=str(tmp_path), temperature=0.0, seed=3)
        report = score(evaluator)
    signature = report.signature
    assert "judge:gpt4-json-cot:test-model" in signature and "|T:0|" in signature and "seed:3" in signature
    assert report.config["evaluator"]["endpoint"] == "compatible"
    assert report.config["evaluator"]["base_url"] == server.base_url
    assert any(tag.startswith("judge/claims.json_cot@v3#") for tag in report.config["prompts"])
    dumped = json.dumps(report.to_dict()) if hasattr(report, "to_dict") else json.dumps(report.config)
    assert "sk-very-secret" not in dumped and "sk-very-secret" not in signature
    with sqlite3.connect(tmp_path / "cache.sqlite") as conn:
        assert not any("sk-very-secret" in k + v for k, v in conn.execute("SELECT key, value FROM answers"))


def test_cost_from_reply_usage_and_price_table(tmp_path):
    table = tmp_path / "prices.json"
    table.write_text(json.dumps({"test-model": {"prompt": 1000.0, "completion": 2000.0}}))
    with FakeChatServer() as server:
        evaluator = judge(server, price_table=str(table))
        report = score(evaluator)
    usage = evaluator.usage
    assert usage.cost_usd == pytest.approx((usage.prompt_tokens * 1000 + usage.completion_tokens * 2000) / 1e6)
    assert report.usage["cost_usd"] == pytest.approx(usage.cost_usd, abs=1e-6)
    assert sum(len(m["content"]) for b in server.requests for m in b["messages"]) // 4 >= usage.prompt_tokens > 0


LONG_NOTE = " ".join(f"Visit {i}: the patient reports a dry cough and a mild fever, no rash, sleeps poorly."
                     for i in range(60))  # ~5,000 characters: prompts past OpenAI's 1,024-token caching minimum
LONG = [{"id": str(n), "prediction": f"Cough {n}. Fever.", "reference": f"Note {n}. " + LONG_NOTE,
         "reference_claims": ["The patient coughs.", "A rash on the arm.", f"Visit {n}."],
         "prediction_claims": ["The patient has a dry cough.", "The patient has a fever.", "No rash."]}
        for n in range(2)]


def test_cached_prompt_tokens_counted_and_priced_end_to_end(tmp_path):
    """Through real HTTP: the calls on one premise go out adjacently and share the instructions
    and the premise as a prompt prefix; the prefix-caching test server reports those tokens as
    cached (``prompt_tokens_details.cached_tokens``); usage records them and the cost charges
    them at the table's cached-prompt price. The dry run prices its estimate the same way."""
    table = tmp_path / "prices.json"
    table.write_text(json.dumps({"test-model": {"prompt": 1000.0, "completion": 2000.0, "cached_prompt": 100.0},
                                 "gpt-4o": [2.5, 10.0, 1.25]}))
    with FakeChatServer() as server:
        evaluator = judge(server, "mistral-cot", price_table=str(table), concurrency=1)
        report = score(evaluator, LONG)
    usage = evaluator.usage
    bodies = server.requests
    assert len(bodies) == 12
    expected = sum(cached_prompt_tokens(body, bodies[:n]) for n, body in enumerate(bodies))
    assert usage.cached_prompt_tokens == expected == report.usage["cached_prompt_tokens"]
    # every call after the first shares at least the instructions; a premise's later calls share the premise too
    fences = [fence_token(body["messages"]) for body in bodies]
    runs = [f for n, f in enumerate(fences) if n == 0 or fences[n - 1] != f]
    assert len(runs) == len(set(fences)) == 4  # each premise's calls adjacent (2 notes x recall, precision)
    long_calls = [n for n, body in enumerate(bodies) if LONG_NOTE in body["messages"][-1]["content"]]
    later = [n for n in long_calls if n > 0 and fences[n - 1] == fences[n]]
    assert later and all(cached_prompt_tokens(bodies[n], bodies[:n]) > len(LONG_NOTE) // 4 for n in later)
    assert usage.cached_prompt_tokens > usage.prompt_tokens / 2
    assert usage.cost_usd == pytest.approx(((usage.prompt_tokens - usage.cached_prompt_tokens) * 1000
                                            + usage.cached_prompt_tokens * 100 + usage.completion_tokens * 2000) / 1e6)
    assert report.usage["cost_usd"] == pytest.approx(usage.cost_usd, abs=1e-6)

    from doclens.scoring.dry_run import dry_run_estimate

    planned = load_evaluator("mistral-cot", base_url="http://127.0.0.1:9/v1", model="gpt-4o", dry_run=True,
                             no_cache=True, price_table=str(table))
    estimate = dry_run_estimate(DocLens(planned), LONG)
    tokens = estimate["tokens"]
    assert estimate["calls"]["to_make"] == 12 and tokens["prompt_to_pay"] > tokens["prompt_to_pay_cached_estimate"] > 0
    assert tokens["prompt_to_pay_cached_estimate"] % 128 == 0 and estimate["price_per_1m_tokens"] == [2.5, 10.0, 1.25]
    full = (tokens["prompt_to_pay"] * 2.5 + tokens["completion_to_pay_estimate"] * 10.0) / 1e6
    discount = tokens["prompt_to_pay_cached_estimate"] * (2.5 - 1.25) / 1e6
    assert estimate["cost_usd_estimate"] == pytest.approx(full - discount, abs=1e-4)


def test_unknown_model_costs_zero_with_a_warning():
    with FakeChatServer() as server:
        evaluator = judge(server)
        with pytest.warns(UserWarning, match="no price known for model 'test-model'"):
            DocLens(evaluator).score([INSTANCE], progress=False)
    assert evaluator.usage.cost_usd == 0.0


def test_concurrency_overlaps_requests():
    instances = [distinct(i, source=None) for i in range(4)]  # 4 × 5 claims, no citations
    # each reply waits until 4 requests are in flight at once (or 5 s): proof of overlap from what
    # the server saw, not from how long the run took
    with FakeChatServer(hold_until_in_flight=4) as server:
        evaluator = judge(server, "mistral-cot", concurrency=4)
        score(evaluator, instances)
    assert server.count == 20
    assert server.max_in_flight == 4  # never more than `concurrency`, and really 4 at once
    with FakeChatServer() as server:
        score(judge(server, "mistral-cot", concurrency=1), instances)
    assert server.max_in_flight == 1


def test_rpm_limit_spaces_requests(monkeypatch):
    from doclens.evaluators.llm import openai_chat

    granted = []
    acquire = openai_chat._RateLimiter.acquire

    async def recording_acquire(self, tokens):
        await acquire(self, tokens)
        granted.append(asyncio.get_running_loop().time())

    monkeypatch.setattr(openai_chat._RateLimiter, "acquire", recording_acquire)
    with FakeChatServer() as server:
        evaluator = judge(server, "mistral-cot", concurrency=8, rpm=600)  # one request per 0.1 s
        score(evaluator, [dict(INSTANCE, source=None)])
    assert server.count == 5 and evaluator.usage.retries == 0 and len(granted) == 5
    # the limiter made later requests wait for their slot, though 8 may be in flight: each request
    # at least one interval (0.1 s) after the one before (a lower bound: a busy machine only adds);
    # the limiter alone is checked in test_llm_config
    granted.sort()
    assert all(later - earlier >= 0.1 * 0.9 for earlier, later in zip(granted, granted[1:]))


def test_works_inside_a_running_event_loop():
    async def notebook_cell(server):
        return judge(server).judge_claims("The patient has a fever.", ["Fever.", "Rash."])

    with FakeChatServer() as server:
        judgements = asyncio.run(notebook_cell(server))
    assert [j.entailed for j in judgements] == [True, False]


def test_llm_extractor_on_the_same_endpoint():
    instance = {"id": "x", "prediction": "The patient has a fever. No rash.", "reference": "Fever. Rash on the arm."}
    with FakeChatServer() as server:
        evaluator = judge(server)
        extractor = evaluator.make_extractor()
        report = score(evaluator, [instance], extractor=extractor)
        from doclens.evaluators import load_extractor
        other = load_extractor("llm", base_url=server.base_url, model="test-model")
    assert [c.text for c in report.instances[0].reference_claims] == ["Fever.", "Rash on the arm."]
    assert report.scores["claim_recall"] == 0.5  # "rash on the arm" is not in the prediction
    assert extractor.usage is evaluator.usage and report.usage["calls"] == 4  # 2 extractions + 2 judge calls
    assert "extract:llm:test-model" in report.signature
    assert other.name == "llm" and other.keeps_data_local


def test_usage_without_prompt_token_details_counts_no_cached_tokens():
    """llama.cpp's server reports usage without ``prompt_tokens_details`` (tests/evaluators/llm/test_real_server.py)."""
    with FakeChatServer(usage_details=False) as server:
        evaluator = judge(server)
        report = score(evaluator)
    assert_expected(report)
    assert evaluator.usage.prompt_tokens > 0 and evaluator.usage.cached_prompt_tokens == 0


def test_max_tokens_is_sent_when_set_and_named_in_the_signature():
    """A small model behind a real server can loop until its context is full (tests/evaluators/llm/test_real_server.py):
    max_tokens bounds each reply."""
    with FakeChatServer() as server:
        bounded = judge(server, "mistral-cot", max_tokens=256)
        report = score(bounded)
        plain = judge(server, "mistral-cot")
        score(plain)
    assert_expected(report)
    sent = [body.get("max_tokens") for body in server.requests]
    assert sent[:bounded.usage.calls] == [256] * bounded.usage.calls and set(sent[bounded.usage.calls:]) == {None}
    assert bounded.decoding()["max"] == 256 and "max" not in plain.decoding()
    with pytest.raises(Exception, match="max_tokens must be at least 1"):
        judge(server, max_tokens=0)
