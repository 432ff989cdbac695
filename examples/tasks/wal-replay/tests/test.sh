#!/bin/bash
# Reward = this script's exit status (envfactory ignores reward files). The check runs
# under the image's interpreter by absolute path, isolated (-I: no PYTHON* variables, no
# script or user site directory) and without site (-S), so nothing the solver left in
# the workspace or on PATH can stand in for it.
cd "$(dirname "$0")" || exit 1
exec /usr/local/bin/python3 -I -S check_ledger.py
