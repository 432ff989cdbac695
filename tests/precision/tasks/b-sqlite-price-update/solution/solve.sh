#!/bin/bash
set -e
cd /app

# Update the prices of active products whose price changes (exact decimal -> cents)
/usr/local/bin/python3 - <<'PY'
import csv, json, sqlite3
from decimal import Decimal
con = sqlite3.connect("/app/store.db")
changes = []
with open("/app/price_update.csv", newline="") as f:
    for row in csv.DictReader(f):
        cur = con.execute("SELECT price_cents FROM products WHERE sku = ? AND active = 1", (row["sku"],)).fetchone()
        if cur is None:
            continue
        new = int(Decimal(row["new_price"]) * 100)
        if new != cur[0]:
            changes.append((row["sku"], cur[0], new))
with con:
    for sku, old, new in changes:
        con.execute("UPDATE products SET price_cents = ?, updated_at = '2024-07-01' WHERE sku = ?", (new, sku))
con.close()
json.dump(changes, open("/tmp/price_changes.json", "w"))
print(changes)
PY

# Record every change in price_history
/usr/local/bin/python3 - <<'PY'
import json, sqlite3
changes = json.load(open("/tmp/price_changes.json"))
con = sqlite3.connect("/app/store.db")
with con:
    con.executemany("INSERT INTO price_history (sku, old_cents, new_cents, changed_at) VALUES (?, ?, ?, '2024-07-01')",
                    changes)
print(con.execute("SELECT * FROM price_history ORDER BY id").fetchall())
con.close()
PY
