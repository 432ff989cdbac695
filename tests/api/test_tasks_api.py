"""/api/tasks: list and show imported tasks (the CLI's fields), and start their durable
validation through the `on_validate` seam — suite or env ids, unknown keys refused with
the key named, reviewer role required, Temporal down answered 503 with nothing started."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from envfactory.api import create_app
from envfactory.api.app import store_only
from envfactory.core.errors import ConfigError
from envfactory.core.models import ReviewerRole
from envfactory.core.settings import Settings
from envfactory.store import ArtifactStore, Store
from envfactory.suites import import_tasks

TASKS = Path(__file__).resolve().parents[2] / "examples" / "tasks"


@dataclass
class Starter:
    """The validation seam: records what it is asked to start; can be told Temporal is down."""

    started: list[tuple[list[str], int | None, str | None]] = field(default_factory=list)
    down: bool = False

    async def __call__(self, env_ids: list[str], repeats: int | None, label: str | None) -> str:
        if self.down:
            raise ConfigError("cannot reach Temporal at 127.0.0.1:7233")
        self.started.append((env_ids, repeats, label))
        return f"validate-{label or 'ids'}-{len(self.started)}"


@dataclass
class TasksApi:
    client: TestClient
    starter: Starter
    ids: dict[str, str]
    auth: dict[str, dict[str, str]]


@pytest.fixture
def tasks_api(tmp_path: Path, store: Store) -> Iterator[TasksApi]:
    artifacts = ArtifactStore(tmp_path / "artifacts")
    paths = [TASKS / "csv-report", TASKS / "broken-accepts-noop"]
    report = import_tasks(paths, store, artifacts, suite="pair")
    import_tasks([TASKS / "wal-replay"], store, artifacts, suite="other")
    auth = {
        who: {"Authorization": f"Bearer {store.reviewers.add(who, role)}"}
        for who, role in (("ana", ReviewerRole.REVIEWER), ("vic", ReviewerRole.VIEWER))
    }
    starter = Starter()
    app = create_app(
        Settings(home=tmp_path / "home"),
        store=store,
        artifacts=artifacts,
        on_decision=store_only,
        on_seed=store_only,
        on_validate=starter,
    )
    with TestClient(app) as client:
        yield TasksApi(client, starter, {e.name: e.env_id for e in report.imported}, auth)


def test_tasks_are_listed_by_suite_with_the_fields_the_cli_shows(tasks_api: TasksApi) -> None:
    r = tasks_api.client.get("/api/tasks", params={"suite": "pair"}, headers=tasks_api.auth["vic"])
    assert r.status_code == 200
    rows = r.json()["items"]
    assert {t["env_id"] for t in rows} == set(tasks_api.ids.values())
    assert set(rows[0]) == {"env_id", "name", "suite", "status", "source", "outcome", "updated_at"}
    assert {(t["suite"], t["status"], t["outcome"]) for t in rows} == {("pair", "imported", None)}
    every = tasks_api.client.get("/api/tasks", headers=tasks_api.auth["vic"]).json()
    assert len(every["items"]) == 3 and every["next_cursor"] is None


def test_a_task_is_shown_with_its_origin_and_an_unknown_one_is_404(tasks_api: TasksApi) -> None:
    env_id = tasks_api.ids["csv-report"]
    r = tasks_api.client.get(f"/api/tasks/{env_id}", headers=tasks_api.auth["vic"])
    assert r.status_code == 200
    body = r.json()
    assert body["summary"]["name"] == "csv-report" and body["origin"]["suite"] == "pair"
    assert body["origin"]["path"].endswith("csv-report") and body["origin"]["files_key"]
    assert body["verifier_author"] == "import:harbor" and body["open_review_items"] == []
    missing = tasks_api.client.get("/api/tasks/env-000000000000", headers=tasks_api.auth["vic"])
    assert missing.status_code == 404 and "env-000000000000" in missing.json()["detail"]


def test_validating_a_suite_starts_one_workflow_for_its_tasks(tasks_api: TasksApi) -> None:
    r = tasks_api.client.post(
        "/api/tasks/validate", json={"suite": "pair", "repeats": 1}, headers=tasks_api.auth["ana"]
    )
    assert r.status_code == 202, r.text
    assert r.json()["workflow_id"] == "validate-pair-1"
    [(ids, repeats, label)] = tasks_api.starter.started
    assert sorted(ids) == sorted(tasks_api.ids.values()) and (repeats, label) == (1, "pair")


def test_validating_env_ids_checks_each_is_stored(tasks_api: TasksApi) -> None:
    env_id = tasks_api.ids["csv-report"]
    ok = tasks_api.client.post(
        "/api/tasks/validate", json={"env_ids": [env_id]}, headers=tasks_api.auth["ana"]
    )
    assert ok.status_code == 202 and ok.json()["env_ids"] == [env_id]
    bad = tasks_api.client.post(
        "/api/tasks/validate", json={"env_ids": [env_id, "env-nope"]}, headers=tasks_api.auth["ana"]
    )
    assert bad.status_code == 404 and "env-nope" in bad.json()["detail"]
    assert len(tasks_api.starter.started) == 1  # nothing started for the bad request


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ({"suite": "pair", "repeat": 1}, "repeat"),
        ({"suite": "pair", "env_ids": ["env-x"]}, "either `suite` or `env_ids`"),
        ({}, "either `suite` or `env_ids`"),
        ({"suite": "pair", "repeats": 0}, "repeats"),
    ],
)
def test_a_bad_validation_request_is_422_naming_the_problem(
    tasks_api: TasksApi, body: dict, named: str
) -> None:
    r = tasks_api.client.post("/api/tasks/validate", json=body, headers=tasks_api.auth["ana"])
    assert r.status_code == 422 and named in r.text
    assert tasks_api.starter.started == []


def test_an_empty_suite_is_refused_with_a_hint(tasks_api: TasksApi) -> None:
    r = tasks_api.client.post(
        "/api/tasks/validate", json={"suite": "nope"}, headers=tasks_api.auth["ana"]
    )
    assert r.status_code == 422 and "suite 'nope' has no stored tasks" in r.json()["detail"]


def test_validation_needs_a_reviewer_and_a_token(tasks_api: TasksApi) -> None:
    body = {"suite": "pair"}
    assert tasks_api.client.post("/api/tasks/validate", json=body).status_code == 401
    viewer = tasks_api.client.post("/api/tasks/validate", json=body, headers=tasks_api.auth["vic"])
    assert viewer.status_code == 403
    assert tasks_api.client.get("/api/tasks").status_code == 401
    assert tasks_api.starter.started == []


def test_temporal_down_is_a_503_that_says_so(tasks_api: TasksApi) -> None:
    tasks_api.starter.down = True
    r = tasks_api.client.post(
        "/api/tasks/validate", json={"suite": "pair"}, headers=tasks_api.auth["ana"]
    )
    assert r.status_code == 503 and "cannot reach Temporal" in r.json()["detail"]


def test_a_nul_byte_in_a_name_is_422_not_a_database_error(tasks_api: TasksApi) -> None:
    # found by the OpenAPI fuzzer on PostgreSQL (a 503 "database error"); SQLite here
    for body in ({"suite": "pair\x00"}, {"env_ids": ["env-\x00"]}):
        r = tasks_api.client.post("/api/tasks/validate", json=body, headers=tasks_api.auth["ana"])
        assert r.status_code == 422, r.text
        assert "NUL" in r.json()["detail"]
    assert (
        tasks_api.client.get("/api/tasks?suite=pair%00", headers=tasks_api.auth["ana"]).status_code
        == 422
    )
