"""The reference's values rotated among its rows (`probes.permute`) and the PostgreSQL
rows they come from (`probes.postgres`), on literal exports (no Docker)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from envfactory.core.models import PathChange
from verifiers.probes.permute import rotated
from verifiers.probes.postgres import (
    MARK,
    data_directories,
    parse_export,
    permuted_sql,
    postgres_probes,
    table_changes,
)


def test_every_column_keeps_its_values_and_no_row_keeps_its_own() -> None:
    cells = {k: {"cents": k * 100, "status": "shipped"} for k in range(1, 6)}
    moved = rotated(cells, sorted(cells))
    assert set(moved) == set(cells)
    assert Counter(v["cents"] for v in moved.values()) == Counter(k * 100 for k in cells)
    assert all(moved[k]["cents"] != k * 100 for k in cells)
    assert all("status" not in v for v in moved.values())  # one value: nothing to move


def test_two_columns_never_move_as_whole_tuples() -> None:
    """A verifier that ignores a serial key rightly accepts whole rows moved: the second
    column takes another step, so no row's pair of values survives elsewhere."""
    cells = {k: {"name": f"n{k}", "cents": k} for k in range(1, 5)}
    moved = rotated(cells, sorted(cells))
    pairs = {(moved[k]["name"], moved[k]["cents"]) for k in cells}
    assert not pairs & {(f"n{k}", k) for k in cells}


def test_with_two_rows_only_the_first_column_moves() -> None:
    cells = {1: {"a": 1, "b": "x"}, 2: {"a": 2, "b": "y"}}
    assert rotated(cells, [1, 2]) == {1: {"a": 2}, 2: {"a": 1}}


def test_values_of_other_types_are_other_values() -> None:
    assert rotated({1: {"a": 1}, 2: {"a": 1.0}}, [1, 2]) == {1: {"a": 1.0}, 2: {"a": 1}}
    assert rotated({1: {"a": 1}, 2: {"a": 1}}, [1, 2]) == {}


def _line(directory: str, table: str, columns: list[str], rows: list[dict[str, Any]]) -> str:
    doc = {"db": "shop", "schema": "public", "table": table, "columns": columns}
    return MARK + directory + " " + json.dumps({**doc, "key": ["id"], "rows": rows})


BEFORE = _line(
    "/pg",
    "orders",
    ["id", "ref", "amount_text"],
    [{"id": i, "ref": f"R{i % 3}", "amount_text": f"{i}.00 EUR"} for i in range(1, 6)],
)
AFTER = _line(
    "/pg",
    "orders",
    ["id", "ref", "amount_cents"],
    [{"id": i, "ref": f"R{i % 3}", "amount_cents": i * 100} for i in (1, 2, 3)],
)


def test_a_migrations_new_column_is_what_the_reference_set_in_every_row_it_kept() -> None:
    (t,) = table_changes(parse_export(BEFORE), parse_export(AFTER + "\nnoise\n"))
    assert t.table == ("/pg", "shop", "public", "orders")
    assert t.cells == {
        (1,): {"amount_cents": 100},
        (2,): {"amount_cents": 200},
        (3,): {"amount_cents": 300},
    }


def test_the_sql_sets_each_rotated_value_by_key_with_its_columns_type() -> None:
    (t,) = table_changes(parse_export(BEFORE), parse_export(AFTER))
    sql = permuted_sql(t)
    assert sql.startswith('UPDATE "public"."orders" AS t SET "amount_cents" = v."amount_cents"')
    assert 'json_populate_recordset(NULL::"public"."orders", ' in sql
    records = json.loads(sql.split("'")[1])
    assert records == [
        {"id": 1, "amount_cents": 200},
        {"id": 2, "amount_cents": 300},
        {"id": 3, "amount_cents": 100},
    ]
    (probe,) = postgres_probes(parse_export(BEFORE), parse_export(AFTER))
    assert probe.name == "permuted-rows"


def test_tables_without_a_key_or_unchanged_give_no_probe() -> None:
    keyless = AFTER.replace('"key": ["id"]', '"key": null')
    assert parse_export(keyless) == {}
    assert postgres_probes(parse_export(AFTER), parse_export(AFTER)) == ()


def test_a_cluster_is_found_by_its_control_file() -> None:
    diff = [
        PathChange(path="/var/lib/postgresql/15/main/global/pg_control", kind="C"),
        PathChange(path="/var/lib/postgresql/15/main/base/5/1259", kind="C"),
        PathChange(path="/srv/old/global/pg_control", kind="D"),
        PathChange(path="/app/global/pg_control.txt", kind="A"),
    ]
    assert data_directories(diff) == ("/var/lib/postgresql/15/main",)
