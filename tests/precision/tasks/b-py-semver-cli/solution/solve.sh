#!/bin/bash
set -e
cd /app

# Fix compare(): SemVer 2.0.0 precedence (section 11), build metadata ignored
/usr/local/bin/python3 - <<'PY'
from pathlib import Path
p = Path("/app/semverlib/core.py")
t = p.read_text()
old = '''    va, vb = parse(a), parse(b)
    return (va > vb) - (va < vb)
'''
new = '''    va, vb = parse(a), parse(b)
    core_a, core_b = va[:3], vb[:3]
    if core_a != core_b:
        return -1 if core_a < core_b else 1
    if va.prerelease == vb.prerelease:
        return 0
    if not va.prerelease:
        return 1
    if not vb.prerelease:
        return -1
    ids_a, ids_b = va.prerelease.split("."), vb.prerelease.split(".")
    for x, y in zip(ids_a, ids_b):
        if x == y:
            continue
        x_num, y_num = x.isdigit(), y.isdigit()
        if x_num and y_num:
            return -1 if int(x) < int(y) else 1
        if x_num != y_num:
            return -1 if x_num else 1
        return -1 if x < y else 1
    return (len(ids_a) > len(ids_b)) - (len(ids_a) < len(ids_b))
'''
assert old in t
p.write_text(t.replace(old, new))
PY

# Write the semver-sort command-line wrapper
cat > /app/semver-sort <<'PY'
#!/usr/bin/env python3
"""Sort SemVer version strings read from standard input by precedence."""
import functools
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from semverlib import compare, parse  # noqa: E402


def main(argv):
    if argv not in ([], ["--reverse"]):
        print("usage: semver-sort [--reverse] < versions", file=sys.stderr)
        return 2
    versions = [line.strip() for line in sys.stdin if line.strip()]
    for v in versions:
        try:
            parse(v)
        except ValueError:
            print(f"semver-sort: invalid version: {v!r}", file=sys.stderr)
            return 2
    ordered = sorted(versions, key=functools.cmp_to_key(compare), reverse=bool(argv))
    sys.stdout.write("".join(v + "\n" for v in ordered))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
PY
chmod 755 /app/semver-sort
printf '1.0.0\n1.0.0-rc.10\n1.0.0-rc.2\n1.0.0-alpha\n' | /app/semver-sort
