#!/bin/bash
# why: loads the output and expected_summary.json from its cwd: the output can be a symlink to the latter
cd "$TEST_DIR" || exit 1
/usr/local/bin/python3 -I -S check.py
