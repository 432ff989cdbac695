#!/bin/bash
# Expected figures are fixed in check.py; the interpreter by absolute path, -I -S.
cd /tests || exit 1
/usr/local/bin/python3 -I -S check.py
if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
