"""Fixtures every package's tests may use: a migrated SQLite store and an artifact store,
both in the test's tmp_path, and Settings pointing there (nothing read from the host)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from envfactory.core.settings import Settings
from envfactory.store import ArtifactStore, Store
from envfactory.store.migrate import upgrade


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
