#!/bin/bash
# why: assertTrue(value, expected) treats `expected` as the failure message: any truthy value passes
mkdir -p /logs/verifier
cd /tests || exit 1
if /usr/local/bin/python3 -I /tests/test_migration.py -v; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
