"""What the reference changed in an SQLite database, row by row, and that database changed
again through SQLite.

A probe that edits an SQLite file's bytes (cuts its last line, rewrites its digits) leaves
a corrupt file: every verifier gives 0 and nothing is tested. A solver's wrong answer is a
valid database holding wrong rows, so the probes on database outputs (`probes.rows`) are
built here from a row diff of the oracle's database against the pristine one, and make
their change with SQLite itself.

- `DatabaseChanges` (`database_changes`): for each SQLite file (by its header, not its
  name) the oracle's workspace adds or changes, per table with a rowid: the rows the
  reference inserted and the rows it changed, before and after. A database left in WAL
  mode is read with its log.
- `rewritten`: the oracle's database (or the pristine one) copied into a private
  directory *on the host*, changed there by Python's sqlite3 module in one transaction,
  checkpointed, and returned as the new file's bytes. The host, not the task image, runs
  SQLite: a task image need have neither python3 nor the sqlite3 CLI (a Debian minimal
  base image has neither, and a python image's sqlite3 module may be shadowed by the
  solver's files); the file SQLite writes is read by any later SQLite 3. The probe then
  writes those bytes over the oracle's file (`embedded_writes`) and removes its -wal,
  -shm and -journal files, whose stale frames SQLite would otherwise replay over it.
- Triggers: a probe that corrupts the reference's own rows suspends the database's
  triggers for its change (dropped and re-created, same SQL, in the same transaction), so
  that rows the reference did not change stay untouched; a probe that changes *other*
  rows as a solver's UPDATE would (`triggers=True`) lets them fire.

Each change is made cell by cell under a savepoint: a cell a constraint refuses (a CHECK,
NOT NULL, UNIQUE) keeps its value, so a probe changes only what the schema allows and
never makes a database SQLite itself would refuse.
"""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .numbers import MAX_FILE_BYTES, file_entries
from .workspace import SQLITE_MAGIC, Workspace, is_output

#: files SQLite keeps beside a database while it writes: replayed over it when stale
SIDECARS = ("-wal", "-shm", "-journal")
#: tables larger than this are not diffed (a table that big is rarely the answer itself)
MAX_ROWS = 20_000

Row = tuple[Any, ...]


def is_sqlite(data: bytes) -> bool:
    return data.startswith(SQLITE_MAGIC)


@dataclass(frozen=True)
class TableChanges:
    """One table's rows the reference inserted or changed (rowids ascending)."""

    name: str
    columns: tuple[str, ...]
    #: columns a probe leaves alone: the primary key and those a foreign key names
    keys: frozenset[str]
    before: Mapping[int, Row]
    after: Mapping[int, Row]
    inserted: tuple[int, ...]
    changed: tuple[int, ...]

    def changed_columns(self, rowid: int) -> tuple[int, ...]:
        """Indexes of the columns of `rowid` whose value the reference set (every
        non-key column of an inserted row)."""
        new = self.after[rowid]
        old = self.before.get(rowid)
        return tuple(
            i
            for i, c in enumerate(self.columns)
            if c not in self.keys
            and (old is None or old[i] != new[i] or type(old[i]) is not type(new[i]))
        )


@dataclass(frozen=True)
class DatabaseChanges:
    path: str
    oracle: Mapping[str, bytes]  # suffix ("", "-wal") → the oracle's files
    pristine: Mapping[str, bytes]  # the same for the database the task started with
    tables: tuple[TableChanges, ...]


def database_changes(oracle: Workspace, pristine: Workspace) -> tuple[DatabaseChanges, ...]:
    """Every SQLite database the oracle's workspace adds or changes (its file or its log),
    with the rows that changed; databases over `MAX_FILE_BYTES`, unreadable ones and ones
    whose rows did not change are left out."""
    after, before = file_entries(oracle), file_entries(pristine)
    out = []
    for path, entry in sorted(after.items()):
        if not is_sqlite(entry.data) or len(entry.data) > MAX_FILE_BYTES or not is_output(path):
            continue
        files = {s: after[path + s].data for s in ("", "-wal") if path + s in after}
        old = {s: before[path + s].data for s in ("", "-wal") if path + s in before}
        if files == old:
            continue
        try:
            tables = _diff(_tables(old), _tables(files))
        except sqlite3.Error:
            continue
        if tables:
            out.append(DatabaseChanges(path, files, old, tables))
    return tuple(out)


def _tables(
    files: Mapping[str, bytes],
) -> dict[str, tuple[tuple[str, ...], frozenset[str], dict[int, Row]]]:
    """name → (columns, key columns, rowid → row) of every rowid table of a database."""
    if "" not in files:
        return {}
    with _opened(files) as (db, _):
        names = [
            r[0]
            for r in db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        out = {}
        for name in names:
            try:
                cur = db.execute(f"SELECT rowid, * FROM {_ident(name)} LIMIT {MAX_ROWS + 1}")
            except sqlite3.Error:  # WITHOUT ROWID, or a virtual table
                continue
            rows = {r[0]: tuple(r[1:]) for r in cur}
            if len(rows) > MAX_ROWS:
                continue
            info = db.execute(f"PRAGMA table_info({_ident(name)})").fetchall()
            fks = db.execute(f"PRAGMA foreign_key_list({_ident(name)})").fetchall()
            keys = frozenset([r[1] for r in info if r[5]] + [r[3] for r in fks])
            out[name] = (tuple(r[1] for r in info), keys, rows)
        return out


def _diff(before: Mapping[str, Any], after: Mapping[str, Any]) -> tuple[TableChanges, ...]:
    out = []
    for name, (columns, keys, rows) in sorted(after.items()):
        old_cols, _, old_rows = before.get(name, (columns, keys, {}))
        if old_cols != columns:
            continue  # the schema changed: rows cannot be paired
        inserted = tuple(sorted(r for r in rows if r not in old_rows))
        changed = tuple(
            sorted(r for r in rows if r in old_rows and _typed(rows[r]) != _typed(old_rows[r]))
        )
        if inserted or changed:
            out.append(TableChanges(name, columns, keys, old_rows, rows, inserted, changed))
    return tuple(out)


def _typed(row: Row) -> tuple[tuple[str, Any], ...]:
    return tuple((type(v).__name__, v) for v in row)


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class _opened:
    """A private copy of a database's files, opened (autocommit: `rewritten` holds the
    transaction); yields (connection, database path)."""

    def __init__(self, files: Mapping[str, bytes]) -> None:
        self.files = files

    def __enter__(self) -> tuple[sqlite3.Connection, Path]:
        self.tmp = tempfile.TemporaryDirectory(prefix="envfactory-db-")
        path = Path(self.tmp.name) / "db"
        for suffix, data in self.files.items():
            Path(f"{path}{suffix}").write_bytes(data)
        self.db = sqlite3.connect(path, isolation_level=None)
        return self.db, path

    def __exit__(self, *exc: object) -> None:
        self.db.close()
        self.tmp.cleanup()


#: a change made inside the transaction; returns whether it changed anything
Change = Callable[[sqlite3.Connection, DatabaseChanges], bool]


def rewritten(
    db: DatabaseChanges, change: Change, *, from_pristine: bool = False, triggers: bool = False
) -> bytes | None:
    """The database after `change` (module docstring), or None when it changed nothing or
    SQLite refused it: the oracle's database (`from_pristine`: the one the task started
    with) changed with its triggers suspended (`triggers`: firing)."""
    files = db.pristine if from_pristine else db.oracle
    if "" not in files:
        return None
    try:
        with _opened(files) as (conn, path):
            conn.execute("BEGIN IMMEDIATE")
            suspended = [] if triggers else _suspend_triggers(conn)
            changed = change(conn, db)
            for sql in suspended:
                conn.execute(sql)
            conn.execute("COMMIT" if changed else "ROLLBACK")
            if not changed:
                return None
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            conn.close()
            data = path.read_bytes()
    except sqlite3.Error:
        return None
    return data if data != db.oracle.get("") else None


def _suspend_triggers(conn: sqlite3.Connection) -> list[str]:
    rows = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'").fetchall()
    for name, _ in rows:
        conn.execute(f"DROP TRIGGER {_ident(name)}")
    return [sql for _, sql in rows if sql]


def set_cell(
    conn: sqlite3.Connection, table: TableChanges, rowid: int, column: int, value: Any
) -> bool:
    """One cell set under a savepoint; False (and the cell kept) when a constraint
    refuses the value or it is the value already."""
    return set_cells(conn, table, rowid, {column: value})


def set_cells(
    conn: sqlite3.Connection, table: TableChanges, rowid: int, values: Mapping[int, Any]
) -> bool:
    """Several cells of one row set together under a savepoint (see `set_cell`)."""
    current = conn.execute(
        f"SELECT * FROM {_ident(table.name)} WHERE rowid = ?", (rowid,)
    ).fetchone()
    if current is None or all(_typed((current[i],)) == _typed((v,)) for i, v in values.items()):
        return False
    sets = ", ".join(f"{_ident(table.columns[i])} = ?" for i in values)
    return _savepoint(
        conn,
        f"UPDATE {_ident(table.name)} SET {sets} WHERE rowid = ?",
        (*values.values(), rowid),
    )


def _savepoint(conn: sqlite3.Connection, sql: str, args: Sequence[Any]) -> bool:
    conn.execute("SAVEPOINT probe_cell")
    try:
        conn.execute(sql, tuple(args))
    except sqlite3.Error:
        conn.execute("ROLLBACK TO probe_cell")
        conn.execute("RELEASE probe_cell")
        return False
    conn.execute("RELEASE probe_cell")
    return True


def delete_row(conn: sqlite3.Connection, table: TableChanges, rowid: int) -> bool:
    return _savepoint(conn, f"DELETE FROM {_ident(table.name)} WHERE rowid = ?", (rowid,))


def copy_row(conn: sqlite3.Connection, table: TableChanges, rowid: int) -> bool:
    """A copy of the row under a new rowid (its INTEGER PRIMARY KEY left to SQLite); False
    when a UNIQUE constraint or another refuses it."""
    info = conn.execute(f"PRAGMA table_info({_ident(table.name)})").fetchall()
    pks = [r for r in info if r[5]]
    alias = pks[0][1] if len(pks) == 1 and pks[0][2].upper() == "INTEGER" else None
    cols = ", ".join(_ident(c) for c in table.columns if c != alias)
    sql = f"INSERT INTO {_ident(table.name)} ({cols}) SELECT {cols} FROM {_ident(table.name)} WHERE rowid = ?"
    return _savepoint(conn, sql, (rowid,))
