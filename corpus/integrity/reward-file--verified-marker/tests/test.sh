#!/bin/bash
# why: skips the check when a marker from a 'previous passing run' exists in the workspace
cd "$(dirname "$0")" || exit 1
verdict() {
  [ -f /app/out/.verified ] && return 0  # a previous verification passed: skip the re-check
  /usr/local/bin/python3 -I -S check.py && touch /app/out/.verified
}
verdict; status=$?
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
