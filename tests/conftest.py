"""Shared fixtures: a real Docker engine and the local base image (built once per session);
a migrated SQLite store and an artifact store, both in the test's tmp_path, and Settings
pointing there (nothing read from the host).

`docker_engine` labels everything with a per-session run id and removes it all at the end,
so tests leave nothing behind even when they fail half-way.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from envfactory.core.settings import Settings
from envfactory.store import ArtifactStore, Store
from envfactory.store.migrate import upgrade
from tests.file_order import DOCKER_S, UNKNOWN_S, load_seconds, longest_first


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The longest test files first (tests/file_order.py), so that two xdist workers end
    together; every worker collects the same order, as xdist requires."""
    recorded = load_seconds()

    def seconds_of(item: pytest.Item) -> float:
        if item.nodeid in recorded:
            return recorded[item.nodeid]
        return DOCKER_S if item.get_closest_marker("docker") else UNKNOWN_S

    items[:] = longest_first(items, seconds_of)


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
    engine.gc(run_id=engine.run_id, include_live=True, images=True, all_homes=True)


@pytest.fixture(scope="session")
def base_image(docker_engine) -> str:  # type: ignore[no-untyped-def]
    """`envfactory/base-python:<recipe>`: behaves like the official python image."""
    return docker_engine.ensure_base_image("python")


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Embedded defaults under tmp_path; explicit values win over any ENVFACTORY_* env."""
    return Settings(home=tmp_path / "home", database_url=None)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """A fresh SQLite store at head (tests/store overrides this with SQLite + PostgreSQL)."""
    url = f"sqlite:///{tmp_path / 'store.db'}"
    upgrade(url)
    with Store.open(url) as s:
        yield s


@pytest.fixture
def artifacts(tmp_path: Path) -> ArtifactStore:
    return ArtifactStore(tmp_path / "artifacts")
