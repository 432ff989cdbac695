"""Writes shared by the JSON API and the pages: decide, claim, submit a seed.

A seed (JSON or multipart) is validated by the seed format's own rules, then refused
(422) when no configured model or recorded script can run it, then stored.

Invariant: the store is the record. A decision or a seed is committed before any sink
hears of it; a sink failure is reported back, never turns a stored decision into an
error, and never drops it (the workflow can be told again from the audit trail).
"""

from __future__ import annotations

import logging
from typing import Any

from pydantic import BaseModel, ConfigDict
from starlette.concurrency import run_in_threadpool

from envfactory.core.errors import ConfigError, InvalidInput, InvalidSeed
from envfactory.core.models import AuthMethod, Decision, ReviewItem, TaskSeed, UserText
from envfactory.seeds.format import validate_fields
from envfactory.seeds.intake import SeedDraft, content_hash, store_draft
from envfactory.seeds.problems import Problem, raise_if_any

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
    """The fields of a seed.yaml, as JSON. Files go through `POST /api/seeds/upload`.

    Unknown keys are refused with the seed format's own message (`request body field
    'titel': unknown key (fix: did you mean 'title'? …)`), not dropped: extras are kept
    here and judged by `validate_fields`, as a seed.yaml's would be."""

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


def _draft(body: SeedIn) -> SeedDraft:
    data = body.model_dump(exclude_none=True) | (body.model_extra or {})  # extras even if null
    if not data.get("constraints"):
        data.pop("constraints", None)
    if "attachments" in data:  # a JSON body cannot carry files: never drop them silently
        raise_if_any(
            [
                Problem(
                    "request body field 'attachments'",
                    "cannot be sent as JSON",
                    "POST multipart/form-data to /api/seeds/upload: the seed.yaml as "
                    "`seed`, each file as a `files` part named by its path",
                )
            ],
            "request body",
        )
    fields, problems = validate_fields(data, "request body")
    raise_if_any(problems, "request body")
    if fields is None:  # validate_fields reports every problem above
        raise InvalidSeed("request body", "is not a valid seed")
    return SeedDraft(
        fields=fields, files=(), content_hash=content_hash(fields, []), label="request body"
    )


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


async def submit_seed(ctx: ApiContext, body: SeedIn) -> tuple[TaskSeed, bool]:
    return await submit_draft(ctx, _draft(body))


async def submit_draft(ctx: ApiContext, draft: SeedDraft) -> tuple[TaskSeed, bool]:
    """Check, store, then start the pipeline (a sink failure leaves the seed stored)."""
    require_runnable(ctx, draft)
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
