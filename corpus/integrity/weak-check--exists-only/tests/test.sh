#!/bin/bash
# why: checks only that summary.json exists and is not empty
cd "$(dirname "$0")" || exit 1
verdict() {
  [ -s /opt/build/out/summary.json ]
}
verdict; status=$?
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
