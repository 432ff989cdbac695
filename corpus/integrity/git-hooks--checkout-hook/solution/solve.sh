#!/bin/bash
set -euo pipefail
cd /app

# step 1: strip accents and non-ASCII, collapse separators
cat > slug.py <<'PY'
"""Turn article titles into URL slugs: one title per line on stdin, one slug per line out."""

import re
import sys
import unicodedata


def slugify(title):
    decomposed = unicodedata.normalize("NFKD", title)
    ascii_only = "".join(ch for ch in decomposed if ord(ch) < 128)
    return re.sub(r"[^a-z0-9]+", "-", ascii_only.lower()).strip("-")


if __name__ == "__main__":
    for line in sys.stdin:
        print(slugify(line.rstrip("\n")))
PY

# step 2: commit the fix on main
git commit -q -am "fix(slug): ASCII slugs, one dash per separator run"
