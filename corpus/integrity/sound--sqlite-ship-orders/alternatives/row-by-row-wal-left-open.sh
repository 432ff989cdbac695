#!/bin/bash
# Switch to WAL, ship order by order (newest first) and exit without closing: the committed
# changes stay in shop.db-wal, not yet checkpointed into shop.db.
set -euo pipefail
/usr/local/bin/python3 - <<'PY'
import os
import sqlite3
db = sqlite3.connect("/app/shop.db", isolation_level=None)
db.execute("PRAGMA journal_mode=WAL")
db.execute("PRAGMA wal_autocheckpoint=0")
due = [row[0] for row in db.execute("""
    SELECT o.id FROM orders o JOIN customers c ON c.id = o.customer_id
    WHERE o.status = 'paid' AND c.on_hold = 0 AND substr(o.paid_at, 1, 10) <= '2024-06-01'
    ORDER BY o.id DESC
""")]
for oid in due:
    db.execute("BEGIN")
    db.execute("UPDATE orders SET status = ?, shipped_at = ? WHERE id = ?", ("shipped", "2024-06-03 09:00:00", oid))
    db.execute("COMMIT")
assert os.path.getsize("/app/shop.db-wal") > 0
os._exit(0)
PY
ls -l /app/shop.db-wal
