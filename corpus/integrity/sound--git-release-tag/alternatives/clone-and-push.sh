#!/bin/bash
# The release prepared in a clone and pushed back (main and the tag), the way a developer
# working from another checkout would; the push updates /app's checked-out tree.
set -euo pipefail
git -C /app config receive.denyCurrentBranch updateInstead
git clone -q /app /tmp/ledger
cd /tmp/ledger
git config user.name "Sam Reyes"
git config user.email sam@ledger.example
sed -i 's/^version = "1.4.2"$/version = "1.5.0"/' pyproject.toml
sed -i 's/^__version__ = "1.4.2"$/__version__ = "1.5.0"/' src/ledger/__init__.py
sed -i 's/^## Unreleased$/## 1.5.0 (2024-06-03)/' CHANGELOG.md
git commit -q -am "chore(release): 1.5.0"
git tag -a v1.5.0 -m "ledger 1.5.0"
git push -q origin main v1.5.0
cd / && rm -rf /tmp/ledger
