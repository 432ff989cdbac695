"""Standby containers: started ahead of demand, handed out once, exactly as asked, drained.

Each test has its own engine (and run id) on the session's Docker client, so counting the
containers of a run counts only that test's.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import docker.errors
import pytest

from envfactory.core.models import Limits, Purpose
from envfactory.core.settings import SandboxSettings
from sandboxes import DockerEngine
from sandboxes import labels as L
from sandboxes.standby import Kind, Launched, Standby

pytestmark = pytest.mark.docker

ROOT = Path(__file__).resolve().parents[2]
TIGHT = Limits(cpus=0.5, memory_mb=256, pids=64, disk_mb=512, capabilities="locked")
#: the host config fields `start` sets from a kind (limits, network, capabilities)
HOST_FIELDS = (
    "NetworkMode",
    "CapAdd",
    "CapDrop",
    "SecurityOpt",
    "Memory",
    "MemorySwap",
    "NanoCpus",
    "PidsLimit",
    "Init",
    "Runtime",
    "Privileged",
    "Devices",
)


@pytest.fixture
def engine(docker_engine: DockerEngine) -> Iterator[DockerEngine]:
    eng = DockerEngine(
        SandboxSettings(pool_size=4, standby=2),
        client=docker_engine.client,
        run_id=f"test-standby-{uuid.uuid4().hex[:8]}",
    )
    yield eng
    eng.close()
    eng.gc(run_id=eng.run_id, include_live=True)


def containers_of(engine: DockerEngine) -> set[str]:
    """Ids of every container (running or not) labelled with the engine's run id."""
    found = engine.client.api.containers(all=True, filters={"label": f"{L.RUN_ID}={engine.run_id}"})
    return {c["Id"] for c in found}


def wait_for(cond, timeout: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, "timed out waiting"
        time.sleep(0.05)


def host_config(engine: DockerEngine, cid: str) -> dict[str, object]:
    host = engine.client.api.inspect_container(cid)["HostConfig"]
    return {k: host.get(k) for k in HOST_FIELDS}


def test_a_standby_container_is_handed_out_started_with_exactly_the_kind_asked_for(
    engine: DockerEngine, base_image: str
) -> None:
    with engine.sandbox(base_image, limits=TIGHT, purpose=Purpose.VERIFY) as on_demand:
        expected = host_config(engine, on_demand.id)
    assert containers_of(engine) == set()
    with engine.standby(base_image, limits=TIGHT, purpose=Purpose.VERIFY, network=False):
        wait_for(lambda: engine.prestarted.waiting() == 2)
        waiting = containers_of(engine)
        box = engine.start(base_image, limits=TIGHT, purpose=Purpose.VERIFY, network=False)
        try:
            assert box.id in waiting  # one of those started ahead, not a new one
            info = engine.client.api.inspect_container(box.id)
            assert info["State"]["Running"] and info["Config"]["Image"] == base_image
            assert host_config(engine, box.id) == expected
            labels = info["Config"]["Labels"]
            assert labels[L.OWNER_PROC] == L.this_process() and labels[L.RUN_ID] == engine.run_id
            assert labels[L.SANDBOX] == info["Name"].lstrip("/")
            # pristine: nothing ran in it but its init and `sleep infinity`, nothing written
            others = "for p in /proc/[0-9]*; do grep -qz ENVFACTORY_EXEC_ID $p/environ || cat $p/comm; done"
            assert sorted(box.exec(others).stdout.split()) == ["docker-init", "sleep"]
            assert box.diff() == []
        finally:
            box.remove()


def test_a_start_of_another_kind_never_gets_a_standby_container(
    engine: DockerEngine, base_image: str
) -> None:
    with engine.standby(base_image, limits=TIGHT, purpose=Purpose.VERIFY, network=False):
        wait_for(lambda: engine.prestarted.waiting() == 2)
        waiting = containers_of(engine)
        others = [
            engine.start(base_image, limits=TIGHT, purpose=Purpose.VERIFY, network=True),
            engine.start(
                base_image,
                limits=TIGHT.model_copy(update={"capabilities": "root-work"}),
                purpose=Purpose.VERIFY,
                network=False,
            ),
            engine.start(
                base_image,
                limits=TIGHT.model_copy(update={"memory_mb": 512}),
                purpose=Purpose.VERIFY,
                network=False,
            ),
            engine.start(base_image, limits=TIGHT, purpose=Purpose.VERIFY, run_id="another-run"),
        ]
        try:
            assert not {b.id for b in others} & waiting
            assert engine.prestarted.handed_out == 0
        finally:
            for b in others:
                b.remove()
            engine.gc(run_id="another-run", include_live=True)


def test_a_standby_container_is_never_handed_out_twice(
    engine: DockerEngine, base_image: str
) -> None:
    seen: list[str] = []
    with engine.standby(base_image, limits=TIGHT, purpose=Purpose.VERIFY):
        wait_for(lambda: engine.prestarted.waiting() == 2)
        for _ in range(6):
            box = engine.start(base_image, limits=TIGHT, purpose=Purpose.VERIFY)
            seen.append(box.id)
            box.remove()
            with pytest.raises(docker.errors.NotFound):  # used once, then gone for good
                engine.client.api.inspect_container(box.id)
            wait_for(lambda: engine.prestarted.waiting() == 2)
    assert len(set(seen)) == 6
    assert engine.prestarted.handed_out == 6


def test_the_end_of_the_scope_removes_every_waiting_container_but_not_those_handed_out(
    engine: DockerEngine, base_image: str
) -> None:
    with engine.standby(base_image, limits=TIGHT, purpose=Purpose.VERIFY):
        wait_for(lambda: engine.prestarted.waiting() == 2)
        kept = engine.start(base_image, limits=TIGHT, purpose=Purpose.VERIFY)
    engine.prestarted.settle()  # the scope's end removes them in the background
    try:
        # the replacement started by the take is waited for and removed too
        assert containers_of(engine) == {kept.id}
        assert kept.exec("true").exit_code == 0
    finally:
        kept.remove()
    assert containers_of(engine) == set()
    assert engine.prestarted.started == engine.prestarted.handed_out + engine.prestarted.discarded


def test_standby_off_starts_nothing_ahead(docker_engine: DockerEngine, base_image: str) -> None:
    eng = DockerEngine(
        SandboxSettings(pool_size=2, standby=0),
        client=docker_engine.client,
        run_id=f"test-standby-{uuid.uuid4().hex[:8]}",
    )
    with eng.standby(base_image, purpose=Purpose.VERIFY):
        time.sleep(1.0)
        assert containers_of(eng) == set()
        with eng.sandbox(base_image, purpose=Purpose.VERIFY):
            assert len(containers_of(eng)) == 1
    assert eng.prestarted.started == 0


_CHILD = """
import sys, time
from envfactory.core.models import Purpose
from envfactory.core.settings import SandboxSettings
from sandboxes import DockerEngine
engine = DockerEngine(SandboxSettings(standby=2), run_id=sys.argv[2])
scope = engine.standby(sys.argv[1], purpose=Purpose.VERIFY)
scope.__enter__()  # never left: only the process's end can drain it
while engine.prestarted.waiting() < 2:
    time.sleep(0.05)
print("ready", flush=True)
if sys.argv[3] == "kill":
    import os, signal
    os.kill(os.getpid(), signal.SIGKILL)
"""


def _child(base_image: str, run_id: str, how: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_CHILD), base_image, run_id, how],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=ROOT,
    )


def test_the_process_exit_removes_standby_containers(engine: DockerEngine, base_image: str) -> None:
    done = _child(base_image, engine.run_id or "", "exit")
    assert done.returncode == 0 and "ready" in done.stdout, done.stderr
    assert containers_of(engine) == set()


def test_the_janitor_reaps_standby_containers_of_a_killed_process(
    engine: DockerEngine, base_image: str
) -> None:
    done = _child(base_image, engine.run_id or "", "kill")
    assert done.returncode == -signal.SIGKILL and "ready" in done.stdout, done.stderr
    orphans = containers_of(engine)
    assert len(orphans) == 2
    removed = engine.gc(run_id=engine.run_id)  # the janitor's sweep: their owner is gone
    assert {f"container:{c}" for c in orphans} <= set(removed)
    assert containers_of(engine) == set()


def test_a_miss_waits_for_the_start_in_flight_instead_of_starting_a_second() -> None:
    # the pool's own logic, with a launch the test holds back: on a busy machine the
    # starts are behind, and a caller that started its own container beside the one in
    # flight doubled the load (standby was slower than none under load)
    gate, launched = threading.Event(), []

    def launch(kind: object) -> Launched:
        gate.wait(10)
        launched.append(kind)
        return Launched(id=f"c{len(launched)}", name="c", info={})

    pool = Standby(launch, lambda _id: None, depth=1)
    kind = _kind("img")
    with pool.keep(kind):
        wait_for(lambda: any(f.running() for f in pool._shelves[kind].starts))
        got: list[object] = []
        taker = threading.Thread(target=lambda: got.append(pool.take(kind)))
        taker.start()
        time.sleep(0.3)
        assert taker.is_alive() and not got, "the miss waits for the start in flight"
        gate.set()
        taker.join(10)
        assert got and got[0] is not None and got[0].id == "c1"
        assert pool.waited_for == 1
    pool.close()


def test_a_miss_with_nothing_starting_does_not_wait() -> None:
    pool = Standby(lambda kind: Launched(id="x", name="x", info={}), lambda _id: None, depth=0)
    assert pool.take(_kind("img")) is None


def _kind(image: str) -> Kind:
    return Kind(image=image, limits=Limits(), network=False, purpose=Purpose.VERIFY, run_id=None)
