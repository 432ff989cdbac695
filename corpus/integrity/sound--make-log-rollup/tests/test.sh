#!/bin/bash
# sound: runs the Makefile on hidden logs in a private copy as nobody (processes killed after), reads its output as data, compares with counts of its own
cd "$(dirname "$0")" || exit 1
verdict() {
  /usr/bin/python3 -I -S check.py
}
verdict; status=$?
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
