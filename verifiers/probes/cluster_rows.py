"""The oracle-derived probes for PostgreSQL clusters: the SQLite row probes' counterparts
(`probes.rows`), each a set of SQL statements run in the oracle state by a private server
of the cluster (`postgres.server_shell`), never an edit of its files.

Built per gate run from the pristine and oracle clusters' rows (`postgres.table_changes`)
for tasks in full-state scope; each changes only what its sentence says, every value set
through ``json_populate_record(NULL::table, …)`` so that it takes its column's type.

- `ClusterTruncatedRows` (as `truncated-rows`): the last row the reference inserted goes;
  else the last row it changed gets back the old values of the columns it had before;
  else the last row it deleted comes back (where the table's columns did not change);
- `ClusterZeroedCells`, `ClusterScaledCells`, `ClusterPlaceholderCells`,
  `ClusterColumnsReverted`, `ClusterPermutedCells`: as their SQLite twins;
- `ClusterSupersetRows`: every look-alike row gets a changed row's change too (none:
  every other row, a blanket UPDATE);
- `ClusterOtherRecords` (as `other-records-changed`): the reference's changes made to as
  many *other* rows, and its deletions made to as many other rows — a deleted row's
  look-alike (the copy the reference kept) goes and the deleted one stays, with the
  values the reference computed for its copy.

The probes that corrupt the reference's own rows run with triggers and foreign-key checks
off (``session_replication_role = replica``), so no other row moves; the two that change
other rows as a solver's statements would let them fire. Every statement stands alone
(``ON_ERROR_STOP`` off, autocommit): one that a constraint refuses changes nothing and
the rest still apply. A probe whose SQL passes `MAX_SQL` characters leaves out the tables
past it (the script is one exec argument).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from envfactory.core.models import EnvironmentSpec

from .base import Probe, q
from .permute import rotated, same
from .postgres import (
    Key,
    Table,
    TableChanges,
    TableId,
    ident,
    server_shell,
    sort_key,
    table_changes,
)
from .rows import placeholder_for, scaled_up, zero_like

#: the SQL of one probe, all clusters together (the script is one exec argument: 128 KiB)
MAX_SQL = 64 * 1024
#: at most this many look-alike rows get the reference's change (`ClusterSupersetRows`)
MAX_ADDED = 50
TRIGGERS_OFF = "SET session_replication_role = replica;"
TRIGGERS_ON = "SET session_replication_role = origin;"


class ClusterEdit(Probe):
    """Shared shape: per (data directory, database), SQL run by a private server."""

    #: whether the statements let triggers and foreign keys act (a solver's statements)
    triggers: ClassVar[bool] = False

    def __init__(self, sql: Mapping[tuple[str, str], str] | None = None) -> None:
        self.sql = dict(sql or {})

    @property
    def detail(self) -> str:
        return "databases: " + ", ".join(f"{d} {db}" for d, db in sorted(self.sql))

    def script(self, spec: EnvironmentSpec) -> str:
        """Each cluster's statements by its private server; exits 3 when none changed a
        row (or a cluster did not start): the state is then the oracle's, not an attack
        (`DID_NOT_APPLY`)."""
        parts = []
        for directory in sorted({d for d, _ in self.sql}):
            body = [server_shell(directory), "pg_up || exit 1", "APPLIED="]
            for (d, db), sql in sorted(self.sql.items()):
                if d == directory:
                    tag = _unused_tag(sql)
                    body.append(f"pg_apply {q(db)} <<'{tag}'\n{sql}\n{tag}")
            body.append('pg_down\n[ -n "$APPLIED" ]')
            parts.append("(\n" + "\n".join(body) + "\n) && __ef_applied=1")
        return (
            "__ef_applied=\n"
            + "\n".join(parts)
            + f'\n[ -n "$__ef_applied" ] || exit {DID_NOT_APPLY}\n'
        )


#: the probe script's exit status when it changed no row
DID_NOT_APPLY = 3


class ClusterTruncatedRows(ClusterEdit):
    """Applied to the oracle state: in every PostgreSQL table the reference solution
    changed, the last row it inserted is deleted — else the last row it changed gets its
    old values back, else the last row it deleted comes back — through the cluster's own
    server. Fools a verifier that checks only some of the rows the task writes. Built per
    gate run (`cluster_probes`); never in the default battery."""

    name = "pg-truncated-rows"


class ClusterZeroedCells(ClusterEdit):
    """Applied to the oracle state: every numeric value the reference solution set in a
    PostgreSQL table becomes 0 (through the cluster's server; keys kept). Fools a verifier
    that checks which rows changed and never their figures. Built per gate run
    (`cluster_probes`)."""

    name = "pg-perturbed-cells-zero"


class ClusterScaledCells(ClusterEdit):
    """Applied to the oracle state: every numeric value the reference solution set in a
    PostgreSQL table is multiplied by 1.5 (an integer stays an integer). Fools a verifier
    whose comparison of figures is one-sided or far too tolerant. Built per gate run
    (`cluster_probes`)."""

    name = "pg-perturbed-cells-scaled"


class ClusterPlaceholderCells(ClusterEdit):
    """Applied to the oracle state: every text value the reference solution set in a
    PostgreSQL table becomes ``placeholder`` where the schema's constraints allow it.
    Fools a verifier that counts or locates the changed rows and never reads their
    values. Built per gate run (`cluster_probes`)."""

    name = "pg-placeholder-cells"


class ClusterColumnsReverted(ClusterEdit):
    """Applied to the oracle state: in every PostgreSQL row the reference solution changed
    in two columns or more, the last of them keeps its old value (a status set, its date
    not). Fools a verifier that checks one column of the change and not the one beside
    it. Built per gate run (`cluster_probes`)."""

    name = "pg-columns-reverted"


class ClusterPermutedCells(ClusterEdit):
    """Applied to the oracle state: in every PostgreSQL table the reference solution
    wrote, the values it set in each column are rotated among the rows it set them in,
    so that the table's count, sums, extremes and distinct values stay the same and the
    rows hold each other's values. Fools a verifier that checks a migration or an update
    by its aggregates and never which row holds which value. Built per gate run
    (`cluster_probes`)."""

    name = "pg-permuted-cells"


class ClusterSupersetRows(ClusterEdit):
    """Applied to the oracle state: every PostgreSQL row the reference solution did not
    change whose changed columns held what a changed row's held before (another
    ``pending`` ticket) gets that row's change too — in a table without look-alikes,
    every other row (a blanket UPDATE) — up to 50 rows, triggers firing. Fools a verifier
    that checks the right rows changed but not that no other did. Built per gate run
    (`cluster_probes`)."""

    name = "pg-superset-rows"
    triggers = True


class ClusterOtherRecords(ClusterEdit):
    """Applied to the oracle state: in every PostgreSQL table, the rows the reference
    solution changed get their old values back and as many *other* rows (look-alikes
    first) get its changes; the rows it deleted stay and as many others go (a deleted
    row's look-alike — the duplicate the reference kept — first): the same counts, the
    wrong records. Fools a verifier that counts the changed or deleted rows, never which.
    Always a shortcut when rewarded. Built per gate run (`cluster_probes`)."""

    name = "pg-other-records-changed"
    triggers = True


# -- statements -----------------------------------------------------------------------


def _literal(value: Any) -> str:
    return "'" + json.dumps(value).replace("'", "''") + "'"


def _record(t: TableChanges, values: Mapping[str, Any]) -> str:
    return f"json_populate_record(NULL::{t.name}, {_literal(dict(values))}) AS v"


def _match(t: TableChanges) -> str:
    return " AND ".join(f"t.{ident(k)} = v.{ident(k)}" for k in t.key)


def _key_values(t: TableChanges, k: Key) -> dict[str, Any]:
    row = t.after.get(k) or t.before[k]
    return {c: row.get(c) for c in t.key}


def _differs(columns: Sequence[str]) -> str:
    """The row's values differ from the record's (an UPDATE that changes nothing reports
    no row, so a probe knows whether it applied)."""
    mine = ", ".join(f"t.{ident(c)}" for c in columns)
    theirs = ", ".join(f"v.{ident(c)}" for c in columns)
    return f"ROW({mine}) IS DISTINCT FROM ROW({theirs})"


def update_row(t: TableChanges, k: Key, values: Mapping[str, Any]) -> str:
    sets = ", ".join(f"{ident(c)} = v.{ident(c)}" for c in values)
    record = _record(t, {**_key_values(t, k), **values})
    return f"UPDATE {t.name} AS t SET {sets} FROM {record} WHERE {_match(t)} AND {_differs(list(values))};"


def delete_row(t: TableChanges, k: Key) -> str:
    return f"DELETE FROM {t.name} AS t USING {_record(t, _key_values(t, k))} WHERE {_match(t)};"


def insert_row(t: TableChanges, row: Mapping[str, Any]) -> str:
    columns = [c for c in t.columns if c in row]
    names = ", ".join(ident(c) for c in columns)
    picked = ", ".join(f"v.{ident(c)}" for c in columns)
    return f"INSERT INTO {t.name} ({names}) SELECT {picked} FROM {_record(t, row)};"


# -- what each probe does to one table ------------------------------------------------

Builder = Callable[[TableChanges], list[str]]


def _truncate(t: TableChanges) -> list[str]:
    if t.inserted:
        return [delete_row(t, t.inserted[-1])]
    if t.changed:
        k = t.changed[-1]
        old = {c: t.before[k][c] for c in t.cells[k] if c in t.before[k]}
        return [update_row(t, k, old)] if old else []
    if t.deleted and t.same_columns:
        return [insert_row(t, t.before[t.deleted[-1]])]
    return []


def _set_where(pick: Callable[[Any], Any | None]) -> Builder:
    def build(t: TableChanges) -> list[str]:
        out = []
        for k, cells in t.cells.items():
            values = {c: pick(v) for c, v in cells.items() if pick(v) is not None}
            if values:
                out.append(update_row(t, k, values))
        return out

    return build


def _number(rewrite: Callable[[int | float], int | float]) -> Callable[[Any], Any | None]:
    def pick(v: Any) -> Any | None:
        if isinstance(v, bool) or not isinstance(v, int | float):
            return None
        new = rewrite(v)
        return None if same(new, v) else new

    return pick


def _revert_last_column(t: TableChanges) -> list[str]:
    out = []
    for k in t.changed:
        if len(t.cells[k]) < 2:
            continue
        old = [c for c in t.columns if c in t.cells[k] and c in t.before[k]]
        if old:
            out.append(update_row(t, k, {old[-1]: t.before[k][old[-1]]}))
    return out


def _permute(t: TableChanges) -> list[str]:
    """One statement per column, all its rows at once (a UNIQUE column's values swap)."""
    moved = rotated(t.cells, sorted(t.cells, key=sort_key))
    out = []
    for c in sorted({c for values in moved.values() for c in values}):
        records = [{**_key_values(t, k), c: v[c]} for k, v in moved.items() if c in v]
        out.append(
            f"UPDATE {t.name} AS t SET {ident(c)} = v.{ident(c)} FROM "
            f"json_populate_recordset(NULL::{t.name}, {_literal(records)}) AS v "
            f"WHERE {_match(t)} AND {_differs([c])};"
        )
    return out


def _pattern(t: TableChanges) -> dict[tuple[Any, ...], dict[str, Any]]:
    """By the old values of the columns the reference set alike in every changed row (a
    status, a date; else every column it set), the change it made there."""
    changed = [set(c for c in t.cells[k] if c in t.before[k]) for k in t.changed]
    if not changed or not all(changed):
        return {}
    every = set.intersection(*changed)
    alike = {c for c in every if len({json.dumps(t.after[k][c]) for k in t.changed}) == 1}
    cols = sorted(alike or set().union(*changed))
    out: dict[tuple[Any, ...], dict[str, Any]] = {}
    for k in t.changed:
        old = tuple(json.dumps(t.before[k][c]) for c in cols)
        out.setdefault(old, {c: t.after[k][c] for c in cols})
    return out


def _untouched(t: TableChanges) -> list[Key]:
    """Rows the reference neither changed nor deleted, in key order."""
    return [k for k in t.before if k in t.after and k not in t.cells]


def _look_alikes(t: TableChanges) -> list[tuple[Key, dict[str, Any]]]:
    by_old = _pattern(t)
    cols = sorted(next(iter(by_old.values()), {}))
    out = []
    for k in _untouched(t):
        old = tuple(json.dumps(t.before[k].get(c)) for c in cols)
        if old in by_old:
            out.append((k, by_old[old]))
    return out


def _superset(t: TableChanges) -> list[str]:
    """Look-alikes get their twin's change; in a table without one, every other row gets
    the first change (a blanket UPDATE that the task's condition should have limited)."""
    targets = _look_alikes(t)
    if not targets and t.changed:
        first = t.changed[0]
        blanket = {c: v for c, v in t.cells[first].items() if c in t.before[first]}
        targets = [(k, blanket) for k in _untouched(t)] if blanket else []
    return [update_row(t, k, change) for k, change in targets[:MAX_ADDED]]


def _others(t: TableChanges) -> list[str]:
    """Module docstring; nothing for a table where too few other rows take the change."""
    reverts, changes = _other_changes(t)
    kept, deletes = _other_deletions(t)
    if not (changes or deletes):
        return []
    return [TRIGGERS_OFF, *reverts, *kept, TRIGGERS_ON, *changes, *deletes]


def _other_changes(t: TableChanges) -> tuple[list[str], list[str]]:
    movable = [k for k in t.changed if all(c in t.before[k] for c in t.cells[k])]
    if not movable:
        return [], []
    alike = [k for k, _ in _look_alikes(t)]
    others = alike + [k for k in _untouched(t) if k not in alike]
    if len(others) < len(movable):
        return [], []
    reverts = [update_row(t, k, {c: t.before[k][c] for c in t.cells[k]}) for k in movable]
    changes = [update_row(t, o, t.cells[k]) for k, o in zip(movable, others, strict=False)]
    return reverts, changes


def _other_deletions(t: TableChanges) -> tuple[list[str], list[str]]:
    """Each deleted row kept instead of another: its look-alike first (the duplicate the
    reference kept, whose new values it takes), else the next untouched row."""
    kept: list[str] = []
    deletes: list[str] = []
    taken: set[Key] = set()
    for d in t.deleted:
        twin = _twin(t, d, taken)
        if twin is not None:
            row = {**t.after[twin], **{c: t.before[d][c] for c in t.key}}
        elif t.same_columns:
            twin = next((k for k in _untouched(t) if k not in taken), None)
            row = dict(t.before[d])
        if twin is None:
            return [], []
        taken.add(twin)
        kept.append(insert_row(t, row))
        deletes.append(delete_row(t, twin))
    return kept, deletes


def _twin(t: TableChanges, d: Key, taken: set[Key]) -> Key | None:
    """The kept row that held the most of `d`'s values before (at least half of its
    non-key columns), None when none does."""
    old = t.before[d]
    columns = [c for c in old if c not in t.fixed]
    best, score = None, 0
    for k in t.before:
        if k in t.after and k not in taken:
            n = sum(1 for c in columns if same(t.before[k].get(c), old[c]))
            if n > score:
                best, score = k, n
    return best if columns and score * 2 >= len(columns) else None


_BUILT: tuple[tuple[type[ClusterEdit], Builder], ...] = (
    (ClusterTruncatedRows, _truncate),
    (ClusterZeroedCells, _set_where(_number(zero_like))),
    (ClusterScaledCells, _set_where(_number(scaled_up))),
    (ClusterPlaceholderCells, _set_where(placeholder_for)),
    (ClusterColumnsReverted, _revert_last_column),
    (ClusterPermutedCells, _permute),
    (ClusterSupersetRows, _superset),
    (ClusterOtherRecords, _others),
)


def cluster_probes(
    before: Mapping[TableId, Table], after: Mapping[TableId, Table]
) -> tuple[ClusterEdit, ...]:
    """The probes above for the tables the reference changed; each only where it changes
    something."""
    tables = table_changes(before, after)
    out: list[ClusterEdit] = []
    for cls, build in _BUILT:
        sql: dict[tuple[str, str], list[str]] = {}
        used = 0
        for t in tables:
            text = "\n".join(build(t))
            if not text or used + len(text) > MAX_SQL:
                continue
            used += len(text)
            sql.setdefault((t.table[0], t.table[1]), []).append(text)
        if sql:
            prologue = "" if cls.triggers else TRIGGERS_OFF + "\n"
            out.append(cls({k: prologue + "\n".join(v) for k, v in sql.items()}))
    return tuple(out)


def _unused_tag(text: str) -> str:
    while True:
        tag = "__EF_" + secrets.token_hex(4).upper()
        if tag not in text:
            return tag
