"""Exec in a locked-down sandbox: results, hard timeouts, containment, output caps."""

from __future__ import annotations

import asyncio
import os

import pytest

from envfactory.core.models import Limits, Purpose
from sandboxes import DockerEngine, DockerSandbox

pytestmark = pytest.mark.docker


def test_exec_returns_exit_code_and_both_streams(sandbox: DockerSandbox) -> None:
    res = sandbox.exec("echo out; echo err >&2; exit 3")
    assert (res.exit_code, res.stdout, res.stderr) == (3, "out\n", "err\n")
    assert not res.timed_out and not res.truncated and not res.oom_killed


def test_exec_honours_user_workdir_and_env(sandbox: DockerSandbox) -> None:
    res = sandbox.exec(
        ["sh", "-c", 'echo "$(id -u) $(pwd) $GREETING"'],
        user="nobody",
        workdir="/tmp",
        env={"GREETING": "hi"},
    )
    assert res.stdout.strip() == "65534 /tmp hi"


def test_python_and_pip_live_in_usr_local_like_the_official_image(sandbox: DockerSandbox) -> None:
    res = sandbox.exec(
        "command -v python3 pip python && python3 -c 'import sys; print(sys.prefix)'"
    )
    assert res.stdout.split() == [
        "/usr/local/bin/python3",
        "/usr/local/bin/pip",
        "/usr/local/bin/python",
        "/usr/local",
    ]


def test_timeout_kills_sleep_1000(sandbox: DockerSandbox) -> None:
    res = sandbox.exec("sleep 1000", timeout=1)
    assert res.timed_out and res.exit_code != 0
    assert sandbox.exec("pgrep -x -f 'sleep 1000'").exit_code == 1  # nothing left


def test_timeout_kills_a_process_that_traps_sigterm(sandbox: DockerSandbox) -> None:
    script = "trap '' TERM INT; while :; do sleep 0.2; done"
    res = sandbox.exec(["bash", "-c", script], timeout=1)
    assert res.timed_out
    leftovers = sandbox.exec("pgrep -f 'whil[e] :'")
    assert leftovers.exit_code == 1, leftovers.stdout


def test_a_fork_bomb_is_contained_by_the_pids_limit(
    docker_engine: DockerEngine, base_image: str
) -> None:
    with docker_engine.sandbox(base_image, limits=Limits(pids=64), purpose=Purpose.TEST) as sb:
        res = sb.exec("bomb() { bomb | bomb; }; bomb", timeout=4)
        assert res.timed_out
        assert "Resource temporarily unavailable" in res.stderr  # the limit is what stopped it
        pids_max = sb.exec("cat /sys/fs/cgroup/pids/pids.max /sys/fs/cgroup/pids.max 2>/dev/null")
        assert pids_max.stdout.split()[0] == "64"
        # The sandbox survives, and the bomb's processes are gone.
        assert sb.exec("echo alive").stdout == "alive\n"
        assert sb.exec("pgrep -c bash").stdout.strip() == "0"  # bash -c execs pgrep


def test_a_memory_bomb_ends_with_a_clear_oom_result(
    docker_engine: DockerEngine, base_image: str
) -> None:
    with docker_engine.sandbox(
        base_image, limits=Limits(memory_mb=128), purpose=Purpose.TEST
    ) as sb:
        bomb = "a = []\nwhile True: a.append(bytearray(10**7))"
        res = sb.exec(["python3", "-c", bomb], timeout=60)
        assert res.oom_killed and res.exit_code == 137 and not res.timed_out
        # A later, ordinary exec is not blamed for the earlier OOM.
        assert not sb.exec("true").oom_killed


def test_network_egress_fails_by_default(docker_engine: DockerEngine, base_image: str) -> None:
    probe = "import socket; socket.create_connection(('deb.debian.org', 80), timeout=5)"
    with docker_engine.sandbox(base_image, purpose=Purpose.TEST) as sb:
        assert sb.exec("ls /sys/class/net").stdout.split() == ["lo"]
        assert sb.exec(["python3", "-c", probe]).exit_code != 0
    with docker_engine.sandbox(base_image, purpose=Purpose.TEST, network=True) as sb:
        assert "eth0" in sb.exec("ls /sys/class/net").stdout.split()  # the control


def test_a_sandbox_without_network_has_its_own_working_loopback(
    docker_engine: DockerEngine, base_image: str
) -> None:
    """No network is a private namespace with loopback only (a task's own server on
    127.0.0.1 works), made without the engine's network hooks (`NetworkDisabled`)."""
    serve = (
        "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(); "
        "c = socket.create_connection(s.getsockname(), timeout=5); "
        "c.sendall(b'hi'); print(s.accept()[0].recv(2).decode())"
    )
    with docker_engine.sandbox(base_image, purpose=Purpose.TEST) as sb:
        assert sb.exec(["python3", "-c", serve]).stdout.strip() == "hi"
        own = sb.exec("readlink /proc/1/ns/net").stdout.strip()
        assert own and own != os.readlink("/proc/self/ns/net")
        config = docker_engine.client.api.inspect_container(sb.id)["Config"]
        assert config.get("NetworkDisabled") is True


def test_50_mb_of_output_is_truncated_with_the_flag(sandbox: DockerSandbox) -> None:
    res = sandbox.exec("head -c 50000000 /dev/zero | tr '\\0' a", timeout=60)
    assert res.truncated and not res.timed_out
    assert len(res.stdout) == sandbox.output_cap
    assert sandbox.exec("pgrep -x head").exit_code == 1  # the writer was stopped


def test_async_exec_runs_off_the_event_loop(sandbox: DockerSandbox) -> None:
    async def two() -> list[str]:
        results = await asyncio.gather(sandbox.aexec("echo a"), sandbox.aexec("echo b"))
        return [r.stdout for r in results]

    assert asyncio.run(two()) == ["a\n", "b\n"]


def test_a_timeout_also_ends_children_that_left_the_process_group(sandbox: DockerSandbox) -> None:
    res = sandbox.exec("setsid sleep 1001 & sleep 1000", timeout=1)
    assert res.timed_out
    assert sandbox.exec("pgrep -x -f 'sleep 1001'").exit_code == 1


def test_a_string_command_runs_under_bash_or_under_sh_where_bash_is_missing(
    sandbox: DockerSandbox,
) -> None:
    assert sandbox.exec("echo ${BASH_VERSION:+bash}").stdout == "bash\n"
    sandbox.exec(["rm", "/usr/bin/bash", "/bin/bash"])
    res = sandbox.exec("echo $((6 * 7)) ${BASH_VERSION:-sh}")
    assert res.stdout == "42 sh\n", res.stderr
