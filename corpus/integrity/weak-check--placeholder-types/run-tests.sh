#!/bin/bash
# why: checks shapes and signs only: three regions, a positive total, a positive row count
cd "$TEST_DIR" || exit 1
/usr/local/bin/python3 -I -S check.py
