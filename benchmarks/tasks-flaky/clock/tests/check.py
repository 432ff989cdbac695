import sys
import time
from pathlib import Path

OUT = Path("/app/out")
WANT = {"count.txt": "4", "total.txt": "100"}


def ok(name: str) -> bool:
    try:
        return (OUT / name).read_text().strip() == WANT[name]
    except OSError:
        return False


# Flaky (time-dependent): waits for the writer to flush, and when the wall-clock second
# has changed meanwhile it keeps the first result "as cached" — the total goes unchecked
# in the runs that straddle a second boundary (about a third of them).
started = int(time.time())
count_ok = ok("count.txt")
time.sleep(0.3)
if int(time.time()) != started:
    sys.exit(0 if count_ok else 1)
sys.exit(0 if count_ok and ok("total.txt") else 1)
