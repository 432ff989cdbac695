"""Fixtures for the integrity corpus: every task's states verified once per session."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from envfactory.store import ArtifactStore

from .corpus_states import Outcome, check_task, manifest


@pytest.fixture(scope="session")
def corpus_outcomes(
    docker_engine, base_image, tmp_path_factory
) -> dict[str, Outcome | BaseException]:  # type: ignore[no-untyped-def]
    """{task name: its Outcome, or the exception that stopped it}, three tasks at a time."""
    artifacts = ArtifactStore(Path(tmp_path_factory.mktemp("corpus-artifacts")))

    def one(entry):  # type: ignore[no-untyped-def]
        try:
            return check_task(docker_engine, entry, artifacts)
        except Exception as exc:  # reported per task by the test that reads it
            return exc

    entries = manifest()
    with ThreadPoolExecutor(max_workers=3) as pool:
        return dict(zip([e.name for e in entries], pool.map(one, entries), strict=True))
