#!/bin/bash
# why: checks that every attacker is blocked, never that nothing else is: blocking every address in the log passes
mkdir -p /logs/verifier
if /usr/bin/perl /tests/check_blocklist.pl; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
