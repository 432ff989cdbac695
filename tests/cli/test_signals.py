"""SIGTERM and SIGINT end `envfactory validate` with its sandboxes removed (issue 46, item 8).

Regression: `train` ended by SIGTERM (Python's default handler: no `finally`) left its
episode containers running for over an hour. Here the real CLI runs in a subprocess on
the real engine; it is signalled once its first sandbox is up, and afterwards no
container or network it created remains. The sandbox seen before the signal carries the
install's home scope, so `sandbox gc` would find it after a SIGKILL too.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from envfactory.core.settings import Settings
from sandboxes import DockerEngine
from sandboxes import labels as L

pytestmark = pytest.mark.docker

REPO = Path(__file__).resolve().parents[2]
# A task whose oracle runs long enough to be interrupted mid-gate.
TASK = {
    "instruction.md": "Write done to /app/out.txt.\n",
    "task.toml": 'version = "1.0"\n\n[verifier]\ntimeout_sec = 60.0\n',
    "environment/Dockerfile": "FROM python:3.11-slim\nWORKDIR /app\n",
    "solution/solve.sh": "#!/bin/bash\nsleep 120\necho done > /app/out.txt\n",
    "tests/test.sh": '#!/bin/bash\n[ "$(cat /app/out.txt)" = done ]\n',
}


def _write_task(root: Path) -> Path:
    for rel, text in TASK.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if rel.endswith(".sh"):
            path.chmod(0o755)
    return root


def _owned_by(engine: DockerEngine, pid: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The sandboxes' containers and the networks the process `pid` on this host created
    (a build's step containers inherit its labels but name no sandbox: the daemon's)."""
    prefix = f"{socket.gethostname()}:{pid}:"
    api = engine.client.api

    def mine(obj: dict[str, Any], names: list[str]) -> bool:
        labels = obj.get("Labels") or {}
        own = labels.get(L.SANDBOX) in names
        return own and labels.get(L.OWNER_PROC, "").startswith(prefix)

    containers = api.containers(all=True, filters={"label": L.OWNER_FILTER})
    networks = api.networks(filters={"label": L.OWNER_FILTER})
    return (
        [c for c in containers if mine(c, [n.lstrip("/") for n in c["Names"]])],
        [n for n in networks if mine(n, [n["Name"]])],
    )


def _first_sandbox(
    engine: DockerEngine, proc: subprocess.Popen[bytes], log: Path
) -> dict[str, Any]:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        containers, _ = _owned_by(engine, proc.pid)
        if containers:
            return containers[0]
        assert proc.poll() is None, log.read_text()[-3000:]
        time.sleep(0.5)
    proc.kill()
    raise AssertionError(f"no sandbox within 300 s:\n{log.read_text()[-3000:]}")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signalled_validate_leaves_no_sandbox_and_its_sandboxes_carry_the_home_scope(
    docker_engine: DockerEngine, base_image: str, tmp_path: Path, sig: signal.Signals
) -> None:
    home = tmp_path / "home"
    task = _write_task(tmp_path / "slow-task")
    env = {**os.environ, "ENVFACTORY_HOME": str(home), "PYTHONPATH": str(REPO)}
    env.pop("ENVFACTORY_DATABASE_URL", None)
    log = tmp_path / "validate.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "envfactory.cli", "validate", str(task), "--repeats", "1"],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=tmp_path,
        )
        try:
            seen = _first_sandbox(docker_engine, proc, log)
            time.sleep(1)  # let the gate pool start more
            proc.send_signal(sig)
            rc = proc.wait(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert rc == 128 + sig, log.read_text()[-3000:]
    assert _owned_by(docker_engine, proc.pid) == ([], []), log.read_text()[-3000:]
    scope = Settings(home=home, database_url=None).sandbox.home_scope
    assert scope and seen["Labels"][L.HOME] == scope
