#!/bin/bash
set -euo pipefail
cd /app

# step 1: gather every log, rotated ones included
cat logs/app.log* > /tmp/all.log

# step 2: count errors per component
python3 - <<'PY'
import collections, json
counts = collections.Counter(
    line.split()[2] for line in open("/tmp/all.log") if line.split()[1:2] == ["ERROR"]
)
json.dump(dict(sorted(counts.items())), open("/app/errors.json", "w"), indent=2)
PY
