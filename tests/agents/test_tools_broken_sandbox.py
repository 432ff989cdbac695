"""The shell tool on a real sandbox that breaks: the model reads what happened, and a
sandbox a fork bomb took is restarted instead of failing every later call (issue 15)."""

from __future__ import annotations

import asyncio

import pytest

from envfactory.agents import SandboxTools
from envfactory.agents.tools import ShellArgs
from envfactory.core.errors import SandboxBroken
from envfactory.core.models import Limits, Purpose
from envfactory.core.settings import SandboxSettings
from sandboxes import DockerEngine

pytestmark = pytest.mark.docker

BOMB = (
    "setsid python3 -c 'import os, time\nwhile True:\n    try:\n        os.fork() or "
    "(time.sleep(1000), os._exit(0))\n    except OSError:\n        time.sleep(0.001)\n' "
    ">/dev/null 2>&1 & sleep 1"
)


def _shell(tools: SandboxTools, command: str):  # type: ignore[no-untyped-def]
    return asyncio.run(tools.shell(ShellArgs(command=command, timeout_s=20)))


def test_a_fork_bomb_the_model_left_running_is_ended_by_a_restart(docker_engine, base_image):  # type: ignore[no-untyped-def]
    with docker_engine.sandbox(base_image, limits=Limits(pids=32), purpose=Purpose.TEST) as sb:
        tools = SandboxTools(sb, workdir="/")
        assert _shell(tools, "echo kept > /root/note").observation.startswith("exit_code: 0")
        _shell(tools, BOMB)
        broken = _shell(tools, "echo hi")
        assert broken.error and "pids limit is exhausted" in broken.observation
        assert "restarted" in broken.observation
        after = _shell(tools, "cat /root/note")
        assert after.observation.startswith("exit_code: 0") and "kept" in after.observation


def test_writing_past_the_disk_quota_is_named_to_the_model(docker_engine, base_image):  # type: ignore[no-untyped-def]
    engine = DockerEngine(
        SandboxSettings(disk_poll_s=0.2), client=docker_engine.client, run_id=docker_engine.run_id
    )
    with engine.sandbox(base_image, limits=Limits(disk_mb=64), purpose=Purpose.TEST) as sb:
        tools = SandboxTools(sb, workdir="/")
        res = _shell(tools, "dd if=/dev/zero of=/tmp/fill bs=1M count=1024")
        assert "disk quota" in res.observation
        with pytest.raises(SandboxBroken, match="disk quota"):
            _shell(tools, "echo hi")  # the dispatcher turns this into an error observation
