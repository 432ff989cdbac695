"""SQLite connections are configured for concurrent use: WAL, busy timeout, foreign keys,
and write sessions that take the write lock at BEGIN."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from envfactory.store import Store
from envfactory.store.db import BUSY_TIMEOUT_MS, make_engine
from envfactory.store.migrate import upgrade


def test_sqlite_connections_use_wal_busy_timeout_and_foreign_keys(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'x.db'}")
    with engine.connect() as conn:
        pragma = lambda name: conn.exec_driver_sql(f"PRAGMA {name}").scalar()  # noqa: E731
        assert pragma("journal_mode") == "wal"
        assert pragma("busy_timeout") == BUSY_TIMEOUT_MS
        assert pragma("foreign_keys") == 1
    engine.dispose()
    migrations_engine = make_engine(f"sqlite:///{tmp_path / 'x.db'}", foreign_keys=False)
    with migrations_engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 0
    migrations_engine.dispose()


def test_a_write_session_holds_the_write_lock_from_its_start(tmp_path: Path) -> None:
    """While one write session is open (even before it writes), another writer cannot begin."""
    url = f"sqlite:///{tmp_path / 'store.db'}"
    upgrade(url)
    with Store.open(url) as store:
        _check_locks(store, tmp_path / "store.db")


def _check_locks(store: Store, path: Path) -> None:
    with store.session() as tx:
        assert tx.db.connection().exec_driver_sql("SELECT 1").scalar() == 1  # BEGIN IMMEDIATE ran
        other = sqlite3.connect(str(path), timeout=0, isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")
            locked = False
        except sqlite3.OperationalError as exc:
            locked = "locked" in str(exc)
        finally:
            other.close()
    assert locked
    with store.session(readonly=True) as tx:  # a reader takes no write lock
        tx.db.connection().exec_driver_sql("SELECT 1")
        other = sqlite3.connect(str(path), timeout=0, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        other.execute("ROLLBACK")
        other.close()


def test_a_connection_opened_during_anothers_write_still_gets_wal(tmp_path: Path) -> None:
    """Switching a rollback-mode file to WAL fails at once (no busy handler) while another
    connection writes; the engine waits the write out instead of failing to connect (three
    concurrent migrations of a fresh store failed this way)."""
    path = tmp_path / "fresh.db"
    writer = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    writer.execute("CREATE TABLE t (x)")
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("INSERT INTO t VALUES (1)")
    timer = threading.Timer(0.5, writer.execute, ["COMMIT"])
    timer.start()
    engine = make_engine(f"sqlite:///{path}")
    try:
        with engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("SELECT x FROM t").scalar() == 1  # after the commit
    finally:
        timer.join()
        engine.dispose()
        writer.close()
