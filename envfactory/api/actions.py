"""Writes shared by the JSON API and the pages: decide, claim, submit a seed.

A seed (JSON or multipart) is validated by the seed format's own rules, then refused
(422) when no configured model or recorded script can run it, then stored. None of that
runs on the event loop; a large JSON body is checked in a worker process (`seed_draft`).

Invariant: the store is the record. A decision or a seed is committed before any sink
hears of it; a sink failure is reported back, never turns a stored decision into an
error, and never drops it (the workflow can be told again from the audit trail).
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
import anyio.to_process
from anyio import BrokenWorkerProcess
from fastapi import HTTPException, Request
from pydantic import BaseModel, ConfigDict
from starlette.concurrency import run_in_threadpool

from envfactory.core.errors import ConfigError, InvalidInput
from envfactory.core.models import AuthMethod, Decision, ReviewItem, TaskSeed, UserText
from envfactory.seeds.intake import SeedDraft, store_draft
from envfactory.seeds.json_body import checked, draft_from_json

from .context import ApiContext
from .deps import context

log = logging.getLogger(__name__)


#: PostgreSQL text cannot hold NUL: the core models' one check refuses it here (422),
#: with the same message as a seed file, rather than fail in the store.
Text = UserText


class DecisionResult(BaseModel):
    item: ReviewItem
    workflow_notified: bool
    notify_error: str | None = None


class DecisionIn(BaseModel):
    decision: Decision
    comment: Text = ""


class SeedIn(BaseModel):
    """The fields of a seed.yaml, as JSON (the body `POST /api/seeds` documents). Files go
    through `POST /api/seeds/upload`.

    The route checks a body by the seed format's own rules (`validate_fields`), as a
    seed.yaml's: unknown keys are refused with its message (`request body field 'titel':
    unknown key (fix: did you mean 'title'? …)`), not dropped."""

    model_config = ConfigDict(extra="allow", json_schema_extra={"additionalProperties": False})

    title: Text
    description: Text
    domain: Text
    repository: Text | None = None
    constraints: dict[str, Any] = {}
    source: Text | None = None


async def decide(
    ctx: ApiContext, item_id: str, who: str, body: DecisionIn, auth: AuthMethod
) -> DecisionResult:
    """Store the decision of ``who`` (identified by ``auth``), then tell the pipeline."""
    item = await run_in_threadpool(
        lambda: ctx.store.reviews.decide(item_id, who, body.decision, body.comment, auth=auth)
    )  # Conflict (409) for the loser of a race or a second decision
    try:
        await ctx.on_decision(item)
    except Exception as exc:  # noqa: BLE001 — any sink failure is reported, the decision stands
        log.warning("decision on %s stored but not delivered: %s", item_id, exc)
        return DecisionResult(item=item, workflow_notified=False, notify_error=str(exc))
    return DecisionResult(item=item, workflow_notified=True)


async def claim(ctx: ApiContext, who: str, lease_s: float) -> ReviewItem | None:
    return await run_in_threadpool(ctx.store.reviews.claim_next, who, lease_s)


#: `POST /api/seeds`'s body in the OpenAPI document (the route parses it itself)
SEED_BODY = {
    "requestBody": {
        "required": True,
        "content": {"application/json": {"schema": SeedIn.model_json_schema()}},
    }
}


#: a body larger than this is checked in a worker process: parsing it would hold the
#: interpreter lock (and stall the event loop) for more than a millisecond or two
IN_PROCESS_BYTES = 64 * 1024


async def seed_draft(request: Request) -> SeedDraft:
    """A dependency: the JSON seed body as a checked draft (`seeds.draft_from_json`), never
    on the event loop. A small body is checked in a worker thread; a large one in a worker
    process, one at a time (`ApiContext.seed_checks`): the JSON parser holds the GIL for a
    whole 1 MB body, and four of them at once stalled /api/health for seconds (issue 46)."""
    raw = await request.body()
    if len(raw) <= IN_PROCESS_BYTES:
        return await run_in_threadpool(draft_from_json, raw)
    try:
        done = await anyio.to_process.run_sync(checked, raw, limiter=context(request).seed_checks)
    except BrokenWorkerProcess as e:
        raise HTTPException(
            503, "the seed checker stopped while checking this body: send it again"
        ) from e
    if isinstance(done, SeedDraft):
        return done
    message, hint = done
    raise InvalidInput(message, hint=hint)


def require_runnable(ctx: ApiContext, draft: SeedDraft) -> None:
    """422 for a seed this deployment cannot run: a role on the scripted backend has no
    recorded script for it (its pipeline would stop there). Checked before storing."""
    from envfactory.agents.scriptbook import require_scripts, script_book, seed_names

    agents, f = ctx.settings.agents, draft.fields
    names = seed_names(draft.seed_id, f.title, draft.content_hash, f.source)
    try:
        require_scripts(agents, script_book(agents.script_dirs), names, f.title)
    except ConfigError as exc:
        raise InvalidInput(exc.message, hint=exc.hint) from exc


async def submit_draft(ctx: ApiContext, draft: SeedDraft) -> tuple[TaskSeed, bool]:
    """Check, store, then start the pipeline (a sink failure leaves the seed stored)."""
    await run_in_threadpool(require_runnable, ctx, draft)
    seed = await run_in_threadpool(store_draft, draft, store=ctx.store, artifacts=ctx.artifacts)
    try:
        await ctx.on_seed(seed.id)
    except Exception as exc:  # noqa: BLE001 — the seed is stored; the pipeline can be started later
        log.warning("seed %s stored but the pipeline was not started: %s", seed.id, exc)
        return seed, False
    return seed, True


async def read_uploads(uploads: list[Any], limits: Any) -> list[Any]:
    """The uploaded files, each read up to its limit (an oversize one is not kept)."""
    from envfactory.seeds import Upload

    out = []
    for part in uploads[: limits.max_attachments + 1]:  # one more is enough to say "too many"
        data = await part.read(limits.max_attachment_bytes + 1)
        size = len(data) if len(data) <= limits.max_attachment_bytes else (part.size or len(data))
        keep = data if len(data) <= limits.max_attachment_bytes else None
        out.append(Upload(name=part.filename or "", size=size, data=keep))
    return out
