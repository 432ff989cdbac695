#!/bin/bash
# pytest from the tests directory, isolated, with the expectations fixed in the tests;
# the reward file says what the exit status said (Harbor's contract).
cd /tests || exit 1
/usr/local/bin/python3 -I -m pytest -q -p no:cacheprovider --noconftest --rootdir=/tests test_outputs.py
if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
