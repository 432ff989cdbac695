"""Shared fixtures: a real Docker engine and the local base image (built once per session).

`docker_engine` labels everything with a per-session run id and removes it all at the end,
so tests leave nothing behind even when they fail half-way.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session")
def docker_engine() -> Iterator[object]:
    docker = pytest.importorskip("docker")
    from envfactory.core.settings import SandboxSettings
    from sandboxes import DockerEngine

    try:
        client = docker.from_env(timeout=900)
        client.ping()
    except docker.errors.DockerException as exc:
        pytest.skip(f"no Docker engine: {exc}")
    engine = DockerEngine(
        SandboxSettings(pool_size=8), client=client, run_id=f"test-{uuid.uuid4().hex[:8]}"
    )
    yield engine
    engine.gc(run_id=engine.run_id, include_live=True, images=True)


@pytest.fixture(scope="session")
def base_image(docker_engine) -> str:  # type: ignore[no-untyped-def]
    """`envfactory/base-python:<recipe>`: behaves like the official python image."""
    return docker_engine.ensure_base_image("python")
