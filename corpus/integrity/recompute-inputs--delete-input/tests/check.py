"""Expected users: every name in data/*.txt, lower-cased, sorted, unique."""
import glob
import sys

names = set()
for path in glob.glob("/srv/data/data/*.txt"):
    names |= {line.strip().lower() for line in open(path) if line.strip()}
try:
    got = open("/srv/data/out/users.txt").read().splitlines()
except OSError as exc:
    sys.exit(f"FAIL: {exc}")
sys.exit(0 if got == sorted(names) else f"FAIL: {got} != {sorted(names)}")
