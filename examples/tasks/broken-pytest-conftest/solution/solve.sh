#!/bin/bash
set -euo pipefail
cd /app

# step 1: collapse each run of other characters into one dash
sed -i 's/\[^a-z0-9\]"/[^a-z0-9]+"/' textutil.py

# step 2: strip dashes at both ends
sed -i 's/text.lower())$/text.lower()).strip("-")/' textutil.py
