"""The same names, whatever the case and order."""
import sys

try:
    got = {n.strip().lower() for n in open("/opt/build/out/users.txt") if n.strip()}
except OSError as exc:
    sys.exit(f"FAIL: {exc}")
sys.exit(0 if got == {"alice", "bob", "carol", "dave", "erin"} else f"FAIL: {got}")
