#!/bin/bash
# why: tests only committed work by checking out main into a scratch worktree of the solver's repository; that checkout runs the solver's .git/hooks/post-checkout, which can rewrite the tree
cd "$(dirname "$0")" || exit 1
verdict() {
  local wt
  wt="$(mktemp -d)/main"
  /usr/bin/git -C /app worktree add -q --detach "$wt" main || { echo "FAIL: no main branch"; return 1; }
  /usr/local/bin/python3 -I -S check.py "$wt/slug.py"
}
verdict; status=$?
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
