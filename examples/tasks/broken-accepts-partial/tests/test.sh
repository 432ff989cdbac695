#!/bin/bash
# BROKEN ON PURPOSE (broken-accepts-partial): only users.csv is checked; summary.json,
# the second half of the task, is never looked at.
cd "$(dirname "$0")" || exit 1
exec /usr/local/bin/python3 -I -S check_users.py
