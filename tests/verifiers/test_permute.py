"""The reference's values rotated among its rows (`probes.permute`), the PostgreSQL rows
they come from (`probes.postgres`) and the SQL each cluster probe runs
(`probes.cluster_rows`), on literal exports (no Docker)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from envfactory.core.models import PathChange
from verifiers.probes.cluster_rows import cluster_probes
from verifiers.probes.permute import rotated
from verifiers.probes.postgres import MARK, data_directories, parse_export, table_changes


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


def _probes(before: str, after: str) -> dict[str, str]:
    """Each probe built, by name → its SQL for the one database."""
    return {
        p.name: p.sql[("/pg", "shop")]
        for p in cluster_probes(parse_export(before), parse_export(after))
    }


def _records(sql: str) -> list[object]:
    """The JSON records of each statement, in order."""
    return [json.loads(part) for part in sql.split("'")[1::2]]


def test_a_migration_gets_its_amounts_rotated_and_its_kept_duplicates_swapped() -> None:
    probes = _probes(BEFORE, AFTER)
    # the new column is all the reference set: nothing to revert, truncate or blank out
    assert set(probes) == {
        "pg-perturbed-cells-zero",
        "pg-perturbed-cells-scaled",
        "pg-permuted-cells",
        "pg-other-records-changed",
    }
    permuted = probes["pg-permuted-cells"]
    assert permuted.startswith("SET session_replication_role = replica;")
    assert 'UPDATE "public"."orders" AS t SET "amount_cents" = v."amount_cents"' in permuted
    assert _records(permuted) == [
        [
            {"id": 1, "amount_cents": 200},
            {"id": 2, "amount_cents": 300},
            {"id": 3, "amount_cents": 100},
        ]
    ]
    # rows 4 and 5 were the duplicates of 1 and 2 (same ref): kept instead of them, with the
    # amounts the reference computed for their twins, which go; triggers on for the swap
    others = probes["pg-other-records-changed"]
    assert others.split("\n")[0] == "SET session_replication_role = replica;"
    assert "SET session_replication_role = origin;" in others
    assert _records(others) == [
        {"id": 4, "ref": "R1", "amount_cents": 100},
        {"id": 5, "ref": "R2", "amount_cents": 200},
        {"id": 1},
        {"id": 2},
    ]


def test_an_update_in_place_gets_every_class() -> None:
    rows = [{"id": i, "status": "pending", "hours": i} for i in range(1, 6)]
    before = _line("/pg", "tickets", ["id", "status", "hours"], rows)
    done = [
        {**r, "status": "closed", "hours": r["hours"] + 1} if r["id"] in (2, 4) else r for r in rows
    ]
    after = _line("/pg", "tickets", ["id", "status", "hours"], done)
    probes = _probes(before, after)
    assert set(probes) == {
        "pg-truncated-rows",
        "pg-perturbed-cells-zero",
        "pg-perturbed-cells-scaled",
        "pg-placeholder-cells",
        "pg-columns-reverted",
        "pg-permuted-cells",
        "pg-superset-rows",
        "pg-other-records-changed",
    }
    assert _records(probes["pg-truncated-rows"]) == [{"id": 4, "status": "pending", "hours": 4}]
    # the last column of each change keeps its old value: closed, hours not logged
    assert _records(probes["pg-columns-reverted"]) == [{"id": 2, "hours": 2}, {"id": 4, "hours": 4}]
    # the look-alikes (pending) get the change too; the status is what every change shares
    assert _records(probes["pg-superset-rows"]) == [
        {"id": 1, "status": "closed"},
        {"id": 3, "status": "closed"},
        {"id": 5, "status": "closed"},
    ]
    # the two changed rows back as they were, two others changed as they were
    assert _records(probes["pg-other-records-changed"]) == [
        {"id": 2, "status": "pending", "hours": 2},
        {"id": 4, "status": "pending", "hours": 4},
        {"id": 1, "status": "closed", "hours": 3},
        {"id": 3, "status": "closed", "hours": 5},
    ]


def test_tables_without_a_key_or_unchanged_give_no_probe() -> None:
    keyless = AFTER.replace('"key": ["id"]', '"key": null')
    assert parse_export(keyless) == {}
    assert cluster_probes(parse_export(AFTER), parse_export(AFTER)) == ()


def test_a_cluster_is_found_by_its_control_file() -> None:
    diff = [
        PathChange(path="/var/lib/postgresql/15/main/global/pg_control", kind="C"),
        PathChange(path="/var/lib/postgresql/15/main/base/5/1259", kind="C"),
        PathChange(path="/srv/old/global/pg_control", kind="D"),
        PathChange(path="/app/global/pg_control.txt", kind="A"),
    ]
    assert data_directories(diff) == ("/var/lib/postgresql/15/main",)
