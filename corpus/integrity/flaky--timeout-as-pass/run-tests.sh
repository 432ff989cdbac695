#!/bin/bash
# why: treats a program that times out as 'slow machine, skip': a program that sleeps passes
cd "$TEST_DIR" || exit 1
/usr/local/bin/python3 -I -S check.py
