#!/bin/bash

cd /app
head -n 1 contacts.csv > contacts_clean.csv

python3 - <<'PY'
import csv

seen = set()
with open("/app/contacts.csv", newline="") as src, open("/app/contacts_clean.csv", "a", newline="") as dst:
    reader = csv.DictReader(src)
    writer = csv.DictWriter(dst, fieldnames=reader.fieldnames, lineterminator="\n")
    for row in reader:
        email = row["email"].strip().lower()
        if email in seen:
            continue
        seen.add(email)
        row["email"] = email
        writer.writerow(row)
PY
