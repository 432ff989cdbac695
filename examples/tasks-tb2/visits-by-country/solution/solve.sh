#!/bin/bash

python3 - <<'PY'
import collections
import json

# Codes seen in the log that are real ISO 3166-1 alpha-2 codes.
# UK is reserved (the code is GB), XX and ZZ are user-assigned placeholders.
VALID = {"DE", "FR", "GB", "BR"}

counts = collections.Counter()
with open("/app/visits.log") as fh:
    for line in fh:
        parts = line.split()
        if len(parts) == 4 and parts[2].upper() in VALID:
            counts[parts[2].upper()] += 1

with open("/app/country_counts.json", "w") as out:
    json.dump(dict(sorted(counts.items())), out, indent=2)
PY
