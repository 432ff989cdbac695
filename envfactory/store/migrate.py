"""Schema migrations, programmatically: upgrade, downgrade, current, head, check.

The Alembic scripts live in the top-level ``migrations`` package and are found through the
package (``script_location="migrations:"``), not a path or an ``alembic.ini``, so this works
from an installed wheel. ``ensure_schema`` is what command-line edges call: the embedded
SQLite default is upgraded automatically (under a file lock, so two processes starting on a
fresh home do not race); an external database is only checked, and a stale one is an
error that says to run ``envfactory db upgrade``.
"""

from __future__ import annotations

import fcntl
from pathlib import Path
from typing import Any

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.exc import DBAPIError

from envfactory.core.errors import ConfigError, StoreError
from envfactory.core.settings import Settings

from .db import SQLITE_BEGIN, make_engine
from .schema import metadata

SCRIPT_LOCATION = "migrations:"


def alembic_config() -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", SCRIPT_LOCATION)
    return cfg


def _run(url: str, fn: Any, *args: Any) -> None:
    # Foreign keys off on SQLite: batch mode recreates tables that others reference.
    # BEGIN IMMEDIATE: a migration reads alembic_version and then writes; a deferred BEGIN
    # would let two concurrent upgraders deadlock on the lock upgrade (SQLITE_BUSY at once).
    engine = make_engine(url, foreign_keys=False)
    try:
        with engine.execution_options(**{SQLITE_BEGIN: "IMMEDIATE"}).begin() as conn:
            cfg = alembic_config()
            cfg.attributes["connection"] = conn
            fn(cfg, *args)
    except DBAPIError as exc:
        shown = engine.url.render_as_string(hide_password=True)
        raise StoreError(f"migrating {shown} failed: {exc.orig}") from exc
    finally:
        engine.dispose()


def upgrade(url: str, revision: str = "head") -> None:
    _run(url, command.upgrade, revision)


def downgrade(url: str, revision: str) -> None:
    _run(url, command.downgrade, revision)


def head() -> str:
    heads = ScriptDirectory.from_config(alembic_config()).get_heads()
    if len(heads) != 1:
        raise ConfigError(f"migrations have {len(heads)} heads {heads}; merge them")
    return heads[0]


def current(url: str) -> str | None:
    """The database's revision, or None for an empty (never migrated) database."""
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()
    except DBAPIError as exc:
        shown = engine.url.render_as_string(hide_password=True)
        raise StoreError(
            f"cannot read the schema revision of {shown}: {exc.orig}",
            hint="is the database running and the URL right?",
        ) from exc
    finally:
        engine.dispose()


def check(url: str) -> list[Any]:
    """Differences between the ORM metadata and the migrated database (empty = in sync).

    The equivalent of ``alembic check``: run it on a database upgraded to head.
    """
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            ctx = MigrationContext.configure(conn, opts={"compare_type": True})
            return list(compare_metadata(ctx, metadata))
    finally:
        engine.dispose()


def ensure_schema(settings: Settings) -> str:
    """Make the database usable at head; returns its revision.

    Embedded default (no ``database_url``): create the home directory and upgrade.
    External database: refuse to run against a schema that is not at head.
    """
    url, want = settings.db_url, head()
    if settings.embedded_db:
        home = Path(settings.home)
        home.mkdir(parents=True, exist_ok=True)
        with open(home / ".migrate.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if current(url) != want:
                upgrade(url, "head")
        return want
    have = current(url)
    if have != want:
        raise ConfigError(
            f"database {settings.database_url!r} is at revision {have}, the code needs {want}",
            hint="run `envfactory db upgrade` (with the same ENVFACTORY_DATABASE_URL)",
        )
    return want
