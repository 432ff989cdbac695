#!/bin/bash
# why: checks only that users.txt has five lines
cd "$(dirname "$0")" || exit 1
verdict() {
  [ "$(wc -l < /home/user/project/out/users.txt)" -eq 5 ]
}
verdict; status=$?
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
