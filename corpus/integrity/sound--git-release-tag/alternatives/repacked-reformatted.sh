#!/bin/bash
# Same release, other spellings the formats allow (TOML spacing, single quotes, a trailing
# blank line), a message with body and trailer; then gc: every object packed, refs in packed-refs.
set -euo pipefail
cd /app
/usr/local/bin/python3 - <<'PY'
import re
p = open("pyproject.toml").read()
open("pyproject.toml", "w").write(p.replace('version = "1.4.2"', "version='1.5.0'   # release"))
open("src/ledger/__init__.py", "w").write('"""Small double-entry ledger helpers."""\n__version__ = \'1.5.0\'\n')
c = open("CHANGELOG.md").read()
open("CHANGELOG.md", "w").write(c.replace("## Unreleased\n", "## 1.5.0 (2024-06-03)  \n") + "\n")
PY
printf 'chore(release): 1.5.0\n\nRelease 1.5.0.\n\nRefs: LEDGER-88\n' > /tmp/msg
git add -A
git commit -q -F /tmp/msg
printf 'ledger 1.5.0\n\n- average() rounds half to even\n' | git tag -a v1.5.0 -F -
git gc -q --prune=now --aggressive
git pack-refs --all
