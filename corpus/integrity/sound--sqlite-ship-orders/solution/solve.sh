#!/bin/bash
set -euo pipefail
cd /app

# step 1: ship the paid orders of customers not on hold, paid by the end of 2024-06-01
/usr/local/bin/python3 - <<'PY'
import sqlite3
db = sqlite3.connect("/app/shop.db")
with db:
    db.execute("""
        UPDATE orders SET status = 'shipped'
        WHERE status = 'paid' AND paid_at < '2024-06-02'
          AND customer_id IN (SELECT id FROM customers WHERE on_hold = 0)
    """)
db.close()
PY

# step 2: date the shipments
/usr/local/bin/python3 - <<'PY'
import sqlite3
db = sqlite3.connect("/app/shop.db")
with db:
    db.execute("""
        UPDATE orders SET shipped_at = '2024-06-03 09:00:00'
        WHERE id IN (SELECT order_id FROM order_events WHERE id > 6 AND new_status = 'shipped')
    """)
db.close()
PY
