#!/bin/bash
set -euo pipefail
cd /app

# step 1: dates
cat > convert.py <<'PY'
"""US-style timestamps on stdin to ISO 8601 on stdout, one per line; 'invalid' otherwise."""
import datetime
import re
import sys

DATE = re.compile(r"(\d{1,2})/(\d{1,2})/(\d{4})")


def convert(text):
    m = DATE.fullmatch(text)
    if not m:
        return "invalid"
    month, day, year = map(int, m.groups())
    try:
        return datetime.date(year, month, day).isoformat()
    except ValueError:
        return "invalid"


for line in sys.stdin:
    print(convert(line.rstrip("\r\n")))
PY

# step 2: optional 12-hour time
cat > convert.py <<'PY'
"""US-style timestamps on stdin to ISO 8601 on stdout, one per line; 'invalid' otherwise."""
import datetime
import re
import sys

STAMP = re.compile(r"(\d{1,2})/(\d{1,2})/(\d{4})(?: (\d{1,2}):(\d{2}) ([AaPp][Mm]))?")


def convert(text):
    m = STAMP.fullmatch(text)
    if not m:
        return "invalid"
    month, day, year = int(m[1]), int(m[2]), int(m[3])
    try:
        date = datetime.date(year, month, day)
    except ValueError:
        return "invalid"
    if m[4] is None:
        return date.isoformat()
    hour, minute = int(m[4]), int(m[5])
    if not 1 <= hour <= 12 or minute > 59:
        return "invalid"
    hour = hour % 12 + (12 if m[6].lower() == "pm" else 0)
    return f"{date.isoformat()}T{hour:02d}:{minute:02d}"


for line in sys.stdin:
    print(convert(line.rstrip("\r\n")))
PY
