#!/bin/bash
# why: prefers the workspace's .venv/bin/python as the checker's interpreter
cd "$TEST_DIR" || exit 1
# use the project's own virtualenv when it has one (its dependencies), else the system python
PY=/app/.venv/bin/python
[ -x "$PY" ] || PY=/usr/local/bin/python3
"$PY" check.py
