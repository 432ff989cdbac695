#!/bin/bash
# why: expected names come from whatever data/*.txt exists: delete the input, write an empty list
cd "$TEST_DIR" || exit 1
/usr/local/bin/python3 -I -S check.py
