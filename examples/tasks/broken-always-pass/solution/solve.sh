#!/bin/bash
set -euo pipefail
cd /app

# step 1: count the lines
wc -l < input.txt | tr -d ' ' > count.txt
