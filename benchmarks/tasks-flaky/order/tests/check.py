import sys
from pathlib import Path

OUT = Path("/app/out")
WANT = {"count.txt": "4", "total.txt": "100"}


def ok(name: str) -> bool:
    try:
        return (OUT / name).read_text().strip() == WANT[name]
    except OSError:
        return False


# Flaky (order-dependent): stops at the first check that passes. A set's order follows
# the interpreter's per-run string hashing, so half the runs check the count alone.
for name in set(WANT):
    if not ok(name):
        sys.exit(1)
    break
sys.exit(0)
