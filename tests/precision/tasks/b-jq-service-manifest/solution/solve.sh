#!/bin/bash
set -e
cd /app

# Parse the INI file into the services object
/usr/local/bin/python3 - <<'PY'
import configparser, json
cp = configparser.ConfigParser()
cp.read("/app/services.ini")
services = {}
for name in cp.sections():
    sec = cp[name]
    if not sec.getboolean("enabled", fallback=True):
        continue
    deps = [d.strip() for d in sec.get("depends_on", "").split(",") if d.strip()]
    services[name] = {
        "image": sec["image"],
        "port": sec.getint("port") if "port" in sec else None,
        "replicas": sec.getint("replicas", fallback=1),
        "depends_on": sorted(deps),
    }
with open("/tmp/services.json", "w") as f:
    json.dump(services, f)
PY

# Add a dependency-respecting start order (Kahn's algorithm, alphabetical among ready services)
/usr/local/bin/python3 - <<'PY'
import json
services = json.load(open("/tmp/services.json"))
order, done = [], set()
while len(order) < len(services):
    ready = sorted(n for n, s in services.items() if n not in done and set(s["depends_on"]) <= done)
    if not ready:
        raise SystemExit("dependency cycle")
    order.append(ready[0])
    done.add(ready[0])
with open("/app/manifest.json", "w") as f:
    json.dump({"services": services, "start_order": order}, f, indent=2)
    f.write("\n")
PY
cat /app/manifest.json
