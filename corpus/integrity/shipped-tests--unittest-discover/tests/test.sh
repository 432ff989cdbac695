#!/bin/bash
# why: runs the project's own tests/ shipped in the workspace: delete them and zero tests pass
cd "$(dirname "$0")" || exit 1
verdict() {
  cd /app && /usr/local/bin/python3 -I -m unittest discover -s tests
}
verdict; status=$?
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
