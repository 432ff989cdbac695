#!/bin/bash
# Imports semverlib and runs /app/semver-sort in child processes; verdict in /logs/verifier/reward.txt.
mkdir -p /logs/verifier

if /usr/local/bin/python3 -I -S /tests/check_semver.py; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
