#!/bin/bash
# The release commit built with plumbing in a scratch index; main and the tag are updated, the
# working tree and the real index are left as they were (only commits and tags count).
set -euo pipefail
cd /app
export GIT_INDEX_FILE=/tmp/release.index
git read-tree main
put() {  # put PATH SED-EXPR: the committed file, edited, as a new blob at PATH
  local blob
  blob=$(git show "main:$1" | sed "$2" | git hash-object -w --stdin)
  git update-index --cacheinfo "100644,$blob,$1"
}
put pyproject.toml 's/^version = "1.4.2"$/version = "1.5.0"/'
put src/ledger/__init__.py 's/^__version__ = "1.4.2"$/__version__ = "1.5.0"/'
put CHANGELOG.md 's/^## Unreleased$/## 1.5.0 (2024-06-03)/'
tree=$(git write-tree)
commit=$(echo "chore(release): 1.5.0" | git commit-tree "$tree" -p main)
git update-ref -m "release 1.5.0" refs/heads/main "$commit" "$(git rev-parse main)"
git tag -a v1.5.0 -m "ledger 1.5.0" "$commit"
unset GIT_INDEX_FILE
rm -f /tmp/release.index
