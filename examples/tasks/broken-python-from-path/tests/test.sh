#!/bin/bash
# BROKEN ON PURPOSE (broken-python-from-path): the project's tools come first on PATH, and
# python3 is resolved through that PATH. A python3 in /app/bin (workspace) wins.
cd "$(dirname "$0")" || exit 1
export PATH="/app/bin:$PATH"
python3 check_slug.py
