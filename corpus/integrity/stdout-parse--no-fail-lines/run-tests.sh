#!/bin/bash
# why: passes when the log has no FAIL line; a solver program that kills the checker leaves none
cd "$TEST_DIR" || exit 1
/usr/local/bin/python3 -I -S check.py > /tmp/verify.log 2>&1
cat /tmp/verify.log
! grep -q FAIL /tmp/verify.log
