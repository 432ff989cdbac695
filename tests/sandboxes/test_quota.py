"""Disk quota and broken sandboxes, on the real Docker engine.

Regressions of issue 15: `dd` wrote 2 GiB into a sandbox's /tmp (no disk limit), and a
fork bomb left running made every later exec return 125 as if it were the command's own
exit status.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import docker.errors
import pytest

from envfactory.core.errors import SandboxBroken
from envfactory.core.models import Limits, Purpose
from envfactory.core.settings import SandboxSettings
from sandboxes import DockerEngine, DockerSandbox
from sandboxes.disk import storage_opt_size

pytestmark = pytest.mark.docker

#: holds every pid it can get (a shell fork bomb may collapse by itself; this one never does)
FORK_BOMB = (
    "setsid python3 -c 'import os, time\n"
    "while True:\n"
    "    try:\n"
    "        os.fork() or (time.sleep(1000), os._exit(0))\n"
    "    except OSError:\n"
    "        time.sleep(0.05)\n"
    "' >/dev/null 2>&1 & sleep 1"
)


@pytest.fixture
def quota_engine(docker_engine: DockerEngine) -> DockerEngine:
    """One slot, so a test also proves the slot comes back; a quick watchdog."""
    return DockerEngine(
        SandboxSettings(pool_size=1, disk_poll_s=0.2),
        client=docker_engine.client,
        run_id=docker_engine.run_id,
        pool_wait_s=5,
    )


@pytest.fixture
def small_disk(quota_engine: DockerEngine, base_image: str) -> Iterator[DockerSandbox]:
    with quota_engine.sandbox(base_image, limits=Limits(disk_mb=64), purpose=Purpose.TEST) as sb:
        yield sb


def _exists(client: docker.DockerClient, cid: str) -> bool:
    try:
        client.api.inspect_container(cid)
    except docker.errors.NotFound:
        return False
    return True


def test_dd_past_the_disk_quota_ends_with_disk_exceeded_and_the_sandbox_removed(
    quota_engine: DockerEngine, small_disk: DockerSandbox, base_image: str
) -> None:
    res = small_disk.exec(
        "dd if=/dev/zero of=/tmp/fill bs=1M count=1024 status=none; echo done", timeout=120
    )
    assert res.disk_exceeded and res.exit_code is None and not res.ok
    assert "done" not in res.stdout  # stopped mid-write, not after
    assert not _exists(quota_engine.client, small_disk.id)  # its disk is freed at once
    with pytest.raises(SandboxBroken) as err:
        small_disk.exec("echo hi")
    assert err.value.reason == "disk_exceeded" and not err.value.retryable
    written = int(re.search(r"(\d+) MiB written", err.value.message).group(1))  # type: ignore[union-attr]
    assert 64 <= written < 1024  # the watchdog stopped dd well before it finished
    for call in (
        small_disk.diff,
        small_disk.restart,
        lambda: small_disk.read_file("/etc/hostname"),
    ):
        with pytest.raises(SandboxBroken, match="disk quota"):
            call()
    small_disk.remove()
    quota_engine.start(base_image, purpose=Purpose.TEST).remove()  # the pool slot came back


def test_a_background_writer_is_stopped_between_execs(small_disk: DockerSandbox) -> None:
    assert small_disk.exec(
        "nohup dd if=/dev/zero of=/tmp/fill bs=1M count=1024 >/dev/null 2>&1 &"
    ).ok
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            small_disk.exec("true")
        except SandboxBroken as exc:
            assert exc.reason == "disk_exceeded"
            return
        time.sleep(0.2)
    pytest.fail("the sandbox kept running past its disk quota")


def test_writes_under_the_quota_leave_the_sandbox_alone(small_disk: DockerSandbox) -> None:
    assert small_disk.exec("dd if=/dev/zero of=/tmp/some bs=1M count=16 status=none").ok
    time.sleep(1.0)  # several watchdog periods
    res = small_disk.exec("rm /tmp/some && echo alive")
    assert res.stdout == "alive\n" and not res.disk_exceeded


def test_storage_opt_is_used_only_where_the_storage_driver_takes_it(
    quota_engine: DockerEngine, small_disk: DockerSandbox
) -> None:
    driver = quota_engine.client.info()["Driver"]
    if driver in ("fuse-overlayfs", "vfs"):
        assert quota_engine.storage_opt is False  # learnt from the first create, then skipped
    size = quota_engine.client.api.inspect_container(small_disk.id)["HostConfig"].get("StorageOpt")
    assert (size or {}).get("size") == (storage_opt_size(64) if quota_engine.storage_opt else None)


def test_a_fork_bomb_left_running_makes_exec_raise_sandbox_broken(
    docker_engine: DockerEngine, base_image: str
) -> None:
    sb = docker_engine.start(base_image, limits=Limits(pids=32), purpose=Purpose.TEST)
    try:
        assert sb.exec(FORK_BOMB, timeout=20).ok
        # the bomb runs in the background: until it has taken every pid, execs still run
        deadline = time.monotonic() + 60
        with pytest.raises(SandboxBroken) as err:
            while time.monotonic() < deadline:
                sb.exec("echo alive", timeout=10)
                time.sleep(0.5)
        assert err.value.reason == "pids_exhausted" and err.value.retryable
        assert "Resource temporarily unavailable" in err.value.detail  # the runtime's words
        sb.restart()  # every process ends, files stay: usable again
        assert sb.exec("echo alive").stdout == "alive\n"
    finally:
        docker_engine.client.api.kill(sb.id)  # the bomb never outlives the test
        sb.remove()


def test_exit_125_from_a_command_is_its_own_status_in_a_healthy_sandbox(
    sandbox: DockerSandbox,
) -> None:
    assert sandbox.exec("exit 125").exit_code == 125
    # Even the wrapper's own words are not believed while pids are free.
    res = sandbox.exec("echo 'timeout: fork system call failed: x' >&2; exit 125")
    assert res.exit_code == 125 and res.stderr.startswith("timeout:")


def test_a_dead_container_makes_exec_raise_sandbox_broken(
    docker_engine: DockerEngine, sandbox: DockerSandbox
) -> None:
    docker_engine.client.api.kill(sandbox.id)
    with pytest.raises(SandboxBroken) as err:
        sandbox.exec("echo hi")
    assert err.value.reason == "container_dead"
