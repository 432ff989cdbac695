"""The oracle-derived probes for SQLite outputs: the reference's rows changed through the
database (`probes.database`), never by editing the file's bytes.

Each is the database counterpart of a probe on text outputs, applied to the oracle state
and built per gate run (`row_probes`); each changes only rows the reference inserted or
changed, with the database's triggers suspended:

- `TruncatedRows` (as `truncated-outputs`): the last row the reference inserted goes; in a
  table where it only changed rows, the last changed row gets its old values back;
- `ZeroedCells`, `ScaledCells` (as `perturbed-numbers-*`): every numeric cell the reference
  set becomes 0, or ×1.5;
- `PlaceholderCells` (as `placeholder-lines`): every text cell the reference set becomes
  ``placeholder`` where the schema allows it;
- `ColumnsReverted` (as `fields-dropped`): in each changed row, the last column the
  reference changed keeps its old value (the status set, its date not);
- `PermutedCells`: the values the reference set, rotated among the rows it set them in
  (`permute`): every count, sum, extreme and distinct value kept, each row wrong.

Two more change rows the reference did *not* change, as a solver's UPDATE would
(triggers firing): `SupersetRows` (as `superset-lines`) gives every look-alike row — one
whose changed columns held what a changed row's held before — the same change as well
(in a table without look-alikes, every other row: a blanket UPDATE);
`OtherRecordsChanged` starts from the database the task started with and makes the
reference's changes to as many *other* rows instead (look-alikes first): the same counts,
the wrong records. A verifier rewarding it checks how many records changed, never which:
always a shortcut (a task asks for particular records; one that lets the solver pick any
N of them would have to say so, and no sound verifier of ours does).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from envfactory.core.models import EnvironmentSpec

from .base import Probe, qs
from .database import (
    SIDECARS,
    Change,
    DatabaseChanges,
    TableChanges,
    copy_row,
    delete_row,
    is_sqlite,
    rewritten,
    set_cell,
    set_cells,
)
from .history import OracleEdit
from .numbers import embedded_writes, within_budget
from .permute import rotated

#: at most this many look-alike rows get the reference's change (`SupersetRows`)
MAX_ADDED = 50
PLACEHOLDER = "placeholder"


def written_over(files: dict[str, bytes]) -> str:
    """Shell writing each file; beside a database, the files SQLite would replay over it."""
    stale = [p + s for p, data in sorted(files.items()) if is_sqlite(data) for s in SIDECARS]
    return (f"rm -f {qs(stale)}\n" if stale else "") + embedded_writes(files)


class FilesWrittenOver(OracleEdit):
    """Shared shape of the probes built as whole files (databases rewritten on the host,
    list files rewritten): written over the oracle's (`written_over`)."""

    def __init__(self, files: dict[str, bytes] | None = None) -> None:
        self.files = dict(files or {})

    @property
    def touched(self) -> tuple[str, ...]:
        return tuple(sorted(self.files))

    def edits(self, spec: EnvironmentSpec) -> str:
        return written_over(self.files)


class TruncatedRows(FilesWrittenOver):
    """Applied to the oracle state: in every SQLite database the reference solution
    changed, the last row it inserted into each table is deleted — or, where it only
    changed rows, the last changed row gets its old values back — through SQLite, so
    the file stays a valid database. Fools a verifier that checks only some of the rows
    the task writes. Built per gate run (`row_probes`); never in the default battery."""

    name = "truncated-rows"


class ZeroedCells(FilesWrittenOver):
    """Applied to the oracle state: every numeric cell the reference solution set in an
    SQLite database becomes 0 (through SQLite; keys kept). Fools a verifier that checks
    which rows changed and never their figures. Built per gate run (`row_probes`)."""

    name = "perturbed-cells-zero"


class ScaledCells(FilesWrittenOver):
    """Applied to the oracle state: every numeric cell the reference solution set in an
    SQLite database is multiplied by 1.5 (an integer stays an integer). Fools a verifier
    whose comparison of figures is one-sided or far too tolerant. Built per gate run
    (`row_probes`)."""

    name = "perturbed-cells-scaled"


class PlaceholderCells(FilesWrittenOver):
    """Applied to the oracle state: every text cell the reference solution set in an
    SQLite database becomes ``placeholder`` where the schema's constraints allow it.
    Fools a verifier that counts or locates the changed rows and never reads their
    values. Built per gate run (`row_probes`)."""

    name = "placeholder-cells"


class ColumnsReverted(FilesWrittenOver):
    """Applied to the oracle state: in every row the reference solution changed in two
    columns or more, the last of them keeps its old value (a status set, its date not).
    Fools a verifier that checks one column of the change and not the one beside it.
    Built per gate run (`row_probes`)."""

    name = "columns-reverted"


class PermutedCells(FilesWrittenOver):
    """Applied to the oracle state: in every SQLite table the reference solution wrote,
    the values it set in each column are rotated among the rows it set them in, so that
    the table's count, sums, extremes and distinct values stay the same and the rows hold
    each other's values. Fools a verifier that checks a table by its aggregates and never
    which row holds which value. Built per gate run (`row_probes`)."""

    name = "permuted-cells"


class SupersetRows(FilesWrittenOver):
    """Applied to the oracle state: every row the reference solution did not change whose
    changed columns held what a changed row's held before (a look-alike: another
    ``pending`` ticket) gets that row's change too — in a table without look-alikes, every
    other row (a blanket UPDATE) — up to 50 rows, triggers firing. Fools a verifier that
    checks the right rows changed but not that no other did. Built per gate run
    (`row_probes`)."""

    name = "superset-rows"


class OtherRecordsChanged(FilesWrittenOver):
    """From the database the task started with, the reference solution's changes made to
    as many *other* rows of each table (look-alikes first), triggers firing: the same
    counts, the wrong records. Fools a verifier that counts the changed rows and checks
    each looks changed, never which ones. Always a shortcut when rewarded. Built per gate
    run (`row_probes`)."""

    name = "other-records-changed"


def zero_like(v: int | float) -> int | float:
    return 0 if isinstance(v, int) else 0.0


def scaled_up(v: int | float) -> int | float:
    if isinstance(v, int):
        return int((Decimal(v) * Decimal("1.5")).quantize(Decimal(1), rounding=ROUND_HALF_UP))
    return v * 1.5


def _set_cells_where(pick: Callable[[Any], Any | None]) -> Change:
    """A change setting every cell the reference set for which `pick` gives a value."""

    def change(conn: sqlite3.Connection, db: DatabaseChanges) -> bool:
        done = False
        for t in db.tables:
            for rid in (*t.changed, *t.inserted):
                for i in t.changed_columns(rid):
                    new = pick(t.after[rid][i])
                    if new is not None:
                        done = set_cell(conn, t, rid, i, new) or done
        return done

    return change


def _number(rewrite: Callable[[int | float], int | float]) -> Callable[[Any], Any | None]:
    def pick(v: Any) -> Any | None:
        ok = isinstance(v, int | float) and not isinstance(v, bool)
        return rewrite(v) if ok else None

    return pick


def placeholder_for(v: Any) -> str | None:
    return PLACEHOLDER if isinstance(v, str) and v != PLACEHOLDER else None


def _truncate(conn: sqlite3.Connection, db: DatabaseChanges) -> bool:
    done = False
    for t in db.tables:
        if t.inserted:
            done = delete_row(conn, t, t.inserted[-1]) or done
        elif t.changed:
            rid = t.changed[-1]
            old = {i: t.before[rid][i] for i in t.changed_columns(rid)}
            done = set_cells(conn, t, rid, old) or done
    return done


def _revert_last_column(conn: sqlite3.Connection, db: DatabaseChanges) -> bool:
    done = False
    for t in db.tables:
        for rid in t.changed:
            cols = t.changed_columns(rid)
            if len(cols) >= 2:
                done = set_cell(conn, t, rid, cols[-1], t.before[rid][cols[-1]]) or done
    return done


def _permute(conn: sqlite3.Connection, db: DatabaseChanges) -> bool:
    done = False
    for t in db.tables:
        order = [*t.changed, *t.inserted]
        cells = {rid: {i: t.after[rid][i] for i in t.changed_columns(rid)} for rid in order}
        for rid, values in rotated(cells, sorted(order)).items():
            done = set_cells(conn, t, rid, values) or done
    return done


def _pattern(t: TableChanges) -> tuple[tuple[int, ...], dict[tuple[Any, ...], dict[int, Any]]]:
    """The columns the reference set to one value in every row it changed in `t` (a
    status, a date; else every column it changed) and, by those columns' old values, the
    change it made there: a look-alike row held what a changed row's held before."""
    changed = [set(t.changed_columns(rid)) for rid in t.changed]
    every = set.intersection(*changed) if changed else set()
    same = {i for i in every if len({_key(t.after[rid][i]) for rid in t.changed}) == 1}
    cols = tuple(sorted(same or set().union(*changed)))
    out: dict[tuple[Any, ...], dict[int, Any]] = {}
    for rid in t.changed:
        key = tuple(t.before[rid][i] for i in cols)
        out.setdefault(key, {i: t.after[rid][i] for i in cols})
    return cols, out


def _key(v: Any) -> tuple[str, Any]:
    return (type(v).__name__, v)


def _superset(conn: sqlite3.Connection, db: DatabaseChanges) -> bool:
    """Look-alikes get their twin's change; in a table without one, every other row gets
    the first change (a blanket UPDATE that the task's condition should have limited)."""
    done, added = False, 0
    for t in db.tables:
        if not t.changed:
            continue
        cols, by_old = _pattern(t)
        others = [r for r in sorted(t.after) if r not in t.changed and r not in t.inserted]
        found = {r: by_old.get(tuple(t.after[r][i] for i in cols)) for r in others}
        alike = {r: c for r, c in found.items() if c is not None}
        if not alike:
            blanket = {i: t.after[t.changed[0]][i] for i in cols}
            alike = {r: blanket for r in others}
        for rid, change in alike.items():
            if added >= MAX_ADDED:
                return done
            if set_cells(conn, t, rid, change):
                done, added = True, added + 1
    return done


def _others(conn: sqlite3.Connection, db: DatabaseChanges) -> bool:
    """Module docstring; False (nothing built) when some table has too few other rows
    that take the change."""
    done = False
    for t in db.tables:
        if not t.changed or _reached(conn, t):
            continue  # nothing changed in place, or an earlier table's triggers did it
        cols, by_old = _pattern(t)
        changes = [{i: t.after[rid][i] for i in t.changed_columns(rid)} for rid in t.changed]
        others = [r for r in sorted(t.before) if r not in t.changed]
        alike = [r for r in others if tuple(t.before[r][i] for i in cols) in by_old]
        made = 0
        for rid in alike + [r for r in others if r not in alike]:
            if made == len(changes):
                break
            made += set_cells(conn, t, rid, changes[made])
        if made < len(changes):
            return False
        done = True
    return done


def _reached(conn: sqlite3.Connection, t: TableChanges) -> bool:
    """Whether `t` no longer holds the rows it started with."""
    q = '"' + t.name.replace('"', '""') + '"'
    now = {r[0]: tuple(r[1:]) for r in conn.execute(f"SELECT rowid, * FROM {q}")}
    return now != dict(t.before)


def duplicate_row(conn: sqlite3.Connection, db: DatabaseChanges) -> bool:
    """A copy of the last row the reference inserted (else changed) in each table."""
    done = False
    for t in db.tables:
        rids = t.inserted or t.changed
        done = copy_row(conn, t, rids[-1]) or done
    return done


_BUILT: tuple[tuple[type[FilesWrittenOver], Change, bool, bool], ...] = (
    # class, change, from the pristine database, triggers firing
    (TruncatedRows, _truncate, False, False),
    (ZeroedCells, _set_cells_where(_number(zero_like)), False, False),
    (ScaledCells, _set_cells_where(_number(scaled_up)), False, False),
    (PlaceholderCells, _set_cells_where(placeholder_for), False, False),
    (ColumnsReverted, _revert_last_column, False, False),
    (PermutedCells, _permute, False, False),
    (SupersetRows, _superset, False, True),
    (OtherRecordsChanged, _others, True, True),
)


def row_probes(databases: tuple[DatabaseChanges, ...]) -> tuple[Probe, ...]:
    """The probes above for the databases the oracle changed; each only where it changes
    something and fits the script's budget."""
    out: list[Probe] = []
    for cls, change, pristine, triggers in _BUILT:
        files = {}
        for db in databases:
            data = rewritten(db, change, from_pristine=pristine, triggers=triggers)
            if data is not None:
                files[db.path] = data
        files = within_budget(files)
        if files:
            out.append(cls(files))
    return tuple(out)
