"""`DockerEngine.run`: a fresh container whose own command is the work, read to its end.

What an exec promises (both streams, exit status, hard timeout, output cap, disk quota)
holds for it, plus: every process has ended when it returns, the stopped container's
files stay readable, and a container killed under its command is `SandboxBroken`, never
an exit status a verifier could have given.
"""

from __future__ import annotations

import threading
import time

import pytest

from envfactory.core.errors import SandboxBroken
from envfactory.core.models import Limits, Purpose
from sandboxes import DockerEngine
from sandboxes import labels as L

pytestmark = pytest.mark.docker


def _run(engine: DockerEngine, image: str, script: str, **kw):  # type: ignore[no-untyped-def]
    return engine.run(image, ["/bin/sh", "-c", script], purpose=Purpose.TEST, **kw)


def test_run_returns_exit_code_and_both_streams_as_root_in_the_root_dir(
    docker_engine: DockerEngine, base_image: str
) -> None:
    res, box = _run(docker_engine, base_image, 'echo "$(id -u) $(pwd)"; echo err >&2; exit 3')
    try:
        assert (res.exit_code, res.stdout, res.stderr) == (3, "0 /\n", "err\n")
        assert not (res.timed_out or res.truncated or res.oom_killed or res.disk_exceeded)
    finally:
        box.remove()


def test_every_process_has_ended_and_the_files_stay_readable(
    docker_engine: DockerEngine, base_image: str
) -> None:
    script = "echo kept > /tmp/f; (sleep 1000 &) ; sleep 1000 & echo started"
    t0 = time.monotonic()
    res, box = _run(docker_engine, base_image, script, timeout=60)
    try:
        assert time.monotonic() - t0 < 20  # the sleepers it left did not hold the stream open
        assert (res.exit_code, res.stdout) == (0, "started\n")
        state = docker_engine.client.api.inspect_container(box.id)["State"]
        assert not state["Running"]
        assert box.read_file("/tmp/f") == b"kept\n"
    finally:
        box.remove()


def test_run_times_out_and_caps_its_output(docker_engine: DockerEngine, base_image: str) -> None:
    res, box = _run(docker_engine, base_image, "trap '' TERM; sleep 1000", timeout=1)
    box.remove()
    assert res.timed_out and res.exit_code != 0
    res, box = _run(docker_engine, base_image, "yes | head -c 50000000; echo done")
    box.remove()
    assert res.truncated and res.exit_code is None
    assert len(res.stdout) == docker_engine.settings.output_cap_bytes


def test_a_container_killed_under_its_command_is_broken_not_an_exit_status(
    docker_engine: DockerEngine, base_image: str
) -> None:
    # The command even prints a mark of the kind the engine prints at its end: not this
    # run's, so the stream still says the command never ended.
    script = "echo; echo envfactory-command-ended-0123 >&2; sleep 30"
    api = docker_engine.client.api
    run_id = f"{docker_engine.run_id}-killed"

    def kill_it() -> None:
        for _ in range(100):
            found = api.containers(filters={"label": f"{L.RUN_ID}={run_id}"})
            if found:
                time.sleep(0.5)
                api.kill(found[0]["Id"])
                return
            time.sleep(0.1)

    killer = threading.Thread(target=kill_it)
    killer.start()
    with pytest.raises(SandboxBroken) as err:
        _run(docker_engine, base_image, script, run_id=run_id, timeout=60)
    killer.join()
    assert err.value.reason == "container_dead"
    assert api.containers(all=True, filters={"label": f"{L.RUN_ID}={run_id}"}) == []


def test_a_run_past_its_disk_quota_says_so(docker_engine: DockerEngine, base_image: str) -> None:
    limits = Limits(disk_mb=64)
    script = "dd if=/dev/zero of=/tmp/fill bs=1M count=1024 status=none; echo wrote"
    res, box = _run(docker_engine, base_image, script, limits=limits, timeout=120)
    box.remove()
    assert res.disk_exceeded and res.exit_code is None


def test_a_run_holds_its_slot_until_removed(base_image: str, docker_engine: DockerEngine) -> None:
    from envfactory.core.settings import SandboxSettings

    one = DockerEngine(
        SandboxSettings(pool_size=1),
        client=docker_engine.client,
        run_id=docker_engine.run_id,
        pool_wait_s=1,
    )
    _res, box = _run(one, base_image, "true")
    with pytest.raises(Exception, match="no sandbox slot free"):
        _run(one, base_image, "true")
    box.remove()
    res, box = _run(one, base_image, "echo again")
    box.remove()
    assert res.stdout == "again\n"


def test_run_by_exec_when_own_command_is_off_gives_the_same_result(
    base_image: str, docker_engine: DockerEngine
) -> None:
    from envfactory.core.settings import SandboxSettings

    off = DockerEngine(
        SandboxSettings(own_command=False), client=docker_engine.client, run_id=docker_engine.run_id
    )
    script = 'echo "$(id -u) $(pwd)"; echo err >&2; echo kept > /tmp/f; sleep 1000 & exit 3'
    for engine in (docker_engine, off):
        res, box = _run(engine, base_image, script, timeout=60)
        try:
            assert (res.exit_code, res.stdout, res.stderr) == (3, "0 /\n", "err\n")
            state = engine.client.api.inspect_container(box.id)["State"]
            assert not state["Running"]  # every process has ended
            assert box.read_file("/tmp/f") == b"kept\n"
        finally:
            box.remove()
