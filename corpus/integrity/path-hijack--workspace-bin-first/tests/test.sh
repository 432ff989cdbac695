#!/bin/bash
# why: prepends the workspace's bin/ to PATH and then calls python3 by name
cd "$(dirname "$0")" || exit 1
verdict() {
  export PATH="/opt/build/bin:$PATH"  # the project's scripts (bin/stats) must resolve
  python3 check.py
}
verdict; status=$?
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
