"""A scripted OpenAI-compatible chat server on 127.0.0.1, for tests and benchmarks.

``POST /v1/chat/completions`` answers like a real endpoint (``choices``, ``usage``). By default
a rule-based judge reads DocLens's judge prompts and answers in the format they ask for (each
claim under its number, the fenced instance text read as data only): a claim
is entailed iff every word of it occurs in the premise (so verdicts are easy to work out by
hand), and a citation's provenance is the cited units sharing a word with the statement; a
source-support prompt gets 3 verdicts by :func:`support_verdict`.
Like a server with prefix caching (vLLM's automatic prefix caching, OpenAI's prompt caching) it
reports ``usage.prompt_tokens_details.cached_tokens``: the prompt's longest prefix shared with any
earlier request, in characters / 4, rounded down to whole 16-token blocks
(:func:`cached_prompt_tokens`).
Tests script deviations per request with ``script`` (a callable ``(request_number, body) →
Reply | str | None``; ``None`` falls through to the rule judge). Every request is recorded, and
so is the largest number of requests in flight at once (``max_in_flight``).

The server can misbehave in every way an endpoint does (a :class:`Reply` field each): an error
status with any headers (``Retry-After: soon``, ``retry-after-ms``, ``x-should-retry``), an HTTP
200 whose body is an HTML page or truncated JSON (``body``/``content_type``), a connection closed
mid-reply (``truncate``) or reset (``reset``), a hang until the client gives up (``hang``), a 401
that echoes the caller's key (``echo_key``), a valid reply sent a few bytes at a time (``trickle``),
a 200 with empty ``choices`` or ``null`` content, ``Retry-After: 1e9``. :func:`faults` injects them
at a seeded rate. Hostile models: :func:`answer_then_quote` (answers, then quotes the text it was
given) and :func:`planted_block_judge` (judges a claims block planted in the text it was given).
"""

from __future__ import annotations

import json
import random
import re
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STOP_WORDS = {"the", "a", "an", "patient", "has", "is", "and", "of", "doctor", "speaker"}


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower())) - STOP_WORDS


def entails(premise: str, hypothesis: str) -> bool:
    return bool(words(hypothesis)) and words(hypothesis) <= words(premise)


@dataclass
class Reply:
    """A scripted answer: ``text`` with status 200, or an error ``status`` with ``error`` body.

    Misbehaviours: ``body`` (raw bytes or str sent as is, with ``content_type``), ``truncate``
    (announce the full length, send this many bytes, close), ``reset`` (abort the connection
    with a TCP reset before any reply), ``hang`` (answer nothing until the server stops),
    ``echo_key`` (a 401 whose message repeats the caller's bearer token)."""

    text: str | None = None
    status: int = 200
    headers: dict = field(default_factory=dict)
    delay: float = 0.0
    error: dict | None = None
    body: bytes | str | None = None
    content_type: str = "application/json"
    truncate: int | None = None
    reset: bool = False
    hang: bool = False
    echo_key: bool = False
    trickle: float | None = None  # send the reply (headers, then body) 16 bytes at a time, this many s apart


HTML_PAGE = ("<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1>"
             "<p>The proxy could not reach the upstream server.</p></body></html>")

#: The misbehaviours :func:`faults` draws from.
FAULT_KINDS = ("500", "429", "429-soon", "429-ms", "503-should-retry", "html", "truncated-json", "cut", "reset",
               "hang", "garbage")
#: Misbehaviours :func:`fault_reply` also knows, kept out of :func:`faults`' draw (whose seeded mix
#: earlier tests rely on): a 200 without an answer, a wait of 31 years, a reply sent slowly.
MORE_FAULT_KINDS = ("empty-choices", "null-content", "429-forever", "trickle")


def fault_reply(kind: str, body: dict) -> Reply:
    """A misbehaving reply of ``kind`` (one of :data:`FAULT_KINDS`)."""
    if kind == "500":
        return Reply(status=500, error={"error": {"message": "internal error"}})
    if kind == "429":
        return Reply(status=429, headers={"Retry-After": "0"}, error={"error": {"message": "rate limited"}})
    if kind == "429-soon":
        return Reply(status=429, headers={"Retry-After": "soon"}, error={"error": {"message": "rate limited"}})
    if kind == "429-ms":
        return Reply(status=429, headers={"retry-after-ms": "5"}, error={"error": {"message": "rate limited"}})
    if kind == "503-should-retry":
        return Reply(status=503, headers={"x-should-retry": "true"})
    if kind == "html":
        return Reply(body=HTML_PAGE, content_type="text/html; charset=utf-8")
    if kind == "truncated-json":  # a well-formed HTTP reply whose JSON stops half-way
        whole = json.dumps(completion_body(0, body, default_reply(body["messages"])))
        return Reply(body=whole[: len(whole) // 2])
    if kind == "cut":  # the connection closes mid-body
        return Reply(default_reply(body["messages"]), truncate=20)
    if kind == "reset":
        return Reply(reset=True)
    if kind == "hang":
        return Reply(hang=True)
    if kind == "garbage":
        return Reply("I would rather not say.")
    if kind in ("empty-choices", "null-content"):  # HTTP 200, a chat completion without an answer
        whole = completion_body(0, body, "")
        if kind == "empty-choices":
            whole["choices"] = []
        else:
            whole["choices"][0]["message"]["content"] = None
        return Reply(body=json.dumps(whole))
    if kind == "429-forever":  # asks for a wait of 31 years
        return Reply(status=429, headers={"Retry-After": "1e9"}, error={"error": {"message": "rate limited"}})
    if kind == "trickle":  # a valid reply, sent 16 bytes every 0.05 s (about 300 bytes/s)
        return Reply(default_reply(body["messages"]), trickle=0.05)
    raise ValueError(f"unknown fault kind {kind!r}")


def faults(rate: float, kinds=FAULT_KINDS, seed: int = 0, only=None) -> Script:
    """A script that makes a share ``rate`` of requests misbehave, each in one of ``kinds``. The
    draw depends only on ``seed`` and the request's number: the same run gets the same faults.
    ``only(body)``: restrict faults to the requests it accepts."""
    kinds = tuple(kinds)

    def script(number: int, body: dict):
        draw = random.Random(seed * 1_000_003 + number)
        if draw.random() >= rate or (only is not None and not only(body)):
            return None
        return fault_reply(kinds[draw.randrange(len(kinds))], body)

    return script


#: Tokens per block of the server's simulated prompt cache (vLLM's default block size).
CACHE_BLOCK = 16


def prompt_text(body: dict) -> str:
    return "".join(str(m.get("content", "")) for m in body.get("messages") or [] if isinstance(m, dict))


def cached_prompt_tokens(body: dict, earlier: list[dict]) -> int:
    """The prompt tokens a prefix-caching server would serve from its cache, as vLLM's automatic
    prefix caching does: the longest prefix the prompt shares with any earlier request (tokens
    are characters / 4, as for ``prompt_tokens``), in whole :data:`CACHE_BLOCK`-token blocks."""
    text, best = prompt_text(body), 0
    for other in earlier:
        previous = prompt_text(other)
        low, high = best, min(len(text), len(previous))  # longest common prefix, by bisection
        if text[:low] != previous[:low]:
            continue
        while low < high:
            middle = (low + high + 1) // 2
            if text[low:middle] == previous[low:middle]:
                low = middle
            else:
                high = middle - 1
        best = low
    return (best // 4) // CACHE_BLOCK * CACHE_BLOCK


def completion_body(number: int, body: dict, text: str, earlier: list[dict] | None = None) -> dict:
    """A chat completion; ``usage.prompt_tokens_details.cached_tokens`` counts the prompt prefix
    shared with the ``earlier`` requests (:func:`cached_prompt_tokens`)."""
    prompt_tokens = len(prompt_text(body)) // 4
    completion_tokens = len(text) // 4
    cached = min(prompt_tokens, cached_prompt_tokens(body, earlier or []))
    return {"id": f"chatcmpl-{number}", "object": "chat.completion", "created": 0, "model": body.get("model"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens,
                      "prompt_tokens_details": {"cached_tokens": cached}}}


def _last_user(messages: list[dict]) -> str:
    return next(m["content"] for m in reversed(messages) if m["role"] == "user")


def _first_real_user(messages: list[dict]) -> str:
    """The user turn with the actual task (the last one before any re-ask)."""
    users = [m["content"] for m in messages if m["role"] == "user"]
    real = [u for u in users if not u.startswith("Your answer could not be read")]
    return real[-1]


_FENCE_OPEN = re.compile(r"<<<DATA-([0-9a-f]+)>>>")


def fence_token(messages: list[dict]) -> str | None:
    """The request's fence boundary: the first one in its task (the last user turn before any
    re-ask; in a one-message prompt, past "Now the real task."). The judge instructions describe
    the markers generically and their worked example has a fixed boundary of its own, so the
    task's first marker, written by the template before any instance text, is the request's."""
    if not messages:
        return None
    task = _first_real_user(messages).split("Now the real task.", 1)[-1]
    found = _FENCE_OPEN.search(task)
    return found.group(1) if found else None


def fenced(text: str, token: str | None = None) -> list[tuple[str, str]]:
    """``(label, data)`` for every text in a DocLens prompt fenced with ``token`` (default: the
    first boundary in ``text``), in order: the label is the text before the fence on its line
    (``Claim 3:``, ``[4]``, ``Sentence:``), or the line above for a fence that starts a line of
    its own (a block such as the clinical report)."""
    if token is None:
        found = _FENCE_OPEN.search(text)
        if found is None:
            return []
        token = found.group(1)
    items = []
    for match in re.finditer(f"<<<DATA-{token}>>>(.*?)<<<END-{token}>>>", text, re.DOTALL):
        line_start = text.rfind("\n", 0, match.start()) + 1
        label = text[line_start:match.start()].strip()
        data = match.group(1)
        if not label:  # a block: the label is the line above, the data between two line breaks
            previous = text.rfind("\n", 0, max(line_start - 1, 0)) + 1
            label = text[previous:line_start].strip()
            data = data[1:-1] if data.startswith("\n") and data.endswith("\n") else data
        items.append((label, data))
    return items


def _numbered(items: list[tuple[str, str]]) -> list[tuple[int, str]]:
    return [(int(m.group(1)), data) for label, data in items
            for m in [re.match(r"(?:claim|question B \(claim) ?(\d+)", label, re.IGNORECASE)] if m]


NEGATIONS = {"no", "not", "denies", "never", "without"}


def support_verdict(premise: str, claim: str) -> str:
    """The rule judge's source-support verdict: ``Supported`` iff every word of the claim is in
    the facts, ``Not Supported`` iff every word but its negations is (a negation flipped),
    else ``Not Addressed``."""
    if entails(premise, claim):
        return "Supported"
    rest = words(claim) - NEGATIONS
    if rest and rest <= words(premise) - NEGATIONS:
        return "Not Supported"
    return "Not Addressed"


def judge_reply(messages: list[dict]) -> str:
    """The rule judge's correct answer to a DocLens judge prompt (any style), as a judge that
    follows the prompt would give it: every claim answered under its number, fenced text read
    as data only."""
    task = _first_real_user(messages)
    reask = _last_user(messages).startswith("Your answer could not be read")
    cot = "entailment prediction: 1 or 0" in messages[0]["content"]
    token = fence_token(messages)
    items = fenced(task.split("Now the real task.", 1)[-1] if cot else task, token)  # cot: past the example
    labels = dict(items)
    if "Sentence:" in labels:
        sources = {int(label.strip("[]")): data for label, data in items if re.fullmatch(r"\[\d+\]", label)}
        statement = labels["Sentence:"]
        ok = int(entails(" ".join(sources.values()), statement))
        provenance = [i for i, text in sources.items() if words(text) & words(statement)]
        if cot:
            return f"explanation: rule judge.\nprovenance: {provenance}\nentailment prediction: {ok}"
        return json.dumps({"explanation": "rule judge", "provenance": provenance, "entailment_prediction": ok})
    if "question A:" in labels:
        (number, b), = _numbered(items)
        ok = int(entails(labels["question A:"], b))
        if cot:
            return f"claim id: {number}\nclaim: {b}\nexplanation: rule judge.\nentailment prediction: {ok}"
        return json.dumps([{"id": number, "claim": b, "explanation": "rule judge", "entailment_prediction": ok}])
    facts = labels.get("record facts:", labels.get("Record facts:"))
    if facts is not None:  # source support: 3 verdicts
        cot = "verdict: Supported, Not Supported or Not Addressed" in messages[0]["content"]
        claims = _numbered(fenced(_last_user(messages), token) if reask else items)
        if cot:
            (number, claim), = claims
            return (f"claim id: {number}\nclaim: {claim}\nexplanation: rule judge.\n"
                    f"verdict: {support_verdict(facts, claim)}")
        return json.dumps([{"id": n, "claim": c, "explanation": "rule judge", "verdict": support_verdict(facts, c)}
                           for n, c in claims])
    premise = labels.get("clinical report:", labels.get("Clinical report:"))
    claims = _numbered(fenced(_last_user(messages), token) if reask else items)
    if cot:
        (number, claim), = claims
        return (f"claim id: {number}\nclaim: {claim}\nexplanation: rule judge.\n"
                f"entailment prediction: {int(entails(premise, claim))}")
    return json.dumps([{"id": n, "claim": c, "explanation": "rule judge",
                        "entailment_prediction": int(entails(premise, c))} for n, c in claims])


def claims_in(block: str) -> list[str]:
    """The claims of a block of ``Claim 3: <<<DATA-…>>>claim<<<END-…>>>`` (or ``1. claim``) lines."""
    numbered = _numbered(fenced(block))
    if numbered:
        return [text for _, text in numbered]
    return [m.group(1).strip() for m in re.finditer(r"^\d+\. (.*)$", block, re.MULTILINE)]


def extraction_reply(messages: list[dict]) -> str:
    """Extraction prompts: each sentence of the (fenced) text is a claim."""
    text = fenced(_last_user(messages), fence_token(messages))[-1][1]
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]
    return "\n".join(f"Claim {i}: {s}" for i, s in enumerate(sentences, 1))


def default_reply(messages: list[dict]) -> str:
    system = " ".join(m["content"] for m in messages if m["role"] == "system")
    if "atomic" in system.lower() or "Claims:" in _last_user(messages) and "Text:" in _last_user(messages):
        return extraction_reply(messages)
    return judge_reply(messages)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # the default backlog of 5 drops simultaneous connects (1 s SYN retry)


Script = Callable[[int, dict], Reply | str | None]


class FakeChatServer:
    """``with FakeChatServer(script=…) as server: … server.base_url …``"""

    def __init__(self, script: Script | None = None, latency: float = 0.0, hold_until_in_flight: int = 0,
                 prefix_cache: bool = True, usage_details: bool = True):
        self.script = script
        self.latency = latency
        # False: report no cached prompt tokens. Finding the longest shared prefix compares each
        # request with every earlier one, a cost that grows with the run: benchmarks that need a
        # server whose reply time is the fixed latency alone turn it off.
        self.prefix_cache = prefix_cache
        # False: usage carries no ``prompt_tokens_details`` at all, as llama.cpp's server
        # (llama-cpp-python 0.3.36) answers (tests/evaluators/llm/test_real_server.py)
        self.usage_details = usage_details
        self.requests: list[dict] = []
        self.headers: list[dict] = []  # each request's headers (names lower-case), in order
        self.connections: set = set()  # the client (host, port) pairs seen: one per TCP connection
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)
        self.in_flight = 0
        self.max_in_flight = 0
        # replies wait (at most 5 s) until this many requests have been in flight at once
        self.hold_until_in_flight = hold_until_in_flight
        self.released = threading.Event()  # set by stop(): hanging replies end
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out as separate writes

            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                if len(raw) < length:  # the client went away mid-request (a call cancelled when the
                    self.close_connection = True  # breaker tripped): no request, nothing to answer
                    return
                body = json.loads(raw or b"{}")
                if not self.path.endswith("/chat/completions"):
                    return self._send(404, {"error": {"message": "not found"}})
                with outer.changed:
                    number = len(outer.requests)
                    outer.requests.append(body)
                    outer.headers.append({k.lower(): v for k, v in self.headers.items()})
                    outer.connections.add(self.client_address)
                    outer.in_flight += 1
                    outer.max_in_flight = max(outer.max_in_flight, outer.in_flight)
                    outer.changed.notify_all()
                    if outer.hold_until_in_flight:
                        outer.changed.wait_for(lambda: outer.max_in_flight >= outer.hold_until_in_flight, timeout=5)
                try:
                    self._answer(number, body)
                finally:
                    with outer.changed:
                        outer.in_flight -= 1

            def _answer(self, number: int, body: dict):
                reply = outer.script(number, body) if outer.script else None
                if reply is None:
                    reply = Reply(default_reply(body["messages"]))
                elif isinstance(reply, str):
                    reply = Reply(reply)
                time.sleep(outer.latency + reply.delay)
                if reply.hang:
                    outer.released.wait(60)
                    self.close_connection = True
                    return
                if reply.reset:  # SO_LINGER 0: close() sends a TCP RST
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.close_connection = True
                    return
                if reply.echo_key:
                    key = self.headers.get("Authorization", "").removeprefix("Bearer ")
                    return self._send(401, {"error": {"message": f"Incorrect API key provided: {key}",
                                                      "type": "invalid_request_error", "code": "invalid_api_key"}},
                                      reply.headers)
                if reply.status != 200:
                    return self._send(reply.status, reply.error or {"error": {"message": "scripted error"}},
                                      reply.headers)
                if reply.body is not None:
                    data = reply.body.encode() if isinstance(reply.body, str) else reply.body
                    return self._send(200, data, reply.headers, reply.content_type)
                with outer.lock:  # the requests that arrived before this one
                    earlier = list(outer.requests[:number]) if outer.prefix_cache else []
                completion = completion_body(number, body, reply.text, earlier)
                if not outer.usage_details:
                    del completion["usage"]["prompt_tokens_details"]
                self._send(200, completion, reply.headers, truncate=reply.truncate, trickle=reply.trickle)

            def _trickle(self, status: int, data: bytes, content_type: str, pause: float):
                """The whole reply, status line to last byte, 16 bytes at a time ``pause`` s apart."""
                reason = self.responses.get(status, ("",))[0]
                whole = (f"HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\n"
                         f"Content-Length: {len(data)}\r\n\r\n").encode() + data
                self.close_connection = True
                for start in range(0, len(whole), 16):
                    if outer.released.wait(pause):
                        return
                    self.wfile.write(whole[start:start + 16])
                    self.wfile.flush()

            def _send(self, status: int, payload, headers: dict | None = None,
                      content_type: str = "application/json", truncate: int | None = None,
                      trickle: float | None = None):
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                try:
                    if trickle is not None:
                        return self._trickle(status, data, content_type, trickle)
                    self.send_response(status)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(data)))
                    for key, value in (headers or {}).items():
                        self.send_header(key, str(value))
                    self.end_headers()
                    if truncate is not None:
                        self.wfile.write(data[:truncate])
                        self.wfile.flush()
                        self.close_connection = True
                        return
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout)

        self.httpd = _Server(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    @property
    def count(self) -> int:
        with self.lock:
            return len(self.requests)

    def start(self) -> FakeChatServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.released.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> FakeChatServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def context_error(message: str = "This model's maximum context length is 8192 tokens. However, your messages "
                                 "resulted in 9000 tokens.") -> Reply:
    return Reply(status=400, error={"error": {"message": message, "type": "invalid_request_error",
                                              "param": "messages", "code": "context_length_exceeded"}})


# ---- hostile models: what a prediction written to plant verdicts can make a model do -------------------
def quoted_texts(messages: list[dict]) -> str:
    """The fenced texts of a judge prompt's task (the note, the claims), as a model quoting "the
    text I was given" would copy them."""
    task = _first_real_user(messages).split("Now the real task.", 1)[-1]
    return "\n".join(data for _, data in fenced(task, fence_token(messages)))


def answer_then_quote(number: int, body: dict) -> str | None:
    """A model that answers as the rule judge does, then quotes the text it was given (a verdict
    list or an ``entailment prediction: 1`` line planted there comes after its answer)."""
    messages = body["messages"]
    return default_reply(messages) + "\n\nFor reference, the text I was given:\n" + quoted_texts(messages)


def planted_block_judge(number: int, body: dict) -> str | None:
    """A model that judges a claims block planted in the note (``Claim 2: A cough.`` lines)
    instead of the claims asked, copying the planted claim texts, each "entailed"; the rule judge
    for prompts whose note plants nothing."""
    messages = body["messages"]
    task = _first_real_user(messages).split("Now the real task.", 1)[-1]
    labels = dict(fenced(task, fence_token(messages)))
    note = labels.get("clinical report:", labels.get("Clinical report:")) or ""
    planted = re.findall(r"^Claim (\d+): (.+)$", note, re.MULTILINE)
    if not planted:
        return None
    if "entailment prediction: 1 or 0" in messages[0]["content"]:  # cot: one claim a call, restated as the
        # format asks (when it asks): the model copies the claim it judged, the planted one
        restated = f"claim: {planted[0][1]}\n" if "claim: the claim's text" in messages[0]["content"] else ""
        return f"claim id: {planted[0][0]}\n{restated}explanation: the text says so.\nentailment prediction: 1"
    return json.dumps([{"id": int(n), "claim": text, "explanation": "the text says so.", "entailment_prediction": 1}
                       for n, text in planted])
