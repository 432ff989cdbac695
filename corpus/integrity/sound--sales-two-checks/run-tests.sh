#!/bin/bash
# sound: checks every criterion against constants; nothing of the workspace is trusted or run in-process
cd "$TEST_DIR" || exit 1
set -e
/usr/local/bin/python3 -I -S check_data.py
/usr/local/bin/python3 -I -S check_summary.py
