"""Server-rendered pages (Jinja2, no front-end build): sign in, queue, item, decide.

Keyboard: every control is a plain link, button or form field (Tab order follows the
page); on the queue, j/k move and Enter opens; on an item, c / d pick confirm / dismiss
and Ctrl+Enter submits. The pages call the same views and actions as the JSON API.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from envfactory.core.errors import Conflict, NotFound
from envfactory.core.models import Decision, EnvStatus, ReviewState

from . import actions, views
from .app import ApiContext
from .auth import Reviewer, Role
from .deps import COOKIE, context, optional_reviewer

router = APIRouter(prefix="/ui", include_in_schema=False)
Ctx = Annotated[ApiContext, Depends(context)]
Who = Annotated[Reviewer | None, Depends(optional_reviewer)]


def _page(ctx: ApiContext, request: Request, name: str, who: Reviewer | None, status: int = 200,
          **data: Any) -> HTMLResponse:  # fmt: skip
    return ctx.templates.TemplateResponse(
        request, name, {"who": who, "Role": Role, **data}, status_code=status
    )


def _signin(request: Request) -> RedirectResponse:
    return RedirectResponse(f"/ui/login?next={request.url.path}", status_code=303)


@router.get("/login", response_class=HTMLResponse)
def login_form(request: Request, ctx: Ctx, who: Who, next: str = "/ui/queue") -> Response:
    return _page(
        ctx, request, "login.html", who, next=next if next.startswith("/ui/") else "/ui/queue"
    )


@router.post("/login")
def login(request: Request, ctx: Ctx, token: Annotated[str, Form()],
          next: Annotated[str, Form()] = "/ui/queue") -> Response:  # fmt: skip
    who = ctx.reviewers.authenticate(token.strip())
    if who is None:
        return _page(
            ctx, request, "login.html", None, 401, next=next, error="That token is not valid."
        )
    target = next if next.startswith("/ui/") else "/ui/queue"
    resp = RedirectResponse(target, status_code=303)
    resp.set_cookie(COOKIE, token.strip(), httponly=True, samesite="strict", max_age=12 * 3600)
    return resp


@router.post("/logout")
def logout() -> Response:
    resp = RedirectResponse("/ui/login", status_code=303)
    resp.delete_cookie(COOKIE)
    return resp


@router.get("/queue", response_class=HTMLResponse)
def queue(
    request: Request, ctx: Ctx, who: Who, state: str = "open", env_id: str = "", empty: str = ""
) -> Response:
    if who is None:
        return _signin(request)
    chosen = ReviewState(state) if state in {s.value for s in ReviewState} else None
    view = views.queue_view(ctx.store, chosen, env_id or None)
    return _page(ctx, request, "queue.html", who, view=view, state=state, env_id=env_id,
                 states=[s.value for s in ReviewState], empty=bool(empty))  # fmt: skip


@router.post("/claim")
async def claim_next(request: Request, ctx: Ctx, who: Who) -> Response:
    """Lease the oldest free open item to the signed-in reviewer and open it."""
    if who is None:
        return _signin(request)
    if not who.role.allows(Role.REVIEWER):
        return _page(
            ctx,
            request,
            "error.html",
            who,
            403,
            message=f"{who.name} is a viewer; only reviewers claim.",
        )
    item = await actions.claim(ctx, who.name, 900.0)
    if item is None:
        return RedirectResponse("/ui/queue?empty=1", status_code=303)
    return RedirectResponse(f"/ui/items/{item.id}", status_code=303)


def _item_page(ctx: ApiContext, request: Request, who: Reviewer, item_id: str, status: int = 200,
               **extra: Any) -> Response:  # fmt: skip
    try:
        view = views.item_view(ctx.store, item_id)
    except NotFound as e:
        return _page(ctx, request, "error.html", who, 404, message=e.message)
    return _page(ctx, request, "item.html", who, status, view=view, **extra)


@router.get("/items/{item_id}", response_class=HTMLResponse)
def item(item_id: str, request: Request, ctx: Ctx, who: Who) -> Response:
    if who is None:
        return _signin(request)
    return _item_page(ctx, request, who, item_id)


@router.post("/items/{item_id}/decide", response_class=HTMLResponse)
async def decide(item_id: str, request: Request, ctx: Ctx, who: Who,
                 decision: Annotated[Decision, Form()], comment: Annotated[str, Form()] = "") -> Response:  # fmt: skip
    if who is None:
        return _signin(request)
    if not who.role.allows(Role.REVIEWER):
        return _page(ctx, request, "error.html", who, 403,
                     message=f"{who.name} is a viewer; only reviewers decide.")  # fmt: skip
    try:
        result = await actions.decide(
            ctx, item_id, who.name, actions.DecisionIn(decision=decision, comment=comment)
        )
    except Conflict as e:
        return _item_page(ctx, request, who, item_id, 409, error=e.message)
    except NotFound as e:
        return _page(ctx, request, "error.html", who, 404, message=e.message)
    note = "Decision recorded." + ("" if result.workflow_notified else
                                   f" The workflow was not told yet: {result.notify_error}")  # fmt: skip
    return _item_page(ctx, request, who, item_id, notice=note)


@router.get("/environments", response_class=HTMLResponse)
def environments(request: Request, ctx: Ctx, who: Who, status: str = "") -> Response:
    if who is None:
        return _signin(request)
    chosen = EnvStatus(status) if status in {s.value for s in EnvStatus} else None
    return _page(ctx, request, "environments.html", who, envs=views.env_summaries(ctx.store, chosen),
                 env_status=status, statuses=[s.value for s in EnvStatus])  # fmt: skip


@router.get("/environments/{env_id}", response_class=HTMLResponse)
def environment(env_id: str, request: Request, ctx: Ctx, who: Who) -> Response:
    if who is None:
        return _signin(request)
    try:
        view = views.env_view(ctx.store, env_id)
    except NotFound as e:
        return _page(ctx, request, "error.html", who, 404, message=e.message)
    return _page(ctx, request, "environment.html", who, view=view)


@router.get("/packs", response_class=HTMLResponse)
def packs(request: Request, ctx: Ctx, who: Who) -> Response:
    if who is None:
        return _signin(request)
    rows = [(m, ctx.store.packs.archive_key(m.id) is not None) for m in ctx.store.packs.list()]
    return _page(ctx, request, "packs.html", who, packs=rows)


def root_redirect() -> RedirectResponse:
    return RedirectResponse("/ui/queue", status_code=303)
