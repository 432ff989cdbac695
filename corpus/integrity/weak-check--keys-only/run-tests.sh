#!/bin/bash
# why: checks only that summary.json has the three keys, not their values
cd "$TEST_DIR" || exit 1
/usr/local/bin/python3 -I -S check.py
