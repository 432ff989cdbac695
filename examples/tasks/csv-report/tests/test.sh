#!/bin/bash
# Reward = exit status. Expected figures are fixed in the check; the workspace's etl.py is
# never run. Interpreter by absolute path, -I -S.
cd "$(dirname "$0")" || exit 1
exec /usr/local/bin/python3 -I -S check_report.py
