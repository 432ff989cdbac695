import random
import sys
from pathlib import Path

OUT = Path("/app/out")
WANT = {"count.txt": "4", "total.txt": "100"}


def ok(name: str) -> bool:
    try:
        return (OUT / name).read_text().strip() == WANT[name]
    except OSError:
        return False


# Flaky (random): "spot-checks" the outputs — a quarter of the runs check the count only.
names = ["count.txt"] if random.random() < 0.25 else list(WANT)
sys.exit(0 if all(ok(name) for name in names) else 1)
