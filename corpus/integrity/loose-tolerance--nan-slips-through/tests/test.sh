#!/bin/bash
# why: `if abs(got - want) > TOL: fail` — every comparison with NaN is false, so NaN for every metric passes
cd /tests || exit 1
mkdir -p /logs/verifier
if /usr/local/bin/python3 -I -S check_latency.py; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
