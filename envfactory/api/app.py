"""`create_app(settings)`: the review-queue HTTP API and its server-rendered pages.

    app = create_app(settings)          # store, registry and Temporal from settings
    app = create_app(settings, store=s, on_decision=sink, on_seed=store_only)   # seams
    app = create_app(settings, on_validate=starter)   # task validation → workflow id

Invariants:
- settings are read once, here, and everything below gets typed objects;
- every route but /api/health and the sign-in page needs a reviewer: /api a bearer token
  (missing or unknown → 401, the wrong role → 403), /ui a signed-in session whose forms
  carry its CSRF token, from this origin (sessions.py);
- a decision is stored first (exactly once, audited, in one transaction; the loser of a
  race gets 409), then handed to `on_decision` (the seam to the waiting workflow). If
  that hand-off fails, the decision stays stored and the answer says it was not delivered;
- domain errors map to HTTP in one place: NotFound 404, Conflict 409, bad input 422,
  store failure 503. Nothing else is swallowed;
- no request body larger than `settings.api.max_request_bytes` reaches a route (413).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from fastapi.templating import Jinja2Templates

from envfactory.core.errors import (
    ConfigError,
    Conflict,
    InvalidInput,
    NotFound,
    PublishBlocked,
    StoreError,
)
from envfactory.core.models import ReviewItem
from envfactory.core.settings import Settings

from .auth import ReviewerRegistry, reviewer_registry
from .body_limit import BodySizeLimit

#: Called after a decision is stored, with the decided item (the workflow seam).
DecisionSink = Callable[[ReviewItem], Awaitable[None]]
#: Called after a seed is stored, with its id (the seam that starts the pipeline).
SeedSink = Callable[[str], Awaitable[None]]
#: Starts the durable validation of stored tasks: (env ids, repeats, label) → workflow id.
ValidateSink = Callable[[list[str], int | None, str | None], Awaitable[str]]

TEMPLATES = Path(__file__).parent / "templates"


async def store_only(_: Any) -> None:
    """The sink without a pipeline: the record is in the store; nobody else is told, and
    the answer says so (`workflow_notified: false`)."""
    raise ConfigError("no pipeline connection: the workflows package is not installed here")


async def no_pipeline(*_: Any) -> str:
    """The validation starter without a pipeline: nothing can be started."""
    raise ConfigError("no pipeline connection: the workflows package is not installed here")


@dataclass(frozen=True)
class ApiContext:
    settings: Settings
    store: Any
    artifacts: Any
    reviewers: ReviewerRegistry
    on_decision: DecisionSink
    on_seed: SeedSink
    templates: Jinja2Templates
    on_validate: ValidateSink = no_pipeline


def create_app(
    settings: Settings,
    *,
    store: Any = None,
    artifacts: Any = None,
    reviewers: ReviewerRegistry | None = None,
    on_decision: DecisionSink | None = None,
    on_seed: SeedSink | None = None,
    on_validate: ValidateSink | None = None,
) -> FastAPI:
    from envfactory.store import ArtifactStore, Store

    from .workflow_sink import default_sinks, default_validate_sink

    store = store if store is not None else Store.from_settings(settings)
    decision_sink, seed_sink = default_sinks(settings, store)
    ctx = ApiContext(
        settings=settings,
        store=store,
        artifacts=artifacts if artifacts is not None else ArtifactStore.from_settings(settings),
        reviewers=reviewers or reviewer_registry(settings, store),
        on_decision=on_decision or decision_sink,
        on_seed=on_seed or seed_sink,
        templates=Jinja2Templates(directory=str(TEMPLATES)),
        on_validate=on_validate or default_validate_sink(settings),
    )
    app = FastAPI(
        title="envfactory review API",
        version="1",
        description="Seeds, environments, the shortcut review queue, decisions and packs.",
    )
    app.state.ctx = ctx
    _error_handlers(app)
    # Inside _refuse_nul (added later, so outside it): a BaseHTTPMiddleware re-raises what
    # `receive` raises inside an ExceptionGroup, which FastAPI would turn into a 400.
    app.add_middleware(BodySizeLimit, max_bytes=settings.api.max_request_bytes)
    app.middleware("http")(_refuse_nul)
    from . import routes, tasks, ui

    app.include_router(routes.router)
    app.include_router(tasks.router)
    app.include_router(ui.router)
    app.add_api_route("/", ui.root_redirect, include_in_schema=False)
    return app


async def _refuse_nul(request: Request, call_next: Callable[[Request], Awaitable[Any]]) -> Any:
    """A NUL in a path or query can never name anything we store (PostgreSQL text cannot
    hold it): answer 422 before it reaches the database as a driver error."""
    if "\x00" in request.url.path or "%00" in request.url.query or "\x00" in request.url.query:
        return JSONResponse({"detail": "NUL characters are not allowed in a URL"}, status_code=422)
    return await call_next(request)


def _error_handlers(app: FastAPI) -> None:
    def handler(status: int) -> Callable[[Request, Exception], Any]:
        async def respond(request: Request, exc: Exception) -> JSONResponse:
            hint = getattr(exc, "hint", None)
            body = {"detail": getattr(exc, "message", str(exc))} | ({"hint": hint} if hint else {})
            return JSONResponse(body, status_code=status)

        return respond

    app.add_exception_handler(NotFound, handler(404))
    app.add_exception_handler(Conflict, handler(409))
    app.add_exception_handler(PublishBlocked, handler(409))
    app.add_exception_handler(InvalidInput, handler(422))
    app.add_exception_handler(StoreError, handler(503))
