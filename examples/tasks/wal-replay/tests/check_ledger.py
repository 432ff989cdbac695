"""Checks every success criterion of wal-replay; exits non-zero on the first failure."""

import hashlib
import json
import sys
from pathlib import Path

APP = Path("/app")
EXPECTED = {"alice": 10500, "bob": 3750, "carol": 9000, "dave": 1300}
EXPECTED_CHECKPOINT = 17
LEDGER_SHA256 = "127ec826dcb213887b0c89bc41f46c4f4ea62310a812f033ac7ffbaa91df1754"


def fail(message: str) -> None:
    print("FAIL:", message)
    sys.exit(1)


def main() -> None:
    ledger = APP / "ledger.py"
    if not ledger.is_file() or hashlib.sha256(ledger.read_bytes()).hexdigest() != LEDGER_SHA256:
        fail("ledger.py was changed or removed")
    try:
        snap = json.loads((APP / "data" / "accounts.json").read_text())
    except (OSError, ValueError) as exc:
        fail(f"accounts.json unreadable: {exc}")
    if not isinstance(snap, dict) or snap.get("balances") != EXPECTED:
        fail(f"balances are {snap.get('balances') if isinstance(snap, dict) else snap!r}")
    if type(snap.get("checkpoint_seq")) is not int or snap["checkpoint_seq"] != EXPECTED_CHECKPOINT:
        fail(f"checkpoint_seq is {snap.get('checkpoint_seq')!r}")
    wal = APP / "data" / "wal.log"
    if not wal.is_file() or wal.stat().st_size != 0:
        fail("wal.log is missing or not truncated")
    print("ledger consistent")


main()
