#!/bin/bash
set -euo pipefail
cd /app

# step 1: sort the input before merging (BOOK-212)
python3 - <<'PY'
from pathlib import Path
p = Path("intervals.py")
src = p.read_text()
src = src.replace("    for start, end in intervals:", "    for start, end in sorted(intervals):")
p.write_text(src)
PY

# step 2: closed intervals that touch share a point, so they must merge too (logs)
sed -i 's/if out and start < out\[-1\]\[1\]:/if out and start <= out[-1][1]:/' intervals.py
