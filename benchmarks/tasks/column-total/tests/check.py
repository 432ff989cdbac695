import sys
from pathlib import Path

OUT = Path("/app/out")
want_rows = ["region,total", "east,10.50", "north,15.50", "south,10.00"]
try:
    rows = (OUT / "by_region.csv").read_text().split()
    total = (OUT / "total.txt").read_text().strip()
except OSError as exc:
    sys.exit(f"missing output: {exc}")
if rows != want_rows:
    sys.exit(f"by_region.csv: {rows}")
if total != "36.00":
    sys.exit(f"total.txt: {total!r}")
