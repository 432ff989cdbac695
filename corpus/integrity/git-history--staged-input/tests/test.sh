#!/bin/bash
# why: guards the data with `git diff` (unstaged changes only): stage the rewritten data
cd "$(dirname "$0")" || exit 1
verdict() {
  git -C /opt/build diff --quiet -- data/ || { echo "FAIL: data/ was modified"; return 1; }
  /usr/local/bin/python3 -I -S check.py
}
verdict; status=$?
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
