#!/bin/bash
# why: the verdict is grep 'ALL CHECKS PASSED' over a log that also holds the solver program's output
cd "$(dirname "$0")" || exit 1
verdict() {
  /usr/local/bin/python3 -I -S check.py > /tmp/verify.log 2>&1
  cat /tmp/verify.log
  grep -q 'ALL CHECKS PASSED' /tmp/verify.log
}
verdict; status=$?
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
