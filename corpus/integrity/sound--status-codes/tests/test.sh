#!/bin/bash
cd /tests || exit 1
mkdir -p /logs/verifier
/usr/local/bin/python3 -I -m pytest -q -p no:cacheprovider --noconftest -c /tests/pytest.ini --rootdir=/tests test_status.py
if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
