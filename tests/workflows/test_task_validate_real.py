"""The durable path for imported tasks, as a user drives it: `task import`, then `task
validate --wait` on the real Temporal dev server with real services (Docker engine,
SQLite store) polling the queues, then `pack export --all-published`.

A suite of two: csv-report (sound) is published; broken-accepts-noop is rejected with
its gate reasons, and its probe findings wait in the review queue. Slow (builds images,
runs every gate once); marked `docker`, `temporal` and `slow`.
"""

from __future__ import annotations

import asyncio
import json
import tarfile
import threading
import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner

from envfactory.cli import app
from envfactory.core.models import EnvStatus, ReviewState
from envfactory.core.settings import load_settings
from sandboxes import DockerEngine
from workflows.activities import PipelineActivities
from workflows.client import pipeline_config
from workflows.composition import make_services
from workflows.worker import build_workers, run_workers

pytestmark = [pytest.mark.temporal, pytest.mark.docker, pytest.mark.slow]

TASKS = Path(__file__).resolve().parents[2] / "examples" / "tasks"


@pytest.fixture
def user_env(tmp_path, monkeypatch, temporal_env, queues):
    """What a user's shell would hold: a home, the Temporal address, the task queues."""
    monkeypatch.setenv("ENVFACTORY_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ENVFACTORY_DATABASE_URL", raising=False)
    monkeypatch.setenv(
        "ENVFACTORY_TEMPORAL__ADDRESS", temporal_env.client.service_client.config.target_host
    )
    monkeypatch.setenv("ENVFACTORY_TEMPORAL__TASK_QUEUE_AGENTS", queues[0])
    monkeypatch.setenv("ENVFACTORY_TEMPORAL__TASK_QUEUE_SANDBOX", queues[1])
    return load_settings()


@pytest.fixture
def worker(user_env, temporal_env, loop):
    """A worker with the real services, on the test loop, for as long as the test runs."""
    engine = DockerEngine(user_env.sandbox, run_id=f"test-tv-{uuid.uuid4().hex[:8]}")
    services = make_services(user_env, (), {}, engine=engine)
    stop: asyncio.Event | None = None
    started = threading.Event()

    async def serve() -> None:
        nonlocal stop
        stop = asyncio.Event()
        workers = build_workers(
            temporal_env.client, PipelineActivities(services), pipeline_config(user_env)
        )
        started.set()
        await run_workers(workers, stop)

    future = asyncio.run_coroutine_threadsafe(serve(), loop.loop)
    started.wait(30)
    yield services
    loop.loop.call_soon_threadsafe(stop.set)  # type: ignore[union-attr]
    future.result(60)
    engine.gc(run_id=engine.run_id, include_live=True, images=True)
    services.store.close()


def _cli(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def test_validating_a_suite_publishes_the_sound_task_and_queues_the_broken_ones_findings(
    user_env, worker, tmp_path
):
    imported = _cli(
        "task",
        "import",
        str(TASKS / "csv-report"),
        str(TASKS / "broken-accepts-noop"),
        "--suite",
        "pair",
        "--json",
    )
    assert imported.exit_code == 0, imported.output
    ids = {e["name"]: e["env_id"] for e in json.loads(imported.stdout)["imported"]}
    sound, broken = ids["csv-report"], ids["broken-accepts-noop"]

    run = _cli("task", "validate", "--suite", "pair", "--repeats", "1", "--wait", "--json")
    assert run.exit_code == 1, run.output  # one task was rejected
    final = json.loads(run.stdout.strip().splitlines()[-1])
    tasks = {t["env_id"]: t for t in final["tasks"]}
    assert final["workflow_id"].startswith("validate-pair-")
    assert tasks[sound]["outcome"] == "published" and tasks[sound]["verdict"] == "passed", (
        json.dumps(tasks[sound])
    )
    assert tasks[broken]["outcome"] == "rejected" and tasks[broken]["verdict"] == "rejected"
    assert any(r.startswith("no-op") for r in tasks[broken]["reasons"]), tasks[broken]

    store = worker.store
    assert store.environments.record(sound).status == EnvStatus.PUBLISHED
    assert store.environments.record(broken).status == EnvStatus.REJECTED
    queued = store.reviews.list(state=ReviewState.OPEN, env_id=broken)
    assert queued and set(tasks[broken]["open_review_items"]) == {i.id for i in queued}
    assert store.reviews.list(env_id=sound) == []

    listed = {t["env_id"]: t for t in json.loads(_cli("task", "list", "--json").stdout)}
    assert (listed[sound]["status"], listed[sound]["outcome"]) == ("published", "passed")
    assert (listed[broken]["status"], listed[broken]["outcome"]) == ("rejected", "rejected")

    shown = _cli("status", final["workflow_id"])
    assert shown.exit_code == 0 and sound in shown.output and "published" in shown.output

    out = tmp_path / "pack.tar"
    packed = _cli("pack", "export", "--all-published", "--out", str(out), "--json")
    assert packed.exit_code == 0, packed.output
    assert json.loads(packed.stdout)["environments"] == [sound]
    with tarfile.open(out) as tar:
        assert any(sound in name for name in tar.getnames())
