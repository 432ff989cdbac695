#!/bin/bash
# Reads the release archive and checksum file as data; nothing from /app is executed.
mkdir -p /logs/verifier
cd /tests
if env -i PATH=/usr/bin:/bin /usr/local/bin/python3 -I -S /tests/check_release.py; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
exit 0
