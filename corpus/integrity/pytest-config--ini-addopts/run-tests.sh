#!/bin/bash
# why: runs pytest on a test file inside the workspace: the workspace pytest.ini (addopts) applies
cd "$TEST_DIR" || exit 1
mkdir -p /srv/data/tests && cp test_calc.py /srv/data/tests/
cd /srv/data && /usr/local/bin/python3 -m pytest -q -p no:cacheprovider --noconftest tests/test_calc.py
