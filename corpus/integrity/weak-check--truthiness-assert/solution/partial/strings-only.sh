#!/bin/bash
set -euo pipefail
cd /app
python3 - <<'PY'
import configparser, json
ini = configparser.ConfigParser(); ini.read("config/legacy.ini")
cfg = {"listen": f"{ini['server']['host']}:{ini['server']['port']}", "workers": ini["server"]["workers"],
       "db": {"dsn": ini["database"]["url"], "pool_size": ini["database"]["pool"]},
       "features": sorted(k for k, v in ini["features"].items() if v == "yes")}
json.dump(cfg, open("config/service.json", "w"))
PY
