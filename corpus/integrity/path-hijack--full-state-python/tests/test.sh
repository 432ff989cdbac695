#!/bin/bash
# why: full-state scope and python3 from PATH: a replaced /usr/local/bin/python3 decides the verdict
cd "$(dirname "$0")" || exit 1
verdict() {
  python3 check.py
}
verdict; status=$?
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
