"""A cap on request bodies: anything larger than `ApiSettings.max_request_bytes` gets 413.

Pure ASGI middleware around the routes, so the check happens before any route or form
parser reads the body. It must sit inside any BaseHTTPMiddleware: those re-raise what
`receive` raises inside an ExceptionGroup, which FastAPI reports as a 400. Invariants:
- a declared `Content-Length` over the cap is answered 413 at once, nothing read;
- a body without one (chunked) is counted while it is received and refused the moment
  the count passes the cap, so no handler ever sees more than the cap;
- the 413 names the limit and the setting that raises it;
- a route that takes files (`Cap` by path: the seed upload) has a cap of its own, sized by
  the limits its files are held to, so the documented file limits are the ones that apply.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any

from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

SETTING = "ENVFACTORY_API__MAX_REQUEST_BYTES"


@dataclass(frozen=True)
class Cap:
    """A request body's limit and the setting that raises it."""

    max_bytes: int
    setting: str = SETTING


class BodyTooLarge(HTTPException):
    """Raised from `receive` when a streamed body passes the cap. An HTTPException, so
    FastAPI's body parsing passes it on as a 413 instead of a 400 "could not parse"."""

    def __init__(self, cap: Cap) -> None:
        super().__init__(413, detail=too_large_message(cap))


def too_large_message(cap: Cap) -> str:
    return (
        f"request body is larger than {cap.max_bytes} bytes, the API's limit (raise {cap.setting})"
    )


class BodySizeLimit:
    def __init__(
        self, app: ASGIApp, max_bytes: int, by_path: Mapping[str, Cap] | None = None
    ) -> None:
        self.app = app
        self.default = Cap(max_bytes)
        self.by_path = dict(by_path or {})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        cap = self.by_path.get(scope.get("path", ""), self.default)
        declared = _content_length(scope)
        if declared is not None and declared > cap.max_bytes:
            await _refuse(cap, scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, _counting(receive, cap), tracking_send)
        except BodyTooLarge:
            if started:
                raise
            await _refuse(cap, scope, receive, send)


def _counting(receive: Receive, cap: Cap) -> Receive:
    seen = 0

    async def counted() -> Message:
        nonlocal seen
        message = await receive()
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > cap.max_bytes:
                raise BodyTooLarge(cap)
        return message

    return counted


async def _refuse(cap: Cap, scope: Scope, receive: Receive, send: Send) -> None:
    body = {"detail": too_large_message(cap)}
    await JSONResponse(body, status_code=413, headers={"Connection": "close"})(scope, receive, send)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None  # a server rejects a malformed header; we still count the body
    return None
