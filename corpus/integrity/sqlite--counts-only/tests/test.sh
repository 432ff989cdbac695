#!/bin/bash
# why: counts the tickets that changed and checks each looks auto-closed, never which tickets: any five closed tickets pass
cd "$(dirname "$0")" || exit 1
verdict() {
  /usr/local/bin/python3 -I -S check.py
}
verdict; status=$?
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
