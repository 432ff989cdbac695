"""users.txt is lower case, sorted, unique, non-empty."""
import sys

try:
    lines = open("/opt/build/out/users.txt").read().splitlines()
except OSError as exc:
    sys.exit(f"FAIL: {exc}")
ok = lines and lines == sorted(set(lines)) and all(n == n.lower() for n in lines)
sys.exit(0 if ok else f"FAIL: {lines}")
