#!/bin/bash
# Reward = exit status. The check re-derives the effective configuration itself (it never
# runs the workspace's config.py) under the image's interpreter by absolute path, -I -S.
cd "$(dirname "$0")" || exit 1
exec /usr/local/bin/python3 -I -S check_config.py
