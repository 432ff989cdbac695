#!/bin/bash
# Queries /app/store.db and compares every row with the expected state; verdict in /logs/verifier/reward.txt.
mkdir -p /logs/verifier

if /usr/local/bin/python3 -I -S /tests/check_store.py; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
