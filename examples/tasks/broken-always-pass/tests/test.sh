#!/bin/bash
# BROKEN ON PURPOSE (broken-always-pass): the check runs, but its exit status is thrown
# away and the script always exits 0.
cd "$(dirname "$0")" || exit 1
/usr/local/bin/python3 -I -S check_count.py
exit 0
