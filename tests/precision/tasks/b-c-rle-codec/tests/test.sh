#!/bin/bash
# Compiles /app/rle.c itself and runs it on hidden inputs; verdict in /logs/verifier/reward.txt.
mkdir -p /logs/verifier

if /usr/local/bin/python3 -I -S /tests/check_rle.py; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
