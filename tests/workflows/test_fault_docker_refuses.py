"""Fault on the real stack: the Docker engine refuses calls in the middle of a gate run.

Issue 15. The worker (`envfactory worker`, real services) reaches the engine through a
local TCP proxy (tests/workflows/docker_proxy.py) with ``DOCKER_HOST``. While `run_gates`
has sandboxes running, the proxy breaks every open connection and refuses new ones for a
while, then serves again. A short outage: the activity must be retried and the task complete with the verdict a
clean run gives (published). An outage that outlasts the retries: the task fails with
a reason naming the Docker engine, and no gate report — an engine outage is never
mistaken for a verdict about the task.
"""

from __future__ import annotations

import time
from pathlib import Path

import docker
import pytest
from docker_proxy import docker_proxy
from real_stack import (
    Worker,
    attempts_of,
    import_task,
    owned_containers,
    pending,
    remove_containers,
    stack_env,
    wait_for,
)

from envfactory.core.models import EnvStatus
from envfactory.store import Store
from workflows.client import astart_validation
from workflows.types import PipelineConfig

pytestmark = [pytest.mark.faults, pytest.mark.temporal, pytest.mark.docker, pytest.mark.slow]

#: short of the retry policy's reach (1 + 2 + 4 + 8 s between five attempts): a 10 s
#: outage took all five attempts on two loaded cores
OUTAGE_S = 5.0


def _gate_run_with_outage(temporal_env, loop, tmp_path: Path, queues, outage_s: float | None):  # type: ignore[no-untyped-def]
    """Validate csv-report; mid gate run the engine refuses for `outage_s` seconds (None:
    until the workflow ends). Returns (the task's result, attempts, refused, stored)."""
    address = temporal_env.client.service_client.config.target_host
    client = docker.from_env()
    config = PipelineConfig(
        repeats=1, heartbeat_timeout_s=10, task_queue_agents=queues[0], task_queue_sandbox=queues[1]
    )
    with docker_proxy() as proxy:
        env = stack_env(tmp_path / "home", address, queues, DOCKER_HOST=proxy.url)
        env_id = import_task(env, "csv-report")
        worker = Worker(env, tmp_path / "worker.log").wait_ready()
        try:
            handle = loop.run(astart_validation(temporal_env.client, [env_id], config))
            wait_for(
                lambda: (
                    pending(loop, handle) == ["run_gates"] and owned_containers(client, worker.pid)
                ),
                600,  # the build may run first (an image not cached yet)
                worker.why,
            )
            proxy.refuse()
            if outage_s is not None:
                time.sleep(outage_s)
                proxy.allow()
            result = loop.run(handle.result(), 900)  # generous: 2 cores shared by a team
            proxy.allow()
            attempts = attempts_of(loop, handle)
        finally:
            worker.stop()
            remove_containers(client, [worker.pid])
    with Store.open(f"sqlite:///{tmp_path / 'home' / 'envfactory.db'}") as store:
        stored = (store.environments.record(env_id).status, len(store.gate_reports.list(env_id)))
    (task,) = result.results
    print(f"refused {proxy.refused} connection(s); attempts {attempts}; {task.reasons}")
    return task, attempts, proxy.refused, stored


def test_the_engine_refusing_calls_mid_gate_run_is_retried_and_the_task_completes(
    temporal_env, loop, tmp_path: Path, queues: tuple[str, str]
) -> None:
    task, attempts, refused, stored = _gate_run_with_outage(
        temporal_env, loop, tmp_path, queues, OUTAGE_S
    )
    assert refused > 0  # the worker did call the engine during the outage
    assert task.outcome == "published", task
    assert attempts["run_gates"] >= 2, attempts  # the broken attempt was retried
    assert stored == (EnvStatus.PUBLISHED, 1)  # the broken attempts stored no report


def test_an_engine_that_stays_away_fails_the_task_naming_the_engine_not_the_verifier(
    temporal_env, loop, tmp_path: Path, queues: tuple[str, str]
) -> None:
    task, attempts, refused, stored = _gate_run_with_outage(
        temporal_env, loop, tmp_path, queues, None
    )
    assert refused > 0 and attempts["run_gates"] == 5  # every attempt was tried
    assert task.outcome == "rejected" and len(task.reasons) == 1
    assert task.reasons[0].startswith("gates failed: Docker engine unreachable"), task.reasons
    assert stored == (EnvStatus.REJECTED, 0)  # no gate report: no verdict was reached
