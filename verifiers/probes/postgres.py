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
  The rows it deleted too, and which columns a foreign key names (left alone, as in
  SQLite: `probes.database`).

The probes built from those changes, run as SQL by the same private server in the oracle
state, are in `probes.cluster_rows`. Tables over `MAX_ROWS` rows and tables without a
primary key (rows cannot be paired) are left out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from envfactory.core.models import PathChange

from .base import q

CONTROL_FILE = "/global/pg_control"
#: tables larger than this are not exported (a table that big is rarely the answer itself)
MAX_ROWS = 20_000
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


def server_shell(directory: str) -> str:
    """Shell defining `pg_up`, `pg_down`, `pg_sql DB` (psql reading stdin) and `pg_apply
    DB` (the same, setting APPLIED=1 when a statement changed a row) for the cluster in
    `directory`; `pg_up` fails when the cluster cannot start."""
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
pg_apply() {{
  as_owner "$B/psql" -X -At -h "$S" -d "$1" -v ON_ERROR_STOP=0 2>/dev/null \
    | grep -E '^(UPDATE|DELETE) [1-9]|^INSERT 0 [1-9]' >/dev/null && APPLIED=1
  return 0
}}
"""


#: per database: one `\\gexec` query whose every result is one table's JSON line
_EXPORT_SQL = rf"""
SELECT format(
  $q$SELECT %L || json_build_object('db', current_database(), 'schema', %L, 'table', %L,
     'columns', %L::json, 'key', %L::json, 'fkeys', %L::json,
     'rows', (SELECT coalesce(json_agg(row_to_json(t)), '[]') FROM
              (SELECT * FROM %I.%I LIMIT {MAX_ROWS + 1}) t))::text$q$,
  '{MARK}', n.nspname, c.relname,
  (SELECT json_agg(a.attname ORDER BY a.attnum) FROM pg_attribute a
    WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped),
  (SELECT json_agg(a.attname ORDER BY array_position(i.indkey::int2[], a.attnum))
    FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
    WHERE i.indrelid = c.oid AND i.indisprimary),
  (SELECT json_agg(DISTINCT a.attname) FROM pg_constraint k
    JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = ANY(k.conkey)
    WHERE k.conrelid = c.oid AND k.contype = 'f'),
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
{server_shell(directory)}
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
    #: columns a foreign key names
    fixed: frozenset[str] = frozenset()


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
            fixed = frozenset(t.get("fkeys") or ())
        except (ValueError, KeyError, TypeError):
            continue
        if not key or len(rows) > MAX_ROWS or not all(isinstance(r, dict) for r in rows):
            continue
        by_key = {tuple(_hashable(r.get(k)) for k in key): r for r in rows}
        out[(directory, t["db"], t["schema"], t["table"])] = Table(columns, key, by_key, fixed)
    return out


def _hashable(v: Any) -> Any:
    return json.dumps(v, sort_keys=True) if isinstance(v, dict | list) else v


@dataclass(frozen=True)
class TableChanges:
    """One table's rows before and after the reference, paired by primary key, and the
    cells it set (keys in key order)."""

    table: TableId
    key: tuple[str, ...]
    #: columns a probe leaves alone: the primary key and those a foreign key names
    fixed: frozenset[str]
    columns: tuple[str, ...]
    #: the table's columns before (None: the reference created the table)
    columns_before: tuple[str, ...] | None
    before: Mapping[Key, Mapping[str, Any]]
    after: Mapping[Key, Mapping[str, Any]]
    #: per row it inserted or changed: column → the value it set
    cells: Mapping[Key, Mapping[str, Any]]
    inserted: tuple[Key, ...]
    changed: tuple[Key, ...]
    deleted: tuple[Key, ...]

    @property
    def same_columns(self) -> bool:
        """Whether rows before and after have the same columns (no migration)."""
        return self.columns_before == self.columns

    @property
    def name(self) -> str:
        return f"{ident(self.table[2])}.{ident(self.table[3])}"


def table_changes(
    before: Mapping[TableId, Table], after: Mapping[TableId, Table]
) -> tuple[TableChanges, ...]:
    """Per table of the oracle's export, what the reference changed (module docstring)."""
    out = []
    for tid, new in sorted(after.items()):
        old = before.get(tid)
        paired = old is not None and old.key == new.key
        old_rows = old.rows if old is not None and paired else {}
        cells: dict[Key, dict[str, Any]] = {}
        for k, row in new.rows.items():
            prev = old_rows.get(k)
            set_here = {
                c: row.get(c)
                for c in new.columns
                if c not in new.key
                and c not in new.fixed
                and (prev is None or c not in prev or prev[c] != row.get(c))
            }
            if set_here:
                cells[k] = set_here
        deleted = tuple(sorted((k for k in old_rows if k not in new.rows), key=sort_key))
        if not cells and not deleted:
            continue
        ordered = sorted(cells, key=sort_key)
        out.append(
            TableChanges(
                table=tid,
                key=new.key,
                fixed=frozenset(new.key) | new.fixed,
                columns=new.columns,
                columns_before=old.columns if old is not None and paired else None,
                before=old_rows,
                after=new.rows,
                cells=cells,
                inserted=tuple(k for k in ordered if k not in old_rows),
                changed=tuple(k for k in ordered if k in old_rows),
                deleted=deleted,
            )
        )
    return tuple(out)


def sort_key(k: Key) -> tuple[tuple[int, Any], ...]:
    return tuple((0, v) if isinstance(v, int | float) else (1, str(v)) for v in k)


def ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
