"""`create_app(settings)`: the review-queue HTTP API and its server-rendered pages.

    app = create_app(settings)                     # store from settings; decisions stored only
    app = create_app(settings, store=s, on_decision=sink, on_seed=start)   # the seams
    app = pipeline_app(settings)                   # wired to Temporal (`pipeline.py`)

The composition root of `envfactory.api`: it imports the routers, never the reverse (they
share `context.py`). The pipeline sinks are injected by the caller; without them a
decision or seed is stored and the answer says the pipeline was not told.

Invariants:
- settings are read once, here, and everything below gets typed objects;
- every route but /api/health and the sign-in page needs a reviewer: /api a bearer token
  (missing or unknown → 401, the wrong role → 403), /ui a signed-in session whose forms
  carry its CSRF token, from this origin (sessions.py);
- a decision is stored first (exactly once, audited, in one transaction; the loser of a
  race gets 409), then handed to `on_decision` (the seam to the waiting workflow). If
  that hand-off fails, the decision stays stored and the answer says it was not delivered;
- domain errors map to HTTP in one place: NotFound 404, Conflict 409, bad input 422,
  store failure 503. Nothing else is swallowed. Every error body is bounded: the first
  problems and their count (`error_bodies.py`);
- no request body larger than `settings.api.max_request_bytes` reaches a route (413);
- no token has more than `settings.api.max_concurrent_per_token` requests in flight; the
  next one gets 429 with Retry-After (`token_limit.py`). `/api/health` is never counted
  and never waits for a worker thread.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.templating import Jinja2Templates

from envfactory.core.errors import (
    Conflict,
    InvalidInput,
    NotFound,
    PublishBlocked,
    StoreError,
)
from envfactory.core.settings import Settings
from envfactory.store import ArtifactStore, Store

from . import routes, tasks, ui
from .auth import ReviewerRegistry, reviewer_registry
from .body_limit import BodySizeLimit, Cap
from .context import (
    ApiContext,
    DecisionSink,
    SeedSink,
    ValidateSink,
    no_pipeline,
    store_only,
)
from .deps import SESSION_COOKIE
from .error_bodies import capped, validation_body
from .token_limit import PerTokenLimit

log = logging.getLogger(__name__)

TEMPLATES = Path(__file__).parent / "templates"


def create_app(
    settings: Settings,
    *,
    store: Store | None = None,
    artifacts: ArtifactStore | None = None,
    reviewers: ReviewerRegistry | None = None,
    on_decision: DecisionSink = store_only,
    on_seed: SeedSink = store_only,
    on_validate: ValidateSink = no_pipeline,
) -> FastAPI:
    store = store if store is not None else Store.from_settings(settings)
    if store_only in (on_decision, on_seed):
        log.warning("the API has no pipeline connection: decisions and seeds are stored only")
    ctx = ApiContext(
        settings=settings,
        store=store,
        artifacts=artifacts if artifacts is not None else ArtifactStore.from_settings(settings),
        reviewers=reviewers or reviewer_registry(settings, store),
        on_decision=on_decision,
        on_seed=on_seed,
        on_validate=on_validate,
        templates=Jinja2Templates(directory=str(TEMPLATES)),
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
    app.add_middleware(
        BodySizeLimit, max_bytes=settings.api.max_request_bytes, by_path=_file_routes(settings)
    )
    app.add_middleware(
        PerTokenLimit,
        max_in_flight=settings.api.max_concurrent_per_token,
        session_cookie=SESSION_COOKIE,
    )
    app.middleware("http")(_refuse_nul)
    app.middleware("http")(_security_headers)
    app.include_router(routes.router)
    app.include_router(tasks.router)
    app.include_router(ui.router)
    app.add_api_route("/", ui.root_redirect, include_in_schema=False)
    return app


def freeze_heap() -> None:
    """For a process that serves the app: once it is built, collect, then move every
    object allocated so far (modules, the app) out of the cyclic collector's reach, so a
    full collection walks only what requests allocate. Measured under a burst of 4.9 MB
    seed reads: full collections of 55 to 164 ms (the event loop stopped, /api/health
    waiting), none over 5 ms after. Once per process, at its edge: a test that builds
    many apps must not call it (what it freezes is never collected)."""
    gc.collect()
    gc.freeze()


def _file_routes(settings: Settings) -> dict[str, Cap]:
    """The seed upload carries a seed's files: its cap is their limit together, plus the
    JSON cap for seed.yaml and the multipart framing."""
    upload = settings.seeds.max_total_bytes + settings.api.max_request_bytes
    return {"/api/seeds/upload": Cap(upload, "ENVFACTORY_SEEDS__MAX_TOTAL_BYTES")}


#: on every response: no framing by another site, no content sniffing, no referrer abroad
#: (the review pages add their Content-Security-Policy, `ui.page_policy`)
SECURITY_HEADERS = {
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}


async def _security_headers(
    request: Request, call_next: Callable[[Request], Awaitable[Any]]
) -> Any:
    response = await call_next(request)
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    return response


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
            body = {"detail": capped(getattr(exc, "message", str(exc)))}
            return JSONResponse(body | ({"hint": capped(hint)} if hint else {}), status)

        return respond

    async def invalid_request(request: Request, exc: Exception) -> JSONResponse:
        errors = exc.errors() if isinstance(exc, RequestValidationError) else []
        return JSONResponse(validation_body(errors), status_code=422)

    app.add_exception_handler(RequestValidationError, invalid_request)

    app.add_exception_handler(NotFound, handler(404))
    app.add_exception_handler(Conflict, handler(409))
    app.add_exception_handler(PublishBlocked, handler(409))
    app.add_exception_handler(InvalidInput, handler(422))
    app.add_exception_handler(StoreError, handler(503))
