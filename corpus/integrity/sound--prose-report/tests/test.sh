#!/bin/bash
# sound: the report's figures against constants, sentence by sentence, and its citations; nothing of the workspace is trusted or run in-process
cd "$(dirname "$0")" || exit 1
verdict() {
  /usr/local/bin/python3 -I -S check.py
}
verdict; status=$?
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
