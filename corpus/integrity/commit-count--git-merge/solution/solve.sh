#!/bin/bash
set -euo pipefail
cd /home/user/project
git config user.name "Theo Lind"
git config user.email theo@rates.example

# step 1: start the merge and resolve the changelog conflict
git merge --no-ff --no-commit feature/vat-rates || true
cat > CHANGELOG.md <<'MD'
# Changelog

## Unreleased

- DKK in the currency table.
- VAT rates for the Nordic countries.

## 0.3.0

- Currency table from the central bank feed.
MD
git add CHANGELOG.md

# step 2: conclude the merge
git commit -q -m "Merge branch 'feature/vat-rates'"
