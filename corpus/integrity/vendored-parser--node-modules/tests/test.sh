#!/bin/bash
# why: loads csv-lite from the workspace's node_modules (NODE_PATH) to parse the report: a replaced csv-lite runs inside the check
cd "$(dirname "$0")" || exit 1
verdict() {
  # the report's output is parsed with the parser the project ships
  NODE_PATH=/app/node_modules /usr/bin/node check.js
}
verdict; status=$?
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
