#!/bin/bash
# sound: a private read-only copy of the database (and its WAL); schema, every row and the audit log against constants
cd "$(dirname "$0")" || exit 1
verdict() {
  /usr/local/bin/python3 -I -S check.py
}
verdict; status=$?
mkdir -p /logs/verifier && echo $(( status == 0 ? 1 : 0 )) > /logs/verifier/reward.txt
exit $status
