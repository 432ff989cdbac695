"""Alembic environment: one configuration for SQLite and PostgreSQL.

``render_as_batch`` makes ALTERs work on SQLite (table copy); ``compare_type`` lets
autogenerate and ``envfactory db check`` see column type changes. The caller (see
``envfactory.store.migrate``) passes an open connection in ``config.attributes``; on
PostgreSQL an advisory lock keeps two processes from migrating at once.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import text

from envfactory.store.db import make_engine
from envfactory.store.schema import metadata

#: Arbitrary constant key for pg_advisory_xact_lock: "envfactory migrations".
PG_LOCK_KEY = 0x656E7666


def _configure_and_run(connection) -> None:  # type: ignore[no-untyped-def]
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_as_batch=True,
        compare_type=True,
    )
    with context.begin_transaction():
        if connection.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": PG_LOCK_KEY})
        context.run_migrations()


def run_migrations_online() -> None:
    connection = context.config.attributes.get("connection")
    if connection is not None:
        _configure_and_run(connection)
        return
    url = context.config.get_main_option("sqlalchemy.url")
    if not url:
        raise RuntimeError("no database: pass attributes['connection'] or sqlalchemy.url")
    engine = make_engine(url, foreign_keys=False)
    try:
        with engine.begin() as conn:
            _configure_and_run(conn)
    finally:
        engine.dispose()


if context.is_offline_mode():
    raise RuntimeError("offline (--sql) migrations are not supported; connect to a database")
run_migrations_online()
