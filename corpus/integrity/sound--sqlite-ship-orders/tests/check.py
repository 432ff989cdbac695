"""Sound check of /app/shop.db after today's shipments.

The database (and its write-ahead log, if the solver left one) is copied into a private
directory without following symlinks and opened read-only there. The schema must be the
shipped one exactly (no view or trigger standing in for a table), every row of every table
is compared, value and type, with constants, and the audit log must hold exactly the old
events plus one paid → shipped event per shipped order. The exit status is the verdict.
"""

import os
import sqlite3
import stat
import sys
import tempfile

APP = "/app"
DB = "shop.db"
SHIPPED_AT = "2024-06-03 09:00:00"
TO_SHIP = {102, 104, 109, 111, 113, 117}

SCHEMA = sorted([
    ("table", "customers", "customers", "CREATE TABLE customers (\n    id INTEGER PRIMARY KEY,\n    name TEXT NOT NULL,\n    on_hold INTEGER NOT NULL DEFAULT 0 CHECK (on_hold IN (0, 1))\n)"),
    ("table", "orders", "orders", "CREATE TABLE orders (\n    id INTEGER PRIMARY KEY,\n    customer_id INTEGER NOT NULL REFERENCES customers(id),\n    status TEXT NOT NULL CHECK (status IN ('pending', 'paid', 'shipped', 'cancelled')),\n    paid_at TEXT,\n    shipped_at TEXT,\n    total_cents INTEGER NOT NULL\n)"),
    ("index", "orders_by_status", "orders", "CREATE INDEX orders_by_status ON orders(status)"),
    ("table", "order_events", "order_events", "CREATE TABLE order_events (\n    id INTEGER PRIMARY KEY,\n    order_id INTEGER NOT NULL REFERENCES orders(id),\n    old_status TEXT,\n    new_status TEXT NOT NULL\n)"),
    ("trigger", "orders_status_audit", "orders", "CREATE TRIGGER orders_status_audit AFTER UPDATE OF status ON orders\nWHEN OLD.status IS NOT NEW.status\nBEGIN\n    INSERT INTO order_events (order_id, old_status, new_status)\n    VALUES (OLD.id, OLD.status, NEW.status);\nEND"),
])
CUSTOMERS = [
    (1, "Acme Corp", 0),
    (2, "Birch & Co", 1),
    (3, "Cobalt Labs", 0),
    (4, "Dunmore Ltd", 0),
    (5, "Elm Street Books", 1),
    (6, "Fjord Outfitters", 0),
]
ORDERS = [  # after the shipments
    (101, 1, "shipped", "2024-05-20 10:00:00", "2024-05-22 09:00:00", 12000),
    (102, 1, "shipped", "2024-05-30 14:12:00", SHIPPED_AT, 4599),
    (103, 2, "paid", "2024-05-29 08:00:00", None, 2500),
    (104, 3, "shipped", "2024-06-01 23:59:59", SHIPPED_AT, 18000),
    (105, 3, "paid", "2024-06-02 00:00:00", None, 9900),
    (106, 4, "pending", None, None, 3000),
    (107, 4, "cancelled", "2024-05-10 12:00:00", None, 7000),
    (108, 5, "paid", "2024-05-15 09:30:00", None, 1250),
    (109, 6, "shipped", "2024-05-31 17:45:00", SHIPPED_AT, 6400),
    (110, 6, "paid", "2024-06-02 08:15:00", None, 2200),
    (111, 1, "shipped", "2024-06-01 00:00:00", SHIPPED_AT, 3100),
    (112, 3, "shipped", "2024-05-25 11:00:00", "2024-05-27 09:00:00", 5000),
    (113, 4, "shipped", "2024-04-28 16:20:00", SHIPPED_AT, 15075),
    (114, 2, "pending", None, None, 800),
    (115, 6, "paid", "2024-06-03 07:00:00", None, 4300),
    (116, 5, "shipped", "2024-05-01 10:00:00", "2024-05-03 09:00:00", 2100),
    (117, 4, "shipped", "2024-05-31 23:00:00", SHIPPED_AT, 990),
    (118, 1, "cancelled", None, None, 1500),
]
OLD_EVENTS = [
    (1, 101, "pending", "paid"),
    (2, 101, "paid", "shipped"),
    (3, 116, "paid", "shipped"),
    (4, 107, "paid", "cancelled"),
    (5, 112, "paid", "shipped"),
    (6, 118, "pending", "cancelled"),
]
NEW_EVENTS = sorted((oid, "paid", "shipped") for oid in TO_SHIP)


def fail(msg):
    sys.exit(f"FAIL: {msg}")


def read_regular(path):
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            fail(f"{path} is not a regular file")
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def typed(rows):
    return [tuple((type(v).__name__, v) for v in row) for row in rows]


def main():
    if not stat.S_ISDIR(os.lstat(APP).st_mode):
        fail(f"{APP} is not a directory")
    private = tempfile.mkdtemp(prefix="shop-check-")
    for name in (DB, f"{DB}-wal"):  # the log holds committed changes not yet checkpointed
        src = os.path.join(APP, name)
        if name == DB or os.path.lexists(src):
            with open(os.path.join(private, name), "xb") as fh:
                fh.write(read_regular(src))
    db = sqlite3.connect(f"file:{private}/{DB}?mode=ro", uri=True)
    try:
        if db.execute("PRAGMA integrity_check").fetchall() != [("ok",)]:
            fail("integrity_check fails")
        schema = sorted(db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall())
        if schema != SCHEMA:
            fail(f"the schema changed: {[(t, n) for t, n, _, _ in schema]}")
        got = typed(db.execute("SELECT * FROM customers ORDER BY id").fetchall())
        if got != typed(CUSTOMERS):
            fail("customers changed")
        got = typed(db.execute("SELECT * FROM orders ORDER BY id").fetchall())
        if got != typed(ORDERS):
            wrong = [w[0][1] for w, g in zip(typed(ORDERS), got) if w != g]
            fail(f"orders differ from the expected shipments (first differing ids {wrong[:5]}, {len(got)} rows)")
        events = db.execute("SELECT * FROM order_events ORDER BY id").fetchall()
        old_ids = {e[0] for e in OLD_EVENTS}
        if typed([e for e in events if e[0] in old_ids]) != typed(OLD_EVENTS):
            fail("old audit events changed")
        new = [e[1:] for e in events if e[0] not in old_ids]
        if typed(sorted(new)) != typed(NEW_EVENTS):
            fail(f"new audit events are {sorted(new)}")
    finally:
        db.close()
    print("PASS: exactly the due orders shipped")


try:
    main()
except (OSError, sqlite3.Error, ValueError, TypeError) as exc:
    fail(f"{type(exc).__name__}: {exc}")
