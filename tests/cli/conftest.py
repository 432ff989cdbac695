"""CLI fixtures: `envfactory` run as a user runs it (typer's CliRunner), with settings
from ENVFACTORY_* variables pointing at a store in tmp_path — SQLite, and PostgreSQL
(a fresh schema) when ENVFACTORY_TEST_POSTGRES_URL is set."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine
from sqlalchemy.engine import make_url
from typer.testing import CliRunner, Result

from envfactory.cli import app
from envfactory.store.migrate import upgrade

PG_ENV = "ENVFACTORY_TEST_POSTGRES_URL"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str | None]:
    """None → the embedded SQLite default under ENVFACTORY_HOME; else a PostgreSQL schema."""
    if request.param == "sqlite":
        yield None
        return
    base = os.environ.get(PG_ENV)
    if not base:
        pytest.skip(f"{PG_ENV} is not set (run scripts/start-postgres.sh)")
    schema = f"cli_{uuid.uuid4().hex[:12]}"
    admin = create_engine(base)
    with admin.begin() as conn:
        conn.exec_driver_sql(f"CREATE SCHEMA {schema}")
    url = make_url(base).update_query_dict({"options": f"-csearch_path={schema}"})
    rendered = url.render_as_string(hide_password=False)
    upgrade(rendered)
    try:
        yield rendered
    finally:
        with admin.begin() as conn:
            conn.exec_driver_sql(f"DROP SCHEMA {schema} CASCADE")
        admin.dispose()


Cli = Callable[..., Result]


@pytest.fixture
def cli(tmp_path: Path, db_url: str | None, monkeypatch: pytest.MonkeyPatch) -> Cli:
    """`cli("task", "list", "--json")` → the Result; settings come from the environment."""
    monkeypatch.setenv("ENVFACTORY_HOME", str(tmp_path / "home"))
    if db_url:
        monkeypatch.setenv("ENVFACTORY_DATABASE_URL", db_url)
    else:
        monkeypatch.delenv("ENVFACTORY_DATABASE_URL", raising=False)
    runner = CliRunner()

    def run(*args: str) -> Result:
        return runner.invoke(app, list(args), catch_exceptions=False)

    return run


def as_json(result: Result) -> object:
    return json.loads(result.stdout)
