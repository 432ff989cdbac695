"""Activity plumbing shared by the workflows: one place for timeouts, retries, queues.

Deterministic workflow code (runs in the workflow sandbox): no I/O here.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, TypeVar

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from .types import PipelineConfig

T = TypeVar("T")


class Steps:
    """Shared activity plumbing: one place for timeouts, retries and queues."""

    config: PipelineConfig

    async def act(self, name: str, arg: Any, result_type: type[T], *, agents: bool = False) -> T:
        cfg = self.config
        return await workflow.execute_activity(
            name,
            arg,
            result_type=result_type,
            task_queue=cfg.task_queue_agents if agents else cfg.task_queue_sandbox,
            start_to_close_timeout=timedelta(
                seconds=cfg.agent_timeout_s if agents else cfg.sandbox_timeout_s
            ),
            heartbeat_timeout=timedelta(seconds=cfg.heartbeat_timeout_s),
            retry_policy=RetryPolicy(
                initial_interval=timedelta(seconds=1),
                backoff_coefficient=2.0,
                maximum_interval=timedelta(seconds=60),
                maximum_attempts=cfg.max_attempts,
            ),
            cancellation_type=workflow.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
        )


def failure(stage: str, err: ActivityError) -> ApplicationError:
    """A clear, terminal workflow failure naming the box and the underlying reason."""
    cause = err.cause
    if isinstance(cause, ApplicationError):
        return ApplicationError(
            f"{stage} failed: {cause.message}", type=cause.type, non_retryable=True
        )
    return ApplicationError(f"{stage} failed: {cause or err}", non_retryable=True)


