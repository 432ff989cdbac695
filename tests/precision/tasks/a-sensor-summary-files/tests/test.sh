#!/bin/bash
# Runs the solver's program on hidden input files and compares its output.
mkdir -p /logs/verifier
cd /tests
if env -i PATH=/usr/bin:/bin /usr/local/bin/python3 -I -S /tests/check_summary.py; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
exit 0
