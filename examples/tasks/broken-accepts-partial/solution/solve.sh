#!/bin/bash
set -euo pipefail
cd /app
mkdir -p out

# step 1: write the CSV of active users
python3 -c '
import csv, json
users = sorted((u for u in json.load(open("users.json")) if u["active"]), key=lambda u: u["id"])
with open("out/users.csv", "w", newline="") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(["id", "name"])
    w.writerows([u["id"], u["name"]] for u in users)
'

# step 2: write the summary
python3 -c '
import json
n = sum(1 for u in json.load(open("users.json")) if u["active"])
json.dump({"active": n}, open("out/summary.json", "w"))
'
