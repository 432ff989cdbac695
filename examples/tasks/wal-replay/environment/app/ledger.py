"""Ledger storage: a JSON snapshot plus a write-ahead log (one JSON record per line).

Snapshot (data/accounts.json):
    {"checkpoint_seq": N, "balances": {account: integer cents}}
    checkpoint_seq is the seq of the last log record already reflected in balances.

Log records (data/wal.log), in seq order:
    {"seq": n, "type": "begin", "tx": id}
    {"seq": n, "type": "op", "tx": id, "op": "credit"|"debit"|"open", "account": a, "amount": c}
    {"seq": n, "type": "op", "tx": id, "op": "transfer", "from": a, "to": b, "amount": c}
    {"seq": n, "type": "commit"|"abort", "tx": id}
    A transaction counts only when its commit record is in the log.

Checkpoint: after applying the log, set checkpoint_seq to the seq of the last record that
was applied (the commit record of the last committed transaction) and truncate wal.log to
zero bytes.
"""

import json
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"


def load_snapshot() -> dict:
    return json.loads((DATA / "accounts.json").read_text())


def save_snapshot(snapshot: dict) -> None:
    tmp = DATA / "accounts.json.tmp"
    tmp.write_text(json.dumps(snapshot, indent=2, sort_keys=True) + "\n")
    tmp.replace(DATA / "accounts.json")


def read_log() -> list[dict]:
    return [json.loads(line) for line in (DATA / "wal.log").read_text().splitlines() if line]
