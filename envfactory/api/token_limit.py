"""At most N requests in flight per credential; the next one gets 429 with `Retry-After`.

One token sending hundreds of requests at once used to get hundreds of worker threads'
worth of memory and CPU (issue 46: 200 concurrent seed reads by one viewer took the API
from 297 MB to 1,878 MB). Pure ASGI middleware, so a refused request is answered before
anything of it is read or parsed. Invariants:
- a request counts from the moment its headers arrive until its response is sent in full,
  so a slow upload or a slow download holds its slot;
- the credential is the bearer token (the JSON API) or the review pages' session cookie;
  the count is keyed by its sha256, so this table holds no token. A request with neither
  (`/api/health`, the sign-in page) is not counted, and `/api/health` never is;
- over the limit: 429 at once, `Retry-After: 1`, a body naming the limit and the setting
  that raises it (`ENVFACTORY_API__MAX_CONCURRENT_PER_TOKEN`);
- the count is per API process (the event loop is its only writer: no lock).
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from starlette.requests import cookie_parser
from starlette.responses import JSONResponse

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

SETTING = "ENVFACTORY_API__MAX_CONCURRENT_PER_TOKEN"
RETRY_AFTER_S = 1
NEVER_COUNTED = frozenset({"/api/health"})


class PerTokenLimit:
    def __init__(self, app: ASGIApp, max_in_flight: int, session_cookie: str) -> None:
        if max_in_flight < 1:
            raise ValueError(f"max_in_flight must be at least 1, got {max_in_flight}")
        self.app = app
        self.max_in_flight = max_in_flight
        self.session_cookie = session_cookie
        self.in_flight: dict[str, int] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        key = self._key(scope) if scope["type"] == "http" else None
        if key is None:
            await self.app(scope, receive, send)
            return
        if self.in_flight.get(key, 0) >= self.max_in_flight:
            await self._refuse(scope, receive, send)
            return
        self.in_flight[key] = self.in_flight.get(key, 0) + 1
        try:
            await self.app(scope, receive, send)
        finally:
            left = self.in_flight[key] - 1
            if left:
                self.in_flight[key] = left
            else:
                del self.in_flight[key]

    def _key(self, scope: Scope) -> str | None:
        """The sha256 of the request's credential; None for a request that is not counted."""
        if scope.get("path") in NEVER_COUNTED:
            return None
        headers = dict(scope.get("headers") or [])
        scheme, _, token = headers.get(b"authorization", b"").decode("latin-1").partition(" ")
        credential = token.strip() if scheme.lower() == "bearer" else ""
        if not credential:
            cookies = cookie_parser(headers.get(b"cookie", b"").decode("latin-1"))
            credential = cookies.get(self.session_cookie, "")
        return hashlib.sha256(credential.encode()).hexdigest() if credential else None

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = {
            "detail": f"more than {self.max_in_flight} requests at once with one token: "
            f"wait for an answer before sending more, or raise {SETTING}",
        }
        headers = {"Retry-After": str(RETRY_AFTER_S)}
        await JSONResponse(body, status_code=429, headers=headers)(scope, receive, send)
