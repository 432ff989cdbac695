"""The JSON API under /api: seeds, environments, review queue, decisions, packs.

Seeds come as JSON (`POST /api/seeds`) or, with their files, as multipart
(`POST /api/seeds/upload`); both go through the CLI's validation and limits.

Every list is one page of summaries (`limit`, `cursor` → `items`, `next_cursor`:
`paging.py`); the full model is the one-item route's (`GET /api/seeds/{id}`, …). A seed's
files and a long description are links from its detail, each its own streamed answer.

Blocking store calls run in FastAPI's thread pool (plain `def` routes, or
`run_in_threadpool` in the async ones that also await a sink). Seed bodies (JSON or a
seed.yaml) are parsed and checked in a worker thread one at a time
(`ApiContext.seed_checks`), so none of them holds the event loop; `/api/health` runs on it.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Annotated

import anyio
from fastapi import APIRouter, Depends, File, HTTPException, Query, Response, UploadFile
from fastapi.responses import FileResponse, PlainTextResponse
from pydantic import BaseModel

from envfactory.core.models import (
    AuthMethod,
    EnvStatus,
    EnvSummary,
    PackManifest,
    PackSummary,
    ReviewAudit,
    Reviewer,
    ReviewItem,
    ReviewState,
    SeedSummary,
    TaskSeed,
)
from envfactory.seeds.intake import SeedDraft

from . import actions, paging, views
from .context import ApiContext
from .deps import context, reviewer, viewer
from .paging import DEFAULT_LIMIT, Cursor, Limit, ListPage

router = APIRouter(prefix="/api")
Ctx = Annotated[ApiContext, Depends(context)]
Viewer = Annotated[Reviewer, Depends(viewer)]
ReviewerDep = Annotated[Reviewer, Depends(reviewer)]


class Health(BaseModel):
    ok: bool


class Me(BaseModel):
    name: str
    role: str


class SeedCreated(BaseModel):
    seed: TaskSeed
    pipeline_started: bool


@router.get("/health", response_model=Health, tags=["meta"])
async def health() -> Health:
    """On the event loop, never a worker thread: it answers while every thread is busy."""
    return Health(ok=True)


@router.get("/me", response_model=Me, tags=["meta"])
def me(who: Viewer) -> Me:
    return Me(name=who.name, role=who.role.value)


@router.post(
    "/seeds",
    response_model=SeedCreated,
    status_code=201,
    tags=["seeds"],
    openapi_extra=actions.SEED_BODY,
)
async def submit_seed(
    ctx: Ctx,
    who: ReviewerDep,  # before the body: no token, no parse
    draft: Annotated[SeedDraft, Depends(actions.seed_draft)],
) -> SeedCreated:
    """A seed without files, as JSON (the fields of a seed.yaml; a key given twice is
    refused, as in YAML). Its problems are listed first 20 and counted."""
    seed, started = await actions.submit_draft(ctx, draft)
    return SeedCreated(seed=seed, pipeline_started=started)


@router.post("/seeds/upload", response_model=SeedCreated, status_code=201, tags=["seeds"])
async def upload_seed(
    ctx: Ctx,
    who: ReviewerDep,
    seed: Annotated[UploadFile, File(description="the seed.yaml, exactly as for the CLI")],
    files: Annotated[
        list[UploadFile] | None,
        File(description="each attachment, its file name being its path inside the seed"),
    ] = None,
) -> SeedCreated:
    """A seed with its files, as multipart/form-data; the CLI's checks and limits.

    Example: curl -H "Authorization: Bearer $TOKEN" -F seed=@seed.yaml
    -F files=@orders.db -F "files=@wal;filename=data/orders.db-wal" …/api/seeds/upload
    """
    from envfactory.seeds import draft_from_upload

    limits = ctx.settings.seeds
    text = await seed.read(limits.max_attachment_bytes + 1)
    uploads = await actions.read_uploads(list(files or []), limits)
    draft = await anyio.to_thread.run_sync(
        draft_from_upload, text, uploads, limits, limiter=ctx.seed_checks
    )
    created, started = await actions.submit_draft(ctx, draft)
    return SeedCreated(seed=created, pipeline_started=started)


@router.get("/seeds", response_model=ListPage[SeedSummary], tags=["seeds"])
def list_seeds(
    ctx: Ctx, who: Viewer, limit: Limit = DEFAULT_LIMIT, cursor: Cursor = None
) -> ListPage[SeedSummary]:
    """Seeds, newest first: summaries without the description or attachments."""
    return paging.listed(
        paging.SEEDS,
        {},
        cursor,
        lambda after: ctx.store.seeds.list_page(after=after, limit=limit),
    )


@router.get("/seeds/{seed_id}", response_model=views.SeedDetail, tags=["seeds"])
def show_seed(seed_id: str, ctx: Ctx, who: Viewer) -> views.SeedDetail:
    """The seed's fields; its files, and a description longer than 64 Ki characters, by
    reference: download links (`attachments[].url`, `description_url`)."""
    return views.seed_detail(ctx.store, seed_id)


@router.get(
    "/seeds/{seed_id}/description",
    tags=["seeds"],
    response_class=PlainTextResponse,
    responses={200: {"content": {"text/markdown": {}}}},
)
def seed_description(seed_id: str, ctx: Ctx, who: Viewer) -> Response:
    """The seed's description, as markdown text (not JSON)."""
    text = ctx.store.seeds.description(seed_id)
    return Response(text.encode(), media_type="text/markdown; charset=utf-8")


@router.get("/seeds/{seed_id}/files/{path:path}", tags=["seeds"], response_class=FileResponse)
def seed_file(seed_id: str, path: str, ctx: Ctx, who: Viewer) -> FileResponse:
    """One of the seed's files, streamed from the artifact store."""
    link = views.seed_file(ctx.store, seed_id, path)
    return FileResponse(
        ctx.artifacts.path(link.key),
        media_type="application/octet-stream",
        filename=PurePosixPath(link.path).name,
    )


@router.get("/environments", response_model=ListPage[EnvSummary], tags=["environments"])
def list_environments(
    ctx: Ctx,
    who: Viewer,
    status: EnvStatus | None = None,
    seed_id: str | None = None,
    limit: Limit = DEFAULT_LIMIT,
    cursor: Cursor = None,
) -> ListPage[EnvSummary]:
    """The latest version of each environment, by id; `seed_id`: those grown from a seed."""
    return views.env_page(ctx.store, status, cursor, limit, seed_id=seed_id)


@router.get("/environments/{env_id}", response_model=views.EnvView, tags=["environments"])
def show_environment(env_id: str, ctx: Ctx, who: Viewer) -> views.EnvView:
    return views.env_view(ctx.store, env_id)


@router.get("/reviews", response_model=views.QueuePage, tags=["reviews"])
def review_queue(
    ctx: Ctx,
    who: Viewer,
    state: ReviewState | None = ReviewState.OPEN,
    env_id: str | None = None,
    limit: Limit = DEFAULT_LIMIT,
    cursor: Cursor = None,
) -> views.QueuePage:
    """Items oldest first, without their comments; `counts` covers every page."""
    return views.queue_page(ctx.store, state, env_id, cursor, limit)


@router.post("/reviews/claim", response_model=ReviewItem | None, tags=["reviews"])
async def claim_next(
    ctx: Ctx, who: ReviewerDep, lease_s: Annotated[float, Query(gt=0, le=86400)] = 900
) -> ReviewItem | None:
    """Lease the oldest open item nobody else holds; null when the queue is empty."""
    return await actions.claim(ctx, who.name, lease_s)


@router.get("/reviews/{item_id}", response_model=views.ItemView, tags=["reviews"])
def show_review(item_id: str, ctx: Ctx, who: Viewer) -> views.ItemView:
    return views.item_view(ctx.store, item_id)


@router.post(
    "/reviews/{item_id}/decision",
    response_model=actions.DecisionResult,
    tags=["reviews"],
    responses={409: {"description": "already decided, or claimed by someone else"}},
)
async def decide(
    item_id: str, body: actions.DecisionIn, ctx: Ctx, who: ReviewerDep
) -> actions.DecisionResult:
    return await actions.decide(ctx, item_id, who.name, body, AuthMethod.BEARER_TOKEN)


@router.get("/reviews/{item_id}/audit", response_model=list[ReviewAudit], tags=["reviews"])
def audit(item_id: str, ctx: Ctx, who: Viewer) -> list[ReviewAudit]:
    ctx.store.reviews.get(item_id)  # 404 for an unknown item, not an empty list
    return ctx.store.reviews.audit(item_id)


@router.get("/packs", response_model=ListPage[PackSummary], tags=["packs"])
def list_packs(
    ctx: Ctx, who: Viewer, limit: Limit = DEFAULT_LIMIT, cursor: Cursor = None
) -> ListPage[PackSummary]:
    """Packs, newest first: counts and sizes, not the environments or members."""
    return views.pack_page(ctx.store, cursor, limit)


@router.get("/packs/{pack_id}", response_model=PackManifest, tags=["packs"])
def show_pack(pack_id: str, ctx: Ctx, who: Viewer) -> PackManifest:
    return ctx.store.packs.get(pack_id)


@router.get("/packs/{pack_id}/download", tags=["packs"], response_class=FileResponse)
def download_pack(pack_id: str, ctx: Ctx, who: Viewer) -> FileResponse:
    key = ctx.store.packs.archive_key(pack_id)
    if key is None or not ctx.artifacts.exists(key):
        raise HTTPException(
            404, f"pack {pack_id} has no stored archive (it was exported as a folder)"
        )
    return FileResponse(
        ctx.artifacts.path(key), media_type="application/x-tar", filename=f"{pack_id}.tar"
    )
