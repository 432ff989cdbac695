#!/bin/bash
set -euo pipefail
cd /app

# step 1: bump the version, date the changelog and commit the release
sed -i 's/^version = "1.4.2"$/version = "1.5.0"/' pyproject.toml
sed -i 's/^__version__ = "1.4.2"$/__version__ = "1.5.0"/' src/ledger/__init__.py
sed -i 's/^## Unreleased$/## 1.5.0 (2024-06-03)/' CHANGELOG.md
git add pyproject.toml src/ledger/__init__.py CHANGELOG.md
git commit -q -m "chore(release): 1.5.0"

# step 2: tag the release commit (annotated)
git tag -a v1.5.0 -m "ledger 1.5.0"
