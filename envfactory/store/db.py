"""Engines for SQLite (the embedded default) and PostgreSQL, with the settings that make them
safe under concurrent writers.

SQLite invariants (every connection): WAL journal, ``busy_timeout``, ``foreign_keys=ON``,
and transactions we begin ourselves. pysqlite's own transaction handling begins lazily
before the first DML statement, which lets a read-then-write transaction lose a race with
``SQLITE_BUSY`` that ``busy_timeout`` cannot wait out. So the driver is put in autocommit
mode and we emit ``BEGIN`` (readers) or ``BEGIN IMMEDIATE`` (writers: the write lock is
taken up front, so a writer waits its turn instead of failing halfway).

PostgreSQL needs nothing special: writers that must not race use ``SELECT … FOR UPDATE``
(``SKIP LOCKED`` for queue claims) inside the repositories.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url

from envfactory.core.errors import InvalidInput

BUSY_TIMEOUT_MS = 30_000
WAL_RETRY_S = 0.02
#: Execution option read by the ``begin`` hook: ``"IMMEDIATE"`` takes the write lock at once.
SQLITE_BEGIN = "sqlite_begin"


def is_sqlite(url: str) -> bool:
    return make_url(url).get_backend_name() == "sqlite"


def make_engine(url: str, *, foreign_keys: bool = True, echo: bool = False) -> Engine:
    """An engine for ``url``; SQLite gets WAL, busy_timeout, foreign keys and explicit BEGINs.

    ``foreign_keys=False`` is for migrations only: SQLite batch mode recreates tables, which
    foreign-key enforcement would block.
    """
    if not is_sqlite(url):
        engine = create_engine(url, echo=echo, pool_pre_ping=True)
    else:
        engine = create_engine(url, echo=echo, connect_args={"timeout": BUSY_TIMEOUT_MS / 1000})
        _install_sqlite_hooks(engine, foreign_keys=foreign_keys)
    _refuse_nul_text(engine)
    return engine


def _refuse_nul_text(engine: Engine) -> None:
    """Text with a NUL byte is bad input on both databases: PostgreSQL cannot hold it (its
    error reached users as a 503 "database error"), SQLite would store it silently."""

    @event.listens_for(engine, "before_cursor_execute")
    def _check(_conn: Any, _cur: Any, statement: str, params: Any, _ctx: Any, many: bool) -> None:
        for value in _texts(params):
            if "\x00" in value:
                raise InvalidInput(
                    "text values cannot contain NUL (0x00) bytes",
                    hint="remove the NUL byte from the value you sent (e.g. a %00 in a URL)",
                )


def _texts(params: Any) -> Iterator[str]:
    """Every str in a statement's parameters (a dict, a sequence, or many of them)."""
    if isinstance(params, str):
        yield params
    elif isinstance(params, dict):
        for v in params.values():
            yield from _texts(v)
    elif isinstance(params, (list, tuple)):
        for v in params:
            yield from _texts(v)


def _install_sqlite_hooks(engine: Engine, *, foreign_keys: bool) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # we emit BEGIN ourselves (see module docstring)
        cur = dbapi_conn.cursor()
        try:
            cur.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            _use_wal(cur)
            cur.execute(f"PRAGMA foreign_keys={'ON' if foreign_keys else 'OFF'}")
            cur.execute("PRAGMA synchronous=NORMAL")  # durable with WAL, far fewer fsyncs
        finally:
            cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        mode = conn.get_execution_options().get(SQLITE_BEGIN, "")
        conn.exec_driver_sql(f"BEGIN {mode}".strip())


def _busy(exc: sqlite3.OperationalError) -> bool:
    """SQLITE_BUSY or one of its extended codes ("database is locked")."""
    code = getattr(exc, "sqlite_errorcode", None)
    return (code & 0xFF) == sqlite3.SQLITE_BUSY if code is not None else "locked" in str(exc)


def _use_wal(cur: Any) -> None:
    """Switch the file to WAL, waiting out other writers.

    WAL is a property of the file (an in-memory database silently stays "memory"). Switching
    a file that is still in rollback mode needs its exclusive lock, and SQLite answers
    "database is locked" at once, without the busy handler, while another connection holds
    a write transaction on it, as when several processes open a fresh store together (three
    concurrent migrations did, in CI). So the switch is retried until ``BUSY_TIMEOUT_MS``.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            cur.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if not _busy(exc) or time.monotonic() > deadline:
                raise
            time.sleep(WAL_RETRY_S)
