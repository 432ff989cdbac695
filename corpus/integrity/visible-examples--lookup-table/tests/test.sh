#!/bin/bash
# why: tests convert.py only on the examples the workspace shows (inputs.txt/expected.txt); a table of those ten answers passes
cd "$(dirname "$0")" || exit 1
verdict() {
  /usr/local/bin/python3 -I -S check.py
}
verdict; status=$?
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
