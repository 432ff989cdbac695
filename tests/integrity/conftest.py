"""Fixtures for the integrity corpus: the selected tasks' states, each verified once per session."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from envfactory.store import ArtifactStore

from .corpus_states import Entry, Outcome, check_task


def _selected_entries(session: pytest.Session) -> list[Entry]:
    """The corpus tasks of the Docker tests selected in this session (-k aware), once each."""
    seen: dict[str, Entry] = {}
    for item in session.items:
        callspec = getattr(item, "callspec", None)
        entry = callspec.params.get("entry") if callspec else None
        if isinstance(entry, Entry) and item.get_closest_marker("docker"):
            seen.setdefault(entry.name, entry)
    return list(seen.values())


@pytest.fixture(scope="session")
def corpus_outcomes(
    request, docker_engine, base_image, tmp_path_factory
) -> dict[str, Outcome | BaseException]:  # type: ignore[no-untyped-def]
    """{task name: its Outcome, or the exception that stopped it}, three tasks at a time."""
    artifacts = ArtifactStore(Path(tmp_path_factory.mktemp("corpus-artifacts")))

    def one(entry: Entry) -> Outcome | BaseException:
        try:
            return check_task(docker_engine, entry, artifacts)
        except Exception as exc:  # reported per task by the test that reads it
            return exc

    entries = _selected_entries(request.session)
    with ThreadPoolExecutor(max_workers=3) as pool:
        return dict(zip([e.name for e in entries], pool.map(one, entries), strict=True))
