"""Store fixtures parametrised over SQLite and PostgreSQL.

PostgreSQL tests are marked ``postgres`` and read ``ENVFACTORY_TEST_POSTGRES_URL``
(``eval "$(scripts/start-postgres.sh)"`` sets it); unset → skipped. Each test gets its own
schema (``search_path``), dropped afterwards, so tests never see each other's rows.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine
from sqlalchemy.engine import make_url

from envfactory.store import Store
from envfactory.store.migrate import upgrade
from tests.s3_server import s3_server

PG_ENV = "ENVFACTORY_TEST_POSTGRES_URL"


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A PostgreSQL URL whose search_path is a fresh, empty schema."""
    base = os.environ.get(PG_ENV)
    if not base:
        pytest.skip(f"{PG_ENV} is not set (run scripts/start-postgres.sh)")
    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = create_engine(base)
    with admin.begin() as conn:
        conn.exec_driver_sql(f"CREATE SCHEMA {schema}")
    url = make_url(base).update_query_dict({"options": f"-csearch_path={schema}"})
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.begin() as conn:
            conn.exec_driver_sql(f"DROP SCHEMA {schema} CASCADE")
        admin.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty database (no tables) on each backend."""
    if request.param == "postgres":
        return request.getfixturevalue("pg_url")
    return f"sqlite:///{tmp_path / 'store.db'}"


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    """A store migrated to head, on SQLite and on PostgreSQL."""
    upgrade(db_url)
    with Store.open(db_url) as s:
        yield s


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """The endpoint URL of a local S3-protocol server, shared by the session's tests."""
    with s3_server() as endpoint:
        yield endpoint
