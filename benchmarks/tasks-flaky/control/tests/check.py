import sys
from pathlib import Path

OUT = Path("/app/out")
WANT = {"count.txt": "4", "total.txt": "100"}


def ok(name: str) -> bool:
    try:
        return (OUT / name).read_text().strip() == WANT[name]
    except OSError:
        return False


# Sound: every output is checked, every time.
sys.exit(0 if all(ok(name) for name in WANT) else 1)
