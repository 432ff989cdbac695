#!/bin/bash
set -euo pipefail
cd /srv/data/stock

# step 1: flag the items at or below their reorder point
/usr/local/bin/python3 - <<'PY'
import json
with open("inventory.json", encoding="utf-8") as fh:
    items = json.load(fh)
for it in items:
    if not it["discontinued"] and it["open_po"] is None and it["on_hand"] <= it["reorder_point"]:
        it["reorder"] = True
with open("inventory.json", "w", encoding="utf-8") as fh:
    json.dump(items, fh, indent=2, ensure_ascii=False)
    fh.write("\n")
PY

# step 2: order whole cases up to the par level for the flagged items
/usr/local/bin/python3 - <<'PY'
import json
with open("inventory.json", encoding="utf-8") as fh:
    items = json.load(fh)
for it in items:
    if it["reorder"] and it["open_po"] is None:
        cases = -(-(it["par_level"] - it["on_hand"]) // it["case_size"])
        it["order_qty"] = cases * it["case_size"]
with open("inventory.json", "w", encoding="utf-8") as fh:
    json.dump(items, fh, indent=2, ensure_ascii=False)
    fh.write("\n")
PY
