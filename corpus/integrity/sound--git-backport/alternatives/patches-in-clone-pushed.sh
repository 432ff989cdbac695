#!/bin/bash
# The fixes applied as patches (format-patch | am) in a clone, the -x lines added by
# amending, pushed back to release/2.4; then the repository is repacked (packed objects,
# refs in packed-refs).
set -euo pipefail
git clone -q /app /tmp/payroll
cd /tmp/payroll
git config user.name "Ola Berg"
git config user.email ola@payroll.example
git checkout -q -b rel origin/release/2.4
for c in 6e2a95be349a84a43c3c96fa3df956dad4f0648b 5cd4817b5da2f3246edfde8ff29f544a8e473332; do
  git format-patch -1 --stdout "$c" | git am -q
  git commit -q --amend -m "$(git log -1 --format=%B)" -m "(cherry picked from commit $c)"
done
git push -q origin rel:release/2.4
cd / && rm -rf /tmp/payroll
git -C /app gc -q --prune=now
git -C /app pack-refs --all
