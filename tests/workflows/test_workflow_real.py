"""The whole pipeline for real: an example seed, the scripted agents, the local Docker
engine, the SQLite store and the Temporal dev server — no fakes anywhere.

Slow (it builds images and runs every gate); marked `docker`, `temporal` and `slow`.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest

from envfactory.core.models import EnvStatus
from envfactory.core.settings import GateSettings, Settings
from envfactory.seeds import load_seed, store_draft
from sandboxes import DockerEngine
from workflows.activities import PipelineActivities
from workflows.client import pipeline_config
from workflows.composition import make_services
from workflows.pipeline import SynthesizeEnvironment
from workflows.types import SynthesisInput
from workflows.worker import build_workers, run_workers

pytestmark = [pytest.mark.temporal, pytest.mark.docker, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
SEED = REPO / "examples" / "seeds" / "flask-build-transitive-pin"
SCRIPTS: tuple[Path, ...] = ()  # the packaged scripts (envfactory/agents/scripts) suffice


@pytest.fixture
def real_services(tmp_path):
    settings = Settings(home=tmp_path / "home", gates=GateSettings(judges=2, repeats=1))
    engine = DockerEngine(settings.sandbox, run_id=f"test-wf-{uuid.uuid4().hex[:8]}")
    draft = load_seed(SEED, settings.seeds)
    services = make_services(settings, SCRIPTS, {draft.seed_id: (SEED.name,)}, engine=engine)
    seed = store_draft(draft, store=services.store, artifacts=services.artifacts)
    yield settings, services, seed
    engine.gc(run_id=engine.run_id, include_live=True, images=True)
    services.store.close()


async def _result_unless_held_for_review(handle, services):  # type: ignore[no-untyped-def]
    """The workflow's result; a sound example held for review fails at once, with the
    findings that held it (nobody would ever decide them: the test would only time out)."""
    result = asyncio.ensure_future(handle.result())
    while not result.done():
        await asyncio.wait({result}, timeout=10)
        status = await handle.query(SynthesizeEnvironment.status)
        if status.stage == "awaiting-review":
            result.cancel()
            store = services.store
            findings = [
                store.findings.get(store.reviews.get(i).finding_id).evidence.summary
                for i in status.open_review_items
            ]
            pytest.fail("held for review: " + "; ".join(findings)[:4000])
    return result.result()


def test_the_full_pipeline_on_an_example_seed_publishes_a_gated_environment(
    temporal_env, loop, real_services, queues
):
    settings, services, seed = real_services
    config = pipeline_config(settings).model_copy(
        update={"task_queue_agents": queues[0], "task_queue_sandbox": queues[1]}
    )

    async def run():
        stop = asyncio.Event()
        workers = build_workers(temporal_env.client, PipelineActivities(services), config)
        task = asyncio.create_task(run_workers(workers, stop))
        try:
            handle = await temporal_env.client.start_workflow(
                SynthesizeEnvironment.run,
                SynthesisInput(seed_id=seed.id, config=config),
                id=f"synthesize-{seed.id}-{uuid.uuid4().hex[:6]}",
                task_queue=queues[0],
            )
            return await _result_unless_held_for_review(handle, services)
        finally:
            stop.set()
            await task

    result = loop.run(run(), timeout=2700)  # a loaded 2-core machine: ~25 min seen
    assert result.outcome == "published", result.reasons
    assert result.solve_rate is not None and result.solve_rate > 0
    report = services.store.gate_reports.get(int(result.gate_report_id))
    assert report.verdict.value == "passed"
    assert {"oracle", "no-op"} <= {c.kind.value for c in report.checks}
    assert services.store.environments.record(result.env_id).status == EnvStatus.PUBLISHED
    judges = services.store.trajectories.list(env_id=result.env_id, role="judge")
    assert len(judges) == 2 and all(j.reward in (0, 1) for j in judges)
