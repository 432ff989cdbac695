#!/bin/bash
set -euo pipefail
cd /app
python3 - <<'PY'
import configparser, json
ini = configparser.ConfigParser()
ini.read("config/legacy.ini")
cfg = {
    "listen": f"{ini['server']['host']}:{ini['server']['port']}",
    "workers": ini.getint("server", "workers"),
    "db": {"dsn": ini["database"]["url"], "pool_size": ini.getint("database", "pool")},
    "features": sorted(k for k, v in ini["features"].items() if v.strip() == "yes"),
}
json.dump(cfg, open("config/service.json", "w"), indent=2)
PY
