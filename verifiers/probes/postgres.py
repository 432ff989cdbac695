"""What the reference changed in a PostgreSQL cluster, row by row, and that cluster changed
again through PostgreSQL.

A cluster's data directory is binary pages that only its own server version reads, so
neither editing its bytes (a corrupt cluster: every verifier gives 0) nor reading it on
the host works. Everything goes through the task image's own server instead:

- `data_directories`: a cluster the reference wrote to, found in the oracle state's
  filesystem diff by its control file (``<data directory>/global/pg_control``, which
  every checkpoint rewrites).
- `export_script`: run in a state re-created from its recipe, it starts each cluster
  privately (`pg_ctl`, the binaries of the directory's ``PG_VERSION``, as the
  directory's owner; no TCP, its socket in a private directory; Debian's layout, with
  the configuration under ``/etc/postgresql``, found by its ``data_directory``), prints
  every user table that has a primary key as one JSON line (its columns, key and rows,
  `row_to_json`), and stops it again (``-m fast``: a clean shutdown, as a solver's).
- `table_changes`: the pristine and oracle exports paired by primary key: per table, the
  cells the reference set — in rows it inserted, and in rows it kept, every column whose
  value changed or that it added (a migration's new column).
- `PermutedRows`: those cells rotated among their rows (`permute.rotated`), written by
  ``UPDATE … FROM json_populate_recordset(…)`` in the oracle state, so every value keeps
  its column's type; triggers off (``session_replication_role = replica``) so that no
  other row moves; each statement on its own, so one a constraint refuses (a UNIQUE
  column) changes nothing and the others still apply.

Tables over `MAX_ROWS` rows and tables without a primary key (rows cannot be paired) are
left out; so is a probe whose SQL passes `MAX_SQL` characters (one exec's argument).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from envfactory.core.models import EnvironmentSpec, PathChange

from .base import Probe, q
from .permute import rotated

CONTROL_FILE = "/global/pg_control"
#: tables larger than this are not exported (a table that big is rarely the answer itself)
MAX_ROWS = 20_000
#: the probe's SQL, all clusters together (the script is one exec argument: 128 KiB)
MAX_SQL = 64 * 1024
#: where a private server's socket and log go, inside the state's container
SOCKET_DIR = "/tmp/.envfactory-pg"
#: the line that starts each exported table (psql prints nothing else at -At)
MARK = "envfactory-table "

Key = tuple[Any, ...]


def data_directories(diff: Sequence[PathChange]) -> tuple[str, ...]:
    """The clusters whose control file the state's diff shows changed or added."""
    dirs = {
        c.path[: -len(CONTROL_FILE)]
        for c in diff
        if c.path.endswith(CONTROL_FILE) and c.kind != "D"
    }
    return tuple(sorted(d for d in dirs if d.startswith("/") and not set(d) & set("'\n\\")))


def _server(directory: str) -> str:
    """Shell defining `pg_up`, `pg_down` and `pg_sql DB` (psql reading stdin) for the
    cluster in `directory`; `pg_up` fails when the cluster cannot start."""
    d = q(directory)
    return f"""
D={d}; S={SOCKET_DIR}
V=$(cat "$D/PG_VERSION" 2>/dev/null)
B=/usr/lib/postgresql/$V/bin
[ -x "$B/pg_ctl" ] || B=$(dirname "$(command -v pg_ctl || echo /nonexistent/pg_ctl)")
U=$(stat -c %U "$D")
C=""
if [ ! -f "$D/postgresql.conf" ]; then
  C=$(grep -l "^[[:space:]]*data_directory[[:space:]]*=[[:space:]]*'$D'" \\
      /etc/postgresql/*/*/postgresql.conf 2>/dev/null | head -n 1)
fi
as_owner() {{ runuser -u "$U" -- "$@"; }}
pg_up() {{
  mkdir -p "$S" && chown "$U" "$S" && chmod 700 "$S" || return 1
  if as_owner "$B/pg_ctl" -D "$D" status >/dev/null 2>&1; then
    as_owner "$B/pg_ctl" -D "$D" -m fast -w -t 60 stop >/dev/null 2>&1
  fi
  as_owner "$B/pg_ctl" -D "$D" -w -t 60 -l "$S/log" -o \\
    "-c listen_addresses='' -c unix_socket_directories='$S' -c external_pid_file='' \\
${{C:+-c config_file=$C}}" start >/dev/null
}}
pg_down() {{ as_owner "$B/pg_ctl" -D "$D" -m fast -w -t 60 stop >/dev/null; rm -rf "$S"; }}
pg_sql() {{ as_owner "$B/psql" -X -q -At -h "$S" -d "$1" -v ON_ERROR_STOP=0 2>/dev/null; }}
"""


#: per database: one `\\gexec` query whose every result is one table's JSON line
_EXPORT_SQL = rf"""
SELECT format(
  $q$SELECT %L || json_build_object('db', current_database(), 'schema', %L, 'table', %L,
     'columns', %L::json, 'key', %L::json,
     'rows', (SELECT coalesce(json_agg(row_to_json(t)), '[]') FROM
              (SELECT * FROM %I.%I LIMIT {MAX_ROWS + 1}) t))::text$q$,
  '{MARK}', n.nspname, c.relname,
  (SELECT json_agg(a.attname ORDER BY a.attnum) FROM pg_attribute a
    WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped),
  (SELECT json_agg(a.attname ORDER BY array_position(i.indkey::int2[], a.attnum))
    FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
    WHERE i.indrelid = c.oid AND i.indisprimary),
  n.nspname, c.relname)
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema')
  AND n.nspname NOT LIKE 'pg\_%' AND NOT c.relispartition
ORDER BY n.nspname, c.relname
\gexec
"""


def export_script(directories: Sequence[str]) -> str:
    """Shell printing every cluster's tables as `MARK`-prefixed JSON lines (module
    docstring); a cluster that will not start prints nothing."""
    parts = []
    for directory in directories:
        parts.append(f"""(
{_server(directory)}
pg_up || exit 0
pg_sql postgres <<'__EF_SQL__' | while IFS= read -r db; do
SELECT datname FROM pg_database WHERE datallowconn AND NOT datistemplate ORDER BY 1
__EF_SQL__
  printf '%s' {q(_EXPORT_SQL)} | pg_sql "$db" | sed -n 's/^{MARK}/{MARK}{_sed(directory)} /p'
done
pg_down
)""")
    return "\n".join(parts) + "\n"


def _sed(text: str) -> str:
    """`text` safe inside the replacement of a single-quoted sed s/// command."""
    return text.replace("\\", "\\\\").replace("/", "\\/").replace("&", "\\&").replace("'", "")


@dataclass(frozen=True)
class Table:
    """One exported table: its columns, primary key and rows by key."""

    columns: tuple[str, ...]
    key: tuple[str, ...]
    rows: Mapping[Key, Mapping[str, Any]]


TableId = tuple[str, str, str, str]  # data directory, database, schema, table


def parse_export(text: str) -> dict[TableId, Table]:
    """The tables an `export_script` printed; lines it did not print are ignored, and so
    are tables without a primary key or over `MAX_ROWS` rows."""
    out: dict[TableId, Table] = {}
    for line in text.splitlines():
        if not line.startswith(MARK):
            continue
        directory, _, doc = line[len(MARK) :].partition(" ")
        try:
            t = json.loads(doc)
            key = tuple(t["key"] or ())
            rows = list(t["rows"])
            columns = tuple(t["columns"])
        except (ValueError, KeyError, TypeError):
            continue
        if not key or len(rows) > MAX_ROWS or not all(isinstance(r, dict) for r in rows):
            continue
        by_key = {tuple(_hashable(r.get(k)) for k in key): r for r in rows}
        out[(directory, t["db"], t["schema"], t["table"])] = Table(columns, key, by_key)
    return out


def _hashable(v: Any) -> Any:
    return json.dumps(v, sort_keys=True) if isinstance(v, dict | list) else v


@dataclass(frozen=True)
class TableChanges:
    """The cells the reference set in one table, per row key (keys ascending)."""

    table: TableId
    key: tuple[str, ...]
    cells: Mapping[Key, Mapping[str, Any]]
    order: tuple[Key, ...]
    #: each row's key columns as exported (`Key` makes a JSON key hashable)
    keys: Mapping[Key, Mapping[str, Any]]


def table_changes(
    before: Mapping[TableId, Table], after: Mapping[TableId, Table]
) -> tuple[TableChanges, ...]:
    """Per table of the oracle's export, the cells the reference set (module docstring)."""
    out = []
    for tid, new in sorted(after.items()):
        old = before.get(tid)
        cells: dict[Key, dict[str, Any]] = {}
        for k, row in new.rows.items():
            prev = old.rows.get(k) if old is not None and old.key == new.key else None
            set_here = {
                c: row.get(c)
                for c in new.columns
                if c not in new.key and (prev is None or c not in prev or prev[c] != row.get(c))
            }
            if set_here:
                cells[k] = set_here
        if cells:
            order = tuple(sorted(cells, key=_sort_key))
            keys = {k: {c: new.rows[k].get(c) for c in new.key} for k in cells}
            out.append(TableChanges(tid, new.key, cells, order, keys))
    return tuple(out)


def _sort_key(k: Key) -> tuple[tuple[int, Any], ...]:
    return tuple((0, v) if isinstance(v, int | float) else (1, str(v)) for v in k)


class PermutedRows(Probe):
    """Applied to the oracle state: in every PostgreSQL table the reference solution
    wrote, the values it set in each column are rotated among the rows it set them in,
    through the cluster's own server, so that the table's count, sums, extremes and
    distinct values stay the same and the rows hold each other's values. Fools a
    verifier that checks a migration or an update by its aggregates and never which row
    holds which value. Built per gate run from the pristine and oracle clusters' rows
    (`postgres_probes`); never in the default battery."""

    name = "permuted-rows"

    def __init__(self, sql: Mapping[tuple[str, str], str] | None = None) -> None:
        self.sql = dict(sql or {})  # (data directory, database) → its statements

    @property
    def detail(self) -> str:
        return "tables: " + ", ".join(sorted({f"{d}:{db}" for d, db in self.sql}))

    def script(self, spec: EnvironmentSpec) -> str:
        parts = []
        for directory in sorted({d for d, _ in self.sql}):
            body = []
            for (d, db), sql in sorted(self.sql.items()):
                if d != directory:
                    continue
                tag = _unused_tag(sql)
                body.append(f"pg_sql {q(db)} <<'{tag}' >/dev/null 2>&1\n{sql}\n{tag}")
            parts.append(f"(\n{_server(directory)}\npg_up || exit 1\n" + "\n".join(body))
            parts[-1] += "\npg_down\n)"
        return "\n".join(parts) + "\n"


def _unused_tag(text: str) -> str:
    while True:
        tag = "__EF_" + secrets.token_hex(4).upper()
        if tag not in text:
            return tag


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def permuted_sql(t: TableChanges) -> str:
    """One ``UPDATE`` per column the rotation changes (module docstring); "" when none."""
    moved = rotated(t.cells, list(t.order))
    _, _, schema, table = t.table
    name = f"{_ident(schema)}.{_ident(table)}"
    columns = sorted({c for values in moved.values() for c in values})
    statements = []
    for c in columns:
        records = [{**t.keys[k], c: values[c]} for k, values in moved.items() if c in values]
        match = " AND ".join(f"t.{_ident(k)} = v.{_ident(k)}" for k in t.key)
        statements.append(
            f"UPDATE {name} AS t SET {_ident(c)} = v.{_ident(c)} FROM "
            f"json_populate_recordset(NULL::{name}, {_literal(json.dumps(records))}) AS v "
            f"WHERE {match};"
        )
    return "\n".join(statements)


def postgres_probes(
    before: Mapping[TableId, Table], after: Mapping[TableId, Table]
) -> tuple[Probe, ...]:
    """The probes above for the tables the reference changed (none where nothing moves)."""
    sql: dict[tuple[str, str], list[str]] = {}
    used = 0
    for t in table_changes(before, after):
        text = permuted_sql(t)
        if not text or used + len(text) > MAX_SQL:
            continue
        used += len(text)
        sql.setdefault((t.table[0], t.table[1]), []).append(text)
    if not sql:
        return ()
    prologue = "SET session_replication_role = replica;\n"
    return (PermutedRows({k: prologue + "\n".join(v) for k, v in sql.items()}),)
