"""Durability: a worker process killed mid-judge, and a fresh one started in its place.

The workflow must finish with every box run once — except the judge that was cut off,
which runs again on the new worker and overwrites (never duplicates) its trajectory.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from wf_fakes import FileServices, Scenario

from workflows.pipeline import SynthesizeEnvironment
from workflows.types import PipelineConfig, SynthesisInput

pytestmark = [pytest.mark.temporal, pytest.mark.slow]

WORKER = Path(__file__).parent / "wf_fake_worker.py"
REPO = Path(__file__).resolve().parents[2]


def _spawn(address: str, root: Path, queues: tuple[str, str]) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [sys.executable, str(WORKER), address, str(root), *queues],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


def _wait_for(path_glob: str, root: Path, timeout: float = 60) -> Path:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = list(root.glob(path_glob))
        if found:
            return found[0]
        time.sleep(0.1)
    raise AssertionError(f"{path_glob} never appeared under {root}")


def _wait_until_only_judge_1_is_pending(loop, handle, timeout: float = 60) -> None:
    """The other agents completed (in history) before the kill: they must not run again."""

    async def pending() -> list[str]:
        desc = await handle.describe()
        return [p.activity_type.name for p in desc.raw_description.pending_activities]

    deadline = time.monotonic() + timeout
    while loop.run(pending()) != ["run_agent"]:
        assert time.monotonic() < deadline, "the other agents never completed"
        time.sleep(0.1)


def test_a_worker_killed_mid_judge_is_replaced_and_nothing_is_lost_or_duplicated(
    temporal_env, loop, tmp_path, queues
):
    (tmp_path / "scenario.json").write_text(Scenario(blocking_judges=[1]).model_dump_json())
    services = FileServices(tmp_path)
    address = temporal_env.client.service_client.config.target_host
    config = PipelineConfig(
        task_queue_agents=queues[0], task_queue_sandbox=queues[1], heartbeat_timeout_s=3
    )
    first = _spawn(address, tmp_path, queues)
    second = None
    try:
        handle = loop.run(
            temporal_env.client.start_workflow(
                SynthesizeEnvironment.run,
                SynthesisInput(seed_id="seed-kill", config=config),
                id="synthesize-seed-kill",
                task_queue=queues[0],
            )
        )
        _wait_for(f"started-judge-1-{first.pid}", tmp_path)
        _wait_until_only_judge_1_is_pending(loop, handle)
        os.kill(first.pid, signal.SIGKILL)
        first.wait(10)
        second = _spawn(address, tmp_path, queues)
        _wait_for(f"started-judge-1-{second.pid}", tmp_path)
        (tmp_path / "release-judge-1").touch()
        result = loop.run(handle.result(), 120)
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait(10)
    assert result.outcome == "published"
    runs = [c["trajectory"] for c in services.calls("run_agent")]
    judge1 = "synthesize-seed-kill-judge-1"
    assert sorted(runs) == sorted(
        [
            "synthesize-seed-kill-judge-0",
            judge1,
            judge1,
            "synthesize-seed-kill-red-team-0",
        ]
    )
    assert {c["pid"] for c in services.calls("run_agent") if c["trajectory"] == judge1} == {
        first.pid,
        second.pid,
    }
    assert services.stored("trajectories") == sorted(set(runs))  # one trajectory each
    for box in ("research", "build", "synthesize_verifier", "run_gates", "score", "publish"):
        assert len(services.calls(box)) == 1, box
