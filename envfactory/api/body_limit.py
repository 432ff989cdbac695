"""A cap on request bodies: anything larger than `ApiSettings.max_request_bytes` gets 413.

Pure ASGI middleware around the routes, so the check happens before any route or form
parser reads the body. It must sit inside any BaseHTTPMiddleware: those re-raise what
`receive` raises inside an ExceptionGroup, which FastAPI reports as a 400. Invariants:
- a declared `Content-Length` over the cap is answered 413 at once, nothing read;
- a body without one (chunked) is counted while it is received and refused the moment
  the count passes the cap, so no handler ever sees more than the cap;
- the 413 names the limit and the setting that raises it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

SETTING = "ENVFACTORY_API__MAX_REQUEST_BYTES"


class BodyTooLarge(HTTPException):
    """Raised from `receive` when a streamed body passes the cap. An HTTPException, so
    FastAPI's body parsing passes it on as a 413 instead of a 400 "could not parse"."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, detail=too_large_message(limit))


def too_large_message(limit: int) -> str:
    return f"request body is larger than {limit} bytes, the API's limit (raise {SETTING})"


class BodySizeLimit:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_bytes:
            await self._refuse(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, self._counting(receive), tracking_send)
        except BodyTooLarge:
            if started:
                raise
            await self._refuse(scope, receive, send)

    def _counting(self, receive: Receive) -> Receive:
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise BodyTooLarge(self.max_bytes)
            return message

        return counted

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = {"detail": too_large_message(self.max_bytes)}
        await JSONResponse(body, status_code=413, headers={"Connection": "close"})(
            scope, receive, send
        )


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None  # a server rejects a malformed header; we still count the body
    return None
