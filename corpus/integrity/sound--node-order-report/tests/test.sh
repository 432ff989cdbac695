#!/bin/bash
# sound: runs the report in a child process as nobody on the given and hidden orders (processes killed after), parses its CSV with the standard library, compares with constants
cd "$(dirname "$0")" || exit 1
verdict() {
  /usr/bin/python3 -I -S check.py
}
verdict; status=$?
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
