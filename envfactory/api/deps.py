"""Request dependencies: the app context and the signed-in reviewer.

A token comes as `Authorization: Bearer <token>` (API clients) or in the `envfactory_token`
cookie (the pages; SameSite=Strict, HttpOnly, so another site cannot post with it).
"""

from __future__ import annotations

from collections.abc import Callable

from fastapi import HTTPException, Request

from .app import ApiContext
from .auth import Reviewer, Role

COOKIE = "envfactory_token"


def context(request: Request) -> ApiContext:
    return request.app.state.ctx  # type: ignore[no-any-return]


def token_of(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return request.cookies.get(COOKIE)


def optional_reviewer(request: Request) -> Reviewer | None:
    token = token_of(request)
    return context(request).reviewers.authenticate(token) if token else None


def need(role: Role) -> Callable[[Request], Reviewer]:
    """A dependency: the reviewer, or 401 (no or unknown token) / 403 (role too low)."""

    def dependency(request: Request) -> Reviewer:
        who = optional_reviewer(request)
        if who is None:
            raise HTTPException(401, "a valid reviewer token is required",
                                headers={"WWW-Authenticate": "Bearer"})  # fmt: skip
        if not who.role.allows(role):
            raise HTTPException(403, f"{who.name} is a {who.role.value}; this needs {role.value}")
        return who

    dependency.__name__ = f"need_{role.value}"
    return dependency


viewer = need(Role.VIEWER)
reviewer = need(Role.REVIEWER)
