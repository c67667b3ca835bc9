"""LLM judges over OpenAI-compatible chat endpoints: OpenAI, Azure OpenAI, vLLM, llama.cpp, …

:class:`OpenAIChatJudge` implements :meth:`doclens.evaluators.llm.chat.ChatJudge.complete_many`
with one ``openai`` async client per judge, kept on the judge's own event loop (a daemon
thread) and reused by every batch until :meth:`OpenAIChatJudge.close`. Requests run concurrently
under a semaphore (``concurrency``), optionally paced by requests- and tokens-per-minute limits,
with retries (tenacity; exponential backoff with jitter; ``retry-after-ms`` and ``Retry-After`` honoured,
an unreadable ``Retry-After`` such as ``soon`` falls back to the backoff; ``x-should-retry``
obeyed) on 408/409/429/5xx, timeouts, connection errors and HTTP 200 replies whose body is not a
chat completion (an HTML page, truncated JSON), each counted in ``usage.retries``. A prompt the
endpoint refuses as longer than the model's context window comes back as ``context_overflow``:
the judge splits the claim list in halves and asks again; text is never truncated.

A call that fails for good (retries spent, or 400/401/403/404 …) does not stop the run: its
items are recorded with status ``failed`` (the explanation names the error), it is counted in
``usage.failed_calls`` and not cached, so a rerun asks exactly those calls again. A circuit
breaker stops the run (:class:`doclens.core.errors.RunStoppedError`, with a partial report) after
``max_consecutive_failures`` failed requests in a row, and at ``deadline``.

These evaluators SEND INSTANCE TEXT to the configured endpoint. ``local_only=True`` refuses any
endpoint whose host does not resolve to loopback or private addresses only (Azure and
api.openai.com are always refused), for data that must stay on site. The API key is read from
the environment variable ``api_key_env`` (default ``OPENAI_API_KEY``); endpoint URLs that carry credentials (user-info,
key-like query parameters, fragments) are refused, and the key — with anything that looks like
one (``sk-…``, Bearer tokens) — is masked in every error, log line, cached reply and report, even
when the endpoint echoes it back.
"""

from __future__ import annotations

import asyncio
import datetime
import email.utils
import ipaddress
import json
import logging
import math
import os
import re
import socket
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast
from urllib.parse import parse_qsl, urlparse

from aiolimiter import AsyncLimiter
from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_exponential, wait_random_exponential

from doclens.core.errors import ConfigurationError, CostWarning, RunStoppedError
from doclens.core.settings import EndpointSettings, KeywordSignature, parse_duration  # noqa: F401  (parse_duration: re-exported)
from doclens.evaluators.llm.chat import ChatJudge, Completion, check_style
from doclens.evaluators.usage import estimate_tokens

logger = logging.getLogger("doclens")

#: USD per 1M tokens (prompt, completion, cached prompt), list prices of the models' standard
#: tiers; the cached-prompt price applies to the prompt tokens the endpoint reports as served from
#: its prompt cache (``usage.prompt_tokens_details.cached_tokens``; models without prompt caching
#: charge them as prompt tokens). A model name also matches the entry it starts with
#: (``gpt-4o-2024-08-06`` → ``gpt-4o``). Override or extend with ``price_table`` (a JSON file
#: ``{"model": {"prompt": …, "completion": …, "cached_prompt": …}}``).
DEFAULT_PRICES: dict[str, tuple[float, float, float]] = {
    "gpt-4": (30.0, 60.0, 30.0),
    "gpt-4-32k": (60.0, 120.0, 60.0),
    "gpt-4-turbo": (10.0, 30.0, 10.0),
    "gpt-4o": (2.5, 10.0, 1.25),
    "gpt-4o-mini": (0.15, 0.6, 0.075),
}

OPENAI_HOST = "api.openai.com"
_CONTEXT_LENGTH = re.compile(r"maximum context length|context[ _]length|context window|too many tokens|"
                             r"prompt is too long|exceeds? the (?:model'?s? )?(?:maximum|max)", re.IGNORECASE)
_RETRY_STATUS = {408, 409, 429}
#: Seconds allowed to open a connection (``timeout`` bounds the whole exchange, headers to last byte).
CONNECT_TIMEOUT = 10.0
#: The longest wait before a retry, whatever ``Retry-After`` asks.
MAX_WAIT = 600.0


def load_price_table(path: str | os.PathLike | None = None) -> dict[str, tuple[float, float, float]]:
    """:data:`DEFAULT_PRICES` updated from the JSON file ``path``. Each entry is
    ``{"prompt": usd_per_1m, "completion": usd_per_1m, "cached_prompt": usd_per_1m}`` or
    ``[prompt, completion, cached_prompt]``; the cached-prompt price is optional (default: the
    prompt price, i.e. no discount)."""
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
                unknown = set(entry) - {"prompt", "completion", "cached_prompt"}
                if unknown:
                    raise ValueError(f"unknown key(s) {sorted(unknown)}")
                prompt, completion = float(entry["prompt"]), float(entry["completion"])
                cached = float(entry.get("cached_prompt", prompt))
            else:
                if isinstance(entry, (str, bytes)) or len(entry) not in (2, 3):
                    raise ValueError("a list of 2 or 3 prices")
                prompt, completion = float(entry[0]), float(entry[1])
                cached = float(entry[2]) if len(entry) == 3 else prompt
            if not all(0 <= value < float("inf") for value in (prompt, completion, cached)):  # NaN fails too
                raise ValueError("prices must be finite and not negative")
            prices[model] = (prompt, completion, cached)
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigurationError(f"price table {str(path)!r}: entry {model!r} must be "
                                     '{"prompt": USD per 1M tokens, "completion": USD per 1M tokens} with an optional '
                                     '"cached_prompt" (USD per 1M cached prompt tokens)') from exc
    return prices


def completion_cost(prompt_tokens: int, cached_tokens: int, completion_tokens: int,
                    price: tuple[float, float, float]) -> float:
    """USD for one call: uncached prompt tokens at the prompt price, cached ones at the cached
    price, completion tokens at the completion price (prices per 1M tokens)."""
    cached = min(max(cached_tokens, 0), prompt_tokens)
    return ((prompt_tokens - cached) * price[0] + cached * price[2] + completion_tokens * price[1]) / 1e6


def price_for(model: str | None, prices: dict) -> tuple[float, float, float] | None:
    """The (prompt, completion, cached prompt) price of ``model``: exact name, else the longest
    entry that the name starts with followed by ``-``; ``None`` when unknown. A two-price entry
    (a table built by hand) charges cached prompt tokens at the prompt price."""
    if not model:
        return None
    if model not in prices:
        matches = [name for name in prices if model.startswith(name + "-")]
        if not matches:
            return None
        model = max(matches, key=len)
    price = tuple(prices[model])
    return price if len(price) == 3 else (price[0], price[1], price[0])


def host_is_local(host: str | None) -> bool:
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
        addresses = {ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos}
    return bool(addresses) and all(a.is_loopback or a.is_private or a.is_link_local for a in addresses)


def retry_after_seconds(headers) -> float | None:
    """Seconds to wait from ``retry-after-ms``, else ``Retry-After`` (seconds or an HTTP date);
    ``None`` when neither is there or readable (``Retry-After: soon``): the caller then backs off
    exponentially with jitter. Never raises."""
    if headers is None:
        return None
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if not value:
            continue
        try:
            seconds = float(value) / divisor
        except ValueError:
            continue
        if math.isfinite(seconds):
            return max(0.0, seconds)
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if parsed is None:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=datetime.timezone.utc)
    return max(0.0, parsed.timestamp() - time.time())


def _should_retry(response) -> bool:
    """The server's ``x-should-retry: true|false`` when it says so; else 408, 409, 429 and 5xx."""
    verdict = (response.headers.get("x-should-retry") or "").strip().lower() if response is not None else ""
    if verdict in ("true", "false"):
        return verdict == "true"
    status = response.status_code if response is not None else None
    return status is None or status in _RETRY_STATUS or status >= 500


def _retrieve(future) -> None:
    """Mark a future's outcome as seen (asyncio logs an unretrieved exception otherwise)."""
    try:
        future.exception()
    except BaseException:
        pass


def _int(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


class _UnreadableReply(Exception):
    """An HTTP 200 whose body is not a chat completion (HTML, truncated JSON): retried."""


class _FailedAttempt(Exception):
    """One request that got no answer: the error its items will show, whether retrying may fix
    it, and the server's wait (``retry-after-ms`` / ``Retry-After`` within ``max_retry_after``;
    ``None``: the judge's backoff)."""

    def __init__(self, error: str, retryable: bool, retry_after: float | None):
        super().__init__(error)
        self.error, self.retryable, self.retry_after = error, retryable, retry_after


def _may_retry(exc: BaseException) -> bool:
    return isinstance(exc, _FailedAttempt) and exc.retryable


class _RetryAfterOrBackoff:
    """A tenacity wait: the server's wait when it gave a readable one within the bound, else
    ``backoff`` (exponential with jitter); never more than :data:`MAX_WAIT`."""

    def __init__(self, backoff):
        self.backoff = backoff

    def __call__(self, retry_state) -> float:
        wait = getattr(retry_state.outcome.exception(), "retry_after", None)
        return min(wait if wait is not None else self.backoff(retry_state), MAX_WAIT)


def equal_jitter_backoff(base: float, cap: float):
    """``min(cap, base × 2^(attempt-1))`` × uniform(0.5, 1), from tenacity's parts: the fixed half
    of the delay plus a uniform draw over the other half ("equal jitter": never shorter than half
    the delay, unlike tenacity's full-jitter ``wait_random_exponential`` alone)."""
    return (wait_exponential(multiplier=base / 2, max=cap / 2)
            + wait_random_exponential(multiplier=base / 2, max=cap / 2))


# ---- secrets ------------------------------------------------------------------------------------------
#: Query parameters that carry credentials (compared lower-case, ``-`` read as ``_``).
SECRET_PARAMETERS = {"api_key", "apikey", "key", "token", "access_token", "id_token", "refresh_token", "auth",
                     "authorization", "sig", "signature", "secret", "client_secret", "password", "pwd", "passwd",
                     "code", "sas", "x_api_key", "subscription_key", "ocp_apim_subscription_key"}
_TOKEN_PATTERNS = [
    (re.compile(r"\bsk-[A-Za-z0-9_\-]{6,}"), "sk-***"),
    (re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=\-]{6,}"), "Bearer ***"),
    (re.compile(r"(?i)\b(api[-_]?key|access[-_]?token|token|sig|signature|secret|password)(\s*=\s*[\"']?)"
                r"[A-Za-z0-9._~+/=\-]{6,}"), r"\1\2***"),
]


def redact(text: str, secrets: Sequence[str] = (), patterns: bool = True) -> str:
    """``text`` with each of ``secrets`` replaced by ``***``, and with ``patterns`` also anything
    that looks like a key (``sk-…``, a Bearer token, ``api_key=…``). Model replies are redacted
    with ``patterns=False`` (the exact key only): a pattern could alter a clinical text the reply
    quotes, and with it the verdict."""
    if not text:
        return text
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    if patterns:
        for pattern, replacement in _TOKEN_PATTERNS:
            text = pattern.sub(replacement, text)
    return text


class _RedactingFilter(logging.Filter):
    """Masks the API keys in use in every record of the loggers that may see them (DocLens's own,
    and the ``openai`` and ``httpx`` libraries' debug logs)."""

    def __init__(self):
        super().__init__()
        self.secrets: set[str] = set()

    def add(self, secret: str) -> None:
        if secret not in self.secrets:
            self.secrets.add(secret)
            for name in ("doclens", "openai", "httpx", "httpx2", "httpcore"):
                if self not in logging.getLogger(name).filters:
                    logging.getLogger(name).addFilter(self)

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: leave it to logging's own error report
            return True
        cleaned = redact(message, sorted(self.secrets, key=len, reverse=True))
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


_REDACT_LOGS = _RedactingFilter()


def check_endpoint_url(url: str, label: str) -> None:
    """Refuse an endpoint URL that carries credentials: user-info (``http://user:pw@host``), a
    query parameter named like a key (``api-key=``, ``token=``, ``sig=`` …) or anything that looks
    like a key, or a fragment (``#…``). The message never repeats the secret."""
    parsed = urlparse(url)
    shown = redact(f"{parsed.scheme}://{parsed.hostname or '?'}{':' + str(_port(parsed)) if _port(parsed) else ''}"
                   f"{parsed.path}")
    advice = ("; put the key in an environment variable (--api-key-env) so it never reaches reports, logs or "
              "cache keys")
    if parsed.username or parsed.password or "@" in parsed.netloc:
        raise ConfigurationError(f"{label} {shown!r} carries credentials (user:password@host){advice}")
    if parsed.fragment or url.rstrip().endswith("#"):
        raise ConfigurationError(f"{label} {shown!r} has a fragment (#…), which DocLens refuses: it may hold a "
                                 f"key{advice}")
    for name, _ in parse_qsl(parsed.query, keep_blank_values=True):
        if name.strip().lower().replace("-", "_") in SECRET_PARAMETERS:
            raise ConfigurationError(f"{label} {shown!r} has a query parameter {name!r} that looks like a "
                                     f"credential{advice}")
    if redact(url) != url:
        raise ConfigurationError(f"{label} {shown!r} contains something that looks like a key{advice}")


def _port(parsed) -> int | None:
    try:
        return parsed.port
    except ValueError:
        return None


class _LoopThread:
    """An asyncio event loop running in a daemon thread, owned by one judge: its client (and the
    client's connection pool) lives on this loop, so it is reused across batches whatever event
    loop the caller runs or does not run (scripts, Jupyter)."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="doclens-openai-client", daemon=True)
        self.thread.start()

    def run(self, coroutine):
        future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        try:
            return future.result()
        except BaseException:  # Ctrl-C in the caller, or the coroutine's own error: stop its work
            future.cancel()
            raise

    def stop(self) -> None:
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        if not self.thread.is_alive():
            self.loop.close()


class _RateLimiter:
    """Requests-per-minute spacing and a tokens-per-minute bucket (estimated prompt tokens), as
    two of aiolimiter's leaky buckets on the judge's event loop: tpm is a bucket of ``tpm`` tokens
    that drains in a minute (full at the start; a prompt estimated above ``tpm`` takes the whole
    bucket); rpm is a bucket of one request that drains in ``60 / rpm`` s, so request starts are
    evenly spaced, with no burst. Tokens are taken first and the request slot last, so the slots,
    granted in order of arrival, space the requests as they are sent."""

    def __init__(self, rpm: float | None, tpm: float | None):
        self.tokens = AsyncLimiter(float(tpm), 60.0) if tpm else None
        self.requests = AsyncLimiter(1, 60.0 / rpm) if rpm else None

    async def acquire(self, tokens: int) -> None:
        if self.tokens is not None:
            await self.tokens.acquire(min(max(float(tokens), 0.0), self.tokens.max_rate))
        if self.requests is not None:
            await self.requests.acquire()


class OpenAIChatJudge(ChatJudge):
    """A :class:`ChatJudge` on an OpenAI-compatible chat endpoint.

    Parameters (the CLI flags of the same names): ``settings``, an
    :class:`~doclens.core.settings.EndpointSettings`, holds every endpoint option below, checked
    once when made; the same options as keywords build it (or change the given one), through
    ``EndpointSettings.from_kwargs``. ``style``, ``dry_run`` and the cache options are the judge's.
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
        Per-request timeout in seconds (default 60; 10 s to connect): it bounds each call's whole
        exchange, headers to last byte, so a reply sent slowly ends the call too. A timed-out
        request is retried. Raise it for models that take longer to answer.
    max_retries : int
        Retries per request on 408/409/429/5xx, timeouts, connection errors and unreadable 200
        replies (default 5).
    max_consecutive_failures : int
        Stop the run after this many requests in a row failed (each attempt counts, retries
        included; any answer resets the count; a 429 neither counts nor resets). Default 20: a dead endpoint stops a run in
        seconds, a hung one after about three rounds of ``timeout``. 0 turns the breaker off.
    deadline : float or str, optional
        Stop the run this long after the judge's first request: seconds, or ``90s``, ``15m``,
        ``1h30m``. In-flight requests are cancelled; answers received so far are cached.
    local_only : bool
        Refuse any endpoint that does not resolve to loopback / private addresses.
    seed, temperature : decoding (default seed 0, temperature 0).
    price_table : path of a JSON price table (see :func:`load_price_table`).
    dry_run : bool
        No key needed and no request ever sent (see :func:`doclens.scoring.dry_run.dry_run_estimate`).
    cache_dir, no_cache, refresh : the answer cache.
    style : {"json_cot", "cot", "json"}; default the preset's.
    json_response : bool, optional
        Ask for ``response_format={"type": "json_object"}`` in JSON styles. Default: on for
        OpenAI and Azure, off for other servers (not all support it).
    max_tokens : int, optional
        The most tokens a reply may have (``max_tokens`` in each request); default none: the
        server's own limit, which for vLLM and llama.cpp is the rest of the context, so a model
        that loops generates until its context is full (``docs/serving.md``). Named in the
        signature when set.
    backoff_base, backoff_max : float
        Retry delays: ``backoff_base × 2^attempt`` (capped at ``backoff_max``) with jitter,
        unless the server says ``retry-after-ms`` / ``Retry-After``.
    max_retry_after : float
        The longest ``Retry-After`` / ``retry-after-ms`` honoured, in seconds (default 60, as the
        OpenAI client); a longer one falls back to the backoff above (``--evaluator-arg
        max_retry_after=N``).

    Retries are this class's, not the ``openai`` client's (``max_retries=0`` there): the client's
    loop does not retry an HTTP 200 whose body is not a chat completion, has a fixed bound on
    ``Retry-After`` (here ``max_retry_after``), has fixed backoff constants (0.5 s doubling to 8 s) and
    shows no attempt to a circuit breaker. This judge's retries (tenacity's ``AsyncRetrying``)
    follow the client's rules otherwise (``retry-after-ms`` first, ``x-should-retry``,
    408/409/429/5xx) — see ``cards/llm-evaluators.md``.
    """

    name = "openai-chat"
    #: what ``OpenAIChatJudge(...)`` takes: its own parameters and the EndpointSettings options
    __signature__ = KeywordSignature(EndpointSettings)
    default_style = "json_cot"
    default_model: str | None = "gpt-4o"
    needs_base_url = False

    def __init__(self, model: str | None = None, *, settings: EndpointSettings | None = None,
                 style: str | None = None, dry_run: bool = False, cache_dir: str | None = None,
                 no_cache: bool = False, refresh: bool = False, **endpoint_options):
        # every option is checked once, by EndpointSettings (the class docstring says what they
        # mean), before any client exists: a bad value is a ConfigurationError naming it, never a
        # failed call. Keywords build the settings (EndpointSettings.from_kwargs), or change given ones.
        super().__init__(check_style(style or self.default_style), cache_dir=cache_dir, no_cache=no_cache,
                         refresh=refresh)
        settings = EndpointSettings.from_kwargs(settings, model=model, **endpoint_options)
        #: the endpoint, decoding, retries, timeouts and concurrency, as checked (frozen)
        self.settings = settings
        self._set_endpoint(settings)
        self.model = settings.model or settings.azure_deployment or self.default_model
        if not self.model:
            raise ConfigurationError(f"evaluator {self.name!r} needs a model name (--model)")
        self.concurrency, self.rpm, self.tpm = settings.concurrency, settings.rpm, settings.tpm
        self.timeout, self.max_retries = float(settings.timeout), settings.max_retries
        self.seed, self.temperature, self.max_tokens = settings.seed, float(settings.temperature), settings.max_tokens
        self.dry_run = bool(dry_run)
        self.json_response = (self.endpoint_kind != "compatible") if settings.json_response is None \
            else settings.json_response
        self.backoff_base, self.backoff_max = float(settings.backoff_base), float(settings.backoff_max)
        self.max_consecutive_failures = settings.max_consecutive_failures
        self.deadline = settings.deadline_s
        self.max_retry_after = float(settings.max_retry_after)
        self._loop: _LoopThread | None = None
        self._client = None
        self._limiter: _RateLimiter | None = None
        # tenacity's rules for every call (stateless, so shared by the calls running at once)
        self._retry_rules: dict[str, Any] = {"stop": stop_after_attempt(self.max_retries + 1),
                                             "retry": retry_if_exception(_may_retry),
                                             "wait": _RetryAfterOrBackoff(equal_jitter_backoff(self.backoff_base,
                                                                                               self.backoff_max)),
                                             "reraise": True}
        self._sleep = asyncio.sleep  # every wait before a retry goes through here (tests record them)
        self._consecutive_failures = 0
        self._last_error = ""
        self._deadline_at: float | None = None
        self._stopped: tuple[str, str] | None = None
        self._stop_event: asyncio.Event | None = None
        self.api_key_env = settings.api_key_env
        self.prices = load_price_table(settings.price_table)
        self.price_table = settings.price_table
        self._price = price_for(self.model, self.prices)
        self._warned_price = False
        if not self.dry_run and self.endpoint_kind != "compatible" and not os.environ.get(self.api_key_env):
            raise ConfigurationError(f"no API key: set the environment variable {self.api_key_env} "
                                     "(or name another one with --api-key-env)")

    def _set_endpoint(self, settings: EndpointSettings) -> None:
        """Which endpoint this judge talks to: its kind (``openai``, ``azure``, ``compatible``), its
        host, and whether instance text stays on site (``keeps_data_local``, which ``local_only``
        requires; resolving the host is this judge's, not the settings' check). URLs carrying
        credentials are refused (:func:`check_endpoint_url`)."""
        base_url, azure_endpoint = settings.base_url, settings.azure_endpoint
        self.azure_endpoint = azure_endpoint
        self.azure_deployment = settings.azure_deployment
        self.azure_api_version = settings.azure_api_version or ("2024-10-21" if azure_endpoint else None)
        for label, url in (("base_url", base_url), ("azure_endpoint", azure_endpoint)):
            if url:
                check_endpoint_url(url, label)
        self.base_url = base_url.rstrip("/") if base_url else None
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
        self.local_only = settings.local_only
        if self.local_only and not self.keeps_data_local:
            where = {"azure": "an Azure OpenAI endpoint", "openai": "the OpenAI API"}.get(
                self.endpoint_kind, f"host {host!r}, which does not resolve to loopback or private addresses only")
            raise ConfigurationError(f"local_only: refusing {where}; instance text must stay on site "
                                     "(use a loopback or private-network server, or drop --local-only)")

    # ---- identity ------------------------------------------------------------------------------------
    def cache_identity(self) -> dict:
        where = ({"azure_endpoint": self.azure_endpoint, "azure_deployment": self.azure_deployment}
                 if self.endpoint_kind == "azure" else {"base_url": self.base_url})
        return {"model": self.model, "endpoint": self.endpoint_kind, **where}

    def price_per_million(self) -> tuple[float, float, float] | None:
        return self._price

    def decoding(self) -> dict:
        # 0.0 → 0 so signatures read T:0, as the signature format shows
        values = {"T": int(self.temperature) if self.temperature.is_integer() else self.temperature}
        if self.seed is not None:
            values["seed"] = self.seed
        if self.max_tokens is not None:
            values["max"] = self.max_tokens
        return values

    def config(self) -> dict:
        return {**super().config(), "json_response": self.json_response, "local_only": self.local_only}

    def cost_usd(self, completion: Completion) -> float:
        if self._price is None:
            if not self._warned_price:
                self._warned_price = True
                warnings.warn(f"no price known for model {self.model!r}: its cost is counted as 0 "
                              "(give --price-table to count it)", CostWarning, stacklevel=2)
            return 0.0
        return completion_cost(completion.prompt_tokens, completion.cached_tokens, completion.completion_tokens,
                               self._price)

    # ---- the calls --------------------------------------------------------------------------------------
    def redact(self, text: str) -> str:
        return redact(text, self._secrets())

    def _secrets(self) -> list[str]:
        """The key, and the key without its ``sk-…`` prefix (an echo may drop the prefix)."""
        key = os.environ.get(self.api_key_env)
        if not key or len(key) < 4:
            return []
        bare = re.sub(r"^sk-(?:proj-|svcacct-|admin-)?", "", key)
        return [key] + ([bare] if bare != key and len(bare) >= 8 else [])

    def _run(self, coroutine):
        """Run ``coroutine`` on this judge's own event loop (started on first use, in a daemon
        thread), so its one client and its connections serve every batch."""
        if self._loop is None:
            self._loop = _LoopThread()
            weakref.finalize(self, self._loop.stop)  # a judge dropped without close() ends its thread
        return self._loop.run(coroutine)

    def _new_client(self):
        """The ``openai`` async client for this endpoint (constructing it sends nothing)."""
        from openai import AsyncAzureOpenAI, AsyncOpenAI, Timeout

        for secret in self._secrets():
            _REDACT_LOGS.add(secret)
        key = os.environ.get(self.api_key_env) or "not-needed"  # a local server may need none
        timeout = Timeout(self.timeout, connect=min(self.timeout, CONNECT_TIMEOUT))
        # max_retries=0: retries are this judge's (see the class docstring for why)
        if self.endpoint_kind == "azure":
            return AsyncAzureOpenAI(azure_endpoint=cast(str, self.azure_endpoint), azure_deployment=self.azure_deployment,
                                    api_version=self.azure_api_version, api_key=key, max_retries=0, timeout=timeout)
        return AsyncOpenAI(api_key=key, base_url=self.base_url, max_retries=0, timeout=timeout)

    async def _get_client(self):
        """The judge's one client, made on its own event loop at the first call."""
        if self._client is None:
            self._client = self._new_client()
            if self.rpm or self.tpm:
                self._limiter = _RateLimiter(self.rpm, self.tpm)
        return self._client

    async def _close_client(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()
        if self._cache is not None:
            self._cache.close()  # the connection the answers were stored through lives on this thread

    def close(self) -> None:
        if self._loop is not None:
            loop, self._loop = self._loop, None
            if not loop.loop.is_closed():  # closed: stopped by its finalizer at exit, the client with it
                try:
                    loop.run(self._close_client())
                finally:
                    loop.stop()
        super().close()

    def complete_many(self, conversations: list[list[dict]], *, json_mode: bool,
                      on_complete: Callable[[int, Completion], None] | None = None) -> list[Completion]:
        """One :class:`Completion` per conversation. A call that fails for good comes back with
        ``error`` set (the run goes on); :class:`RunStoppedError` when the circuit breaker trips
        or the deadline passes (answers received until then have gone to ``on_complete``)."""
        if self.dry_run:
            raise RuntimeError("dry_run=True: this evaluator sends no request (use doclens.scoring.dry_run.dry_run_estimate)")
        if not conversations:
            return []
        if self.deadline is not None and self._deadline_at is None:
            self._deadline_at = time.monotonic() + self.deadline
        if self._stopped is not None and self._stopped[0] == "circuit_breaker":
            # the run the breaker stopped has ended (the error went up through it): a new call
            # is a new attempt; a passed deadline stays passed
            self._stopped, self._consecutive_failures = None, 0
        self._check_stop()
        return self._run(self._complete_all(conversations, json_mode, on_complete))

    def _check_stop(self) -> None:
        if self._stopped is not None:
            raise RunStoppedError(self._stopped[1], self._stopped[0])
        if self._deadline_at is not None and time.monotonic() >= self._deadline_at:
            self._stop("deadline", f"the deadline of {self.deadline:g} s (--deadline) has passed; the run was "
                                   "stopped, answers received so far are cached (rerun to go on)")
            raise RunStoppedError(self._stopped[1] if self._stopped else "", "deadline")

    def _stop(self, reason: str, message: str) -> None:
        if self._stopped is None:
            self._stopped = (reason, message)
        if self._stop_event is not None:
            self._stop_event.set()

    async def _complete_all(self, conversations, json_mode, on_complete):
        client = await self._get_client()
        semaphore = asyncio.Semaphore(self.concurrency)
        self._stop_event = stop = asyncio.Event()

        async def one(index: int, messages: list[dict]) -> Completion:
            async with semaphore:
                completion = await self._request(client, messages, json_mode)
            if on_complete is not None:
                on_complete(index, completion)
            return completion

        everything = asyncio.gather(*(one(i, m) for i, m in enumerate(conversations)))
        stopper = asyncio.ensure_future(stop.wait())
        remaining = None if self._deadline_at is None else max(0.0, self._deadline_at - time.monotonic())
        try:
            waiting: set[asyncio.Future[Any]] = {everything, stopper}
            done, _ = await asyncio.wait(waiting, timeout=remaining,
                                         return_when=asyncio.FIRST_COMPLETED)
        except BaseException:  # cancelled (Ctrl-C in the caller): cancel the calls, retrieve their end quietly
            everything.add_done_callback(_retrieve)
            everything.cancel()
            raise
        finally:
            stopper.cancel()
            self._stop_event = None
        if everything in done and self._stopped is None:
            results = everything.result()
            failed = sum(c.failed for c in results)
            if failed:
                logger.warning("%d of %d call(s) failed for good; their items are marked 'failed' (not cached: a "
                               "rerun asks them again; the %d others were answered)", failed, len(results),
                               len(results) - failed)
            return results
        # the breaker tripped (even on the batch's last call) or the deadline passed
        everything.cancel()
        await asyncio.gather(everything, return_exceptions=True)
        if self._stopped is None:
            self._stop("deadline", f"the deadline of {self.deadline:g} s (--deadline) has passed; the run was "
                                   "stopped, answers received so far are cached (rerun to go on)")
        reason, message = self._stopped or ("deadline", "")
        logger.info("run stopped: %s", message)
        raise RunStoppedError(message, reason)

    def _note_attempt(self, ok: bool | None) -> None:
        """The circuit breaker: ``max_consecutive_failures`` failed requests in a row stop the run.
        ``ok=None`` (a 429: the endpoint is up and pacing us) neither counts nor resets."""
        if ok is None:
            return
        if ok:
            self._consecutive_failures = 0
            return
        self._consecutive_failures += 1
        if self.max_consecutive_failures and self._consecutive_failures >= self.max_consecutive_failures:
            self._stop("circuit_breaker", f"{self._consecutive_failures} requests in a row failed "
                                          f"(--max-consecutive-failures {self.max_consecutive_failures}); the "
                                          f"endpoint {self._where()} looks down, so the run was stopped. Last "
                                          f"error: {self._last_error}. Answers received so far are cached "
                                          "(rerun to go on)")

    def _where(self) -> str:
        if self.endpoint_kind == "azure":
            return self.azure_endpoint or ""
        return self.base_url or f"https://{OPENAI_HOST}"

    async def _request(self, client, messages: list[dict], json_mode: bool) -> Completion:
        """One call, retried by tenacity on the errors :meth:`_attempt` marks retryable, at most
        ``max_retries`` times; a call that fails for good comes back with ``error`` set."""
        model = (self.azure_deployment or self.model) if self.endpoint_kind == "azure" else self.model
        arguments: dict[str, Any] = {"model": model, "messages": messages, "temperature": self.temperature}
        if self.seed is not None:
            arguments["seed"] = self.seed
        if json_mode and self.json_response:
            arguments["response_format"] = {"type": "json_object"}
        if self.max_tokens is not None:
            arguments["max_tokens"] = self.max_tokens
        # a new AsyncRetrying per call (tenacity keeps a call's state on the object, and a batch's
        # calls run at once on this one loop) over the judge's rules, made once: fewer objects per
        # call, so fewer garbage collections (docs/design.md, "The HTTP judge's request path")
        retrying = AsyncRetrying(**self._retry_rules, sleep=self._retry_sleep, before_sleep=self._before_retry)
        try:
            return await retrying(self._attempt, client, arguments, messages)
        except _FailedAttempt as failure:
            attempts = retrying.statistics.get("attempt_number", 1)
            tries = (f"after {attempts} attempts" if attempts > 1
                     else "not retryable" if not failure.retryable else "once")
            logger.warning("a request failed for good (%s): %s", tries, failure.error)
            return Completion(None, error=failure.error)

    def _retry_sleep(self, seconds: float):
        return self._sleep(float(seconds))

    def _before_retry(self, retry_state) -> None:
        failure = retry_state.outcome.exception()
        logger.info("request failed (%s); retry %d/%d in %.2fs", failure.error, retry_state.attempt_number,
                    self.max_retries, retry_state.upcoming_sleep)
        self.usage.add(retries=1)

    async def _attempt(self, client, arguments: dict, messages: list[dict]) -> Completion:
        """One request (after the rate limits): its completion, or :class:`_FailedAttempt` naming
        the error. Every attempt is shown to the circuit breaker."""
        import openai

        if self._limiter is not None:
            await self._limiter.acquire(estimate_tokens(messages))
        headers, status = None, cast(int | None, None)
        try:
            # the client's timeout is an idle timeout (each read may wait that long): a reply
            # trickled byte by byte would never end it, so the whole exchange, headers to last
            # byte, runs under one deadline (docs/design.md, "The HTTP judge's request path")
            raw = await asyncio.wait_for(client.chat.completions.with_raw_response.create(**arguments),
                                         self.timeout)
            completion = self._read_reply(raw.http_response)
        except openai.BadRequestError as exc:
            if exc.code == "context_length_exceeded" or _CONTEXT_LENGTH.search(str(exc.message or "")):
                self._note_attempt(True)  # an answer: the endpoint works, the prompt is too long
                return Completion(None, context_overflow=True)
            error, retryable = self._status_error(exc), _should_retry(exc.response)
            headers, status = exc.response.headers, exc.status_code
        except openai.APIStatusError as exc:
            error, retryable = self._status_error(exc), _should_retry(exc.response)
            headers, status = exc.response.headers, exc.status_code
        except (openai.APITimeoutError, asyncio.TimeoutError):
            error, retryable = f"no complete reply within {self.timeout:g} s (--timeout) from {self._where()}", True
        except openai.APIConnectionError as exc:
            cause = exc.__cause__ or exc.__context__
            detail = f"{type(cause).__name__}: {cause}" if cause is not None else str(exc)
            error, retryable = self.redact(f"connection to {self._where()} failed ({detail})")[:300], True
        except _UnreadableReply as exc:
            error, retryable = self.redact(str(exc)), True
        else:
            self._note_attempt(True)
            return completion
        self._last_error = error
        wait = retry_after_seconds(headers)
        beyond = wait is not None and wait > self.max_retry_after
        # a 429 is the endpoint pacing us (no count), unless it asks for a wait past the bound:
        # then it counts toward the breaker like any failed attempt
        self._note_attempt(None if status == 429 and not beyond else False)
        # as the OpenAI client does: a server's wait is honoured up to a bound; a longer
        # (Retry-After: 1e9) or unreadable one falls back to this judge's own backoff
        raise _FailedAttempt(error, retryable, None if beyond else wait)

    def _status_error(self, exc) -> str:
        status = exc.status_code
        body = re.sub(r"^Error code: \d+ - ", "", str(exc.message or ""))
        return self.redact(f"HTTP {status} from {self._where()}: {body}")[:400]

    def _read_reply(self, response) -> Completion:
        """The text and usage of an HTTP 200 reply; :class:`_UnreadableReply` (retried) when the
        body is not a chat completion — an HTML page from a proxy, a truncated JSON body."""
        content_type = response.headers.get("content-type", "?")
        body = response.content
        try:
            data = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            if "json" in content_type.lower():
                raise _UnreadableReply(f"the endpoint {self._where()} replied HTTP 200 with a JSON body that does not "
                                       f"parse ({len(body)} bytes, truncated?)") from None
            start = body[:60].decode("utf-8", "replace")
            raise _UnreadableReply(f"the endpoint {self._where()} replied HTTP 200 with content-type {content_type!r} "
                                   f"instead of a chat completion; the body starts {start!r}") from None
        choices = data.get("choices") if isinstance(data, dict) else None
        if not isinstance(choices, list):
            shape = f"keys {sorted(data)[:8]}" if isinstance(data, dict) else f"a JSON {type(data).__name__}"
            raise _UnreadableReply(f"the endpoint {self._where()} replied HTTP 200 with JSON that is not a chat "
                                   f"completion (no 'choices'; {shape})")
        message = (choices[0] or {}).get("message") if choices and isinstance(choices[0], dict) else None
        text = message.get("content") if isinstance(message, dict) else None
        if not isinstance(text, str) or not text.strip():
            # no answer (empty choices, null or blank content): a failed attempt, retried and never
            # cached, so that a glitch cannot leave a cached non-answer a rerun would read again
            what = ("no choices" if not choices else "no message" if not isinstance(message, dict)
                    else "null content" if text is None else "empty content")
            raise _UnreadableReply(f"the endpoint {self._where()} replied HTTP 200 with no answer ({what})")
        usage: dict = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        details: dict = usage["prompt_tokens_details"] if isinstance(usage.get("prompt_tokens_details"), dict) else {}
        prompt_tokens = _int(usage.get("prompt_tokens"))
        return Completion(redact(text, self._secrets(), patterns=False),
                          prompt_tokens, _int(usage.get("completion_tokens")),
                          cached_tokens=min(_int(details.get("cached_tokens")), prompt_tokens))


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
