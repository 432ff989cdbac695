"""Activity plumbing shared by the workflows: one place for timeouts, retries, queues.

Deterministic workflow code (runs in the workflow sandbox): no I/O here.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TypeVar

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from .activity_table import ActivityDef
    from .types import PipelineConfig

In = TypeVar("In")
Out = TypeVar("Out")


class Steps:
    """Shared activity plumbing: one place for timeouts, retries and queues."""

    config: PipelineConfig

    async def act(self, activity: ActivityDef[In, Out], arg: In) -> Out:
        """Run one activity of the table on its queue (activity_table.py)."""
        cfg = self.config
        result: Out = await workflow.execute_activity(  # the converter makes `result_type`
            activity.name,
            arg,
            result_type=activity.output,
            task_queue=cfg.task_queue(activity.queue),
            start_to_close_timeout=timedelta(seconds=cfg.timeout_s(activity.queue)),
            heartbeat_timeout=timedelta(seconds=cfg.heartbeat_timeout_s),
            retry_policy=RetryPolicy(
                initial_interval=timedelta(seconds=1),
                backoff_coefficient=2.0,
                maximum_interval=timedelta(seconds=60),
                maximum_attempts=cfg.max_attempts,
            ),
            cancellation_type=workflow.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
        )
        return result


def failure(stage: str, err: ActivityError) -> ApplicationError:
    """A clear, terminal workflow failure naming the box and the underlying reason."""
    cause = err.cause
    if isinstance(cause, ApplicationError):
        return ApplicationError(
            f"{stage} failed: {cause.message}", type=cause.type, non_retryable=True
        )
    return ApplicationError(f"{stage} failed: {cause or err}", non_retryable=True)
