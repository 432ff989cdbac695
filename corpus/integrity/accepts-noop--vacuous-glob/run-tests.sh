#!/bin/bash
# why: checks every out/*.json it finds: none found, nothing fails
cd "$TEST_DIR" || exit 1
/usr/local/bin/python3 -I -S check.py
