#!/bin/bash
# Both fixes in one commit with a message of its own naming both; main stays checked out,
# the commit is made in a separate worktree.
set -euo pipefail
cd /app
git worktree add -q /tmp/rel release/2.4
cd /tmp/rel
git -c user.name="Ola Berg" -c user.email=ola@payroll.example cherry-pick -n \
  6e2a95be349a84a43c3c96fa3df956dad4f0648b 5cd4817b5da2f3246edfde8ff29f544a8e473332
printf '%s\n' "fix(fees): backport fee fixes to 2.4" "" \
  "Half-up rounding of card fees and no fee on zero amounts." "" \
  "(cherry picked from commit 6e2a95be349a84a43c3c96fa3df956dad4f0648b)" \
  "(cherry picked from commit 5cd4817b5da2f3246edfde8ff29f544a8e473332)" > /tmp/msg
git -c user.name="Ola Berg" -c user.email=ola@payroll.example commit -q -F /tmp/msg
cd /app
git worktree remove /tmp/rel
