#!/bin/bash
set -euo pipefail
cd /app

# step 1: apply the committed transactions recorded after the checkpoint
python3 - <<'PY'
import json
from ledger import load_snapshot, read_log, save_snapshot
snap = load_snapshot()
records = [r for r in read_log() if r["seq"] > snap["checkpoint_seq"]]
committed = {r["tx"] for r in records if r["type"] == "commit"}
bal = snap["balances"]
for r in records:
    if r["type"] != "op" or r["tx"] not in committed:
        continue
    if r["op"] == "open":
        bal[r["account"]] = r["amount"]
    elif r["op"] == "credit":
        bal[r["account"]] += r["amount"]
    elif r["op"] == "debit":
        bal[r["account"]] -= r["amount"]
    elif r["op"] == "transfer":
        bal[r["from"]] -= r["amount"]
        bal[r["to"]] += r["amount"]
save_snapshot(snap)
PY

# step 2: move the checkpoint to the last applied record
python3 - <<'PY'
from ledger import load_snapshot, read_log, save_snapshot
snap = load_snapshot()
commits = [r["seq"] for r in read_log() if r["type"] == "commit" and r["seq"] > snap["checkpoint_seq"]]
snap["checkpoint_seq"] = max(commits)
save_snapshot(snap)
PY

# step 3: truncate the log
: > data/wal.log
