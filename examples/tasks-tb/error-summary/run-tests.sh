#!/bin/bash
# Terminal-Bench puts this script and the files of tests/ into $TEST_DIR. envfactory
# decides the reward by this script's exit status only.
exec /usr/local/bin/python3 -I -S "$TEST_DIR/test_outputs.py"
