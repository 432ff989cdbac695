"""The review pages' sign-in sessions and their defences against cross-site requests.

Invariants:
- signing in with a reviewer token opens a session in the database; the cookie holds only
  the session token (HttpOnly, SameSite=Strict, Secure over https), never the reviewer
  token, and signing out deletes the session everywhere;
- every form carries a CSRF token bound to its session: HMAC-SHA256 keyed by the session
  token, so it needs no server secret (any instance can check it) and cannot be derived
  without the HttpOnly cookie. A post without the right one is refused with 403;
- the sign-in form, before any session exists, carries a double-submit token: a random
  value in both a short-lived cookie and the form, which must match (login CSRF);
- a state-changing request (not GET/HEAD/OPTIONS) whose Origin — or, without one, whose
  Referer — is not this server's own origin or one of `api.allowed_origins` is refused
  with 403 before anything runs. A request with neither header (a non-browser client)
  still needs the CSRF token.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from urllib.parse import urlsplit

from fastapi import HTTPException, Request, Response

from envfactory.core.models import Reviewer

from .deps import SESSION_COOKIE, context

LOGIN_COOKIE = "envfactory_login_csrf"
CSRF_FIELD = "csrf_token"
SESSION_TTL_S = 12 * 3600
LOGIN_TTL_S = 3600
_SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}


@dataclass(frozen=True)
class PageSession:
    """A signed-in reviewer and the CSRF token their forms must carry."""

    who: Reviewer
    csrf: str
    token: str


def csrf_for(session_token: str) -> str:
    return hmac.new(session_token.encode(), b"envfactory csrf v1", hashlib.sha256).hexdigest()


def tokens_match(expected: str, submitted: str) -> bool:
    return bool(expected) and hmac.compare_digest(expected.encode(), submitted.encode())


def page_session(request: Request) -> PageSession | None:
    """A dependency: the session the cookie names, or None (none, unknown or expired)."""
    token = request.cookies.get(SESSION_COOKIE)
    if not token:
        return None
    who = context(request).reviewers.find_session(token)
    return None if who is None else PageSession(who, csrf_for(token), token)


def set_cookie(
    request: Request, response: Response, name: str, value: str, max_age: int, path: str = "/ui"
) -> None:
    response.set_cookie(
        name,
        value,
        max_age=max_age,
        path=path,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )


def login_csrf(request: Request) -> str:
    """The sign-in form's double-submit token: the cookie's, or a new one."""
    return request.cookies.get(LOGIN_COOKIE) or secrets.token_urlsafe(32)


def own_origin(request: Request) -> str:
    return f"{request.url.scheme}://{request.headers.get('host', request.url.netloc)}"


def same_origin(request: Request) -> None:
    """A router dependency: refuse a state-changing request from another site (403)."""
    if request.method in _SAFE_METHODS:
        return
    origin = request.headers.get("origin") or _origin_of(request.headers.get("referer"))
    if origin is None:
        return  # not sent by a browser's cross-site form; the CSRF token still applies
    allowed = {own_origin(request), *context(request).settings.api.allowed_origins}
    if origin.rstrip("/") not in {a.rstrip("/") for a in allowed}:
        raise HTTPException(
            403,
            f"cross-origin request refused: it came from {origin}, not from {own_origin(request)}"
            ". Use the review pages on this server; behind a proxy, list the public origin in "
            "ENVFACTORY_API__ALLOWED_ORIGINS (e.g. '[\"https://review.example.com\"]').",
        )


def _origin_of(referer: str | None) -> str | None:
    if not referer:
        return None
    parts = urlsplit(referer)
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else "null"
