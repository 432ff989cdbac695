"""The seam from a stored decision to the pipeline waiting on it (Temporal).

The pipeline for a seed runs as workflow `synthesize-<seed id>` and takes decisions as an
update; its activity records the decision idempotently (an item already decided the same
way is accepted), so telling it after the API stored the decision is safe, and telling it
twice is harmless. An environment without a seed has no pipeline to tell.
"""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool

from envfactory.core.errors import NotFound
from envfactory.core.models import Decision, ReviewItem, ReviewState
from envfactory.core.settings import Settings

from .app import DecisionSink, SeedSink


def workflow_sink(settings: Settings, store: Any) -> DecisionSink:
    async def tell(item: ReviewItem) -> None:
        from workflows.client import connect, decide, synthesis_id
        from workflows.types import ReviewDecision

        spec = await run_in_threadpool(store.environments.get, item.env_id)
        if spec.seed_id is None:
            raise NotFound(
                f"environment {item.env_id} has no seed, so no pipeline is waiting on it"
            )
        decision = Decision.CONFIRM if item.state == ReviewState.CONFIRMED else Decision.DISMISS
        client = await connect(settings.temporal)
        await decide(client, synthesis_id(spec.seed_id), ReviewDecision(
            item_id=item.id, decision=decision, reviewer=item.reviewer or "unknown", comment=item.comment,
        ))  # fmt: skip

    return tell


def pipeline_starter(settings: Settings) -> SeedSink:
    """The seam from a stored seed to its pipeline: start (or find) `synthesize-<seed>`."""

    async def start(seed_id: str) -> None:
        from workflows.client import astart_synthesis, connect, pipeline_config

        client = await connect(settings.temporal)
        await astart_synthesis(client, seed_id, pipeline_config(settings))

    return start
