#!/bin/bash
# Hardened verifier: a clean environment, a fixed PATH that holds no workspace directory,
# an absolute interpreter path, isolated mode (-I: no PYTHON* variables, no user site, no
# script directory on sys.path; -S: no site hooks; -B: no bytecode written). Nothing under
# /app is executed; its outputs are read as data.
mkdir -p /logs/verifier
cd /tests || { echo 0 > /logs/verifier/reward.txt; exit 0; }
if env -i PATH=/usr/bin:/bin LANG=C.UTF-8 /usr/local/bin/python3 -I -S -B /tests/check_audit.py; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
exit 0
