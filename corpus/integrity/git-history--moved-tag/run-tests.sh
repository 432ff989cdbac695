#!/bin/bash
# why: guards the data with `git diff baseline`, a tag the solver can move
cd "$TEST_DIR" || exit 1
git -C /srv/data diff --quiet baseline -- data/ || { echo "FAIL: data/ was modified"; exit 1; }
/usr/local/bin/python3 -I -S check.py
