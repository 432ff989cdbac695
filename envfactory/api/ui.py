"""Server-rendered pages (Jinja2, no front-end build): sign in, queue, item, decide.

Keyboard: every control is a plain link, button or form field (Tab order follows the
page); on the queue, j/k move and Enter opens; on an item, c / d pick confirm / dismiss
and Ctrl+Enter submits. The pages call the same views and actions as the JSON API; a list
page shows one page of it (`paging.DEFAULT_LIMIT` rows) with a link to the next.

Security (see `sessions.py`): every post comes from this origin and carries the CSRF token
its form was rendered with; the sign-in form carries a double-submit token.
"""

from __future__ import annotations

import secrets
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from envfactory.core.errors import Conflict, NotFound
from envfactory.core.models import AuthMethod, Decision, EnvStatus, ReviewerRole, ReviewState

from . import actions, views
from .context import ApiContext
from .deps import SESSION_COOKIE, context
from .paging import DEFAULT_LIMIT
from .sessions import (
    LOGIN_COOKIE,
    LOGIN_TTL_S,
    SESSION_TTL_S,
    PageSession,
    login_csrf,
    page_session,
    same_origin,
    set_cookie,
    tokens_match,
)

router = APIRouter(prefix="/ui", include_in_schema=False, dependencies=[Depends(same_origin)])
Ctx = Annotated[ApiContext, Depends(context)]
Session = Annotated[PageSession | None, Depends(page_session)]
CsrfField = Annotated[str, Form()]
STALE_FORM = (
    "This form's security token is missing or out of date (it may come from an "
    "earlier sign-in or another site). Reload the page and try again."
)


def _page(
    ctx: ApiContext,
    request: Request,
    name: str,
    session: PageSession | None,
    status: int = 200,
    **data: Any,
) -> HTMLResponse:
    nonce = secrets.token_urlsafe(16)
    common = {
        "who": session.who if session else None,
        "csrf": session.csrf if session else "",
        "Role": ReviewerRole,
        "nonce": nonce,
    }
    page = ctx.templates.TemplateResponse(request, name, common | data, status_code=status)
    page.headers["Content-Security-Policy"] = page_policy(nonce)
    return page


def page_policy(nonce: str) -> str:
    """A review page runs only its own inline script and style (this response's nonce) and
    loads nothing from elsewhere; no site may frame it (clickjacking a decision) and its
    forms post only to this origin."""
    return (
        f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; "
        "img-src 'self' data:; connect-src 'self'; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    )


def _bad_cursor(
    ctx: ApiContext, request: Request, session: PageSession, exc: RequestValidationError
) -> HTMLResponse:
    """A list page asked for with a cursor it did not give out (edited or stale link)."""
    (error,) = exc.errors()
    return _page(ctx, request, "error.html", session, 422, message=error["msg"])


def _signin(request: Request) -> RedirectResponse:
    return RedirectResponse(f"/ui/login?next={request.url.path}", status_code=303)


def _refuse(
    ctx: ApiContext,
    request: Request,
    session: PageSession | None,
    csrf_token: str,
    needs: ReviewerRole,
    verb: str,
) -> Response | None:
    """The answer that stops a post (sign in, stale form, role too low), or None."""
    if session is None:
        return _signin(request)
    if not tokens_match(session.csrf, csrf_token):
        return _page(ctx, request, "error.html", session, 403, message=STALE_FORM)
    if not session.who.role.allows(needs):
        return _page(
            ctx,
            request,
            "error.html",
            session,
            403,
            message=f"{session.who.name} is a {session.who.role.value}; only reviewers {verb}.",
        )
    return None


def _next(target: str) -> str:
    return target if target.startswith("/ui/") else "/ui/queue"


def _login_page(
    ctx: ApiContext,
    request: Request,
    session: PageSession | None,
    status: int,
    next: str,
    error: str = "",
) -> Response:
    token = login_csrf(request)
    resp = _page(
        ctx, request, "login.html", session, status, next=_next(next), error=error, login_csrf=token
    )
    set_cookie(request, resp, LOGIN_COOKIE, token, LOGIN_TTL_S, path="/ui/login")
    return resp


@router.get("/login", response_class=HTMLResponse)
def login_form(request: Request, ctx: Ctx, session: Session, next: str = "/ui/queue") -> Response:
    return _login_page(ctx, request, session, 200, next)


@router.post("/login")
def login(
    request: Request,
    ctx: Ctx,
    session: Session,
    token: Annotated[str, Form()],
    next: Annotated[str, Form()] = "/ui/queue",
    csrf_token: CsrfField = "",
) -> Response:
    if not tokens_match(request.cookies.get(LOGIN_COOKIE, ""), csrf_token):
        return _login_page(ctx, request, session, 403, next, error=STALE_FORM)
    who = ctx.reviewers.find_by_token(token.strip())
    if who is None:
        return _login_page(ctx, request, session, 401, next, error="That token is not valid.")
    if session is not None:
        ctx.reviewers.close_session(session.token)
    resp = RedirectResponse(_next(next), status_code=303)
    set_cookie(
        request,
        resp,
        SESSION_COOKIE,
        ctx.reviewers.open_session(who.name, SESSION_TTL_S),
        SESSION_TTL_S,
    )
    resp.delete_cookie(LOGIN_COOKIE, path="/ui/login")
    return resp


@router.post("/logout")
def logout(request: Request, ctx: Ctx, session: Session, csrf_token: CsrfField = "") -> Response:
    if session is not None:
        stop = _refuse(ctx, request, session, csrf_token, ReviewerRole.VIEWER, "sign out")
        if stop is not None:
            return stop
        ctx.reviewers.close_session(session.token)
    resp = RedirectResponse("/ui/login", status_code=303)
    resp.delete_cookie(SESSION_COOKIE, path="/ui")
    return resp


@router.get("/queue", response_class=HTMLResponse)
def queue(
    request: Request,
    ctx: Ctx,
    session: Session,
    state: str = "open",
    env_id: str = "",
    empty: str = "",
    cursor: str = "",
) -> Response:
    if session is None:
        return _signin(request)
    chosen = ReviewState(state) if state in {s.value for s in ReviewState} else None
    try:
        view = views.queue_page(ctx.store, chosen, env_id or None, cursor, DEFAULT_LIMIT)
    except RequestValidationError as exc:
        return _bad_cursor(ctx, request, session, exc)
    return _page(
        ctx,
        request,
        "queue.html",
        session,
        view=view,
        state=state,
        env_id=env_id,
        states=[s.value for s in ReviewState],
        empty=bool(empty),
    )


@router.post("/claim")
async def claim_next(
    request: Request, ctx: Ctx, session: Session, csrf_token: CsrfField = ""
) -> Response:
    """Lease the oldest free open item to the signed-in reviewer and open it."""
    stop = _refuse(ctx, request, session, csrf_token, ReviewerRole.REVIEWER, "claim")
    if stop is not None:
        return stop
    assert session is not None  # _refuse sent strangers to sign in
    item = await actions.claim(ctx, session.who.name, 900.0)
    if item is None:
        return RedirectResponse("/ui/queue?empty=1", status_code=303)
    return RedirectResponse(f"/ui/items/{item.id}", status_code=303)


def _item_page(
    ctx: ApiContext,
    request: Request,
    session: PageSession,
    item_id: str,
    status: int = 200,
    **extra: Any,
) -> Response:
    try:
        view = views.item_view(ctx.store, item_id)
    except NotFound as e:
        return _page(ctx, request, "error.html", session, 404, message=e.message)
    return _page(ctx, request, "item.html", session, status, view=view, **extra)


@router.get("/items/{item_id}", response_class=HTMLResponse)
def item(item_id: str, request: Request, ctx: Ctx, session: Session) -> Response:
    if session is None:
        return _signin(request)
    return _item_page(ctx, request, session, item_id)


@router.post("/items/{item_id}/decide", response_class=HTMLResponse)
async def decide(
    item_id: str,
    request: Request,
    ctx: Ctx,
    session: Session,
    decision: Annotated[Decision, Form()],
    comment: Annotated[str, Form()] = "",
    csrf_token: CsrfField = "",
) -> Response:
    stop = _refuse(ctx, request, session, csrf_token, ReviewerRole.REVIEWER, "decide")
    if stop is not None:
        return stop
    assert session is not None  # _refuse sent strangers to sign in
    body = actions.DecisionIn(decision=decision, comment=comment)
    try:
        result = await actions.decide(ctx, item_id, session.who.name, body, AuthMethod.UI_SESSION)
    except Conflict as e:
        return _item_page(ctx, request, session, item_id, 409, error=e.message)
    except NotFound as e:
        return _page(ctx, request, "error.html", session, 404, message=e.message)
    note = "Decision recorded." + (
        "" if result.workflow_notified else f" The workflow was not told yet: {result.notify_error}"
    )
    return _item_page(ctx, request, session, item_id, notice=note)


@router.get("/environments", response_class=HTMLResponse)
def environments(
    request: Request, ctx: Ctx, session: Session, status: str = "", cursor: str = ""
) -> Response:
    if session is None:
        return _signin(request)
    chosen = EnvStatus(status) if status in {s.value for s in EnvStatus} else None
    try:
        envs = views.env_page(ctx.store, chosen, cursor, DEFAULT_LIMIT)
    except RequestValidationError as exc:
        return _bad_cursor(ctx, request, session, exc)
    return _page(
        ctx,
        request,
        "environments.html",
        session,
        envs=envs,
        env_status=status,
        statuses=[s.value for s in EnvStatus],
    )


@router.get("/environments/{env_id}", response_class=HTMLResponse)
def environment(env_id: str, request: Request, ctx: Ctx, session: Session) -> Response:
    if session is None:
        return _signin(request)
    try:
        view = views.env_view(ctx.store, env_id)
    except NotFound as e:
        return _page(ctx, request, "error.html", session, 404, message=e.message)
    return _page(ctx, request, "environment.html", session, view=view)


@router.get("/packs", response_class=HTMLResponse)
def packs(request: Request, ctx: Ctx, session: Session, cursor: str = "") -> Response:
    if session is None:
        return _signin(request)
    try:
        page = views.pack_page(ctx.store, cursor, DEFAULT_LIMIT)
    except RequestValidationError as exc:
        return _bad_cursor(ctx, request, session, exc)
    return _page(ctx, request, "packs.html", session, packs=page)


def root_redirect() -> RedirectResponse:
    return RedirectResponse("/ui/queue", status_code=303)
