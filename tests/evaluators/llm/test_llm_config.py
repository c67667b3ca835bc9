"""LLM judge configuration without network: endpoints, Azure, local_only, keys, prices, presets,
dry runs and the CLI."""

import json
import socket
import warnings

import pytest

from doclens import DocLens, load_evaluator
from doclens.cli import main
from doclens.core.errors import ConfigurationError
from doclens.evaluators import EVALUATOR_PRESETS, EXTRACTOR_PRESETS, load_extractor
from doclens.evaluators.llm.openai_chat import (
    DEFAULT_PRICES,
    OpenAIChatJudge,
    host_is_local,
    load_price_table,
    price_for,
    retry_after_seconds,
)
from doclens.scoring.dry_run import dry_run_estimate
from tests.llm_server import FakeChatServer


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    """Resolution of names other than localhost fails, and no socket may connect off-host."""
    real = socket.getaddrinfo

    def fake_getaddrinfo(host, *args, **kwargs):
        if host in ("localhost", "127.0.0.1", "::1") or host.replace(".", "").isdigit():
            return real(host, *args, **kwargs)
        if host == "gpu-box.internal":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.1.2.3", 0))]
        if host == "mixed.example":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.1.2.3", 0)),
                    (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", 0))]
        raise socket.gaierror(f"no network in tests ({host})")

    monkeypatch.setattr(socket, "getaddrinfo", fake_getaddrinfo)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def test_presets_are_registered():
    for name in ("gpt4-json-cot", "mistral-cot", "json", "cot"):
        assert name in EVALUATOR_PRESETS and EVALUATOR_PRESETS[name][2] == "the configured endpoint"
    assert "llm" in EXTRACTOR_PRESETS


@pytest.mark.parametrize("base_url,local", [
    ("http://127.0.0.1:8000/v1", True), ("http://localhost:8000/v1", True), ("http://[::1]:8000/v1", True),
    ("http://10.0.0.5:8000/v1", True), ("http://192.168.1.20/v1", True), ("http://gpu-box.internal:8000/v1", True),
    ("http://8.8.8.8/v1", False), ("https://mixed.example/v1", False), ("https://unresolvable.example/v1", False),
    ("https://api.openai.com/v1", False)])
def test_local_only_accepts_loopback_and_private_only(base_url, local, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    if local:
        judge = load_evaluator("gpt4-json-cot", base_url=base_url, local_only=True)
        assert judge.keeps_data_local and judge.endpoint_kind == "compatible"
    else:
        with pytest.raises(ConfigurationError, match="local_only: refusing"):
            load_evaluator("gpt4-json-cot", base_url=base_url, local_only=True)
        assert not load_evaluator("gpt4-json-cot", base_url=base_url).keeps_data_local


def test_openai_default_endpoint_needs_a_key_and_is_not_local(monkeypatch):
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        load_evaluator("gpt4-json-cot")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    judge = load_evaluator("gpt4-json-cot")
    assert judge.endpoint_kind == "openai" and not judge.keeps_data_local and judge.model == "gpt-4o"
    assert judge.json_response
    with pytest.raises(ConfigurationError, match="the OpenAI API"):
        load_evaluator("gpt4-json-cot", local_only=True)


def test_azure_configuration_without_network(monkeypatch):
    options = dict(azure_endpoint="https://myorg.openai.azure.com", azure_deployment="gpt4o-prod",
                   azure_api_version="2024-10-21", api_key_env="AZURE_KEY")
    with pytest.raises(ConfigurationError, match="AZURE_KEY"):
        load_evaluator("gpt4-json-cot", **options)
    monkeypatch.setenv("AZURE_KEY", "azure-secret")
    judge = load_evaluator("gpt4-json-cot", **options)
    assert judge.endpoint_kind == "azure" and not judge.keeps_data_local
    assert judge.model == "gpt4o-prod"
    identity = judge.cache_identity()
    assert identity["endpoint"] == "azure" and identity["azure_deployment"] == "gpt4o-prod"
    assert "azure-secret" not in json.dumps(judge.config()) + judge.signature()
    client = judge._new_client()  # constructing the client sends nothing
    assert "myorg.openai.azure.com" in str(client.base_url)
    with pytest.raises(ConfigurationError, match="Azure"):
        load_evaluator("gpt4-json-cot", local_only=True, **options)
    with pytest.raises(ConfigurationError, match="not both"):
        load_evaluator("gpt4-json-cot", base_url="http://127.0.0.1/v1", **options)


def test_bad_options_error_clearly():
    with pytest.raises(ConfigurationError, match="does not take option"):
        load_evaluator("gpt4-json-cot", base_url="http://127.0.0.1/v1", device="cuda")
    with pytest.raises(ConfigurationError, match="needs base_url"):
        load_evaluator("mistral-cot")
    with pytest.raises(ConfigurationError, match="prompt style"):
        load_evaluator("gpt4-json-cot", base_url="http://127.0.0.1/v1", style="yaml")
    with pytest.raises(ConfigurationError, match="concurrency"):
        load_evaluator("gpt4-json-cot", base_url="http://127.0.0.1/v1", concurrency=0)
    with pytest.raises(ConfigurationError, match="carries credentials"):
        load_evaluator("gpt4-json-cot", base_url="http://user:sk-secret@127.0.0.1:8000/v1")
    with pytest.raises(ConfigurationError, match="not a URL"):
        load_evaluator("gpt4-json-cot", base_url="127.0.0.1:8000")


def test_compatible_server_needs_no_key_and_mistral_defaults():
    judge = load_evaluator("mistral-cot", base_url="http://127.0.0.1:8000/v1")
    assert judge.style == "cot" and judge.model.startswith("mistralai/")
    assert judge.decoding() == {"T": 0, "seed": 0} and not judge.json_response
    assert judge.signature() == f"mistral-cot:{judge.model}"


def test_prices(tmp_path):
    assert price_for("gpt-4o-2024-08-06", DEFAULT_PRICES) == DEFAULT_PRICES["gpt-4o"]
    assert price_for("gpt-4o-mini-2024-07-18", DEFAULT_PRICES) == DEFAULT_PRICES["gpt-4o-mini"]
    assert price_for("gpt-4-turbo-2024-04-09", DEFAULT_PRICES) == DEFAULT_PRICES["gpt-4-turbo"]
    assert price_for("gpt-4-0613", DEFAULT_PRICES) == DEFAULT_PRICES["gpt-4"]
    assert price_for("mistral-7b", DEFAULT_PRICES) is None and price_for(None, DEFAULT_PRICES) is None
    table = tmp_path / "p.json"
    table.write_text(json.dumps({"gpt-4o": [1, 2], "mine": {"prompt": 0.5, "completion": 0.25},
                                 "cheap": {"prompt": 1, "completion": 2, "cached_prompt": 0.1}, "list": [1, 2, 0.5]}))
    prices = load_price_table(table)
    assert prices["gpt-4o"] == (1.0, 2.0, 1.0) and prices["mine"] == (0.5, 0.25, 0.5)  # no cached price: no discount
    assert prices["cheap"] == (1.0, 2.0, 0.1) and prices["list"] == (1.0, 2.0, 0.5)
    assert prices["gpt-4"] == (30.0, 60.0, 30.0) and DEFAULT_PRICES["gpt-4o"] == (2.5, 10.0, 1.25)
    assert price_for("x", {"x": (1.0, 2.0)}) == (1.0, 2.0, 1.0)  # a hand-made two-price table
    for bad in ({"prompt": 1}, {"prompt": 1, "completion": 2, "cache": 1}, [1, 2, 3, 4], [1, -2], "1,2"):
        table.write_text(json.dumps({"bad": bad}))
        with pytest.raises(ConfigurationError, match="bad"):
            load_price_table(table)
    with pytest.raises(ConfigurationError, match="could not be read"):
        load_price_table(tmp_path / "missing.json")


def test_retry_after_parsing():
    assert retry_after_seconds({"retry-after": "2"}) == 2.0
    assert retry_after_seconds({"retry-after-ms": "250"}) == 0.25
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert retry_after_seconds({}) is None and retry_after_seconds(None) is None
    # unreadable values fall back to backoff (None), never raise
    for garbage in ("soon", "", "-", "Wed, 99 Foo", "nan", "inf", "1e999", "\x00"):
        assert retry_after_seconds({"retry-after": garbage}) is None, garbage
    assert retry_after_seconds({"retry-after-ms": "soon", "retry-after": "3"}) == 3.0
    assert retry_after_seconds({"retry-after-ms": "1500", "retry-after": "3"}) == 1.5  # ms first
    assert retry_after_seconds({"retry-after": "-5"}) == 0.0


def test_retry_wait_is_equal_jitter_backoff_or_the_servers_wait_capped():
    import random

    from tenacity import AsyncRetrying, RetryCallState

    from doclens.evaluators.llm.openai_chat import MAX_WAIT, _FailedAttempt, _RetryAfterOrBackoff, equal_jitter_backoff

    wait = _RetryAfterOrBackoff(equal_jitter_backoff(1.0, 5.0))
    random.seed(0)

    def after(attempt: int, retry_after: float | None) -> float:
        state = RetryCallState(AsyncRetrying(), None, (), {})
        state.attempt_number = attempt
        state.set_exception((_FailedAttempt, _FailedAttempt("HTTP 500", True, retry_after), None))
        return wait(state)

    # no server wait: min(5, 1 × 2^(attempt-1)) × uniform(0.5, 1), never below half the delay
    for attempt, delay in ((1, 1.0), (2, 2.0), (3, 4.0), (4, 5.0), (9, 5.0)):
        draws = [after(attempt, None) for _ in range(200)]
        assert all(delay / 2 <= d <= delay for d in draws), attempt
        assert max(draws) - min(draws) > delay / 4  # jittered, not fixed
    assert after(1, 0.25) == 0.25 and after(5, 0.0) == 0.0  # the server's wait, whatever the attempt
    assert after(1, 10 * MAX_WAIT) == MAX_WAIT


def test_host_is_local():
    assert host_is_local("127.0.0.1") and host_is_local("::1") and host_is_local("172.16.0.9")
    assert not host_is_local("8.8.8.8") and not host_is_local(None) and not host_is_local("unresolvable.example")


def test_llm_extractor_preset_takes_the_judge_options():
    extractor = load_extractor("llm", base_url="http://127.0.0.1:9/v1", model="m", concurrency=2)
    assert extractor.name == "llm" and extractor.judge.concurrency == 2
    with pytest.raises(ConfigurationError, match="does not take option"):
        load_extractor("llm", base_url="http://127.0.0.1:9/v1", batch_size=4)


def test_dry_run_counts_without_calling(tmp_path):
    instances = [{"id": "1", "prediction": "Fever [0]. Cough [0][1].", "reference": "Fever. Cough. Rash.",
                  "source": ["patient: fever", "patient: cough"],
                  "reference_claims": ["Fever.", "Cough.", "Rash."], "prediction_claims": ["Fever.", "Cough."]},
                 {"id": "2", "prediction": "No rash. Cough.", "reference": "Cough only."}]
    with FakeChatServer() as server:
        judge = load_evaluator("mistral-cot", base_url=server.base_url, model="gpt-4o", dry_run=True,
                               cache_dir=str(tmp_path))
        scorer = DocLens(judge, judge.make_extractor())
        estimate = dry_run_estimate(scorer, instances)
        assert server.count == 0
        with pytest.raises(RuntimeError, match="dry_run"):
            judge.judge_claims("x", ["y"])
    calls = estimate["calls"]
    # instance 1: 3 + 2 claim calls, 2 citation calls; instance 2: 2 extractions, then 1 + 2 claims (sentences)
    assert calls["extraction"] == 2 and calls["judge_citations"] == 2 and calls["judge_claims"] == 5 + 3
    assert calls["already_cached"] == 0 and calls["to_make"] == calls["total"] == 12
    assert estimate["tokens"]["prompt"] > 0 and estimate["cost_usd_estimate"] > 0
    assert any("estimates" in note for note in estimate["notes"])

    with FakeChatServer() as server:  # after a real run, the same plan is all cached
        live = load_evaluator("mistral-cot", base_url=server.base_url, model="gpt-4o", cache_dir=str(tmp_path))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            DocLens(live).score(instances[:1], progress=False)
        again = dry_run_estimate(DocLens(load_evaluator("mistral-cot", base_url=server.base_url, model="gpt-4o",
                                                        dry_run=True, cache_dir=str(tmp_path))), instances[:1])
        assert server.count == 7
    assert again["calls"]["already_cached"] == 7 and again["calls"]["to_make"] == 0
    assert again["cost_usd_estimate"] == 0


def test_cli_dry_run_and_score(tmp_path, capsys):
    data = tmp_path / "in.jsonl"
    data.write_text(json.dumps({"id": "1", "prediction": "The patient has a fever. No rash.",
                                "reference": "Fever. Rash on the arm."}) + "\n")
    with FakeChatServer() as server:
        common = ["score", str(data), "--evaluator", "gpt4-json-cot", "--base-url", server.base_url,
                  "--model", "test-model", "--local-only", "--cache-dir", str(tmp_path / "c"), "-q"]
        assert main(common + ["--dry-run"]) == 0
        estimate = json.loads(capsys.readouterr().out)
        assert estimate["calls"]["extraction"] == 2 and estimate["keeps_data_local"] and server.count == 0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert main(common + ["-o", str(tmp_path / "out.json")]) == 0
        assert server.count == 4
    report = json.loads((tmp_path / "out.json").read_text())
    assert report["scores"]["claim_recall"] == 0.5
    assert report["usage"]["calls"] == 4
    assert report["config"]["evaluator_keeps_data_local"] is True


def test_cli_local_only_refuses_remote(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    data = tmp_path / "in.jsonl"
    data.write_text('{"id": "1", "prediction": "a", "reference": "b"}\n')
    assert main(["score", str(data), "--evaluator", "gpt4-json-cot", "--local-only", "-q"]) == 2
    assert "local_only" in capsys.readouterr().err


def test_openai_judge_is_a_chat_judge_with_one_abstract_call():
    from doclens.evaluators.llm.chat import ChatJudge

    assert issubclass(OpenAIChatJudge, ChatJudge)
    assert OpenAIChatJudge.complete_many is not ChatJudge.complete_many


def test_rate_limiter_paces_tokens_per_minute():
    import asyncio

    from doclens.evaluators.llm.openai_chat import _RateLimiter

    async def run():
        loop = asyncio.get_running_loop()
        limiter = _RateLimiter(rpm=None, tpm=600)  # 10 tokens per second; the bucket is full at the start
        bucket = limiter.tokens
        assert bucket.has_capacity(600) and not bucket.has_capacity(601)
        await limiter.acquire(600)  # the full bucket, at once
        assert not bucket.has_capacity(3)
        start = loop.time()
        await limiter.acquire(3)  # 3 tokens refill in 0.3 s
        waited = loop.time() - start
        await asyncio.sleep(0.5)  # at least 5 tokens back
        refilled = bucket.has_capacity(5)
        huge = _RateLimiter(rpm=None, tpm=600)
        await huge.acquire(10**6)  # a prompt estimated above tpm takes the whole bucket (no error, no endless wait)
        return waited, refilled, huge.tokens.has_capacity(1)

    waited, refilled, left = asyncio.run(run())
    # lower bounds only (a busy machine can only wait longer): the bucket made the call wait for its tokens
    assert waited >= 0.3 * 0.9 and refilled and not left


def test_rate_limiter_spaces_requests_per_minute():
    import asyncio

    from doclens.evaluators.llm.openai_chat import _RateLimiter

    async def run():
        loop = asyncio.get_running_loop()
        limiter = _RateLimiter(rpm=600, tpm=None)  # one per 0.1 s, no burst
        granted = []
        for _ in range(4):
            await limiter.acquire(1)
            granted.append(loop.time())
        return granted

    granted = asyncio.run(run())
    # evenly spaced starts: each at least one interval after the one before (never a burst of rpm at once)
    assert all(later - earlier >= 0.1 * 0.9 for earlier, later in zip(granted, granted[1:]))


def test_dry_run_counts_the_placement_step_apart_as_a_bound(tmp_path):
    """premise_scope='note' judges each claim once against the whole note, then asks a supported claim
    found outside its own section once more against that section (placement, issue 46): the plan
    counts the first step and the second apart, at its most; a real run's calls fall between the two."""
    note = {"id": "n", "task": "note_generation",
            "reference": "HISTORY OF PRESENT ILLNESS\nFever.\nPHYSICAL EXAM\nRash.\nASSESSMENT AND PLAN\nRest.",
            "prediction": "HISTORY OF PRESENT ILLNESS\nFever and rash.\nASSESSMENT AND PLAN\nRest.",
            "reference_claims": {"subjective": ["Fever."], "objective_exam": ["Rash."], "assessment_and_plan": ["Rest."]},
            "prediction_claims": {"subjective": ["Fever.", "Rash."], "assessment_and_plan": ["Rest."]}}
    with FakeChatServer() as server:
        def judge(**options):
            return load_evaluator("mistral-cot", base_url=server.base_url, model="gpt-4o", cache_dir=str(tmp_path),
                                  **options)

        plans = {scope: dry_run_estimate(DocLens(judge(dry_run=True), premise_scope=scope), [note])
                 for scope in ("note", "section")}
        assert server.count == 0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            DocLens(judge()).score([note], progress=False)
        made = server.count
    note_plan, section_plan = plans["note"]["calls"], plans["section"]["calls"]
    assert note_plan["total"] == section_plan["total"] == 6  # one call per claim (cot), the first step
    # again against its own section, at most: each first-step call once more
    assert note_plan["judge_claims_placement_at_most"] == 6 and "judge_claims_placement_at_most" not in section_plan
    assert any("at most" in text for text in plans["note"]["notes"])
    assert note_plan["total"] <= made <= note_plan["total"] + note_plan["judge_claims_placement_at_most"]
