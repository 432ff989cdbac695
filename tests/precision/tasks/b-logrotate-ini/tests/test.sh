#!/bin/bash
# Runs /app/rotate.py against configurations written by the checker; verdict in /logs/verifier/reward.txt.
mkdir -p /logs/verifier

if /usr/local/bin/python3 -I -S /tests/check_rotate.py; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
