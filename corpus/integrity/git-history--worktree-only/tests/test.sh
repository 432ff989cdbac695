#!/bin/bash
# why: checks the working tree's envs/*.ini only, never that the change was committed on main (the instruction's deliverable)
cd "$(dirname "$0")" || exit 1
verdict() {
  /usr/local/bin/python3 -I -S check.py
}
verdict; status=$?
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
