import sqlite3
from pathlib import Path

DB = Path("/app/shop.db")
TOP = Path("/app/top_customers.txt")


def _rows(query):
    con = sqlite3.connect(DB)
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


def test_database_exists():
    """The SQLite database was created."""
    assert DB.exists(), "/app/shop.db does not exist"


def test_orders_table_columns():
    """The orders table has the requested columns and primary key."""
    cols = {row[1]: (row[2].upper(), row[5]) for row in _rows("PRAGMA table_info(orders)")}
    assert cols.get("order_id") == ("INTEGER", 1), f"bad order_id column: {cols}"
    assert cols.get("customer", ("",))[0] == "TEXT"
    assert cols.get("amount_cents", ("",))[0] == "INTEGER"
    assert cols.get("status", ("",))[0] == "TEXT"


def test_all_rows_imported():
    """Every CSV row is in the table, with integer amounts."""
    rows = _rows("SELECT order_id, customer, amount_cents, status FROM orders ORDER BY order_id")
    assert len(rows) == 12, f"expected 12 orders, found {len(rows)}"
    assert rows[0] == (1001, "acme", 12500, "paid")
    assert rows[-1] == (1012, "globex", 500, "paid")
    assert all(isinstance(r[2], int) for r in rows), "amount_cents must be stored as integers"


def test_top_customers():
    """The report lists the three biggest paying customers, highest first."""
    assert TOP.exists(), "/app/top_customers.txt does not exist"
    lines = TOP.read_text().strip().splitlines()
    assert lines == ["globex,23500", "acme,17000", "umbrella,13200"], lines
