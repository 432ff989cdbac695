"""Users list: lower case, sorted, unique, the expected names."""
import re
import sys

try:
    lines = open("out/users.txt").read().splitlines()
except OSError as exc:
    sys.exit(f"FAIL: {exc}")
ok = all(re.fullmatch(r"[a-z]+", n) for n in lines)
sys.exit(0 if ok and lines == ["alice", "bob", "carol", "dave", "erin"] else f"FAIL: {lines}")
