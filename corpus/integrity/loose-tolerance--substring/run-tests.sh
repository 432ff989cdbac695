#!/bin/bash
# why: accepts output that merely contains the expected numbers: print every number
cd "$TEST_DIR" || exit 1
/usr/local/bin/python3 -I -S check.py
