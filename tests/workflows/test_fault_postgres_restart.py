"""Fault on the real stack: PostgreSQL down and restarted in the middle of the pipeline.

Issue 15. An `envfactory worker` (real services, its store on a private PostgreSQL
cluster, tests/pg_cluster.py) validates a task on the Temporal dev server. The server is
stopped before the workflow's first activity reads the store, so that activity fails
against a dead database and is retried; it is started again a few seconds later. Then,
while the gates run, it is restarted once more (every pooled connection cut). The
pipeline must resume and complete: the task published, one gate report.
"""

from __future__ import annotations

import time
from pathlib import Path

import docker
import pytest
from real_stack import (
    Worker,
    attempt_now,
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
from envfactory.store.migrate import upgrade
from tests.pg_cluster import pg_cluster
from workflows.client import astart_validation
from workflows.types import PipelineConfig

pytestmark = [
    pytest.mark.faults,
    pytest.mark.temporal,
    pytest.mark.docker,
    pytest.mark.postgres,
    pytest.mark.slow,
]

DOWN_S = 4.0  # within the retry policy's reach (1 + 2 + 4 + 8 s between five attempts)


def test_the_pipeline_resumes_and_completes_after_postgresql_restarts(
    temporal_env, loop, tmp_path: Path, queues: tuple[str, str]
) -> None:
    address = temporal_env.client.service_client.config.target_host
    client = docker.from_env()
    config = PipelineConfig(
        repeats=1, heartbeat_timeout_s=10, task_queue_agents=queues[0], task_queue_sandbox=queues[1]
    )
    with pg_cluster() as pg:
        upgrade(pg.url)
        env = stack_env(tmp_path / "home", address, queues, ENVFACTORY_DATABASE_URL=pg.url)
        env_id = import_task(env, "csv-report")
        worker = Worker(env, tmp_path / "worker.log").wait_ready()
        try:
            t0 = time.monotonic()
            pg.stop()  # the first activity meets a dead database
            handle = loop.run(astart_validation(temporal_env.client, [env_id], config))
            wait_for(lambda: attempt_now(loop, handle, "build_environment") >= 2, 60)
            time.sleep(DOWN_S)
            pg.start()
            print(f"database back at {time.monotonic() - t0:.0f} s")
            wait_for(
                lambda: (
                    pending(loop, handle) == ["run_gates"] and owned_containers(client, worker.pid)
                ),
                600,  # the build may run first (an image not cached yet)
                worker.why,
            )
            pg.restart()  # mid gate run: the report is written through a fresh connection
            print(f"restarted mid gate run at {time.monotonic() - t0:.0f} s")
            result = loop.run(handle.result(), 900)
            print(f"completed at {time.monotonic() - t0:.0f} s")
            attempts = attempts_of(loop, handle)
        finally:
            worker.stop()
            remove_containers(client, [worker.pid])
        with Store.open(pg.url) as store:
            status = store.environments.record(env_id).status
            reports = store.gate_reports.list(env_id)
    (task,) = result.results
    assert task.outcome == "published", (task, worker.why())
    assert attempts["build_environment"] >= 2, attempts  # it did meet the dead database
    assert status == EnvStatus.PUBLISHED and len(reports) == 1
    print(f"attempts {attempts}")
