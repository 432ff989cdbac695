"""Activities: one thin async wrapper per `PipelineServices` method, built from the table.

Which activities exist, what each takes and returns and which queue runs it is declared
once, in activity_table.py; this module only adds what is Temporal-specific about doing
the work, once for all of them:
- the blocking service method runs in a worker thread pool, while a background task
  heartbeats for the whole call — including the method's own cleanup (`finally` blocks
  that remove containers), so a slow cleanup never trips the heartbeat timeout and
  orphans a container;
- on cancellation the call is shielded: we keep heartbeating until the thread has
  finished its cleanup, then report the cancellation (the workflow waits for that with
  `ActivityCancellationType.WAIT_CANCELLATION_COMPLETED`);
- errors are translated in ONE place (`to_application_error`): an `EnvFactoryError`
  becomes `ApplicationError(non_retryable=not err.retryable)` with its class name as the
  type, a pydantic `ValidationError` is bad input (terminal), anything else is retried
  under the workflow's bounded retry policy.

Fake services in tests go behind these same activities, under the same names.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable
from datetime import timedelta
from typing import Any, TypeVar

import pydantic
import requests
from temporalio import activity
from temporalio.exceptions import ApplicationError

from envfactory.core.errors import EnvFactoryError, cut_cause_cycles, raise_as

from .activity_table import ACTIVITIES, ActivityDef
from .services import PipelineServices
from .types import Queue

In = TypeVar("In")
Out = TypeVar("Out")


def to_application_error(err: BaseException) -> ApplicationError:
    """The one place where our errors become Temporal failures."""
    if isinstance(err, ApplicationError):
        return err
    if isinstance(err, EnvFactoryError):
        return ApplicationError(str(err), type=type(err).__name__, non_retryable=not err.retryable)
    if isinstance(err, pydantic.ValidationError):
        return ApplicationError(f"invalid input: {err}", type="InvalidInput", non_retryable=True)
    if isinstance(err, requests.exceptions.ConnectionError):
        # docker-py is the only HTTP client here that speaks requests: the engine is gone
        # mid-call (restarted, socket refused). Retryable: the engine usually comes back.
        return ApplicationError(
            f"Docker engine unreachable (is dockerd running? DOCKER_HOST?): {err}",
            type="SandboxError",
        )
    return ApplicationError(f"{type(err).__name__}: {err}", type=type(err).__name__)


def _heartbeat_interval() -> float:
    timeout = activity.info().heartbeat_timeout or timedelta(seconds=30)
    return min(max(timeout.total_seconds() / 3, 0.2), 10.0)


async def _heartbeat_forever(interval: float) -> None:
    while True:
        activity.heartbeat()
        await asyncio.sleep(interval)


class PipelineActivities:
    """Register `activities()` on a worker: one activity per table entry, each running
    its service method through `_call`."""

    def __init__(self, services: PipelineServices, *, max_threads: int = 8) -> None:
        self.services = services
        self._pool = concurrent.futures.ThreadPoolExecutor(max_threads, "envfactory-activity")

    def close(self) -> None:
        self._pool.shutdown(wait=True)

    def activities(self, queue: Queue | None = None) -> list[Callable[..., Any]]:
        """The activities, optionally only those of one queue (that worker's share)."""
        return [self._activity(a) for a in ACTIVITIES if queue is None or a.queue == queue]

    def _activity(self, entry: ActivityDef[Any, Any]) -> Callable[..., Any]:
        method = getattr(self.services, entry.method, None)
        if not callable(method):
            raise TypeError(
                f"{type(self.services).__name__} has no method {entry.method}() "
                f"for the {entry.name!r} activity (see workflows/services.py)"
            )

        async def run(inp: Any) -> Any:
            return await self._call(method, inp)

        # Temporal reads the argument and result types from the annotations
        run.__annotations__ = {"inp": entry.input, "return": entry.output}
        run.__name__ = run.__qualname__ = entry.method
        return activity.defn(name=entry.name)(run)

    async def _call(self, fn: Callable[[In], Out], inp: In) -> Out:
        beat = asyncio.create_task(_heartbeat_forever(_heartbeat_interval()))
        work = asyncio.get_running_loop().run_in_executor(self._pool, fn, inp)
        try:
            return await asyncio.shield(work)
        except asyncio.CancelledError:
            # The thread cannot be interrupted; let it finish its cleanup while we keep
            # heartbeating, then report the cancellation.
            await asyncio.wait([work])
            raise
        except Exception as err:
            raise_as(to_application_error(err), cut_cause_cycles(err))
        finally:
            beat.cancel()
