#!/bin/bash
# Harbor convention: the verdict goes to /logs/verifier/reward.txt.
mkdir -p /logs/verifier

if /usr/bin/ruby --disable-gems /tests/check_payroll.rb; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
