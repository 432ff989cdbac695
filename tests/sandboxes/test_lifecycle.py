"""Ownership and lifecycle: gc of orphans, the bounded pool, base-image caching by recipe."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor

import docker.errors
import pytest

from envfactory.core.errors import ConfigError, SandboxError
from envfactory.core.models import Purpose
from envfactory.core.settings import SandboxSettings
from sandboxes import DockerEngine
from sandboxes.base_image import BaseRecipe

pytestmark = pytest.mark.docker


def _orphan(base_image: str, run_id: str) -> str:
    """A sandbox whose owning process exits without removing it (a crashed worker)."""
    code = textwrap.dedent(f"""
        import os
        from envfactory.core.models import Purpose
        from envfactory.core.settings import SandboxSettings
        from sandboxes import DockerEngine
        sb = DockerEngine(SandboxSettings(), run_id={run_id!r}).start({base_image!r}, purpose=Purpose.TEST)
        print(sb.id, flush=True)
        os._exit(0)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def _exists(client: docker.DockerClient, cid: str) -> bool:
    try:
        client.containers.get(cid)
    except docker.errors.NotFound:
        return False
    return True


def test_gc_removes_our_orphans_and_leaves_live_and_unlabelled_containers_alone(
    docker_engine: DockerEngine, base_image: str
) -> None:
    client = docker_engine.client
    orphan = _orphan(base_image, docker_engine.run_id or "")
    # Started by hand from our image: it inherits the image's envfactory labels.
    stranger = client.containers.run(base_image, ["sleep", "300"], detach=True, network_mode="none")
    try:
        with docker_engine.sandbox(base_image, purpose=Purpose.TEST) as live:
            removed = docker_engine.gc()
            assert f"container:{orphan}" in removed
            assert not _exists(client, orphan)
            assert _exists(client, live.id) and _exists(client, stranger.id or "")
            assert "envfactory.owner" in stranger.labels  # it did look like ours
    finally:
        stranger.remove(force=True)


def test_the_pool_bounds_concurrent_sandboxes(docker_engine: DockerEngine, base_image: str) -> None:
    engine = DockerEngine(
        SandboxSettings(pool_size=1),
        client=docker_engine.client,
        run_id=docker_engine.run_id,
        pool_wait_s=0.5,
    )
    first = engine.start(base_image, purpose=Purpose.TEST)
    try:
        with pytest.raises(SandboxError, match="pool_size=1"):
            engine.start(base_image, purpose=Purpose.TEST)
    finally:
        first.remove()
    engine.start(base_image, purpose=Purpose.TEST).remove()  # the slot came back


def test_a_configured_base_image_overrides_the_local_build(docker_engine: DockerEngine) -> None:
    engine = DockerEngine(
        SandboxSettings(base_image="registry.example/py:3.12"), client=docker_engine.client
    )
    assert engine.ensure_base_image("python") == "registry.example/py:3.12"
    assert engine.resolve_from("python:3.11-slim") == "registry.example/py:3.12"


@pytest.mark.slow
def test_the_base_image_is_rebuilt_only_when_its_recipe_changes(
    docker_engine: DockerEngine, base_image: str
) -> None:
    client = docker_engine.client
    before = client.images.get(base_image).id
    log: list[str] = []
    same = DockerEngine(SandboxSettings(), client=client).ensure_base_image(
        "python", log=log.append
    )
    assert same == base_image and client.images.get(same).id == before
    assert not any(line.startswith("$ debootstrap") for line in log)

    changed = BaseRecipe.from_host(extra={"test": docker_engine.run_id or "x"})
    engine = DockerEngine(SandboxSettings(), client=client, recipe=changed)
    tag = engine.ensure_base_image("minimal", log=log.append)
    try:
        assert tag == f"envfactory/base:{changed.hash()}" and tag not in base_image
        assert any(line.startswith("$ debootstrap") for line in log)
    finally:
        engine.remove_image(tag)


def test_gvisor_is_used_only_when_the_engine_reports_it(docker_engine: DockerEngine) -> None:
    client = docker_engine.client
    has_runsc = "runsc" in (client.info().get("Runtimes") or {})
    auto = DockerEngine(SandboxSettings(runtime="auto"), client=client)
    assert auto.runtime() == ("runsc" if has_runsc else "runc")
    if not has_runsc:
        with pytest.raises(ConfigError, match="runsc"):
            DockerEngine(SandboxSettings(runtime="runsc"), client=client).runtime()


def test_the_seed_flavour_debian_names_the_minimal_base_image(docker_engine: DockerEngine) -> None:
    engine = DockerEngine(SandboxSettings(), client=docker_engine.client)
    assert engine.ensure_base_image("debian") == engine.ensure_base_image("minimal")
    assert engine.ensure_base_image("debian").startswith("envfactory/base:")
    with pytest.raises(ConfigError, match="flavour"):
        engine.ensure_base_image("alpine")


def test_many_async_users_of_a_small_pool_all_finish(
    docker_engine: DockerEngine, base_image: str
) -> None:
    """Regression: waiting for a slot inside worker threads starved the removals."""
    engine = DockerEngine(
        SandboxSettings(pool_size=1),
        client=docker_engine.client,
        run_id=docker_engine.run_id,
        pool_wait_s=300,
    )

    async def one(i: int) -> str:
        async with engine.asandbox(base_image, purpose=Purpose.TEST) as sb:
            return (await sb.aexec(f"echo {i}")).stdout.strip()

    async def many() -> list[str]:
        # Fewer worker threads than waiting users, whatever the machine's core count.
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(max_workers=4))
        return await asyncio.gather(*(one(i) for i in range(10)))

    assert asyncio.run(many()) == [str(i) for i in range(10)]


def test_running_pip_in_the_python_base_image_changes_no_system_file(
    docker_engine: DockerEngine, base_image: str
) -> None:
    """Stale bytecode left by the image build would be rewritten by the first pip run of
    every task, and the gates would report the oracle as tampering with site-packages."""
    with docker_engine.sandbox(base_image, purpose=Purpose.TEST) as sb:
        sb.exec("touch /tmp/mark && sleep 1")
        sb.exec(
            "python3 -m pip install --no-index --dry-run --ignore-installed pip; "
            "python3 -m pip list; python3 -m pip download --no-index nothing; true"
        )
        changed = sb.exec("find /usr /etc -newer /tmp/mark -type f 2>/dev/null | head").stdout
    assert changed.strip() == ""
