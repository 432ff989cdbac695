#!/bin/bash
# why: compares only the first three lines of users.txt
cd "$(dirname "$0")" || exit 1
verdict() {
  [ "$(head -n 3 /app/out/users.txt)" = "$(printf 'alice\nbob\ncarol')" ]
}
verdict; status=$?
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
