"""API fixtures: an app over a fresh store (SQLite, and PostgreSQL when
ENVFACTORY_TEST_POSTGRES_URL is set), reviewers in that store, a recording decision sink,
a queue with findings in it, and signing in to the pages the way a browser does."""

from __future__ import annotations

import os
import re
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
from envfactory.core.models import (
    AgentRole,
    Evidence,
    PathChange,
    ReviewerRole,
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
    sink: Sink
    tokens: dict[str, str]

    def auth(self, who: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[who]}"}

    def sign_in(self, who: str) -> str:
        """Sign in through the pages (form + its CSRF token); the page session's CSRF token."""
        return sign_in(self.client, self.tokens[who])


def form_token(html: str) -> str:
    """The CSRF token a rendered form carries."""
    found = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert found, "the page has no form with a CSRF token"
    return found.group(1)


def sign_in(client: TestClient, token: str) -> str:
    page = client.get("/ui/login")
    res = client.post(
        "/ui/login",
        data={"token": token, "next": "/ui/queue", "csrf_token": form_token(page.text)},
        follow_redirects=False,
    )
    assert res.status_code == 303 and res.headers["location"] == "/ui/queue", res.text
    return form_token(client.get("/ui/queue").text)


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
            )
            for i in range(8)
        )
        store.trajectories.add(
            Trajectory(id=tid, role=AgentRole.RED_TEAM, env_id=env_id, steps=steps)
        )
    finding = ShortcutFinding(
        id=f"find-{n}",
        env_id=env_id,
        source="trajectory",
        rule="edits-tests",
        evidence=Evidence(
            summary="the solver rewrote tests/test_app.py to always pass",
            diff=(
                PathChange(path="/workspace/tests/test_app.py", kind="C"),
                PathChange(path="/workspace/conftest.py", kind="A"),
                PathChange(path="/workspace/data.csv", kind="D"),
            ),
            commands=("sed -i 's/assert .*/assert True/' tests/test_app.py",),
            trajectory_id=tid,
            step_indexes=(4,),
        ),
    )
    store.findings.add(finding)
    item = ReviewItem(id=f"rev-{n}", finding_id=finding.id, env_id=env_id)
    store.reviews.add(item)
    return item


@pytest.fixture
def api(tmp_path: Path, store: Store) -> Iterator[Api]:
    # a model is configured, so any seed can run (with the scripted default, only seeds
    # with recorded scripts are accepted: tests/api/test_seed_upload.py)
    settings = Settings(home=tmp_path / "home", database_url=None, agents=MODEL_CONFIGURED)
    tokens = {
        "ana": store.reviewers.add("ana", ReviewerRole.REVIEWER),
        "bo": store.reviewers.add("bo", ReviewerRole.REVIEWER),
        "vic": store.reviewers.add("vic", ReviewerRole.VIEWER),
    }
    sink = Sink()
    app = create_app(
        settings,
        store=store,
        artifacts=ArtifactStore(tmp_path / "artifacts"),
        on_decision=sink,
        on_seed=store_only,
    )
    with TestClient(app) as client:
        yield Api(client, store, sink, tokens)
