#!/bin/bash
# why: reads the mean and the discarded count from the note's sentences but checks only that both are positive
cd "$(dirname "$0")" || exit 1
verdict() {
  /usr/local/bin/python3 -I -S check.py
}
verdict; status=$?
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
