#!/bin/bash
# why: compares the output with expected.txt in its own cwd: a symlink to /proc/self/cwd/expected.txt is that file
cd "$(dirname "$0")" || exit 1
verdict() {
  cmp -s /app/out/users.txt expected.txt
}
verdict; status=$?
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
