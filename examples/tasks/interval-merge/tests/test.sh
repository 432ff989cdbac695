#!/bin/bash
# Reward = exit status. check_merge.py computes the expected answers itself and runs the
# workspace's code only in a child process whose exit status and output format it does not
# trust: only correct answers to inputs it has just generated count.
cd "$(dirname "$0")" || exit 1
exec /usr/local/bin/python3 -I -S check_merge.py
