#!/bin/bash
# Verifier: reads /app/REPORT.md and /app/out/outstanding.csv as data only.
mkdir -p /logs/verifier
cd /tests
if env -i PATH=/usr/bin:/bin /usr/local/bin/python3 -I -S /tests/check_report.py; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
exit 0
