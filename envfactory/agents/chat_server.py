"""A real HTTP server on 127.0.0.1 that speaks chat completions and replays scripted replies.

For tests and offline demos of the *online* path: the `openai` client talks to it over
a socket exactly as it would to OpenAI, SGLang or vLLM (openai ≥ 3 sends through httpx2,
which respx cannot intercept; a real server needs no patching). It records every
request body, so a test can prove what a model was — and was not — shown.

Replies are consumed in order; a reply can be a tool-call turn, plain text, an HTTP
error (with `Retry-After`), be delayed to provoke a client timeout, or be cut off: the
connection is closed after `drop_after` bytes of the body (a server dying mid-response).
`route(marker, …)` gives requests whose task message contains `marker` their own queue, so
one server can serve several scripted runs at once (the agent eval harness's tests).
Requests without `tools` (compaction summaries) get an automatic summary unless
`auto_summary=False`. When a queue is empty the server answers 400, which the client
treats as terminal.

`RoleScriptServer` serves a seed's recorded scripts for every role at once, picking the
script by the request's `model` (each role is configured with its role name as the model)
and the turn by the number of assistant messages already in the request: stateless, so
k judges, concurrent runs and verifier patch rounds each replay their script from the top.
It is what the compose end-to-end check points the stack's model variables at.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .scripted import Script


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: Any = None  # a JSON-able object, or raw text (e.g. a malformed body)
    delay_s: float = 0.0
    headers: tuple[tuple[str, str], ...] = ()
    drop_after: int | None = None  # close the connection after this many body bytes


def completion_body(
    text: str = "",
    calls: Iterable[tuple[str, Any]] = (),
    *,
    usage: tuple[int, int] | None = (100, 20),
    ids: str = "call",
    finish_reason: str | None = None,
) -> dict[str, Any]:
    """A chat.completion object; a call's arguments may be a dict or raw (malformed) text."""
    tool_calls = [
        {
            "id": f"{ids}_{i}",
            "type": "function",
            "function": {
                "name": name,
                "arguments": args if isinstance(args, str) else json.dumps(args),
            },
        }
        for i, (name, args) in enumerate(calls)
    ]
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if tool_calls:
        message["tool_calls"] = tool_calls
    body: dict[str, Any] = {
        "id": "chatcmpl-local",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": "local-replay",
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": finish_reason or ("tool_calls" if tool_calls else "stop"),
            }
        ],
    }
    if usage is not None:
        body["usage"] = {
            "prompt_tokens": usage[0],
            "completion_tokens": usage[1],
            "total_tokens": usage[0] + usage[1],
        }
    return body


def tool_reply(
    *calls: tuple[str, Any],
    text: str = "",
    usage: tuple[int, int] | None = (100, 20),
    delay_s: float = 0.0,
    finish_reason: str | None = None,
) -> Reply:
    body = completion_body(text, calls, usage=usage, finish_reason=finish_reason)
    return Reply(body=body, delay_s=delay_s)


def text_reply(
    text: str, usage: tuple[int, int] | None = (100, 20), finish_reason: str | None = None
) -> Reply:
    return Reply(body=completion_body(text, usage=usage, finish_reason=finish_reason))


def dropped_reply(after: int = 40) -> Reply:
    """A 200 whose body stops after `after` bytes: the connection closes mid-response."""
    return Reply(body=completion_body("partial", [("shell", {"command": "ls"})]), drop_after=after)


def error_reply(
    status: int, message: str = "scripted error", *, retry_after: float | None = None
) -> Reply:
    headers = (("Retry-After", str(retry_after)),) if retry_after is not None else ()
    return Reply(
        status=status,
        body={"error": {"message": message, "type": "scripted", "code": status}},
        headers=headers,
    )


def replies_from_script(script: Script) -> list[Reply]:
    """Serve a `Script` over HTTP: one tool-call reply per turn."""
    return [
        Reply(body=completion_body(t.say, [(c.tool, c.arguments()) for c in t.calls], usage=None))
        for t in script.turns
    ]


@dataclass
class LocalChatServer:
    replies: list[Reply] = field(default_factory=list)
    auto_summary: bool = True
    requests: list[dict[str, Any]] = field(default_factory=list)
    raw_bodies: list[bytes] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    host: str = "127.0.0.1"
    port: int = 0  # 0: a free port

    def __post_init__(self) -> None:
        self._queue: deque[Reply] = deque(self.replies)
        self._routes: dict[str, deque[Reply]] = {}
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._httpd is not None, "start the server first"
        return f"http://{self.host}:{self._httpd.server_address[1]}/v1"

    def push(self, *replies: Reply) -> None:
        with self._lock:
            self._queue.extend(replies)

    def route(self, marker: str, *replies: Reply) -> None:
        """Requests whose task (first user message) contains `marker` get these replies."""
        with self._lock:
            self._routes.setdefault(marker, deque()).extend(replies)

    def _queue_for(self, body: dict[str, Any]) -> deque[Reply]:
        msgs = body.get("messages") or []
        task = next((str(m.get("content")) for m in msgs if m.get("role") == "user"), "")
        for marker, queue in self._routes.items():
            if marker in task:
                return queue
        return self._queue

    def next_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            if self.auto_summary and not body.get("tools"):
                n = len(body.get("messages", []))
                return Reply(body=completion_body(f"AUTO-SUMMARY of a {n}-message request"))
            queue = self._queue_for(body)
            if not queue:
                return error_reply(400, "the local replay server has no scripted reply left")
            return queue.popleft()

    def start(self) -> LocalChatServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms stall

            def log_message(self, *args: Any) -> None:  # keep test output clean
                return

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    body = {}
                with server._lock:
                    server.raw_bodies.append(raw)
                    server.headers.append({k.lower(): v for k, v in self.headers.items()})
                    server.requests.append(body)
                reply = server.next_reply(body)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                payload = reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
                data = payload.encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in reply.headers:
                        self.send_header(k, v)
                    self.end_headers()
                    if reply.drop_after is not None:  # die mid-response
                        self.wfile.write(data[: reply.drop_after])
                        self.wfile.flush()
                        self.close_connection = True
                        self.connection.shutdown(socket.SHUT_RDWR)
                        return
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    return  # the client gave up (timeout test): nothing to answer

        self._httpd = ThreadingHTTPServer((self.host, self.port), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> LocalChatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@dataclass
class RoleScriptServer(LocalChatServer):
    """Replays `scripts[model]` turn by turn; an unknown model gets a 404 naming the known."""

    scripts: dict[str, Script] = field(default_factory=dict)

    def next_reply(self, body: dict[str, Any]) -> Reply:
        model = str(body.get("model", ""))
        messages = body.get("messages", [])
        if not body.get("tools"):  # an endpoint probe or a compaction summary
            return Reply(body=completion_body(f"AUTO-SUMMARY of a {len(messages)}-message request"))
        script = self.scripts.get(model)
        if script is None:
            known = ", ".join(sorted(self.scripts)) or "none"
            return error_reply(404, f"no script for model {model!r}; served models: {known}")
        turn = sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")
        if turn >= len(script.turns):
            return error_reply(400, f"the {model} script has {len(script.turns)} turns, all used")
        return replies_from_script(script)[turn]
