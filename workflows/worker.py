"""Workers: which workflows and activities poll which task queue.

Queues (TemporalSettings): `agents` runs the workflows and the LLM-driven activities
(research, agents, verifier writer); `sandbox` runs the Docker-only activities (builds,
gates, scoring, mining, store updates); each activity's queue is declared in its entry
of activity_table.py. One process may serve both (the embedded default); on more
machines, `envfactory worker --queue sandbox` per Docker host.

A worker process is an edge: it builds its services from settings once, here, and
hands them down. Tests pass their own services (a seam, not a patch).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
from collections.abc import Callable, Sequence
from datetime import timedelta

from temporalio.client import Client
from temporalio.worker import Worker

from envfactory.core.errors import ConfigError
from envfactory.core.settings import Settings, TemporalSettings

from .activities import PipelineActivities
from .client import connect, pipeline_config
from .mine_flow import MineCandidate, MineRepository
from .pipeline import SynthesizeEnvironment
from .services import PipelineServices
from .types import PipelineConfig, Queue
from .validate import ValidateTasks

WORKFLOWS = [SynthesizeEnvironment, ValidateTasks, MineRepository, MineCandidate]


def build_workers(
    client: Client,
    activities: PipelineActivities,
    config: PipelineConfig,
    queues: Sequence[str] | None = None,
    *,
    max_concurrent_activities: int = 8,
    max_concurrent_agents: int | None = None,
) -> list[Worker]:
    """One `Worker` per queue asked for (default: both), sharing one activity object.

    `max_concurrent_agents` bounds the agents queue separately: an agent activity holds
    sandboxes for minutes (research two at once), so it must stay within the pool."""
    workers = []
    for name, queue in _wanted(config, queues).items():
        agents = queue == Queue.AGENTS
        workers.append(
            Worker(
                client,
                task_queue=name,
                workflows=WORKFLOWS if agents else [],
                activities=activities.activities(queue),
                max_concurrent_activities=(max_concurrent_agents or max_concurrent_activities)
                if agents
                else max_concurrent_activities,
                graceful_shutdown_timeout=timedelta(seconds=10),
            )
        )
    return workers


def _wanted(config: PipelineConfig, queues: Sequence[str] | None) -> dict[str, Queue]:
    """Task queue name → which queue it is, for the names asked for (default: both)."""
    by_name = {config.task_queue(q): q for q in Queue}
    if len(by_name) < len(Queue):
        raise ValueError(
            f"the agents and sandbox task queues must differ (both are {config.task_queue_agents!r})"
        )
    unknown = set(queues or ()) - set(by_name)
    if unknown:
        known = ", ".join(repr(name) for name in by_name)
        raise ValueError(f"unknown task queue(s) {sorted(unknown)}: use {known}")
    return {name: by_name[name] for name in (queues or by_name)}


async def run_workers(workers: Sequence[Worker], stop: asyncio.Event | None = None) -> None:
    """Run until `stop` is set (or for ever), then shut every worker down gracefully."""
    async with contextlib.AsyncExitStack() as stack:
        for worker in workers:
            await stack.enter_async_context(worker)
        await (stop.wait() if stop else asyncio.Event().wait())


def load_factory(spec: str) -> Callable[..., PipelineServices]:
    """`module:attr` → a callable returning services (used by test and dev workers)."""
    module, _, attr = spec.partition(":")
    if not attr:
        raise ValueError(f"services factory {spec!r}: expected 'module:callable'")
    factory: Callable[..., PipelineServices] = getattr(importlib.import_module(module), attr)
    return factory


async def connect_with_retry(
    settings: TemporalSettings, target: str | None = None, timeout_s: float = 30.0
) -> Client:
    """A freshly started dev server opens its port before it serves: retry for a while."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while True:
        try:
            return await connect(settings, target)
        except ConfigError:
            if asyncio.get_running_loop().time() > deadline:
                raise
            await asyncio.sleep(0.5)


async def serve(
    settings: Settings,
    services: PipelineServices,
    queues: Sequence[str] | None = None,
    *,
    target: str | None = None,
    stop: asyncio.Event | None = None,
    on_ready: Callable[[Client], None] | None = None,
) -> None:
    """The worker main: connect, poll the queues asked for, shut down on `stop`."""
    client = await connect_with_retry(settings.temporal, target)
    activities = PipelineActivities(services, max_threads=max(4, settings.sandbox.pool_size * 4))
    workers = build_workers(
        client,
        activities,
        pipeline_config(settings),
        queues,
        max_concurrent_agents=max(1, settings.sandbox.pool_size // 2),
    )
    try:
        async with contextlib.AsyncExitStack() as stack:
            for worker in workers:
                await stack.enter_async_context(worker)
            if on_ready is not None:
                on_ready(client)
            await (stop.wait() if stop else asyncio.Event().wait())
    finally:
        activities.close()
