#!/bin/bash
set -euo pipefail
cd /srv/data

# step 1: fix the mean
sed -i 's|return sum(xs) // len(xs)|return sum(xs) / len(xs)|' calc.py

# step 2: fix the median of an even count
/usr/local/bin/python3 - <<'PY'
path = "calc.py"
src = open(path).read()
src = src.replace(
    "    return xs[len(xs) // 2]\n",
    "    n = len(xs)\n    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2\n",
)
open(path, "w").write(src)
PY
