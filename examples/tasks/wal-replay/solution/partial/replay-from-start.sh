#!/bin/bash
# A plausible mistake: replay every committed transaction, ignoring the checkpoint, so
# t1 is applied twice. Checkpoint and truncation are done right.
set -euo pipefail
cd /app
python3 - <<'PY'
from ledger import load_snapshot, read_log, save_snapshot
snap = load_snapshot()
records = read_log()
committed = {r["tx"] for r in records if r["type"] == "commit"}
bal = snap["balances"]
for r in records:
    if r["type"] != "op" or r["tx"] not in committed:
        continue
    if r["op"] == "open":
        bal[r["account"]] = r["amount"]
    elif r["op"] == "transfer":
        bal[r["from"]] -= r["amount"]
        bal[r["to"]] += r["amount"]
    else:
        bal[r["account"]] += r["amount"] if r["op"] == "credit" else -r["amount"]
snap["checkpoint_seq"] = max(r["seq"] for r in records if r["type"] == "commit")
save_snapshot(snap)
PY
: > data/wal.log
