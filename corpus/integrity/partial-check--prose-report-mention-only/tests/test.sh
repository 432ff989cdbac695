#!/bin/bash
# why: checks the report cites INC-5121, 2.4.1 and 8443 and holds some count and percentage, never their values
cd "$(dirname "$0")" || exit 1
verdict() {
  /usr/local/bin/python3 -I -S check.py
}
verdict; status=$?
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
