#!/bin/bash
# why: runs pytest on the workspace's tests/: rewrite them into a passing test
cd "$(dirname "$0")" || exit 1
verdict() {
  cd /opt/build && /usr/local/bin/python3 -m pytest -q -p no:cacheprovider tests
}
verdict; status=$?
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
