#!/bin/bash
# A plausible mistake: treat the torn final transaction (no COMMIT) as applied.
set -euo pipefail
cd /app
python3 - <<'PY'
from ledger import load_snapshot, read_log, save_snapshot
snap = load_snapshot()
records = [r for r in read_log() if r["seq"] > snap["checkpoint_seq"]]
aborted = {r["tx"] for r in records if r["type"] == "abort"}
bal = snap["balances"]
for r in records:
    if r["type"] != "op" or r["tx"] in aborted:
        continue
    if r["op"] == "open":
        bal[r["account"]] = r["amount"]
    elif r["op"] == "transfer":
        bal[r["from"]] -= r["amount"]
        bal[r["to"]] += r["amount"]
    else:
        bal[r["account"]] += r["amount"] if r["op"] == "credit" else -r["amount"]
snap["checkpoint_seq"] = max(r["seq"] for r in records)
save_snapshot(snap)
PY
: > data/wal.log
