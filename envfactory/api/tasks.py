"""/api/tasks: imported task suites — list, show, and start their durable validation.

The same views as `envfactory task list / show` (`envfactory.suites`), the list a page at
a time by env id (`limit`, `cursor` → `next_cursor`: `paging.py`); a validation is
started through the `on_validate` seam (the `ValidateTasks` workflow) and answered with
its workflow id at once, progress being the workflow's to report. Request bodies refuse
unknown keys (422 naming the key). Starting a validation needs the reviewer role.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException
from pydantic import BaseModel, ConfigDict, Field, model_validator
from starlette.concurrency import run_in_threadpool

from envfactory.core.errors import ConfigError
from envfactory.core.models import EnvStatus, Reviewer
from envfactory.suites import TaskDetail, TaskSummary, resolve_env_ids, task_detail, task_page

from . import paging
from .context import ApiContext
from .deps import context, reviewer, viewer
from .paging import DEFAULT_LIMIT, Cursor, Limit, ListPage

router = APIRouter(prefix="/api/tasks", tags=["tasks"])
Ctx = Annotated[ApiContext, Depends(context)]
Viewer = Annotated[Reviewer, Depends(viewer)]
ReviewerDep = Annotated[Reviewer, Depends(reviewer)]


class ValidateIn(BaseModel):
    """Either a suite or env ids (not both); repeats per gate check (default: settings)."""

    model_config = ConfigDict(extra="forbid")

    suite: str | None = Field(default=None, min_length=1, max_length=200)
    env_ids: list[str] | None = Field(default=None, min_length=1, max_length=1000)
    repeats: int | None = Field(default=None, ge=1, le=20)

    @model_validator(mode="after")
    def _one_selector(self) -> ValidateIn:
        if (self.suite is None) == (self.env_ids is None):
            raise ValueError("give either `suite` or `env_ids`, not both and not neither")
        return self


class ValidationStarted(BaseModel):
    workflow_id: str
    env_ids: list[str]


@router.get("", response_model=ListPage[TaskSummary])
def list_tasks(
    ctx: Ctx,
    who: Viewer,
    suite: str | None = None,
    status: EnvStatus | None = None,
    limit: Limit = DEFAULT_LIMIT,
    cursor: Cursor = None,
) -> ListPage[TaskSummary]:
    return paging.listed(
        paging.TASKS,
        {"suite": suite, "status": status.value if status else None},
        cursor,
        lambda after: task_page(ctx.store, suite=suite, status=status, after=after, limit=limit),
    )


@router.get("/{env_id}", response_model=TaskDetail)
def show_task(env_id: str, ctx: Ctx, who: Viewer) -> TaskDetail:
    return task_detail(ctx.store, env_id)


@router.post(
    "/validate",
    response_model=ValidationStarted,
    status_code=202,
    responses={503: {"description": "the pipeline (Temporal) is not reachable"}},
)
async def validate(body: ValidateIn, ctx: Ctx, who: ReviewerDep) -> ValidationStarted:
    ids = await run_in_threadpool(resolve_env_ids, ctx.store, body.env_ids or [], body.suite)
    try:
        wid = await ctx.on_validate(ids, body.repeats, body.suite)
    except ConfigError as exc:  # Temporal down or not configured: nothing was started
        raise HTTPException(503, exc.message) from exc
    return ValidationStarted(workflow_id=wid, env_ids=ids)
