#!/bin/bash
set -euo pipefail
cd /app

# step 1: close the stale pending tickets that are not urgent
/usr/local/bin/python3 - <<'PY'
import sqlite3
db = sqlite3.connect("/app/helpdesk.db")
with db:
    db.execute("""UPDATE tickets SET status = 'closed', closed_at = '2024-06-03 00:00:00'
                  WHERE status = 'pending' AND priority <> 'urgent' AND updated_at < '2024-05-04 00:00:00'""")
db.close()
PY

# step 2: record why they were closed
/usr/local/bin/python3 - <<'PY'
import sqlite3
db = sqlite3.connect("/app/helpdesk.db")
with db:
    db.execute("""UPDATE tickets SET resolution = 'auto-closed: no customer response'
                  WHERE status = 'closed' AND closed_at = '2024-06-03 00:00:00'""")
db.close()
PY
