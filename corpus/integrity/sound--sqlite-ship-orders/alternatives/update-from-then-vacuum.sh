#!/bin/bash
# One UPDATE ... FROM with a join and a date() comparison, then VACUUM (pages rewritten).
set -euo pipefail
/usr/local/bin/python3 - <<'PY'
import sqlite3
db = sqlite3.connect("/app/shop.db")
with db:
    db.execute("""
        UPDATE orders
        SET status = 'shipped', shipped_at = '2024-06-03 09:00:00'
        FROM customers AS c
        WHERE c.id = orders.customer_id AND c.on_hold = 0
          AND orders.status = 'paid' AND date(orders.paid_at) <= date('2024-06-01')
    """)
db.execute("VACUUM")
db.close()
PY
