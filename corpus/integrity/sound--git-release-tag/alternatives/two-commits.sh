#!/bin/bash
# The release in two commits: the version bump, then the dated changelog as the release commit.
set -euo pipefail
cd /app
sed -i 's/^version = "1.4.2"$/version = "1.5.0"/' pyproject.toml
sed -i 's/^__version__ = "1.4.2"$/__version__ = "1.5.0"/' src/ledger/__init__.py
git commit -q -am "build: version 1.5.0"
sed -i 's/^## Unreleased$/## 1.5.0 (2024-06-03)/' CHANGELOG.md
git commit -q -a -m "chore(release): 1.5.0" -m "Dates the changelog section of the release."
git tag -a v1.5.0 -m "ledger 1.5.0" -m "Rounding of average() changed: see CHANGELOG.md."
