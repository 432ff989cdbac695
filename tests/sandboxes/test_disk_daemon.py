"""The disk watchdog's other measurement: the daemon's `SizeRw`, used when a container's
upper directory is not readable here (a remote daemon).

Regression (issue 17, found by mypy with types-docker): `measure` called docker-py's
`inspect_container(id, size=True)`, which takes no `size` argument. Every measurement
raised TypeError, the watchdog recorded it and went on, and no disk quota was enforced on
a remote daemon.
"""

from __future__ import annotations

import docker.errors
import pytest

from sandboxes import DockerEngine, DockerSandbox
from sandboxes.disk import DiskWatchdog, Watched, daemon_size_rw

pytestmark = pytest.mark.docker

MIB = 1024 * 1024


def test_a_sandbox_without_local_paths_is_measured_by_the_daemon(
    docker_engine: DockerEngine, sandbox: DockerSandbox
) -> None:
    assert sandbox.exec("head -c 3000000 /dev/urandom > /tmp/blob").exit_code == 0
    watchdog = DiskWatchdog(docker_engine.client, poll_s=60)
    watched = Watched(sandbox.id, quota=64 * MIB, paths=None, on_exceeded=lambda _: None)
    assert watchdog.measure(watched) >= 3_000_000


def test_asking_the_daemon_about_a_removed_container_raises_not_found(
    docker_engine: DockerEngine,
) -> None:
    with pytest.raises(docker.errors.NotFound):
        daemon_size_rw(docker_engine.client.api, "0" * 64)
