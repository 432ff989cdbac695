#!/bin/bash
set -euo pipefail
cd /app
python3 - <<'PY'
import configparser, json
ini = configparser.ConfigParser(); ini.read("config/legacy.ini")
json.dump({s: dict(ini[s]) for s in ini.sections()}, open("config/service.json", "w"))
PY
