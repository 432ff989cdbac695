#!/bin/bash
# why: checks total and rows but never the per-region figures
cd "$TEST_DIR" || exit 1
/usr/local/bin/python3 -I -S check.py
