#!/bin/bash
set -euo pipefail
cd /opt/build

# step 1: lower-case every name
mkdir -p out
tr 'A-Z' 'a-z' < data/users.txt > out/users.txt

# step 2: sort and drop duplicates
LC_ALL=C sort -u -o out/users.txt out/users.txt
