"""Fault on the real stack: a worker SIGKILLed in the middle of a gate run, and replaced.

Issue 15: the durability test killed a worker over fake services; nobody had killed one in
the middle of a real Docker gate run. Here `envfactory worker` processes run the real
services (Docker engine, SQLite store) against the Temporal dev server; the first is
killed while `run_gates` has sandboxes running, a second one takes over. The workflow
must complete, exactly one gate report must be stored (the killed attempt stored none),
and the janitor (a short period) must remove every container of the dead worker.
"""

from __future__ import annotations

import time
from pathlib import Path

import docker
import pytest
from real_stack import (
    Worker,
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

JANITOR_PERIOD_S = 2.0


def test_a_worker_killed_mid_gate_run_is_replaced_and_leaves_one_report_and_no_container(
    temporal_env, loop, tmp_path: Path, queues: tuple[str, str]
) -> None:
    address = temporal_env.client.service_client.config.target_host
    env = stack_env(
        tmp_path / "home",
        address,
        queues,
        ENVFACTORY_SANDBOX__JANITOR_PERIOD_S=str(JANITOR_PERIOD_S),
    )
    env_id = import_task(env, "csv-report")
    client = docker.from_env()
    config = PipelineConfig(
        repeats=1, heartbeat_timeout_s=10, task_queue_agents=queues[0], task_queue_sandbox=queues[1]
    )
    first = Worker(env, tmp_path / "worker-1.log").wait_ready()
    second: Worker | None = None
    try:
        handle = loop.run(astart_validation(temporal_env.client, [env_id], config))
        # mid gate run: run_gates is pending and the worker has sandboxes running
        wait_for(
            lambda: pending(loop, handle) == ["run_gates"] and owned_containers(client, first.pid),
            600,  # the build may run first (an image not cached yet)
            first.why,
        )
        doomed = owned_containers(client, first.pid)
        first.kill()
        killed_at = time.monotonic()
        second = Worker(env, tmp_path / "worker-2.log").wait_ready()
        result = loop.run(handle.result(), 900)  # generous: 2 cores shared by a team
        took = time.monotonic() - killed_at
    finally:
        for w in (first, second):
            if w is not None:
                w.stop()
    try:
        (task,) = result.results
        assert task.outcome == "published", (task, second.why() if second else "")
        with Store.open(f"sqlite:///{tmp_path / 'home' / 'envfactory.db'}") as store:
            reports = store.gate_reports.list(env_id)
            assert store.environments.record(env_id).status == EnvStatus.PUBLISHED
        assert len(reports) == 1 and str(task.gate_report_id)
        # the replacement's janitor removed the dead worker's sandboxes (at its start or
        # within a period); the replacement's own sandboxes are gone with its gate run
        assert doomed and owned_containers(client, first.pid) == []
        assert "janitor: removed" in (tmp_path / "worker-2.log").read_text()
        print(f"killed with {len(doomed)} sandbox(es); completed {took:.1f} s after the kill")
    finally:
        remove_containers(client, [first.pid] + ([second.pid] if second else []))
