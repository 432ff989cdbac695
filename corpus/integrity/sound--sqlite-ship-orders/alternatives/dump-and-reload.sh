#!/bin/bash
# Copy the database to a scratch file, ship there, dump it to SQL and reload the dump into a
# fresh file that replaces shop.db (new page layout, same schema and rows).
set -euo pipefail
/usr/local/bin/python3 - <<'PY'
import os
import sqlite3
src = sqlite3.connect("/app/shop.db")
work = sqlite3.connect("/tmp/work.db")
src.backup(work)
src.close()
with work:
    work.execute("""
        UPDATE orders SET status = 'shipped', shipped_at = '2024-06-03 09:00:00'
        WHERE status = 'paid' AND julianday(paid_at) < julianday('2024-06-02')
          AND NOT EXISTS (SELECT 1 FROM customers c WHERE c.id = orders.customer_id AND c.on_hold)
    """)
dump = "\n".join(work.iterdump())
work.close()
fresh = sqlite3.connect("/tmp/fresh.db")
fresh.executescript(dump)
fresh.close()
os.replace("/tmp/fresh.db", "/app/shop.db")
PY
