"""Writes shared by the JSON API and the pages: decide, claim, submit a seed.

Invariant: the store is the record. A decision or a seed is committed before any sink
hears of it; a sink failure is reported back, never turns a stored decision into an
error, and never drops it (the workflow can be told again from the audit trail).
"""

from __future__ import annotations

import logging
from typing import Any

from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool

from envfactory.core.errors import InvalidSeed
from envfactory.core.models import AuthMethod, Decision, ReviewItem, TaskSeed, UserText
from envfactory.seeds.format import validate_fields
from envfactory.seeds.intake import SeedDraft, content_hash, store_draft
from envfactory.seeds.problems import raise_if_any

from .context import ApiContext

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
    """The fields of a seed.yaml, as JSON (attachments are submitted from the CLI)."""

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


def _draft(body: SeedIn) -> SeedDraft:
    data = body.model_dump(exclude_none=True)
    if not data.get("constraints"):
        data.pop("constraints", None)
    fields, problems = validate_fields(data, "request body")
    raise_if_any(problems, "request body")
    if fields is None:  # validate_fields reports every problem above
        raise InvalidSeed("request body", "is not a valid seed")
    return SeedDraft(
        fields=fields, files=(), content_hash=content_hash(fields, []), label="request body"
    )


async def submit_seed(ctx: ApiContext, body: SeedIn) -> tuple[TaskSeed, bool]:
    draft = _draft(body)
    seed = await run_in_threadpool(store_draft, draft, store=ctx.store, artifacts=ctx.artifacts)
    try:
        await ctx.on_seed(seed.id)
    except Exception as exc:  # noqa: BLE001 — the seed is stored; the pipeline can be started later
        log.warning("seed %s stored but the pipeline was not started: %s", seed.id, exc)
        return seed, False
    return seed, True
