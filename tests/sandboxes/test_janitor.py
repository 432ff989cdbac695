"""The janitor: sandboxes of dead owners go, live owners' and other hosts' stay.

Regression of issue 15: a process owning sandboxes killed by SIGKILL left its containers
running, and nothing ran `sandbox gc` by itself.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import docker.errors
import pytest

from envfactory.core.settings import SandboxSettings, Settings
from sandboxes import DockerEngine
from sandboxes import labels as L
from sandboxes.janitor import Janitor
from workflows.composition import start_janitor

pytestmark = pytest.mark.docker


def _owner(base_image: str, run_id: str, home: str = "") -> tuple[subprocess.Popen[str], str]:
    """A process that starts a sandbox (as the install `home`), prints its id and keeps
    running."""
    code = textwrap.dedent(f"""
        import time
        from envfactory.core.models import Purpose
        from envfactory.core.settings import SandboxSettings
        from sandboxes import DockerEngine
        settings = SandboxSettings(home_scope={home!r})
        sb = DockerEngine(settings, run_id={run_id!r}).start({base_image!r}, purpose=Purpose.TEST)
        print(sb.id, flush=True)
        time.sleep(600)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def _exists(client: docker.DockerClient, cid: str) -> bool:
    try:
        client.api.inspect_container(cid)
    except docker.errors.NotFound:
        return False
    return True


@pytest.fixture
def owners(docker_engine: DockerEngine, base_image: str) -> Iterator[list]:
    procs: list = []
    yield procs
    for proc, cid in procs:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if _exists(docker_engine.client, cid):
            docker_engine.client.api.remove_container(cid, force=True)


def test_the_janitor_removes_a_sigkilled_owners_sandbox_within_its_period_but_not_a_live_ones(
    docker_engine: DockerEngine, base_image: str, owners: list
) -> None:
    run_id = docker_engine.run_id or ""
    owners += [_owner(base_image, run_id), _owner(base_image, run_id)]
    (doomed, doomed_id), (live, live_id) = owners
    period = 1.0
    with Janitor(docker_engine, period_s=period).start() as janitor:
        os.kill(doomed.pid, signal.SIGKILL)
        doomed.wait()
        killed_at = time.monotonic()
        while _exists(docker_engine.client, doomed_id) and time.monotonic() - killed_at < 30:
            time.sleep(0.1)
        assert not _exists(docker_engine.client, doomed_id)
        assert time.monotonic() - killed_at < period + 5  # one period, and the sweep itself
        sweeps = janitor.sweeps
        while janitor.sweeps < sweeps + 2:
            time.sleep(0.1)
    assert live.poll() is None and _exists(docker_engine.client, live_id)


def _labelled_container(
    client: docker.DockerClient, image: str, owner: str, age_s: float, home: str = ""
) -> str:
    """A container labelled exactly as ours would be, with a chosen owner, age and home."""
    name = f"envfactory-test-{uuid.uuid4().hex[:10]}"
    labels = L.ownership("test", None, home=home, sandbox=name)
    labels[L.OWNER_PROC] = owner
    labels[L.CREATED] = str(int(time.time() - age_s))
    host = client.api.create_host_config(network_mode="none")
    return str(
        client.api.create_container(
            image, command=["sleep", "60"], name=name, labels=labels, host_config=host
        )["Id"]
    )


def test_other_hosts_sandboxes_stay_until_the_ttl_and_a_reused_pid_fools_nobody(
    docker_engine: DockerEngine, base_image: str
) -> None:
    client = docker_engine.client
    me = L.this_process()
    host, pid, _start = me.rsplit(":", 2)
    made = {
        "foreign-young": _labelled_container(client, base_image, "elsewhere:4242:99", 60),
        "foreign-old": _labelled_container(client, base_image, "elsewhere:4242:99", 7200),
        "mine": _labelled_container(client, base_image, me, 0),
        # our pid, but another process's start time: the owner it names is gone
        "reused-pid": _labelled_container(client, base_image, f"{host}:{pid}:1", 0),
    }
    try:
        Janitor(docker_engine, period_s=60, foreign_ttl_s=3600).sweep()
        left = {k for k, cid in made.items() if _exists(client, cid)}
        assert left == {"foreign-young", "mine"}
    finally:
        for cid in made.values():
            if _exists(client, cid):
                client.api.remove_container(cid, force=True)


def test_a_worker_sweeps_orphans_as_it_starts(
    docker_engine: DockerEngine, base_image: str, owners: list, settings: Settings
) -> None:
    owners.append(_owner(base_image, docker_engine.run_id or ""))
    proc, cid = owners[0]
    proc.kill()
    proc.wait()
    settings = settings.model_copy(update={"sandbox": SandboxSettings(janitor_period_s=600)})
    janitor = start_janitor(settings, print)
    try:
        assert not _exists(docker_engine.client, cid)  # gone before the first period ends
    finally:
        janitor.stop()


HOMES = ("home-aaaa", "home-bbbb")


def test_one_installs_janitor_leaves_another_installs_orphans_and_gc_all_homes_takes_them(
    docker_engine: DockerEngine, base_image: str
) -> None:
    """Two homes on one engine and host: each janitor reaps only its own install's orphans."""
    client = docker_engine.client
    dead = f"{L.this_process().rsplit(':', 2)[0]}:4242:1"  # this host, an owner long gone
    made = {h: _labelled_container(client, base_image, dead, 0, home=h) for h in HOMES}
    mine = DockerEngine(SandboxSettings(home_scope="home-aaaa"), client=client)
    try:
        Janitor(mine, period_s=60).sweep()
        assert {h for h, cid in made.items() if _exists(client, cid)} == {"home-bbbb"}
        mine.gc(all_homes=True)
        assert not _exists(client, made["home-bbbb"])
    finally:
        for cid in made.values():
            if _exists(client, cid):
                client.api.remove_container(cid, force=True)


def test_an_installs_home_names_its_scope() -> None:
    a = Settings(home=Path("/srv/a")).sandbox.home_scope
    assert a.startswith("home-") and a != Settings(home=Path("/srv/b")).sandbox.home_scope
    assert (
        Settings(home=Path("/srv/a"), sandbox=SandboxSettings(home_scope="x")).sandbox.home_scope
        == "x"
    )
