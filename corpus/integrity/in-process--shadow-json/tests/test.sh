#!/bin/bash
# why: puts the workspace first on sys.path to import calc, then imports json: a workspace json.py runs in the verifier
cd "$(dirname "$0")" || exit 1
verdict() {
  /usr/local/bin/python3 -I -S check.py
}
verdict; status=$?
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
