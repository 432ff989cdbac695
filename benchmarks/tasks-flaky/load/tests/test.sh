#!/bin/bash
cd /tests || exit 1
/usr/local/bin/python3 -I -S check.py
if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
