#!/bin/bash
# why: guards the data with `git diff HEAD`, then recomputes from it: commit the rewritten data
cd "$(dirname "$0")" || exit 1
verdict() {
  git -C /app diff --quiet HEAD -- data/ || { echo "FAIL: data/ was modified"; return 1; }
  /usr/local/bin/python3 -I -S check.py
}
verdict; status=$?
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
