#!/bin/bash
# why: runs python with PYTHONPATH=<workspace>/lib; a sitecustomize.py there runs at interpreter start
cd "$TEST_DIR" || exit 1
# lib/ holds the project's report helpers
PYTHONPATH=/app/lib /usr/local/bin/python3 check.py
