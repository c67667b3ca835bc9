"""LLM judges over OpenAI-compatible chat endpoints: OpenAI, Azure OpenAI, vLLM, llama.cpp, …

:class:`OpenAIChatJudge` implements :meth:`doclens.evaluators.chat.ChatJudge.complete_many`
with the ``openai`` package's async clients: requests run concurrently under a semaphore
(``concurrency``), optionally paced by requests- and tokens-per-minute limits, with retries
(exponential backoff with jitter, honouring ``Retry-After``) on 408/409/429/5xx, timeouts and
connection errors, each counted in ``usage.retries``. A prompt the endpoint refuses as longer
than the model's context window comes back as ``context_overflow``: the judge splits the claim
list in halves and asks again; text is never truncated.

These evaluators SEND INSTANCE TEXT to the configured endpoint. ``local_only=True`` refuses any
endpoint whose host does not resolve to loopback or private addresses only (Azure and
api.openai.com are always refused), for data that must stay on site. The API key is read from
the environment variable ``api_key_env`` (default ``OPENAI_API_KEY``) and never logged, cached
or written to a report.
"""

from __future__ import annotations

import asyncio
import email.utils
import inspect
import ipaddress
import json
import logging
import os
import random
import re
import socket
import time
import warnings
from pathlib import Path
from typing import Callable, Optional
from urllib.parse import urlparse

from doclens.errors import ConfigurationError
from doclens.evaluators.chat import ChatJudge, Completion, check_style, run_sync

logger = logging.getLogger("doclens")

#: USD per 1M tokens (prompt, completion), list prices of the models' standard tiers. A model
#: name also matches the entry it starts with (``gpt-4o-2024-08-06`` → ``gpt-4o``). Override or
#: extend with ``price_table`` (a JSON file ``{"model": {"prompt": …, "completion": …}}``).
DEFAULT_PRICES: dict[str, tuple[float, float]] = {
    "gpt-4": (30.0, 60.0),
    "gpt-4-32k": (60.0, 120.0),
    "gpt-4-turbo": (10.0, 30.0),
    "gpt-4o": (2.5, 10.0),
    "gpt-4o-mini": (0.15, 0.6),
}

OPENAI_HOST = "api.openai.com"
_CONTEXT_LENGTH = re.compile(r"maximum context length|context[ _]length|context window|too many tokens|"
                             r"prompt is too long|exceeds? the (?:model'?s? )?(?:maximum|max)", re.IGNORECASE)
_RETRY_STATUS = {408, 409, 429}


def load_price_table(path: Optional[os.PathLike] = None) -> dict[str, tuple[float, float]]:
    """:data:`DEFAULT_PRICES` updated from the JSON file ``path``. Each entry is
    ``{"prompt": usd_per_1m, "completion": usd_per_1m}`` or ``[prompt, completion]``."""
    prices = dict(DEFAULT_PRICES)
    if not path:
        return prices
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigurationError(f"price table {str(path)!r} could not be read: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigurationError(f"price table {str(path)!r} must be a JSON object mapping model names to prices")
    for model, entry in data.items():
        try:
            if isinstance(entry, dict):
                prices[model] = (float(entry["prompt"]), float(entry["completion"]))
            else:
                prompt, completion = entry
                prices[model] = (float(prompt), float(completion))
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigurationError(f"price table {str(path)!r}: entry {model!r} must be "
                                     '{"prompt": USD per 1M tokens, "completion": USD per 1M tokens}') from exc
    return prices


def price_for(model: Optional[str], prices: dict[str, tuple[float, float]]) -> Optional[tuple[float, float]]:
    """The (prompt, completion) price of ``model``: exact name, else the longest entry that the
    name starts with followed by ``-``; ``None`` when unknown."""
    if not model:
        return None
    if model in prices:
        return prices[model]
    matches = [name for name in prices if model.startswith(name + "-")]
    return prices[max(matches, key=len)] if matches else None


def host_is_local(host: Optional[str]) -> bool:
    """Whether every address ``host`` resolves to is loopback or private (RFC 1918, ULA,
    link-local). Unresolvable hosts are not local."""
    if not host:
        return False
    try:
        addresses = {ipaddress.ip_address(host.strip("[]"))}
    except ValueError:
        try:
            infos = socket.getaddrinfo(host, None)
        except (socket.gaierror, UnicodeError, OSError):
            return False
        addresses = {ipaddress.ip_address(info[4][0].split("%")[0]) for info in infos}
    return bool(addresses) and all(a.is_loopback or a.is_private or a.is_link_local for a in addresses)


def retry_after_seconds(headers) -> Optional[float]:
    """Seconds to wait from ``retry-after-ms`` / ``Retry-After`` (seconds or an HTTP date)."""
    if headers is None:
        return None
    value = headers.get("retry-after-ms")
    if value:
        try:
            return max(0.0, float(value) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        return max(0.0, parsed.timestamp() - time.time()) if parsed else None


class _RateLimiter:
    """Requests-per-minute spacing and a tokens-per-minute bucket (estimated prompt tokens)."""

    def __init__(self, rpm: Optional[float], tpm: Optional[float]):
        self.interval = 60.0 / rpm if rpm else 0.0
        self.tpm = tpm
        self.tokens = float(tpm or 0)
        self.next_start = 0.0
        self.updated = time.monotonic()
        self.lock = asyncio.Lock()

    async def acquire(self, tokens: int) -> None:
        async with self.lock:
            now = time.monotonic()
            if self.interval:
                wait = self.next_start - now
                if wait > 0:
                    await asyncio.sleep(wait)
                    now = time.monotonic()
                self.next_start = max(now, self.next_start) + self.interval
            if self.tpm:
                self.tokens = min(self.tpm, self.tokens + (now - self.updated) * self.tpm / 60)
                self.updated = now
                need = min(float(tokens), self.tpm)
                if self.tokens < need:
                    await asyncio.sleep((need - self.tokens) * 60 / self.tpm)
                    self.tokens = need
                    self.updated = time.monotonic()
                self.tokens -= need


def estimate_tokens(messages: list[dict]) -> int:
    """About four characters per token, plus a few per message."""
    return sum(len(m.get("content") or "") for m in messages) // 4 + 4 * len(messages)


class OpenAIChatJudge(ChatJudge):
    """A :class:`ChatJudge` on an OpenAI-compatible chat endpoint.

    Parameters (the CLI flags of the same names)
    ------------------------------------------------
    model : str
        Model name sent to the endpoint (Azure: defaults to the deployment name).
    base_url : str, optional
        An OpenAI-compatible server (``http://gpu-box:8000/v1`` for vLLM / llama.cpp); default
        the OpenAI API.
    api_key_env : str
        Environment variable holding the key (default ``OPENAI_API_KEY``). A compatible server
        that needs no key gets a dummy.
    azure_endpoint, azure_deployment, azure_api_version : str, optional
        Azure OpenAI (all three, or endpoint + deployment with the default API version).
    concurrency : int
        Requests in flight (default 8). ``rpm`` / ``tpm``: optional per-minute limits.
    timeout : float
        Per-request timeout in seconds (default 120); a timed-out request is retried.
    max_retries : int
        Retries per request on 408/409/429/5xx, timeouts and connection errors (default 5).
    local_only : bool
        Refuse any endpoint that does not resolve to loopback / private addresses.
    seed, temperature : decoding (default seed 0, temperature 0).
    price_table : path of a JSON price table (see :func:`load_price_table`).
    dry_run : bool
        No key needed and no request ever sent (see :func:`doclens.dry_run.dry_run_estimate`).
    cache_dir, no_cache, refresh : the answer cache.
    style : {"json_cot", "cot", "json"}; default the preset's.
    json_response : bool, optional
        Ask for ``response_format={"type": "json_object"}`` in JSON styles. Default: on for
        OpenAI and Azure, off for other servers (not all support it).
    backoff_base, backoff_max : float
        Retry delays: ``backoff_base × 2^attempt`` (capped at ``backoff_max``) with jitter,
        unless the server says ``Retry-After``.
    """

    name = "openai-chat"
    default_style = "json_cot"
    default_model: Optional[str] = "gpt-4o"
    needs_base_url = False

    def __init__(self, model: Optional[str] = None, base_url: Optional[str] = None,
                 api_key_env: Optional[str] = None, azure_endpoint: Optional[str] = None,
                 azure_deployment: Optional[str] = None, azure_api_version: Optional[str] = None,
                 concurrency: int = 8, rpm: Optional[float] = None, tpm: Optional[float] = None,
                 timeout: float = 120.0, max_retries: int = 5, local_only: bool = False, seed: Optional[int] = 0,
                 temperature: float = 0.0, price_table: Optional[str] = None, dry_run: bool = False,
                 cache_dir: Optional[str] = None, no_cache: bool = False, refresh: bool = False,
                 style: Optional[str] = None, json_response: Optional[bool] = None,
                 backoff_base: float = 1.0, backoff_max: float = 60.0):
        super().__init__(check_style(style or self.default_style), cache_dir=cache_dir, no_cache=no_cache,
                         refresh=refresh)
        if azure_endpoint and base_url:
            raise ConfigurationError("give either base_url (OpenAI-compatible server) or azure_endpoint, not both")
        if (azure_deployment or azure_api_version) and not azure_endpoint:
            raise ConfigurationError("azure_deployment / azure_api_version need azure_endpoint")
        if concurrency is None or int(concurrency) < 1:
            raise ConfigurationError(f"concurrency must be at least 1, got {concurrency!r}")
        if max_retries is None or int(max_retries) < 0:
            raise ConfigurationError(f"max_retries must be 0 or more, got {max_retries!r}")
        if timeout is not None and float(timeout) <= 0:
            raise ConfigurationError(f"timeout must be positive, got {timeout!r}")
        for label, value in (("rpm", rpm), ("tpm", tpm)):
            if value is not None and float(value) <= 0:
                raise ConfigurationError(f"{label} must be positive, got {value!r}")
        self.azure_endpoint = azure_endpoint
        self.azure_deployment = azure_deployment
        self.azure_api_version = azure_api_version or ("2024-10-21" if azure_endpoint else None)
        self.base_url = base_url.rstrip("/") if base_url else None
        for url in (self.base_url, azure_endpoint):
            if url and (urlparse(url).username or urlparse(url).password):
                raise ConfigurationError("the endpoint URL carries credentials; put the key in an environment "
                                         "variable (--api-key-env) so it never reaches reports or cache keys")
        if self.azure_endpoint:
            self.endpoint_kind = "azure"
            host = urlparse(self.azure_endpoint).hostname
        elif self.base_url:
            host = urlparse(self.base_url).hostname
            if not host:
                raise ConfigurationError(f"base_url {self.base_url!r} is not a URL (like http://127.0.0.1:8000/v1)")
            self.endpoint_kind = "openai" if host == OPENAI_HOST else "compatible"
        else:
            self.endpoint_kind = "openai"
            host = OPENAI_HOST
        if self.needs_base_url and self.endpoint_kind == "openai":
            raise ConfigurationError(f"evaluator {self.name!r} needs base_url (the server hosting the model, e.g. "
                                     "vLLM at http://gpu-box:8000/v1) or an Azure endpoint")
        self.host = host
        self.keeps_data_local = self.endpoint_kind == "compatible" and host_is_local(host)
        self.local_only = bool(local_only)
        if self.local_only and not self.keeps_data_local:
            where = {"azure": "an Azure OpenAI endpoint", "openai": "the OpenAI API"}.get(
                self.endpoint_kind, f"host {host!r}, which does not resolve to loopback or private addresses only")
            raise ConfigurationError(f"local_only: refusing {where}; instance text must stay on site "
                                     "(use a loopback or private-network server, or drop --local-only)")
        self.model = model or azure_deployment or self.default_model
        if not self.model:
            raise ConfigurationError(f"evaluator {self.name!r} needs a model name (--model)")
        self.concurrency = int(concurrency)
        self.rpm, self.tpm = rpm, tpm
        self.timeout = float(timeout) if timeout is not None else 120.0
        self.max_retries = int(max_retries)
        self.seed = seed
        self.temperature = float(temperature if temperature is not None else 0.0)
        self.dry_run = bool(dry_run)
        self.json_response = (self.endpoint_kind != "compatible") if json_response is None else bool(json_response)
        self.backoff_base, self.backoff_max = float(backoff_base), float(backoff_max)
        self.api_key_env = api_key_env or "OPENAI_API_KEY"
        self.prices = load_price_table(price_table)
        self.price_table = price_table
        self._price = price_for(self.model, self.prices)
        self._warned_price = False
        if not self.dry_run and self.endpoint_kind != "compatible" and not os.environ.get(self.api_key_env):
            raise ConfigurationError(f"no API key: set the environment variable {self.api_key_env} "
                                     "(or name another one with --api-key-env)")

    # ---- identity ------------------------------------------------------------------------------------
    def cache_identity(self) -> dict:
        where = ({"azure_endpoint": self.azure_endpoint, "azure_deployment": self.azure_deployment}
                 if self.endpoint_kind == "azure" else {"base_url": self.base_url})
        return {"model": self.model, "endpoint": self.endpoint_kind, **where}

    def decoding(self) -> dict:
        # 0.0 → 0 so signatures read T:0, as the signature format shows
        values = {"T": int(self.temperature) if self.temperature.is_integer() else self.temperature}
        if self.seed is not None:
            values["seed"] = self.seed
        return values

    def config(self) -> dict:
        return {**super().config(), "json_response": self.json_response, "local_only": self.local_only}

    def cost_usd(self, completion: Completion) -> float:
        if self._price is None:
            if not self._warned_price:
                self._warned_price = True
                warnings.warn(f"no price known for model {self.model!r}: its cost is counted as 0 "
                              "(give --price-table to count it)", stacklevel=2)
            return 0.0
        prompt, output = self._price
        return (completion.prompt_tokens * prompt + completion.completion_tokens * output) / 1e6

    # ---- the calls --------------------------------------------------------------------------------------
    def _client(self):
        from openai import AsyncAzureOpenAI, AsyncOpenAI

        key = os.environ.get(self.api_key_env) or "not-needed"  # a local server may need none
        if self.endpoint_kind == "azure":
            return AsyncAzureOpenAI(azure_endpoint=self.azure_endpoint, azure_deployment=self.azure_deployment,
                                    api_version=self.azure_api_version, api_key=key, max_retries=0,
                                    timeout=self.timeout)
        return AsyncOpenAI(api_key=key, base_url=self.base_url, max_retries=0, timeout=self.timeout)

    def complete_many(self, conversations: list[list[dict]], *, json_mode: bool,
                      on_complete: Optional[Callable[[int, Completion], None]] = None) -> list[Completion]:
        if self.dry_run:
            raise RuntimeError("dry_run=True: this evaluator sends no request (use doclens.dry_run.dry_run_estimate)")
        if not conversations:
            return []
        return run_sync(lambda: self._complete_all(conversations, json_mode, on_complete))

    async def _complete_all(self, conversations, json_mode, on_complete):
        client = self._client()
        semaphore = asyncio.Semaphore(self.concurrency)
        limiter = _RateLimiter(self.rpm, self.tpm) if (self.rpm or self.tpm) else None

        async def one(index: int, messages: list[dict]) -> Completion:
            async with semaphore:
                completion = await self._request(client, messages, json_mode, limiter)
            if on_complete is not None:
                on_complete(index, completion)
            return completion

        try:
            results = await asyncio.gather(*(one(i, m) for i, m in enumerate(conversations)), return_exceptions=True)
        finally:
            await client.close()
        errors = [r for r in results if isinstance(r, BaseException)]
        if errors:
            logger.error("%d of %d request(s) failed for good; the %d answered are cached", len(errors),
                         len(results), len(results) - len(errors))
            raise errors[0]
        return results

    async def _request(self, client, messages: list[dict], json_mode: bool, limiter) -> Completion:
        import openai

        model = (self.azure_deployment or self.model) if self.endpoint_kind == "azure" else self.model
        arguments = {"model": model,
                     "messages": messages, "temperature": self.temperature}
        if self.seed is not None:
            arguments["seed"] = self.seed
        if json_mode and self.json_response:
            arguments["response_format"] = {"type": "json_object"}
        attempt = 0
        while True:
            if limiter is not None:
                await limiter.acquire(estimate_tokens(messages))
            try:
                response = await client.chat.completions.create(**arguments)
            except openai.BadRequestError as exc:
                if exc.code == "context_length_exceeded" or _CONTEXT_LENGTH.search(str(exc.message or "")):
                    return Completion(None, context_overflow=True)
                raise
            except (openai.APITimeoutError, openai.APIConnectionError, openai.APIStatusError) as exc:
                status = getattr(exc, "status_code", None)
                retryable = status is None or status in _RETRY_STATUS or status >= 500
                if not retryable or attempt >= self.max_retries:
                    raise
                wait = retry_after_seconds(getattr(getattr(exc, "response", None), "headers", None))
                if wait is None:
                    delay = min(self.backoff_max, self.backoff_base * 2 ** attempt)
                    wait = delay * random.uniform(0.5, 1.0)
                logger.info("request failed (%s); retry %d/%d in %.2fs", status or type(exc).__name__,
                            attempt + 1, self.max_retries, wait)
                self.usage.add(retries=1)
                attempt += 1
                await asyncio.sleep(min(wait, 600.0))
                continue
            usage = getattr(response, "usage", None)
            choice = response.choices[0] if response.choices else None
            text = choice.message.content if choice is not None and choice.message is not None else None
            return Completion(text if text is not None else "", getattr(usage, "prompt_tokens", 0) or 0,
                              getattr(usage, "completion_tokens", 0) or 0)


class GPT4JsonCoT(OpenAIChatJudge):
    """``gpt4-json-cot``: one call judges all claims of a premise; JSON + chain of thought."""

    name = "gpt4-json-cot"
    default_style = "json_cot"


class MistralCoT(OpenAIChatJudge):
    """``mistral-cot``: one call per claim, chain of thought, on a server hosting Mistral."""

    name = "mistral-cot"
    default_style = "cot"
    default_model = "mistralai/Mistral-7B-Instruct-v0.2"
    needs_base_url = True


class JsonJudge(OpenAIChatJudge):
    """``json``: JSON verdicts without explanations (prompt-style ablation)."""

    name = "json"
    default_style = "json"


class CoTJudge(OpenAIChatJudge):
    """``cot``: one call per claim with chain of thought, on any chat model (default gpt-4o)."""

    name = "cot"
    default_style = "cot"


def llm_extractor(**options):
    """The ``llm`` extractor preset: the subclaim extractor of an :class:`OpenAIChatJudge` built
    from ``options`` (the same as the evaluator's)."""
    return OpenAIChatJudge(**options).make_extractor()


# The preset loader checks options against the factory's signature: give it the judge's.
llm_extractor.__signature__ = inspect.signature(OpenAIChatJudge)
