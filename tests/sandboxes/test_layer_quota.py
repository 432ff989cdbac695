"""The hard disk bound (`sandboxes/layer_quota.py`), on the real Docker engine.

Regressions of the hardening issue: `fallocate -l 20G` in a sandbox with a 1 GiB quota
took 21 GB of host disk in 0.21 s before the watchdog removed the sandbox, and with its
owner SIGKILLed (no watchdog left) a sandbox kept writing 1.5 GB past a 512 MiB quota.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import docker.errors
import pytest

from envfactory.core.models import Limits, Purpose
from envfactory.core.settings import SandboxSettings
from sandboxes import DockerEngine
from sandboxes.janitor import Janitor
from sandboxes.layer_quota import fs_bytes

pytestmark = pytest.mark.docker

GIB = 1024**3


@pytest.fixture
def engine(docker_engine: DockerEngine) -> DockerEngine:
    eng = DockerEngine(SandboxSettings(), client=docker_engine.client, run_id=docker_engine.run_id)
    if not eng.containers.layer_quota.active:
        pytest.skip("no hard disk bound on this host (not root, or no loop devices)")
    if eng.client.info().get("Driver") != "fuse-overlayfs":
        pytest.skip("the storage driver has a size option of its own")
    return eng


def _host_bytes_of(client: docker.DockerClient, cid: str) -> int:
    """What is used of the filesystem the container's writable layer is on: its own under
    the bound (so, what it takes of the host's disk); without the bound, the host's whole
    disk, which no bound here would pass."""
    upper = client.api.inspect_container(cid)["GraphDriver"]["Data"]["UpperDir"]
    st = os.statvfs(upper)
    return (st.f_blocks - st.f_bfree) * st.f_frsize


def test_fallocate_of_20_gib_in_a_1_gib_sandbox_takes_at_most_the_bound(
    engine: DockerEngine, base_image: str
) -> None:
    with engine.sandbox(base_image, limits=Limits(disk_mb=1024), purpose=Purpose.TEST) as sb:
        before = os.statvfs("/var/lib/docker")
        r = sb.exec("fallocate -l 20G /big; echo rc=$?; df -k / | tail -1")
        used = _host_bytes_of(engine.client, sb.id)
        after = os.statvfs("/var/lib/docker")
    assert "rc=0" not in r.stdout and "No space left" in r.stdout + r.stderr
    assert used <= fs_bytes(1024)
    taken = (before.f_bavail - after.f_bavail) * before.f_frsize
    assert taken <= fs_bytes(1024) + 256 * 1024**2  # the host's other writers meanwhile
    assert engine.containers.layer_quota.describe().startswith("hard")


def test_a_sandbox_whose_owner_is_sigkilled_stays_within_its_bound_until_the_janitor(
    engine: DockerEngine, base_image: str
) -> None:
    """The owner (and its watchdog) dies while a writer in the sandbox keeps going: the
    filesystem stops the writer at the bound, and the janitor removes the orphan."""
    code = textwrap.dedent(f"""
        import time
        from envfactory.core.models import Limits, Purpose
        from envfactory.core.settings import SandboxSettings
        from sandboxes import DockerEngine
        eng = DockerEngine(SandboxSettings(), run_id={engine.run_id!r})
        sb = eng.start({base_image!r}, limits=Limits(disk_mb=512), purpose=Purpose.TEST)
        sb.exec("setsid sh -c 'i=0; while true; do dd if=/dev/zero of=/f$i bs=1M count=64 "
                "2>/dev/null; i=$((i+1)); done' >/dev/null 2>&1 &")
        print(sb.id, flush=True)
        time.sleep(600)
    """)
    owner = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert owner.stdout is not None
    cid = owner.stdout.readline().strip()
    try:
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait()
        peak, deadline = 0, time.monotonic() + 8
        while time.monotonic() < deadline:  # the writer runs unwatched for 8 s
            peak = max(peak, _host_bytes_of(engine.client, cid))
            time.sleep(0.2)
        assert peak <= fs_bytes(512)
        assert peak > 256 * 1024**2  # the writer did write: the bound, not idleness, held it
        Janitor(engine, period_s=60).sweep()
        with pytest.raises(docker.errors.NotFound):
            engine.client.api.inspect_container(cid)
    finally:
        if owner.poll() is None:
            owner.kill()
        try:
            engine.client.api.remove_container(cid, force=True)
        except docker.errors.NotFound:
            pass
    out = subprocess.run(["losetup", "-a"], capture_output=True, text=True, check=False).stdout
    assert cid[:12] not in out


def test_with_the_bound_off_the_watchdog_alone_is_said(docker_engine: DockerEngine) -> None:
    eng = DockerEngine(SandboxSettings(hard_disk_quota=False), client=docker_engine.client)
    assert eng.containers.layer_quota.describe().startswith("watchdog only")
