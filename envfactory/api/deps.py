"""Request dependencies: the app context and the reviewer behind a JSON API call.

The JSON API takes only `Authorization: Bearer <token>`. A browser never attaches that
header on its own, so no other site can make a reviewer's browser call the API; the pages'
session cookie is refused here (401, saying to use the header). The pages authenticate by
session: see `sessions.py`.
"""

from __future__ import annotations

from collections.abc import Callable

from fastapi import HTTPException, Request

from envfactory.core.models import Reviewer, ReviewerRole

from .context import ApiContext

#: the review pages' session cookie (set by `ui.login`); named here to refuse it on /api
SESSION_COOKIE = "envfactory_session"


def context(request: Request) -> ApiContext:
    ctx: ApiContext = request.app.state.ctx  # set once by create_app
    return ctx


def bearer_token(request: Request) -> str | None:
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None


def _unauthorized(request: Request, token: str | None) -> HTTPException:
    if token:
        message = "the bearer token is not a valid reviewer token (revoked, or mistyped)"
    elif request.cookies.get(SESSION_COOKIE):
        message = (
            "the JSON API does not accept the review pages' sign-in cookie: send your "
            "reviewer token as `Authorization: Bearer <token>`"
        )
    else:
        message = "a valid reviewer token is required: `Authorization: Bearer <token>`"
    return HTTPException(401, message, headers={"WWW-Authenticate": "Bearer"})


def need(role: ReviewerRole) -> Callable[[Request], Reviewer]:
    """A dependency: the reviewer, or 401 (no or unknown token) / 403 (role too low)."""

    def dependency(request: Request) -> Reviewer:
        token = bearer_token(request)
        who = context(request).reviewers.find_by_token(token) if token else None
        if who is None:
            raise _unauthorized(request, token)
        if not who.role.allows(role):
            raise HTTPException(403, f"{who.name} is a {who.role.value}; this needs {role.value}")
        return who

    dependency.__name__ = f"need_{role.value}"
    return dependency


viewer = need(ReviewerRole.VIEWER)
reviewer = need(ReviewerRole.REVIEWER)
