"""A scripted OpenAI-compatible chat server on 127.0.0.1, for tests and benchmarks.

``POST /v1/chat/completions`` answers like a real endpoint (``choices``, ``usage``). By default
a rule-based judge reads DocLens's judge prompts and answers in the format they ask for (each
claim under its number, the fenced instance text read as data only): a claim
is entailed iff every word of it occurs in the premise (so verdicts are easy to work out by
hand), and a citation's provenance is the cited units sharing a word with the statement.
Tests script deviations per request with ``script`` (a callable ``(request_number, body) →
Reply | str | None``; ``None`` falls through to the rule judge). Every request is recorded.
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Optional, Union

STOP_WORDS = {"the", "a", "an", "patient", "has", "is", "and", "of", "doctor", "speaker"}


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower())) - STOP_WORDS


def entails(premise: str, hypothesis: str) -> bool:
    return bool(words(hypothesis)) and words(hypothesis) <= words(premise)


@dataclass
class Reply:
    """A scripted answer: ``text`` with status 200, or an error ``status`` with ``error`` body."""

    text: Optional[str] = None
    status: int = 200
    headers: dict = field(default_factory=dict)
    delay: float = 0.0
    error: Optional[dict] = None


def _last_user(messages: list[dict]) -> str:
    return next(m["content"] for m in reversed(messages) if m["role"] == "user")


def _first_real_user(messages: list[dict]) -> str:
    """The user turn with the actual task (the last one before any re-ask)."""
    users = [m["content"] for m in messages if m["role"] == "user"]
    real = [u for u in users if not u.startswith("Your answer could not be read")]
    return real[-1]


_FENCE_OPEN = re.compile(r"<<<DATA-([0-9a-f]+)>>>")


def fence_token(messages: list[dict]) -> Optional[str]:
    """The request's fence boundary, as its instructions (the first message, which holds no
    instance text) name it."""
    found = _FENCE_OPEN.search(messages[0]["content"]) if messages else None
    return found.group(1) if found else None


def fenced(text: str, token: Optional[str] = None) -> list[tuple[str, str]]:
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
    for match in re.finditer(r"<<<DATA-%s>>>(.*?)<<<END-%s>>>" % (token, token), text, re.DOTALL):
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
            return f"claim id: {number}\nexplanation: rule judge.\nentailment prediction: {ok}"
        return json.dumps([{"id": number, "claim": b, "explanation": "rule judge", "entailment_prediction": ok}])
    premise = labels.get("clinical report:", labels.get("Clinical report:"))
    claims = _numbered(fenced(_last_user(messages), token) if reask else items)
    if cot:
        (number, claim), = claims
        return f"claim id: {number}\nexplanation: rule judge.\nentailment prediction: {int(entails(premise, claim))}"
    return json.dumps([{"id": n, "claim": c, "explanation": "rule judge", "entailment_prediction": int(entails(premise, c))}
                       for n, c in claims])


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


Script = Callable[[int, dict], Union[Reply, str, None]]


class FakeChatServer:
    """``with FakeChatServer(script=…) as server: … server.base_url …``"""

    def __init__(self, script: Optional[Script] = None, latency: float = 0.0):
        self.script = script
        self.latency = latency
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out as separate writes

            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.endswith("/chat/completions"):
                    return self._send(404, {"error": {"message": "not found"}})
                with outer.lock:
                    number = len(outer.requests)
                    outer.requests.append(body)
                reply = outer.script(number, body) if outer.script else None
                if reply is None:
                    reply = Reply(default_reply(body["messages"]))
                elif isinstance(reply, str):
                    reply = Reply(reply)
                time.sleep(outer.latency + reply.delay)
                if reply.status != 200:
                    return self._send(reply.status, reply.error or {"error": {"message": "scripted error"}},
                                      reply.headers)
                prompt_tokens = sum(len(m["content"]) for m in body["messages"]) // 4
                completion_tokens = len(reply.text) // 4
                self._send(200, {
                    "id": f"chatcmpl-{number}", "object": "chat.completion", "created": 0,
                    "model": body.get("model"),
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": reply.text},
                                 "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                              "total_tokens": prompt_tokens + completion_tokens}}, reply.headers)

            def _send(self, status: int, payload: dict, headers: Optional[dict] = None):
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for key, value in (headers or {}).items():
                        self.send_header(key, str(value))
                    self.end_headers()
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

    def start(self) -> "FakeChatServer":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> "FakeChatServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def context_error(message: str = "This model's maximum context length is 8192 tokens. However, your messages "
                                 "resulted in 9000 tokens.") -> Reply:
    return Reply(status=400, error={"error": {"message": message, "type": "invalid_request_error",
                                              "param": "messages", "code": "context_length_exceeded"}})
