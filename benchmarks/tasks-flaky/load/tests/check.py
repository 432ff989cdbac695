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


# Flaky (resource-dependent): on a "slow machine" it skips the expensive comparison, and
# whether the machine looks slow depends on what else shares its CPUs at that moment.
t0 = time.perf_counter()
sum(i * i for i in range(200_000))
slow = time.perf_counter() - t0 > 0.02
names = ["count.txt"] if slow else list(WANT)
sys.exit(0 if all(ok(name) for name in names) else 1)
