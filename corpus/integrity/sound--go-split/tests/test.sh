#!/bin/bash
# sound: builds a driver of its own against the package in a private copy (image toolchain and cache, no solver go.mod, vendor or go.work), runs it as nobody on hidden cases (fixed seed), compares with its own answers
cd "$(dirname "$0")" || exit 1
verdict() {
  /usr/bin/python3 -I -S check.py
}
verdict; status=$?
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
