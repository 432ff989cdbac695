"""A stand-in for the pipeline workflow, for tests that need a real workflow waiting on a
review: registered under the pipeline's name (`SynthesizeEnvironment`) with the real
update name (`decide`); it waits for one decision and returns it as text."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta

from temporalio import workflow
from temporalio.client import Client, WorkflowHandle
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from envfactory.core.models import ReviewState
from workflows.client import synthesis_id
from workflows.types import DecisionRecorded, ReviewDecision


@workflow.defn(name="SynthesizeEnvironment")
class WaitsForReview:
    def __init__(self) -> None:
        self.decision: ReviewDecision | None = None

    @workflow.run
    async def run(self, seed_id: str) -> str:
        await workflow.wait_condition(
            lambda: self.decision is not None, timeout=timedelta(minutes=2)
        )
        assert self.decision is not None
        return f"{self.decision.item_id}:{self.decision.decision.value}:{self.decision.reviewer}"

    @workflow.update(name="decide")
    async def decide(self, decision: ReviewDecision) -> DecisionRecorded:
        self.decision = decision
        return DecisionRecorded(
            item_id=decision.item_id, finding_id="f", state=ReviewState.CONFIRMED
        )


@contextlib.asynccontextmanager
async def waiting_pipeline(client: Client, seed_id: str) -> AsyncIterator[WorkflowHandle]:
    """A worker for the stand-in, and one stand-in waiting as `synthesize-<seed_id>`."""
    queue = f"agents-{uuid.uuid4().hex[:8]}"
    async with Worker(
        client,
        task_queue=queue,
        workflows=[WaitsForReview],
        workflow_runner=UnsandboxedWorkflowRunner(),
    ):
        yield await client.start_workflow(
            "SynthesizeEnvironment", seed_id, id=synthesis_id(seed_id), task_queue=queue
        )
