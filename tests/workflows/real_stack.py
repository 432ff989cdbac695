"""Helpers for fault tests on the real stack: worker processes as a user starts them
(`envfactory worker`), tasks imported with the CLI, and the containers a process owns.

Everything here drives real components: the CLI in subprocesses, the Docker engine, the
Temporal dev server of the session (tests/workflows/conftest.py).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import docker

from sandboxes import labels as L

REPO = Path(__file__).resolve().parents[2]
TASKS = REPO / "examples" / "tasks"


def stack_env(home: Path, address: str, queues: tuple[str, str], **extra: str) -> dict[str, str]:
    """The environment of a user's shell: home, Temporal address and queues, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENVFACTORY_")}
    env.update(
        PYTHONPATH=str(REPO),  # this checkout first, whatever the venv's editable install says
        ENVFACTORY_HOME=str(home),
        ENVFACTORY_TEMPORAL__ADDRESS=address,
        ENVFACTORY_TEMPORAL__TASK_QUEUE_AGENTS=queues[0],
        ENVFACTORY_TEMPORAL__TASK_QUEUE_SANDBOX=queues[1],
    )
    env.update(extra)
    return env


def cli(env: dict[str, str], *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "envfactory.cli", *args],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def import_task(env: dict[str, str], name: str, suite: str = "faults") -> str:
    """`envfactory task import` of one example task; returns its env id."""
    out = cli(env, "task", "import", str(TASKS / name), "--suite", suite, "--json")
    assert out.returncode == 0, out.stderr
    return str(json.loads(out.stdout)["imported"][0]["env_id"])


class Worker:
    """`envfactory worker` in its own process group; its output goes to a log file."""

    def __init__(self, env: dict[str, str], log: Path, *args: str) -> None:
        self.log = log
        self._out = open(log, "w")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "envfactory.cli", "worker", *args],
            env=env,
            cwd=REPO,
            stdout=self._out,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        self.pid = self.proc.pid

    def wait_ready(self, timeout: float = 90) -> Worker:
        wait_for(lambda: "worker polling" in self.log.read_text(), timeout, self.why)
        return self

    def why(self) -> str:
        return f"worker {self.pid} log:\n{self.log.read_text()[-3000:]}"

    def kill(self) -> None:
        os.kill(self.pid, signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self._out.close()


def wait_for(
    cond: Callable[[], object], timeout: float, why: Callable[[], str] = lambda: ""
) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"timed out after {timeout} s. {why()}"
        time.sleep(0.2)


def owned_containers(client: docker.DockerClient, pid: int) -> list[str]:
    """Ids of our containers (running or not) whose owner process has this pid."""
    found = client.api.containers(all=True, filters={"label": L.OWNER_FILTER})
    return [
        str(c["Id"])
        for c in found
        if (c.get("Labels") or {}).get(L.OWNER_PROC, "").rsplit(":", 2)[1:2] == [str(pid)]
    ]


def remove_containers(client: docker.DockerClient, pids: list[int]) -> None:
    """Teardown: force-remove whatever these processes still own."""
    for pid in pids:
        for cid in owned_containers(client, pid):
            try:
                client.api.remove_container(cid, force=True)
            except docker.errors.NotFound:
                pass


# -- a workflow's activities, as the Temporal server sees them ------------------------


def pending(loop, handle) -> list[str]:  # type: ignore[no-untyped-def]
    desc = loop.run(handle.describe())
    return [p.activity_type.name for p in desc.raw_description.pending_activities]


def attempts_of(loop, handle) -> dict[str, int]:  # type: ignore[no-untyped-def]
    """activity name → the highest attempt that started, from the workflow's history."""

    async def go() -> dict[str, int]:
        names: dict[int, str] = {}
        out: dict[str, int] = {}
        async for e in handle.fetch_history_events():
            if e.HasField("activity_task_scheduled_event_attributes"):
                names[e.event_id] = e.activity_task_scheduled_event_attributes.activity_type.name
            if e.HasField("activity_task_started_event_attributes"):
                a = e.activity_task_started_event_attributes
                name = names[a.scheduled_event_id]
                out[name] = max(out.get(name, 0), a.attempt)
        return out

    return loop.run(go())  # type: ignore[no-any-return]


def attempt_now(loop, handle, name: str) -> int:  # type: ignore[no-untyped-def]
    """The attempt a pending activity is at (the history records retries only at the end)."""
    desc = loop.run(handle.describe())
    found = [
        p.attempt for p in desc.raw_description.pending_activities if p.activity_type.name == name
    ]
    return max(found, default=0)
