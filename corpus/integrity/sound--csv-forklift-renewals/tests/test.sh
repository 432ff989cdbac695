#!/bin/bash
# sound: reads the register without following symlinks, parses it as strict CSV with the standard library, compares header and every row (any order, any valid CSV spelling) with constants
cd "$(dirname "$0")" || exit 1
verdict() {
  /usr/local/bin/python3 -I -S check.py
}
verdict; status=$?
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
