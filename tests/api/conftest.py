"""API fixtures: an app over a fresh store (SQLite, and PostgreSQL when
ENVFACTORY_TEST_POSTGRES_URL is set), a token registry, a recording decision sink, and
a queue with findings in it."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine
from sqlalchemy.engine import make_url

from envfactory.api import create_app
from envfactory.api.app import store_only
from envfactory.api.auth import FileReviewers, Role
from envfactory.core.models import (
    AgentRole,
    Evidence,
    PathChange,
    ReviewItem,
    ShortcutFinding,
    ToolCall,
    Trajectory,
    TrajectoryStep,
)
from envfactory.core.settings import AgentSettings, AgentsSettings, Settings
from envfactory.store import ArtifactStore, Store
from envfactory.store.migrate import upgrade

PG_ENV = "ENVFACTORY_TEST_POSTGRES_URL"
MODEL_CONFIGURED = AgentsSettings(
    default=AgentSettings(backend="openai", model="test-model", base_url="http://127.0.0.1:9/v1")
)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'api.db'}"
        return
    base = os.environ.get(PG_ENV)
    if not base:
        pytest.skip(f"{PG_ENV} is not set (run scripts/start-postgres.sh)")
    schema = f"api_{uuid.uuid4().hex[:12]}"
    admin = create_engine(base)
    with admin.begin() as conn:
        conn.exec_driver_sql(f"CREATE SCHEMA {schema}")
    try:
        yield (
            make_url(base)
            .update_query_dict({"options": f"-csearch_path={schema}"})
            .render_as_string(hide_password=False)
        )
    finally:
        with admin.begin() as conn:
            conn.exec_driver_sql(f"DROP SCHEMA {schema} CASCADE")
        admin.dispose()


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    upgrade(db_url)
    with Store.open(db_url) as s:
        yield s


@dataclass
class Sink:
    """The workflow seam: records what it is told; can be told to fail."""

    told: list[ReviewItem] = field(default_factory=list)
    fail: bool = False

    async def __call__(self, item: ReviewItem) -> None:
        if self.fail:
            raise ConnectionError("temporal is down")
        self.told.append(item)


@dataclass
class Api:
    client: TestClient
    store: Store
    reviewers: FileReviewers
    sink: Sink
    tokens: dict[str, str]

    def auth(self, who: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[who]}"}


def add_item(store: Store, env_id: str = "env-a", *, traj: bool = True) -> ReviewItem:
    n = uuid.uuid4().hex[:8]
    tid = f"traj-{n}" if traj else None
    if traj:
        steps = tuple(
            TrajectoryStep(
                index=i,
                assistant_text=f"thinking {i}",
                tool_calls=(
                    ToolCall(id=f"c{i}", name="shell", arguments=f'{{"cmd": "step {i}"}}'),
                ),
                observations=(f"out {i}",),
            )  # fmt: skip
            for i in range(8)
        )
        store.trajectories.add(
            Trajectory(id=tid, role=AgentRole.RED_TEAM, env_id=env_id, steps=steps)
        )
    finding = ShortcutFinding(
        id=f"find-{n}", env_id=env_id, source="trajectory", rule="edits-tests",
        evidence=Evidence(
            summary="the solver rewrote tests/test_app.py to always pass",
            diff=(PathChange(path="/workspace/tests/test_app.py", kind="C"),
                  PathChange(path="/workspace/conftest.py", kind="A"),
                  PathChange(path="/workspace/data.csv", kind="D")),
            commands=("sed -i 's/assert .*/assert True/' tests/test_app.py",),
            trajectory_id=tid, step_indexes=(4,),
        ),
    )  # fmt: skip
    store.findings.add(finding)
    item = ReviewItem(id=f"rev-{n}", finding_id=finding.id, env_id=env_id)
    store.reviews.add(item)
    return item


@pytest.fixture
def api(tmp_path: Path, store: Store) -> Iterator[Api]:
    # a model is configured, so any seed can run (with the scripted default, only seeds
    # with recorded scripts are accepted: tests/api/test_seed_upload.py)
    settings = Settings(home=tmp_path / "home", database_url=None, agents=MODEL_CONFIGURED)
    reviewers = FileReviewers(tmp_path / "reviewers.json")
    tokens = {
        "ana": reviewers.add("ana", Role.REVIEWER),
        "bo": reviewers.add("bo", Role.REVIEWER),
        "vic": reviewers.add("vic", Role.VIEWER),
    }
    sink = Sink()
    app = create_app(settings, store=store, artifacts=ArtifactStore(tmp_path / "artifacts"),
                     reviewers=reviewers, on_decision=sink, on_seed=store_only)  # fmt: skip
    with TestClient(app) as client:
        yield Api(client, store, reviewers, sink, tokens)
