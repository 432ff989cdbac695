#!/bin/bash
# Builds /app's history with fixed identities and dates, so every object id is a constant:
# v1.4.2 (annotated), a feature branch, then two commits on main since the release.
set -euo pipefail
cd /app
export GIT_AUTHOR_NAME="Dana Okafor" GIT_AUTHOR_EMAIL=dana@ledger.example
export GIT_COMMITTER_NAME="Dana Okafor" GIT_COMMITTER_EMAIL=dana@ledger.example
at() { export GIT_AUTHOR_DATE="$1 +0000" GIT_COMMITTER_DATE="$1 +0000"; }
chmod -R u=rwX,go=rX /app
mkdir -p /tmp/final && cp CHANGELOG.md src/ledger/totals.py tests/test_totals.py /tmp/final/
git init -q -b main
git config user.name "Dana Okafor"
git config user.email dana@ledger.example
# 1.4.2: no Unreleased section yet, average() without rounding
sed -i '/^## Unreleased/,/^## 1.4.2/{/^## 1.4.2/!d}' CHANGELOG.md
cat > src/ledger/totals.py <<'PY'
"""Totals over ledger entries; amounts are integer cents."""


def balance(entries):
    """Sum of signed amounts: debits count positive, credits negative."""
    total = 0
    for kind, cents in entries:
        total += cents if kind == "debit" else -cents
    return total


def average(entries):
    """Mean absolute amount in cents."""
    return sum(cents for _, cents in entries) // len(entries)
PY
head -n 5 /tmp/final/test_totals.py > tests/test_totals.py
at "2024-04-18T09:12:00"
git add -A && git commit -qm "chore(release): 1.4.2"
git tag -a v1.4.2 -m "ledger 1.4.2"
git checkout -q -b feature/csv-export
printf '"""Write entries as CSV rows (kind,cents)."""\n\nimport csv\n\n\ndef write(entries, fh):\n    csv.writer(fh).writerows(entries)\n' > src/ledger/csv_export.py
at "2024-05-02T14:30:00"
git add -A && git commit -qm "feat(export): write entries as CSV"
git checkout -q main
cp /tmp/final/totals.py src/ledger/totals.py
cp /tmp/final/test_totals.py tests/test_totals.py
at "2024-05-21T11:05:00"
git add -A && git commit -qm "fix(totals): average() rounds half to even and accepts no entries"
cp /tmp/final/CHANGELOG.md CHANGELOG.md
at "2024-05-28T16:40:00"
git add -A && git commit -qm "docs(changelog): unreleased entries"
rm -rf /tmp/final
if [ -n "$(git status --porcelain)" ]; then echo "tree not clean" >&2; exit 1; fi
