"""Checks /app/store.db after the July price update, row by row."""
import os
import shutil
import sqlite3
import sys
import tempfile

DB = "/app/store.db"
SEED = "/tests/seed.sql"
DATE = "2024-07-01"
# sku -> new price in cents (active products whose price actually changes)
CHANGED = {"P-1001": 1999, "P-1003": 29, "P-1004": 750, "P-1005": 1200, "P-1010": 115, "P-1024": 5610}
TABLES = ("products", "price_history", "orders")
failures = []


def rows(con, sql):
    return con.execute(sql).fetchall()


def main():
    if not os.path.isfile(DB):
        print(f"FAIL: {DB} does not exist")
        return 1
    # Work on a copy (with any journal/WAL beside it) so the workspace file is only read.
    work = tempfile.mkdtemp(prefix="store-check-")
    for suffix in ("", "-wal", "-journal"):
        if os.path.exists(DB + suffix):
            shutil.copyfile(DB + suffix, os.path.join(work, "store.db" + suffix))
    try:
        got = sqlite3.connect(os.path.join(work, "store.db"))
        got.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as e:
        print(f"FAIL: cannot open {DB}: {e}")
        return 1
    orig = sqlite3.connect(":memory:")
    with open(SEED) as f:
        orig.executescript(f.read())

    try:
        for t in TABLES:
            info = lambda c: [r[1:] for r in rows(c, f"PRAGMA table_info({t})")]
            if info(got) != info(orig):
                failures.append(f"schema of {t} changed: {info(got)}")

        # products: the changed rows exactly, every other row untouched
        q = "SELECT sku, name, price_cents, typeof(price_cents), active, updated_at FROM products ORDER BY sku"
        expected = []
        for sku, name, price, ptype, active, updated in rows(orig, q):
            if sku in CHANGED:
                price, updated = CHANGED[sku], DATE
            expected.append((sku, name, price, "integer", active, updated))
        actual = rows(got, q)
        if len(actual) != len(expected):
            failures.append(f"products has {len(actual)} rows, expected {len(expected)}")
        exp_by_sku = {r[0]: r for r in expected}
        act_by_sku = {r[0]: r for r in actual}
        for sku in sorted(set(exp_by_sku) | set(act_by_sku)):
            if exp_by_sku.get(sku) != act_by_sku.get(sku):
                failures.append(f"products {sku}: {act_by_sku.get(sku)} expected {exp_by_sku.get(sku)}")

        # price_history: old rows kept as they were, exactly one new row per change
        q = ("SELECT id, sku, old_cents, new_cents, changed_at, typeof(old_cents), typeof(new_cents) "
             "FROM price_history ORDER BY id")
        old_rows = rows(orig, q)
        max_old = max(r[0] for r in old_rows)
        actual = rows(got, q)
        kept = [r for r in actual if r[0] <= max_old]
        if kept != old_rows:
            failures.append(f"existing price_history rows changed: {kept} expected {old_rows}")
        new_rows = sorted(r[1:] for r in actual if r[0] > max_old)
        orig_price = dict(rows(orig, "SELECT sku, price_cents FROM products"))
        want = sorted((sku, orig_price[sku], cents, DATE, "integer", "integer") for sku, cents in CHANGED.items())
        if new_rows != want:
            failures.append(f"new price_history rows are {new_rows}, expected {want}")

        # orders: untouched
        q = "SELECT * FROM orders ORDER BY id"
        if rows(got, q) != rows(orig, q):
            failures.append("orders table was modified")
    except sqlite3.Error as e:
        failures.append(f"query failed: {e}")
    finally:
        got.close()
        shutil.rmtree(work, ignore_errors=True)

    for f in failures:
        print("FAIL:", f)
    if failures:
        return 1
    print(f"OK: {len(CHANGED)} products updated with history, all other rows untouched")
    return 0


if __name__ == "__main__":
    sys.exit(main())
